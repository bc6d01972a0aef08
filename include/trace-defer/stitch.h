/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stitcher: joins kernel events to deferred user stacks by (tid, cookie).
 *
 * Promises:
 *  - order independent: a stack may arrive before or after the events that
 *    asked for it (it may sit in another CPU's buffer);
 *  - every event that carries a cookie is emitted exactly once, with the
 *    stack of its own (tid, cookie) or with an explicit status;
 *  - several events sharing one cookie all get the same stack;
 *  - nothing is matched across more than cfg.max_wait_ns of trace time, so a
 *    wrapped cookie counter can never join unrelated records;
 *  - memory is bounded by cfg: when a bound is hit the oldest pending event
 *    is emitted as TD_USER_LOST (counted in evicted_events), never dropped.
 *
 * Time is trace time: the caller says how far it has read with
 * td_stitch_advance(); nothing is expired on wall-clock time, and feeding
 * records never expires anything by itself (records from different CPUs
 * arrive out of time order).
 *
 * A (tid, cookie) pair matches only if the two records' timestamps are at
 * most max_wait_ns apart. A stack stays available to late events for
 * stack_keep_ns of trace time after its own timestamp, then it is dropped.
 * Late events are real: the kernel unwinds on the task's way back to user
 * space, and the task may still be preempted (sched_switch, prev_state R)
 * after that and before it leaves the kernel, for as long as it waits for a
 * CPU, each time with the same cookie. A stack goes sooner only once the
 * task is known to have left that kernel entry, by a stack of a later entry
 * of the same tid, and the caller says that every event older than that
 * later stack (by more than settle_margin_ns) has been fed,
 * td_stitch_settle(). Kept stacks are what the stitcher touches most; fewer
 * of them, fewer misses.
 *
 * Cost: every operation is O(1) amortized (a hash table on (tid, cookie)
 * and arrival-ordered lists for eviction and expiry). Events without a
 * cookie and in-place events are emitted at once without touching a table.
 *
 * Memory: while at most cfg.max_whole_events wait, an event waits as it
 * was fed. Past that, an event that waits is not kept as it came. It is
 * packed: 32 bytes of its own, a share of the hash table, and a counted
 * reference to its body (thread, record data, CPU, process, comm, kernel
 * stack), kept once for all waiting events with the same body. Emitted, it
 * is an event again, with the same fields, but not the same object:
 * td_event_free() was called on the one fed. Either way, an event fed with
 * no record data (raw NULL) comes out with raw_size 0.
 *
 * Not thread safe: one stitcher per thread, or lock around it. The emit
 * callback must not call back into the stitcher that called it (except
 * td_stitch_get_stats()).
 */
#ifndef TRACE_DEFER_STITCH_H
#define TRACE_DEFER_STITCH_H

#include <trace-defer/types.h>

/* A zero field means "the default". */
struct td_stitch_config {
	size_t max_pending_events;	/* default 1 << 20 */
	size_t max_stacks;		/* default 1 << 16: stacks kept for late events */
	/*
	 * Default 60 s (2 s before): how long an event waits for its stack.
	 * The stack comes when the task returns to user space, so the event
	 * of a task that sleeps in a system call waits as long as it sleeps;
	 * each sleeping task holds one or two such events, not more.
	 */
	uint64_t max_wait_ns;
	uint64_t stack_keep_ns;		/* default 2 s: how long a stack waits for late events */
	/*
	 * Added after the first version: default 1 ms, how far the clocks of
	 * two CPUs may disagree (td_stitch_settle()).
	 */
	uint64_t settle_margin_ns;
	/*
	 * Added later. Off (the default): an event whose stack is known lost,
	 * because a record of a later kernel entry of its task came (the
	 * kernel writes a task's stack before it can enter the kernel again),
	 * is written as lost by td_stitch_settle() instead of waiting out
	 * max_wait_ns. On: only for captures that hold every stack back on
	 * purpose (the memory benchmark).
	 */
	bool keep_superseded;
	/*
	 * Added later: default 4096, how many waiting events are kept as they
	 * were fed, not packed (see Memory above). While few wait, as when
	 * every stack comes within milliseconds, packing an event and
	 * unpacking it again costs more than the rest of its stay; a bound
	 * keeps a million waiting events at their packed size.
	 */
	size_t max_whole_events;
	/* Added later: pack every waiting event (tests, and measuring the packing). */
	bool pack_all;
};

/* Fills cfg with the defaults above. */
void td_stitch_config_default(struct td_stitch_config *cfg);

/*
 * Called once per event, in the order events resolve. @us is NULL unless
 * status is TD_STITCHED or TD_UNWIND_FAILED; for TD_INPLACE the stack is
 * ev->inplace_stack. Both pointers are valid only during the call.
 */
typedef void (*td_emit_fn)(const struct td_event *ev, const struct td_ustack *us,
			   enum td_status status, void *arg);

struct td_stitch_stats {
	uint64_t events;		/* events fed */
	uint64_t stacks;		/* stacks fed */
	uint64_t emitted[TD_NR_STATUS];
	uint64_t evicted_events;	/* emitted as lost: max_pending_events was hit */
	uint64_t evicted_stacks;	/* dropped unused because max_stacks was hit */
	/* Stacks dropped (expired, evicted, flushed) that no event asked for. */
	uint64_t orphan_stacks;
	size_t pending_events;		/* now */
	size_t pending_stacks;		/* now: stacks kept, used or not */
	/* Added after the first version of this contract: */
	uint64_t late_events;		/* stitched to a stack that had arrived first */
	/* A 2nd stack for a (tid, cookie) within max_wait_ns: dropped, 1st kept. */
	uint64_t duplicate_stacks;
	/* (tid, cookie) seen again over max_wait_ns later (counter wrap): not joined. */
	uint64_t stale_records;
	uint64_t alloc_failures;	/* out of memory: event emitted as lost, stack dropped */
	/*
	 * Used stacks dropped before stack_keep_ns because max_stacks was hit:
	 * a late event of their kernel entry would now be lost. Many of these
	 * mean max_stacks is small for the event rate.
	 */
	uint64_t evicted_used_stacks;
	/* Stacks the kernel marked as unwound after an execve() (TD_USTACK_EXEC). */
	uint64_t exec_stacks;
	/*
	 * Waiting events keep one copy of each distinct body (record data,
	 * CPU, process, comm, kernel stack): how many there are now, and
	 * their bytes.
	 */
	size_t packed_bodies;
	size_t packed_bytes;
	/* Stacks dropped by td_stitch_settle() (used or not; orphans counted too). */
	uint64_t settled_stacks;
	/*
	 * Emitted as lost by td_stitch_settle() before max_wait_ns: a later
	 * kernel entry of their task showed that their stack was lost.
	 */
	uint64_t superseded;
	/* Added later: waiting events kept as they were fed, not packed (now). */
	size_t whole_events;
};

struct td_stitcher;

/* @cfg may be NULL (all defaults). Returns NULL when out of memory. */
struct td_stitcher *td_stitch_new(const struct td_stitch_config *cfg, td_emit_fn emit,
				  void *arg);
/* Emits nothing; call td_stitch_flush() first to keep pending events. */
void td_stitch_free(struct td_stitcher *st);

/*
 * Takes ownership of @ev (freed with td_event_free() when it is emitted or
 * packed to wait); the event emitted has its fields, as seq the order of
 * emission, and as pid, when it had none, the tgid its stack record says.
 * May emit (synchronously) before returning: the event itself when it has
 * no cookie, is in-place or its stack is already here, and the oldest
 * pending event when max_pending_events is reached.
 */
void td_stitch_event(struct td_stitcher *st, struct td_event *ev);
/*
 * Takes ownership of @us (freed with td_ustack_free()). Emits every pending
 * event of its (tid, cookie) at once; then keeps the stack for late events.
 */
void td_stitch_stack(struct td_stitcher *st, struct td_ustack *us);
/*
 * Trace time has reached @now_ns on every CPU (the caller has read
 * everything older): emit as TD_USER_LOST the events that waited more than
 * max_wait_ns, drop stacks older than stack_keep_ns. Time never goes back:
 * a smaller @now_ns than before is ignored.
 */
void td_stitch_advance(struct td_stitcher *st, uint64_t now_ns);
/*
 * Every event with a timestamp before @fed_ns has been fed (the caller has
 * read every CPU that far, and holds back none of those events itself):
 * drop the stacks whose task has left their kernel entry before @fed_ns -
 * settle_margin_ns (a stack of the task's next entry came before it): no
 * event can ask for them any more. Emits as TD_USER_LOST the events whose
 * task entered the kernel again before that time without their stack
 * having come (counted in superseded). Time never goes back: a smaller
 * @fed_ns than before is ignored.
 */
void td_stitch_settle(struct td_stitcher *st, uint64_t fed_ns);
/* End of input: emit every pending event as TD_USER_LOST, drop stacks. */
void td_stitch_flush(struct td_stitcher *st);

void td_stitch_get_stats(const struct td_stitcher *st, struct td_stitch_stats *stats);

#endif /* TRACE_DEFER_STITCH_H */
