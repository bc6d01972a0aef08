/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's configuration: defaults, the config file and the command
 * line all end up in one struct td_config.
 *
 * Config file syntax: one "key = value" per line; blank lines and lines
 * whose first non-blank character is '#' are ignored; the value is the rest
 * of the line with surrounding blanks removed (no quoting, no inline
 * comments, so filters can hold any character). `event` and `pid` may be
 * given several times and accumulate. Keys are those of td_config_set().
 *
 * Precedence: defaults < config file < command line. A list given on the
 * command line (-e, -p) replaces the list from the file.
 *
 * Every error names where it comes from ("FILE:LINE: ..." or "option
 * --foo: ...") and is reported through td_err().
 */
#ifndef TD_DAEMON_CONFIG_H
#define TD_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <trace-defer/output.h>
#include <trace-defer/stitch.h>

enum td_mode {
	TD_MODE_AUTO = 0,	/* option mode if the kernel has it, else inplace */
	TD_MODE_OPTION,		/* option userstacktrace_delay: every event asks */
	TD_MODE_TRIGGER,	/* trigger user_stacktrace on each configured event */
	TD_MODE_INPLACE,	/* option userstacktrace: 8 frames in place (fallback) */
};

const char *td_mode_name(enum td_mode mode);

/*
 * An event to trace, as given: system and name may be shell patterns
 * ("syscalls:sys_enter_*"), and a bare word ("sched", "sched_switch")
 * names a system, or else an event of any system, as trace-cmd reads
 * -e; event_glob.c turns them into events that exist.
 */
struct td_event_spec {
	char *system;
	char *name;		/* "*" for a bare word */
	char *filter;		/* NULL: no filter of the user's own */
	bool bare;		/* given as a bare word: system, else event name */
};

struct td_config {
	struct td_event_spec *events;
	size_t nr_events;
	int *pids;
	size_t nr_pids;
	char *comm;		/* filter on the task's comm (COMM) */

	enum td_mode mode;
	char *instance;		/* tracefs instance name */
	char *run_dir;		/* lock file directory */
	unsigned long buffer_kb;	/* per CPU, 0 = kernel default */
	int buffer_percent;	/* wake-up watermark of the readers */
	char *trace_clock;	/* NULL = kernel default */
	bool kernel_stack;	/* option/trigger `stacktrace` as well */

	char *output;		/* JSON lines, "-" = stdout, NULL = none */
	bool output_append;	/* open outputs with O_APPEND instead of truncating */
	enum td_json_layout json_layout;	/* default interned */
	char *folded;		/* folded stacks, written at exit and on SIGHUP */
	char *flamegraph;	/* SVG, written at exit and on SIGHUP */
	char *record;		/* trace.dat built from the raw sub-buffers at exit */
	char *pprof;		/* one pprof profile of the run, written at exit and on SIGHUP */
	char *profile_dir;	/* profiles cut every profile_interval (profiles.h) */
	double profile_interval;	/* seconds, default 60 */
	bool profile_folded;	/* folded stacks per interval too */
	uint64_t profile_keep;	/* intervals kept in profile_dir, 0 = no bound (default 60) */
	uint64_t profile_max_kb;	/* KiB kept in profile_dir, 0 = no bound (default 65536) */
	uint64_t profile_max_mem_kb;	/* tables of one interval, KiB: cut early above (65536) */

	bool symbolize;
	char *debug_dir;
	uint64_t symbols_max_mb;	/* symbolizer starts again above, MiB (256, 0: no bound) */

	double duration;	/* seconds, 0 = until signalled */
	double stats_interval;	/* seconds, 0 = never */
	uint64_t max_pending;	/* stitcher bounds, 0 = library default */
	uint64_t max_stacks;
	uint64_t max_wait_ms;

	int verbosity;		/* TD_LOG_* */

	/*
	 * Not a setting: the daemon traces sched:sched_process_exec as well,
	 * only to name the tasks that exec (td_capture_exec_names()).
	 */
	bool exec_names;
	/* And sched:sched_process_fork with it, to name new tasks (td_capture_fork_names()). */
	bool fork_names;
	/*
	 * Not a setting either: a recording names the programs it ran from
	 * their exec, traced in a second instance (names.h).
	 */
	bool record_names;

	/*
	 * Warnings about the settings (a key set twice), held until the
	 * verbosity is known: td_config_note().
	 */
	char **notes;
	size_t nr_notes;
};

/* Defaults: sched:sched_switch, mode auto, instance "trace-defer"... */
void td_config_init(struct td_config *cfg);
/* The stitcher's bounds of @cfg (0: the library's default). */
void td_config_stitch(const struct td_config *cfg, struct td_stitch_config *sc);
void td_config_free(struct td_config *cfg);

/*
 * Set one key. @where is "FILE:LINE" or "option --x", used in messages.
 * Returns 0 or -1 (message printed).
 */
int td_config_set(struct td_config *cfg, const char *key, const char *value, const char *where);

/* Read a config file. Returns 0 or -1 (message printed). */
int td_config_load(struct td_config *cfg, const char *path);

/*
 * Parse "SYS:NAME[:FILTER]" or a bare "WORD" into @spec (patterns kept as
 * given). Returns 0 or -1 (message printed).
 */
int td_event_spec_parse(struct td_event_spec *spec, const char *str, const char *where);

void td_event_spec_free(struct td_event_spec *spec);

/* Drop the event (or pid) list, before the command line replaces it. */
void td_config_clear_events(struct td_config *cfg);
void td_config_clear_pids(struct td_config *cfg);

/*
 * A warning about the settings, said by td_config_check() (or, if it is
 * not reached, td_config_free()) rather than now: a file or a command
 * line read so far may yet set the verbosity (verbosity = 0, -q) that
 * decides whether it is said. The caller sets td_log_level from the
 * whole configuration before td_config_check().
 */
void td_config_note(struct td_config *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Cross-checks once everything is set, after the notes held so far are
 * said. Returns 0 or -1 (message printed).
 */
int td_config_check(struct td_config *cfg);

/*
 * Whether @path is a program or a library: an ELF file (executable or
 * not) or a script ("#!"), told by its first bytes. An output never
 * replaces one. False when it cannot be read.
 */
bool td_is_program(const char *path);

/* Print the effective configuration in config-file syntax. */
void td_config_dump(const struct td_config *cfg, FILE *f);

/* Does @key take a list (event, pid), each setting adding to it? Else the last wins. */
bool td_config_repeatable(const char *key);

#endif /* TD_DAEMON_CONFIG_H */
