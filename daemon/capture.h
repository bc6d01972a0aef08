/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the instance records: the configured events with their filters, and
 * how each asks for a user stack.
 *
 *  option   options/userstacktrace_delay (+ stacktrace): every event asks
 *           for a deferred user stack; cookie records follow the events.
 *  trigger  "user_stacktrace [if FILTER]" (+ "stacktrace [if FILTER]") on
 *           each configured event's trigger file.
 *  inplace  option userstacktrace (+ stacktrace): the kernel writes up to 8
 *           user frames right after the event (the fallback).
 *  auto     option if events/ftrace/user_unwind_cookie exists, else inplace,
 *           saying so once on stderr.
 *
 * The filter of an event is the conjunction of its own filter, the pid list
 * (common_pid) and the comm. When the kernel refuses a filter or trigger,
 * the instance's error_log text is shown.
 */
#ifndef TD_DAEMON_CAPTURE_H
#define TD_DAEMON_CAPTURE_H

#include <stdbool.h>

#include "config.h"

struct tracefs_instance;

/* Does this kernel have the deferred user stack events? */
bool td_capture_kernel_has_deferred(void);

/*
 * Resolve auto into the mode to use. Returns the mode, or -1 (message
 * printed). Says nothing of a fallback: td_capture_say_fallback() does.
 */
int td_capture_pick_mode(enum td_mode wanted);

/*
 * Say that auto (@wanted) fell back to the in-place mode (@mode), if it did.
 * Called once the instance is ours: a run refused its instance (another
 * trace-defer holds it) never captures, and a mode notice before the
 * refusal would tell of a run that does not happen.
 */
void td_capture_say_fallback(enum td_mode wanted, int mode);

/*
 * Should sched:sched_process_exec be traced too, only to name tasks? When
 * no configured event names them (sched_switch, sched_process_exec), a task
 * is named from /proc when its event is read, or else from the kernel's
 * saved_cmdlines, which a program that exits at once often never reaches
 * (its last switch loses a race with the readers of the list, or the list
 * is full): in bursts of short-lived programs, up to a sixth of them were
 * left "<...>" or given the name of the shell that forked them. Their exec
 * names them. Not for a recording (--record), which holds the events asked
 * for and no other: it traces the exec in a second instance (names.h).
 * The events it adds reach no output and are not counted
 * as events (td_pipeline_config.exec_names_only); they are filtered as
 * the configured events (pid list, comm) and never ask for a stack by
 * trigger, though the options (option, inplace mode) give them one.
 * In @mode TD_MODE_INPLACE a traced sched_switch does not make it needless:
 * user frames are named there from the process's maps, read when its
 * records are, and the exec says when those became another program's
 * (the pipeline drops them then).
 */
bool td_capture_exec_names(const struct td_config *cfg, enum td_mode mode);
/*
 * With the exec traced only to name tasks, sched:sched_process_fork too,
 * unless the user traces it: a new task has its parent's name until it
 * execs, and /proc, read when its first event is, may already give the
 * program it exec'd (an execve() entry traced would carry the name of
 * the program it starts, not of the shell that started it). The same
 * filters and rules as the exec's.
 */
bool td_capture_fork_names(const struct td_config *cfg);
/*
 * Is every exec of the traced processes in the instance: the exec traced
 * to name tasks, or by the user without a filter of its own?
 */
bool td_capture_execs_traced(const struct td_config *cfg);

/*
 * Configure events, filters, triggers and options in @tfs (tracing stays
 * off). @mode is a resolved mode. On error, prints why and returns -1; the
 * caller removes the instance, which undoes everything.
 */
int td_capture_setup(struct tracefs_instance *tfs, const struct td_config *cfg, enum td_mode mode);

/*
 * Stop new events: disable the configured events (and the naming one). In
 * deferred modes the kernel may still write stacks for requests already made.
 */
void td_capture_stop(struct tracefs_instance *tfs, const struct td_config *cfg);

/*
 * The first configured event that is no longer enabled in @tfs (another
 * program turned it off; *@gone: its enable file cannot be read, the
 * event removed, as a kprobe or a module's), or NULL. The events traced
 * only to name tasks are not asked: they keep the instance's
 * events/enable from reading 0 while nothing the user asked for is
 * traced.
 */
const struct td_event_spec *td_capture_disabled(struct tracefs_instance *tfs,
						const struct td_config *cfg, bool *gone);

/*
 * Should a recording name its programs from their exec (names.h)? When
 * recording, and the kernel has sched_process_exec.
 */
bool td_capture_record_names(const struct td_config *cfg);

/*
 * A recording's names instance (see names.h): sched:sched_process_exec
 * enabled in @tfs with the configured pid list (followed into children, as
 * the recording's) and comm filter, never a trigger or a stack option, and
 * a small buffer (exec records are few). Tracing stays off.
 * Returns 0 or -1 (printed).
 */
int td_capture_setup_names(struct tracefs_instance *tfs, const struct td_config *cfg);

/*
 * Keep @pid (a helper of ours: trace-cmd taking the recording's headers)
 * out of @tfs's events, through set_event_notrace_pid. Quiet where the
 * kernel has no such list (before 5.8): the helper's events are then
 * recorded.
 */
void td_capture_exclude_pid(struct tracefs_instance *tfs, int pid);

/* Trace systems whose formats the parser needs (NULL-terminated, static strings + cfg's). */
const char **td_capture_systems(const struct td_config *cfg);

#endif /* TD_DAEMON_CAPTURE_H */
