/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The running daemon: everything one capture holds, set up by daemon.c and
 * driven by the event loop in loop.c.
 */
#ifndef TD_DAEMON_DAEMON_H
#define TD_DAEMON_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "counters.h"
#include "instance.h"
#include "outputs.h"

/* Exit statuses, documented in trace-defer(8) and --help. */
enum {
	TD_EXIT_OK = 0,
	TD_EXIT_RUNTIME = 1,	/* I/O on outputs, out of memory */
	TD_EXIT_USAGE = 2,	/* bad command line or config file */
	TD_EXIT_TRACEFS = 3,	/* tracefs missing or refused: not root, unknown event, bad filter */
};

struct tep_handle;
struct tracefs_cpu;
struct td_pipeline;
struct td_recorder;
struct td_names;

struct td_cpu_reader {
	int cpu;
	int fd;			/* per_cpu/cpuN/trace_pipe_raw, O_NONBLOCK | O_CLOEXEC */
	int stats_fd;		/* per_cpu/cpuN/stats */
	struct tracefs_cpu *tcpu;
	bool offline;		/* no buffer (EPOLLERR, ENODEV): not read until it has one */
};

struct td_daemon {
	struct td_config *cfg;
	int mode;			/* resolved enum td_mode */
	struct td_instance inst;
	struct tep_handle *tep;
	struct td_pipeline *pl;		/* pages in, outputs out */
	struct td_outputs outputs;
	bool outputs_open;
	struct td_recorder *recorder;	/* --record: raw sub-buffers for a trace.dat */
	struct td_names *names;		/* --record: the names of the programs that exec */
	struct td_counters counters;

	struct td_cpu_reader *readers;
	int nr_readers;
	int nr_cpus;			/* highest cpu number + 1 */
	int page_size;
	/*
	 * A batch: up to batch_per_cpu sub-buffers of each CPU, read in one
	 * round and handed on together (td_pipeline_pages()), merged by time.
	 */
	uint8_t *batch;
	struct td_page_ref *refs;
	int batch_per_cpu;

	int epfd, sigfd, timerfd;
	int tty_fd;			/* 0-2: the first that was a terminal at start; -1: none */
	bool stop;
	bool stopping;		/* in td_loop_drain_and_stop() */
	bool warned_write;		/* the first failed output write was reported */
	char changed[320];		/* what instance_changed() found, said when stopping */
	uint64_t lost_warned;		/* lost events said so far (warn_lost()) */
	uint64_t lost_warned_ns;	/* CLOCK_MONOTONIC when last said */
	int exit_code;
	uint64_t trace_now;		/* trace clock at the last drain, ns */
	bool jit_watch;			/* perf maps watched (loop.c): read every round */
	uint64_t last_stats_ns;		/* CLOCK_MONOTONIC of the last --stats-interval report */
	uint64_t last_housekeeping_ns;
	uint64_t sym_restarts;		/* said so far (housekeeping()) */
};

/* Set up, run until told to stop, tear down. Returns an exit status. */
int td_daemon_run(struct td_config *cfg);

/* loop.c */
int td_loop_setup(struct td_daemon *d);
int td_loop_run(struct td_daemon *d);
/* Stop the capture, drain every CPU, flush the pipeline. */
void td_loop_drain_and_stop(struct td_daemon *d);
/* Close the readers (before the instance can be removed) and loop fds. */
void td_loop_teardown(struct td_daemon *d);
void td_daemon_report(struct td_daemon *d, const char *title);

#endif /* TD_DAEMON_DAEMON_H */
