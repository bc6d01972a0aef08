/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel stacks shared between events: the same few kernel paths ask for
 * user stacks again and again (a sched_switch from schedule(), a syscall
 * entry), so an event pending for its user stack points to one counted
 * copy of its kernel stack instead of holding its own. Private to the
 * library: the parser interns, td_event_free() releases.
 *
 * User stacks (deferred stack records) the same way, in a table of their
 * own: a task that blocks in the same place again records the same stack,
 * and one decoded copy (IPs and the files of its frames) then serves every
 * record of it, found by the record's bytes before anything is converted,
 * and its slot finds its named frames without hashing them again.
 * td_ustack_free() releases.
 *
 * An interned stack stays in the table (which holds a reference) until the
 * table is full, then the table starts again; the stacks of events still
 * alive stay theirs. Not thread safe: events are freed in the thread that
 * parsed them.
 */
#ifndef TD_LIB_KSTACK_H
#define TD_LIB_KSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include <trace-defer/filetab.h>
#include <trace-defer/types.h>

/* td_event.alloc_flags: kstack.ips is a shared block, released with td_kstack_put(). */
#define TD_ALLOC_KSTACK_SHARED	0x2
/*
 * td_event.alloc_flags: kstack.ips is a shared block another holder keeps
 * alive (an event unpacked from a pending body); the event holds no
 * reference of its own.
 */
#define TD_ALLOC_KSTACK_BORROWED	0x4

/* Does @ev's kstack.ips point into a shared block? */
static inline bool td_kstack_is_shared(const struct td_event *ev)
{
	return ev->kstack.ips && (ev->alloc_flags & (TD_ALLOC_KSTACK_SHARED |
						     TD_ALLOC_KSTACK_BORROWED));
}

struct td_kstacks;

/*
 * At most @max_stacks stacks (0: 4096) and TD_KSTACKS_FRAMES_PER_STACK
 * frames per stack on average in the table: it starts again when either
 * would be exceeded.
 */
#define TD_KSTACKS_FRAMES_PER_STACK	32
struct td_kstacks *td_kstacks_new(unsigned int max_stacks);
/* Drops the table's references; stacks still held by events live on. */
void td_kstacks_free(struct td_kstacks *ks);

/*
 * Set @ev->kstack to the shared copy of the @nr little-endian 64-bit IPs
 * at @le (unaligned), interning it when new. Returns 0 or -ENOMEM.
 */
int td_kstacks_get(struct td_kstacks *ks, struct td_event *ev, const uint8_t *le,
		   unsigned int nr);

/* Release @ev's reference to its shared kernel stack. */
void td_kstack_put(struct td_event *ev);

/* td_ustack.alloc_flags: ips.ips (and files) are a shared block, released with td_ustack_put(). */
#define TD_ALLOC_USTACK_SHARED	0x10

static inline bool td_ustack_is_shared(const struct td_ustack *us)
{
	return us->ips.ips && (us->alloc_flags & TD_ALLOC_USTACK_SHARED);
}

/*
 * Set @us->ips (and @us->files, when @area is not NULL: the record's file
 * identity, td_ustack_locate_files()) to the shared copy of the @nr
 * little-endian IPs at @le, interning it when new (files decoded then).
 * *@bad: the frames the record's file identity could not vouch for
 * (td_ufile_area_decode()). Use a table of its own for user stacks.
 * Returns 0 or -ENOMEM.
 */
int td_ustacks_get(struct td_kstacks *ks, struct td_ustack *us, const uint8_t *le,
		   unsigned int nr, const struct td_ufile_area *area, unsigned int *bad);

/* Release @us's reference to its shared block (nothing if it has none). */
void td_ustack_put(struct td_ustack *us);

/*
 * One more reference to the shared block whose IPs are @ips (an event's
 * kstack.ips with TD_ALLOC_KSTACK_SHARED), for a holder that is not an
 * event; dropped with td_kstack_release().
 */
void td_kstack_hold(const uint64_t *ips);
void td_kstack_release(const uint64_t *ips);

/*
 * A few slots per shared block (@ips: an event's kstack.ips as above, or
 * a shared user stack's ips.ips) for what a user derives from the stack,
 * so that it need not hash the IPs to find it again: the pipeline keeps
 * the stack's named frames there. @way picks the slot (any number; taken
 * modulo TD_STACK_SLOTS): a user stack is named per process, and the same
 * bytes may be met in a few. The value set with @tag comes back only for
 * the same @tag (nonzero) and way: the user changes its tag whenever
 * values it set may have gone.
 */
#define TD_STACK_SLOTS	4
const void *td_stack_slot_get(const uint64_t *ips, uint64_t tag, unsigned int way);
void td_stack_slot_set(const uint64_t *ips, uint64_t tag, unsigned int way, const void *val);

/* The first slot. */
static inline const void *td_kstack_slot_get(const uint64_t *ips, uint64_t tag)
{
	return td_stack_slot_get(ips, tag, 0);
}

static inline void td_kstack_slot_set(const uint64_t *ips, uint64_t tag, const void *val)
{
	td_stack_slot_set(ips, tag, 0, val);
}

struct td_kstacks_stats {
	uint64_t lookups, hits, stacks, resets;
};

void td_kstacks_get_stats(const struct td_kstacks *ks, struct td_kstacks_stats *st);

#endif /* TD_LIB_KSTACK_H */
