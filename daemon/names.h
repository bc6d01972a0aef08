/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names of a recording's programs. A trace.dat names tasks from its
 * command lines, which trace-cmd takes from the kernel's saved_cmdlines at
 * the end; a program that exited at once is often missing there, or under
 * the name of the shell that forked it (its last switch does not wait for
 * the list's lock). A recording holds the events asked for and no other, so
 * the exec that names such a program is traced in a second tracefs
 * instance, NAME-names (same lock, crash and --cleanup rules as NAME):
 * sched:sched_process_exec alone, filtered by the configured pids and
 * comm, read five times a second. Each name read goes to the recorder
 * (td_recorder_name()), which puts it in the trace.dat's command lines.
 */
#ifndef TD_DAEMON_NAMES_H
#define TD_DAEMON_NAMES_H

#include <stdint.h>

struct tep_handle;
struct td_config;
struct td_recorder;
struct td_names;

/* What a names instance read. */
struct td_names_stats {
	uint64_t execs;		/* sched_process_exec records read */
	uint64_t named;		/* of them, names handed to the recorder */
	uint64_t unnamed;	/* fexecve()'s /dev/fd/N, no or a blank name: nothing to say */
	uint64_t failed;	/* names the recorder could not keep */
	uint64_t lost;		/* exec records overwritten unread (the CPUs' overrun) */
};

/*
 * Create and start the instance "@cfg->instance-names" in @cfg->run_dir.
 * @tep knows sched_process_exec's format. Returns NULL (printed) on error,
 * nothing left behind.
 */
struct td_names *td_names_open(const struct td_config *cfg, struct tep_handle *tep,
			       struct td_recorder *rec);

/* Read what the instance holds, hand the names on. Never blocks. */
void td_names_read(struct td_names *n);

/* Stop tracing; what is left is read first. */
void td_names_stop(struct td_names *n);

void td_names_get_stats(const struct td_names *n, struct td_names_stats *st);

/* Remove the instance (tracing stopped or not), free @n. Returns 0 or -1 (printed). */
int td_names_close(struct td_names *n);

/*
 * A names instance a killed recording left behind is removed by the next
 * run of the same instance name, recording or not (quietly if none).
 */
void td_names_clean_stale(const struct td_config *cfg);

/* The names instance's name for a capture instance @instance (malloc()ed, NULL: no memory). */
char *td_names_instance(const char *instance);

#endif /* TD_DAEMON_NAMES_H */
