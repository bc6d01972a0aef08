/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's counters: what it read per CPU, what the kernel lost (the
 * overrun and dropped counts of per_cpu/cpuN/stats), what the parser and
 * the stitcher did, what was written. Printed on exit, on SIGUSR1, every
 * --stats-interval, and summarised in the systemd STATUS= line.
 */
#ifndef TD_DAEMON_COUNTERS_H
#define TD_DAEMON_COUNTERS_H

#include <stdint.h>
#include <stdio.h>

#include <trace-defer/output.h>
#include <trace-defer/pipeline.h>

#include "profiles.h"

struct td_cpu_counters {
	uint64_t reads;		/* sub-buffers read */
	uint64_t bytes;		/* bytes read */
	uint64_t overrun;	/* kernel: events overwritten before we read them */
	uint64_t dropped;	/* kernel: events dropped (buffer full, no overwrite) */
	uint64_t commit_overrun;
};

struct td_counters {
	int nr_cpus;
	struct td_cpu_counters *cpu;
	uint64_t start_ns;	/* CLOCK_MONOTONIC at start */
	uint64_t busy_start_ns;	/* CPU time (self) at start */
};

/* What one report shows: the counters plus the pipeline's statistics. */
struct td_report {
	const struct td_counters *c;
	struct td_pipeline_stats pl;
	bool has_json;			/* a JSON output, with these counts: */
	uint64_t written;		/* event lines written to it */
	uint64_t dropped;		/* event lines dropped on a failed write */
	struct td_json_stats js;
	bool has_profiles;		/* a profile directory, with these counts: */
	struct td_profiles_stats prof;
};

int td_counters_init(struct td_counters *c, int nr_cpus);
void td_counters_free(struct td_counters *c);

uint64_t td_now_mono_ns(void);
/* Wall clock (CLOCK_REALTIME), ns since the epoch: for time stamps in files. */
uint64_t td_now_real_ns(void);
/* CPU time used by this process so far (user + system), ns. */
uint64_t td_cpu_time_ns(void);

/* Several lines, "trace-defer: " prefixed, for stderr. */
void td_counters_print(FILE *f, const struct td_report *r, const char *title);
/* One line for sd_notify STATUS=. */
void td_counters_status(char *buf, size_t len, const struct td_report *r);

#endif /* TD_DAEMON_COUNTERS_H */
