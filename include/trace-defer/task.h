/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Task identity: which process a thread belongs to, and whether a thread
 * id still names the task a trace saw. Thread ids are reused, so both are
 * answered from /proc with care, in one place for the daemon, `trace-defer
 * report` and the plugin.
 *
 * td_tgid_*: thread id -> process id (tgid) for a live capture, read from
 * /proc/TID/status and cached, so user addresses are looked up in the
 * right process's maps and output carries the pid. Bounded: the table is
 * emptied when full, and an entry is re-read after a while.
 *
 * td_task_check_*: for a recorded trace, is /proc/TID now the thread the
 * trace calls COMM? Only then may /proc say anything about it. Checked
 * once per (tid, comm), in a fixed table.
 *
 * Neither is thread safe.
 */
#ifndef TRACE_DEFER_TASK_H
#define TRACE_DEFER_TASK_H

#include <stdbool.h>
#include <stdint.h>

struct td_tgid_cache;

struct td_tgid_cache *td_tgid_new(const char *proc_root);
void td_tgid_free(struct td_tgid_cache *tc);

/* The tgid of @tid, @now_ns is a monotonic time; 0 when the task is gone. */
int td_tgid_lookup(struct td_tgid_cache *tc, int tid, uint64_t now_ns);

/*
 * The same, and *fresh says the answer was just read from /proc for a
 * process the cache did not know (its first thread seen, or seen again
 * after a long time): the moment to look at its maps while it still runs.
 */
int td_tgid_lookup_fresh(struct td_tgid_cache *tc, int tid, uint64_t now_ns, bool *fresh);

/*
 * @tid's name now (/proc/TID/comm) into @comm (TD_COMM_LEN bytes); for a
 * thread already gone, the name the kernel's saved_cmdlines keeps for it
 * (with td_tgid_set_cmdlines()); false when neither knows.
 */
bool td_tgid_comm(struct td_tgid_cache *tc, int tid, char *comm);
/*
 * Where the kernel's saved_cmdlines is (tracefs; NULL: not used). 0 or
 * -ENOMEM. It is read on a miss, at most once until
 * td_tgid_cmdlines_stale(), which the caller calls as new records come
 * (a read after a record was read names its thread).
 */
int td_tgid_set_cmdlines(struct td_tgid_cache *tc, const char *path);
void td_tgid_cmdlines_stale(struct td_tgid_cache *tc);
/* Remember a tgid the event itself told us (e.g. the in-place user_stack record). */
void td_tgid_note(struct td_tgid_cache *tc, int tid, int tgid, uint64_t now_ns);

/*
 * Drop entries of processes that exited; @gone is called for such a
 * process (to drop symbolizer caches) only at the second sweep that finds
 * it gone, so events of it still waiting for their stacks are named.
 */
void td_tgid_sweep(struct td_tgid_cache *tc, void (*gone)(int tgid, void *arg), void *arg);
/*
 * Added later. The cache holds a bounded number of threads and, full,
 * starts again: each of its processes gone then (the sweeps would never
 * see them again) is told to the next td_tgid_sweep()'s @gone. Until
 * this is called with a @gone (not NULL), they are not looked for.
 */
void td_tgid_set_gone(struct td_tgid_cache *tc, void (*gone)(int tgid, void *arg), void *arg);

struct td_task_check;

/* @proc_root: NULL for "/proc" (tests point it elsewhere). NULL when out of memory. */
struct td_task_check *td_task_check_new(const char *proc_root);
void td_task_check_free(struct td_task_check *tc);

/*
 * The tgid of @tid if @proc_root/@tid is the thread the trace calls @comm
 * (its comm now is @comm), else 0: gone, renamed, or a tid reused by
 * another task. An empty @comm or one the trace did not know ("<...>")
 * proves nothing and gives 0. @at_ns: when the trace saw the task, in ns
 * since boot not counting suspend (the trace clocks local, global, perf
 * and mono count so, within their drift; 0: not known): a task that
 * started more than 100 ms after it is another, even of the same name
 * (short-lived programs reuse tids and names all the time). A clock that
 * counts otherwise fails safe or open: boot and x86-tsc count more, so a
 * reuse may be missed and the name alone tells; counter and uptime count
 * less, so every task looks started after and none is taken.
 */
int td_task_check(struct td_task_check *tc, int tid, const char *comm, uint64_t at_ns);

#endif /* TRACE_DEFER_TASK_H */
