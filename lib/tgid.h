/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Thread id -> process id (tgid), read from /proc/TID/status and cached, so
 * user addresses are looked up in the right process's maps and output
 * carries the pid. Bounded: the table is emptied when full, and an entry is
 * re-read after a while because thread ids are reused.
 */
#ifndef TD_LIB_TGID_H
#define TD_LIB_TGID_H

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

/* Remember a tgid the event itself told us (e.g. the in-place user_stack record). */
void td_tgid_note(struct td_tgid_cache *tc, int tid, int tgid, uint64_t now_ns);

/*
 * Drop entries of processes that exited; @gone is called for such a
 * process (to drop symbolizer caches) only at the second sweep that finds
 * it gone, so events of it still waiting for their stacks are named.
 */
void td_tgid_sweep(struct td_tgid_cache *tc, void (*gone)(int tgid, void *arg), void *arg);

#endif /* TD_LIB_TGID_H */
