/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From a stitched event to output: the stitcher's emit callback names the
 * kernel and user frames (td_sym_*: user frames from the file identity in
 * their stack record when it has some, else through /proc/PID/maps), fills
 * in the process id when the
 * records did not carry it (tgid cache), and hands a td_resolved to the
 * outputs. Symbolization can be turned off (raw addresses only).
 */
#ifndef TD_DAEMON_RESOLVE_H
#define TD_DAEMON_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include <trace-defer/output.h>
#include <trace-defer/stitch.h>
#include <trace-defer/symbolize.h>

#include "config.h"
#include "counters.h"
#include "outputs.h"

struct td_resolver;

struct td_resolver *td_resolver_new(const struct td_config *cfg, struct td_outputs *out,
				    struct td_counters *counters);
/*
 * The resolver's file table: hand it to the parser (td_parser_set_filetab())
 * so that file records fill it; user frames with file identity are named
 * through it. Owned by the resolver.
 */
struct td_filetab *td_resolver_filetab(struct td_resolver *r);
void td_resolver_free(struct td_resolver *r);

/* The td_emit_fn to give td_stitch_new(), with the resolver as its argument. */
void td_resolver_emit(const struct td_event *ev, const struct td_ustack *us,
		      enum td_status status, void *arg);

/*
 * The parser's td_tgid_fn, with the resolver as its argument: names the
 * process of a thread when its record is read, and looks at the maps of a
 * process seen for the first time right then, while it most likely still
 * runs (a short-lived one may be gone by the time its event is written).
 */
int td_resolver_tgid(int tid, void *arg);

/* Wall clock (CLOCK_MONOTONIC ns) for cache ages: set once per drain, not per event. */
void td_resolver_set_now(struct td_resolver *r, uint64_t now_ns);

/* Housekeeping, every few seconds: forget processes that exited. */
void td_resolver_tick(struct td_resolver *r);

/* The symbolizer's counters. Returns false (and @st untouched) when symbolize = no. */
bool td_resolver_sym_stats(const struct td_resolver *r, struct td_sym_stats *st);

/* The stdout reader went away: the loop should stop. */
bool td_resolver_output_broken(const struct td_resolver *r);

/*
 * Hooks for reading a trace recorded earlier, maybe on another machine
 * (`trace-defer report`), where this machine's /proc/kallsyms and /proc
 * may not describe the traced system. Added after the first version of
 * this interface; a NULL member keeps the live behaviour of its part.
 */
struct td_resolver_hooks {
	/*
	 * Name a kernel address (e.g. with the kallsyms saved in a trace.dat)
	 * instead of this machine's /proc/kallsyms. Called only when
	 * symbolizing. Returns 0, or -ENOENT (@out then holds only the address).
	 */
	int (*kernel_sym)(uint64_t addr, struct td_frame *out, void *arg);
	/*
	 * May /proc/@tid be asked about this task (its process id and maps)?
	 * false when the thread id may now name another task: the pid then
	 * stays what the records said (0 if nothing) and user frames stay raw.
	 */
	bool (*task_live)(int tid, const char *comm, void *arg);
	/*
	 * Called with every resolved event after the outputs (e.g. a text
	 * writer). Returns 0 or a negative errno, counted like the outputs'.
	 */
	int (*write)(const struct td_resolved *res, void *arg);
	void *arg;
};

/* Install @hooks (copied); NULL removes them. */
void td_resolver_set_hooks(struct td_resolver *r, const struct td_resolver_hooks *hooks);

#endif /* TD_DAEMON_RESOLVE_H */
