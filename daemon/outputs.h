/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's output files: JSON lines (streamed), folded stacks, a flame
 * graph and a pprof profile (accumulated, written at exit and on SIGHUP),
 * and profiles cut per interval into a directory (profiles.h).
 *
 * Paths are checked at start so an unwritable one fails before any
 * tracing starts. SIGHUP reopens the JSON file (append: logrotate has moved
 * the old one away; the interned layout starts its stack table afresh, so
 * the new file defines every stack id it uses) and rewrites the folded and SVG files with the totals
 * so far. "-" means stdout for the JSON and folded outputs.
 */
#ifndef TD_DAEMON_OUTPUTS_H
#define TD_DAEMON_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>

#include <trace-defer/output.h>
#include <trace-defer/pipeline.h>
#include <trace-defer/pprof.h>

#include "config.h"
#include "profiles.h"

struct td_outputs {
	const char *json_path;
	struct td_json_sink js;		/* the JSON file (f: NULL without) and its writer */
	char *json_buf;			/* stdio buffer of js.f, ours */
	bool append;
	const char *folded_path;
	const char *flame_path;
	struct td_folded *folded;	/* NULL when neither folded nor SVG is wanted */
	const char *pprof_path;
	struct td_pprof *pprof;		/* the whole run, NULL without pprof */
	struct td_profiles *profiles;	/* per interval, NULL without profile_dir */
	struct td_profiles_stats pstats;	/* kept at close, for the last report */
	bool had_profiles;
	/* The events came from a trace file: its span, not the wall clock. */
	bool trace_span;
	uint64_t span_ns;
	uint64_t off_real_ns;		/* live: when tracing stopped (realtime), or 0 */
	bool json_broken;		/* stdout reader went away (EPIPE on flush) */
	int flush_error;		/* first failed flush of the JSON file (-errno) */
	/*
	 * A failed write (the disk full) drops what stdio still held of the
	 * JSON file and cuts the file back to its size at the last good
	 * flush, so that it ends on a whole line and defines every id it
	 * uses; writing goes on at the next tick.
	 */
	uint64_t json_flushed;		/* js.written at the last good flush */
	uint64_t json_failed;		/* js.failed then */
	uint64_t json_dropped;		/* event lines dropped so (counted in js.written) */
	long long json_good_size;	/* the file's size then; -1: not a regular file */
	bool json_failing;		/* dropping since the last good flush */
	bool json_said;			/* a drop was said, and no recovery since */
	uint64_t json_said_ns;		/* when (monotonic): said at most once a minute */
	uint64_t json_said_lost;	/* lines dropped as last said (a drop or recovery) */
	bool json_lost_file;		/* reopening failed: js.f NULL, tried every tick */
	bool abandoned;			/* td_outputs_abandon() */
};

/*
 * Check that every configured output could be written, opening none (a
 * file is not cut): for a run that may yet be refused. Returns 0 or -1
 * (message printed).
 */
int td_outputs_check(const struct td_config *cfg);

/*
 * Open every configured output, td_outputs_check() passed (the files
 * written whole are only made at the end). Returns 0 or -1 (message
 * printed).
 */
int td_outputs_open(struct td_outputs *o, const struct td_config *cfg);

/*
 * Add a sink per open output to @pl (events go to each). Returns 0 or
 * -ENOMEM. The outputs must outlive the pipeline's last event.
 */
int td_outputs_attach(struct td_outputs *o, struct td_pipeline *pl);

/*
 * Push buffered JSON to the file (every drain tick, for bounded latency).
 * On a failed write, drop and cut back as said above (message printed
 * once per run of failures, flush_error set).
 */
void td_outputs_flush(struct td_outputs *o);

/* Event lines in the JSON file: handed to it and not dropped since. */
uint64_t td_outputs_json_written(const struct td_outputs *o);

/* Every drain tick: cut the interval profile when its time is up. */
void td_outputs_tick(struct td_outputs *o, uint64_t mono_ns);

/*
 * No event will come: cut the last interval profile now, so the final
 * counters show it. Returns 0 or -1 (message printed).
 */
int td_outputs_end_profiles(struct td_outputs *o);

/* Interval profile counters; false when there is no profile_dir. */
bool td_outputs_profile_stats(const struct td_outputs *o, struct td_profiles_stats *st);

/* SIGHUP. Returns 0 or -1 (message printed; outputs that failed are off). */
int td_outputs_reopen(struct td_outputs *o);

/*
 * The events came from a trace read later, @span_ns long (first to last
 * record, trace clock): the pprof profile is of no wall-clock time, and
 * lasts that long, not as long as the reading took.
 */
void td_outputs_trace_span(struct td_outputs *o, uint64_t span_ns);
/*
 * Live: tracing starts, and stops, now. The whole run's pprof profile
 * lasts from one to the other, not from the outputs' opening (set-up
 * first) to its writing (the drain and a recording's finishing after).
 */
void td_outputs_tracing_on(struct td_outputs *o);
void td_outputs_tracing_off(struct td_outputs *o);

/* Write folded and SVG, close everything. Returns 0 or -1 (message printed). */
int td_outputs_close(struct td_outputs *o);

/*
 * The run stopped before it traced anything (a later set-up step failed):
 * td_outputs_close() then writes none of the files written whole at exit
 * (pprof, folded, SVG), so that the ones there stay as they were.
 */
void td_outputs_abandon(struct td_outputs *o);

#endif /* TD_DAEMON_OUTPUTS_H */
