// SPDX-License-Identifier: GPL-2.0
/*
 * The stitcher (see include/trace-defer/stitch.h for what it promises).
 *
 * One hash table maps (tid, cookie) to what is known of that key, in one of
 * two modes, never both:
 *  - waiting: the events that asked for a stack that has not come yet, a
 *    circular list in arrival order; the table points to the newest (the
 *    tail), whose link leads to the oldest;
 *  - stack: a key entry holding the stack, kept for late events of the
 *    same kernel entry until stack_keep_ns have passed.
 * Every pending event is also on one global list in arrival order (the
 * oldest is evicted first when max_pending_events is reached, and expired
 * first by td_stitch_advance()). Every kept stack is on one of two lists:
 *  - current: the newest stack of its tid (its task entry, below, names
 *    it), in arrival order, expired after stack_keep_ns;
 *  - done: stacks of a kernel entry the task has left, known from a stack
 *    of a later entry of the same tid, in the order that became known;
 *    td_stitch_settle() drops them once every event before that later
 *    stack has been fed. Evicted first at max_stacks.
 * A task's late events (those after its stack, preempted on the way back
 * to user space) can come any time until it leaves the kernel: only a
 * later entry of the task says that it did.
 *
 * The global list is ordered by arrival, not by timestamp: records from
 * different CPUs are fed slightly out of time order, so an event may expire
 * a little after its deadline, when the older ones ahead of it have gone.
 * That never joins wrong records: a match always checks the timestamps.
 *
 * A waiting event is 32 bytes of its own (timestamp, cookie, links) and a
 * body. While at most max_whole_events wait, the body is the event the
 * parser made, kept whole (BODY_WHOLE: an index into st->whole). Beyond,
 * it is packed (evpack.h): the id of a counted body it shares with every
 * waiting event of the same thread, record data and kernel stack; the
 * event the parser made is freed at once. A million waiting events then
 * cost some 50 MB, not the 350 MB of the events themselves. They are
 * unpacked into an event on the stack when emitted. Packing hashes and
 * compares the body, unpacking rebuilds the event: about a tenth of the
 * replay's instructions per event, spent on the usual case of a few
 * hundred events waiting a few milliseconds, hence the whole ones.
 *
 * Entries are 32-bit indices into pools allocated in chunks (no per-item
 * allocation, no pointer-sized links), so the steady state allocates
 * nothing but new bodies.
 *
 * Lost stacks are found before max_wait_ns when the task's next kernel
 * entry shows up: the kernel writes a task's stack on its way back to user
 * space, before it can enter the kernel again. Each task's newest waiting
 * key is kept (one per task, not per event); when a record of a later
 * entry of the task comes, the older key goes on a queue with that
 * record's time, and td_stitch_settle() writes what still waits on it as
 * lost once every event before that time was fed.
 *
 * A second table, on tid alone, holds a task entry for every task with a
 * current stack or a waiting key: both are found with one probe, and a
 * task that keeps running keeps its entry (its stack and its waiting key
 * come and go as fields, not as entries added to and removed from tables).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <trace-defer/stitch.h>

#include "evpack.h"
#include "htab.h"

#define CHUNK_SHIFT		10
#define CHUNK_ITEMS		(1u << CHUNK_SHIFT)
#define TABLE_MIN_SIZE		1024	/* slots, a power of two */
#define NIL			0	/* no entry: index 0 is never handed out */
#define REF_STACK		0x80000000u	/* a slot's ref names a key entry */
#define MAX_INDEX		0x7fffffffu
/* A pending body that is st->whole[body & ~BODY_WHOLE], not an evpack id. */
#define BODY_WHOLE		0x80000000u
#define WHOLE_DEFAULT		4096

/* One event waiting for its stack. */
struct pending {
	uint64_t ts;
	uint64_t cookie;
	uint32_t body;			/* evpack's id, or BODY_WHOLE; it holds the tid */
	uint32_t prev, next;		/* global list, oldest first */
	uint32_t knext;			/* the next waiting event of its key, circular */
};

_Static_assert(sizeof(struct pending) == 32, "a waiting event costs 32 bytes");

/* A stack kept for late events. */
struct key_entry {
	uint64_t cookie;
	int tid;
	struct td_ustack *us;
	uint32_t sprev, snext;		/* its list, oldest first */
	uint64_t until;			/* done: the later entry's stack time */
	uint32_t task;			/* not done: its task's entry */
	bool used;			/* the stack went to at least one event */
	bool done;			/* on the done list, not its task's current */
};

/* Thousands are kept between two settles: at most 48 bytes each. */
_Static_assert(sizeof(struct key_entry) <= 48, "a kept stack's entry is 48 bytes");

/*
 * Open addressing, linear probing; ref == 0 marks an empty slot, else it
 * names a pending event (the newest of its key) or, with REF_STACK, a key
 * entry. tag is the low half of the key's hash: it places the slot (the
 * table never has more than 2^32 slots), and a probe that meets another
 * key reads no entry unless the tags agree. The one table of the library
 * not built on lib/htab.c, on purpose: every new event misses in it.
 */
struct slot {
	uint32_t tag;
	uint32_t ref;
};

struct table {
	struct slot *slots;
	size_t mask;
	size_t count;
};

/*
 * A task with a current stack or a waiting key (the newest, and the time
 * of its first waiting event); freed when it has neither.
 */
struct ttask {
	struct hnode node;
	uint64_t wcookie;
	uint64_t wts;
	int tid;
	uint32_t self;
	uint32_t current;		/* key entry, or NIL */
	bool waiting;
};

/* A waiting key whose stack would have come before @until, if at all. */
struct superseded {
	uint64_t cookie;
	uint64_t until;
	int tid;
};

/*
 * Fixed-size items by index; a free item holds the next free index first.
 * The items lie in one range of address space reserved for the pool's
 * bound and made usable a chunk at a time: an index is an offset from
 * @base, found with no table read (the stitcher turns indices into
 * pointers a dozen times per event), and an item never moves.
 */
struct ipool {
	char *base;
	size_t item_size;
	size_t reserved;		/* bytes */
	uint32_t nr_items, max_items;	/* made usable; room reserved for */
	uint32_t free;
};

struct td_stitcher {
	struct td_stitch_config cfg;
	td_emit_fn emit;
	void *arg;

	struct table tab;
	struct ipool pending_pool;
	struct ipool key_pool;
	struct evpack pack;
	struct td_event **whole;	/* events waiting as fed, by index */
	uint32_t *whole_free;		/* a stack of free indices into whole */
	uint32_t nr_whole_free, max_whole;

	uint32_t phead, ptail;		/* all waiting events */
	uint32_t shead, stail;		/* current stacks (the newest of their tid) */
	uint32_t dhead, dtail;		/* done stacks */
	struct htab tasks;		/* task entries by tid */
	struct ipool task_pool;
	struct superseded *sq;		/* ring, oldest at sq_head */
	size_t sq_head, sq_nr, sq_cap;

	uint64_t now;
	uint64_t fed;			/* td_stitch_settle()'s latest */
	uint64_t next_seq;
	struct td_stitch_stats stats;
};

/* ---- pools ---- */

/* Room for @max_items (at most MAX_INDEX) of @item_size; nothing usable yet. */
static int ipool_init(struct ipool *p, size_t item_size, uint64_t max_items)
{
	memset(p, 0, sizeof(*p));
	p->item_size = item_size;
	/* Index 0 is NIL, and the bound counts whole chunks. */
	if (max_items > MAX_INDEX - CHUNK_ITEMS)
		max_items = MAX_INDEX - CHUNK_ITEMS;
	max_items = (max_items + CHUNK_ITEMS) & ~(uint64_t)(CHUNK_ITEMS - 1);
	p->max_items = (uint32_t)max_items;
	p->reserved = max_items * item_size;
	/* Reserved only: no memory is charged for pages never made usable. */
	p->base = mmap(NULL, p->reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (p->base == MAP_FAILED) {
		p->base = NULL;
		return -ENOMEM;
	}
	return 0;
}

static inline void *ipool_at(const struct ipool *p, uint32_t i)
{
	return p->base + (size_t)i * p->item_size;
}

/* An index, or NIL when out of memory (or of indices). */
static uint32_t ipool_get(struct ipool *p)
{
	uint32_t i;

	if (p->free == NIL) {
		uint32_t base = p->nr_items;
		long page = sysconf(_SC_PAGESIZE);
		size_t from, to;

		if (base + CHUNK_ITEMS > p->max_items)
			return NIL;
		from = (size_t)base * p->item_size;
		to = (size_t)(base + CHUNK_ITEMS) * p->item_size;
		/* Pages may straddle two chunks: the first chunk made them usable. */
		from &= ~((size_t)page - 1);
		if (mprotect(p->base + from, to - from, PROT_READ | PROT_WRITE))
			return NIL;
		p->nr_items += CHUNK_ITEMS;
		/* Index 0 stays unused: it is NIL. */
		for (i = CHUNK_ITEMS; i-- > (base ? 0 : 1);) {
			*(uint32_t *)ipool_at(p, base + i) = p->free;
			p->free = base + i;
		}
	}
	i = p->free;
	p->free = *(uint32_t *)ipool_at(p, i);
	return i;
}

static __always_inline void ipool_put(struct ipool *p, uint32_t i)
{
	*(uint32_t *)ipool_at(p, i) = p->free;
	p->free = i;
}

static void ipool_destroy(struct ipool *p)
{
	if (p->base)
		munmap(p->base, p->reserved);
	memset(p, 0, sizeof(*p));
}

/* Typed, so that the item size is a constant: no multiply. */
static inline struct pending *pend(const struct td_stitcher *st, uint32_t i)
{
	return (struct pending *)st->pending_pool.base + i;
}

static inline struct key_entry *kent(const struct td_stitcher *st, uint32_t i)
{
	return (struct key_entry *)st->key_pool.base + i;
}

/* The thread of a waiting event's body. */
static __always_inline int body_tid(const struct td_stitcher *st, uint32_t body)
{
	if (body & BODY_WHOLE)
		return st->whole[body & ~BODY_WHOLE]->tid;
	return evpack_tid(&st->pack, body);
}

/* ---- hash table on (tid, cookie) ---- */

static inline uint32_t key_tag(int tid, uint64_t cookie)
{
	uint64_t h = cookie ^ ((uint64_t)(uint32_t)tid * 0x9e3779b97f4a7c15ULL);

	/*
	 * The high half of one product: each of its bits depends on every
	 * bit of @h below it, so on both halves of the cookie (which differ
	 * mostly in their high half). A full mix (splitmix64's finalizer)
	 * cost 20 instructions per event more for no fewer probes.
	 */
	return (uint32_t)((h * 0xbf58476d1ce4e5b9ULL) >> 32);
}

static __always_inline bool ref_is(const struct td_stitcher *st, uint32_t ref, int tid,
				   uint64_t cookie)
{
	if (ref & REF_STACK) {
		const struct key_entry *ke = kent(st, ref & ~REF_STACK);

		return ke->cookie == cookie && ke->tid == tid;
	} else {
		const struct pending *p = pend(st, ref);

		return p->cookie == cookie && body_tid(st, p->body) == tid;
	}
}

static int table_init(struct table *t, size_t size)
{
	t->slots = calloc(size, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	t->mask = size - 1;
	t->count = 0;
	return 0;
}

/* The slot of the key, or the empty slot where it would go. */
static __always_inline size_t table_find(const struct td_stitcher *st, int tid, uint64_t cookie,
					uint32_t tag)
{
	const struct table *t = &st->tab;
	size_t i = tag & t->mask;

	while (t->slots[i].ref) {
		if (t->slots[i].tag == tag && ref_is(st, t->slots[i].ref, tid, cookie))
			return i;
		i = (i + 1) & t->mask;
	}
	return i;
}

static int table_grow(struct table *t)
{
	struct table nt;
	size_t i, j;

	if ((t->mask + 1) * 2 > (size_t)UINT32_MAX + 1 || table_init(&nt, (t->mask + 1) * 2))
		return -ENOMEM;
	for (i = 0; i <= t->mask; i++) {
		if (!t->slots[i].ref)
			continue;
		for (j = t->slots[i].tag & nt.mask; nt.slots[j].ref; j = (j + 1) & nt.mask)
			;
		nt.slots[j] = t->slots[i];
	}
	nt.count = t->count;
	free(t->slots);
	*t = nt;
	return 0;
}

/*
 * Put (@tag, @ref) in the empty slot @hint, which table_find() gave for
 * this key with no table change since. Returns 0 or -ENOMEM.
 */
static int table_insert(struct td_stitcher *st, size_t hint, uint32_t tag, uint32_t ref)
{
	struct table *t = &st->tab;

	/*
	 * Keep the load at or under 1/2: nearly every new event misses, and
	 * a miss probes to the end of its run, some 2.5 slots on average at
	 * load 1/2 against 8.5 at 3/4 (at most 16 bytes of table per entry, not 11).
	 */
	if ((t->count + 1) * 2 > (t->mask + 1)) {
		if (table_grow(t)) {
			if (t->count + 1 > t->mask)
				return -ENOMEM;	/* keep one slot empty: probes must end */
		} else {
			for (hint = tag & t->mask; t->slots[hint].ref; hint = (hint + 1) & t->mask)
				;
		}
	}
	t->slots[hint].tag = tag;
	t->slots[hint].ref = ref;
	t->count++;
	return 0;
}

/* Backward-shift deletion of slot @i: no tombstones, lookups stay short. */
static void table_remove_at(struct table *t, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & t->mask;
		if (!t->slots[j].ref)
			break;
		home = t->slots[j].tag & t->mask;
		/* Slot j may move to i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].ref = 0;
	t->count--;
}

static void table_remove(struct td_stitcher *st, int tid, uint64_t cookie)
{
	size_t i = table_find(st, tid, cookie, key_tag(tid, cookie));

	if (st->tab.slots[i].ref)
		table_remove_at(&st->tab, i);
}

/*
 * ---- lists ----
 *
 * These helpers, table_find() and ipool_put() run several times per event:
 * always inline, since a call's frame cost more than their bodies.
 */

static __always_inline void stack_list_del(struct td_stitcher *st, uint32_t k)
{
	struct key_entry *ke = kent(st, k);
	uint32_t *head = ke->done ? &st->dhead : &st->shead;
	uint32_t *tail = ke->done ? &st->dtail : &st->stail;

	if (ke->sprev)
		kent(st, ke->sprev)->snext = ke->snext;
	else
		*head = ke->snext;
	if (ke->snext)
		kent(st, ke->snext)->sprev = ke->sprev;
	else
		*tail = ke->sprev;
	ke->sprev = ke->snext = NIL;
}

/* Append @k to the list ke->done names. */
static __always_inline void stack_list_add(struct td_stitcher *st, uint32_t k)
{
	struct key_entry *ke = kent(st, k);
	uint32_t *head = ke->done ? &st->dhead : &st->shead;
	uint32_t *tail = ke->done ? &st->dtail : &st->stail;

	ke->snext = NIL;
	ke->sprev = *tail;
	if (*tail)
		kent(st, *tail)->snext = k;
	else
		*head = k;
	*tail = k;
}

static inline uint64_t tid_hash(int tid)
{
	return htab_hash_u64(HTAB_SEED, (uint32_t)tid);
}

static inline struct ttask *ttask_at(const struct td_stitcher *st, uint32_t i)
{
	return (struct ttask *)st->task_pool.base + i;
}

/* The entry of @tid, or NULL. */
static struct ttask *task_find(const struct td_stitcher *st, int tid)
{
	struct hnode *n;

	for (n = htab_first(&st->tasks, tid_hash(tid)); n; n = htab_next(n)) {
		struct ttask *t = container_of(n, struct ttask, node);

		if (t->tid == tid)
			return t;
	}
	return NULL;
}

/* A new, empty entry for @tid, which has none; NULL when out of memory. */
static struct ttask *task_new(struct td_stitcher *st, int tid)
{
	uint32_t i = ipool_get(&st->task_pool);
	struct ttask *t;

	if (i == NIL)
		return NULL;
	t = ttask_at(st, i);
	*t = (struct ttask){ .tid = tid, .self = i };
	htab_add(&st->tasks, &t->node, tid_hash(tid));
	return t;
}

/* Free @t if it holds nothing any more. */
static void task_put(struct td_stitcher *st, struct ttask *t)
{
	if (t->current || t->waiting)
		return;
	htab_del(&st->tasks, &t->node);
	ipool_put(&st->task_pool, t->self);
}

static __always_inline void pending_list_del(struct td_stitcher *st, struct pending *p)
{
	if (p->prev)
		pend(st, p->prev)->next = p->next;
	else
		st->phead = p->next;
	if (p->next)
		pend(st, p->next)->prev = p->prev;
	else
		st->ptail = p->prev;
}

/* Drop key entry @k's stack and free the entry; its slot is the caller's. */
static void stack_drop(struct td_stitcher *st, uint32_t k)
{
	struct key_entry *ke = kent(st, k);

	if (!ke->used)
		st->stats.orphan_stacks++;
	stack_list_del(st, k);
	if (!ke->done) {
		struct ttask *t = ttask_at(st, ke->task);

		t->current = NIL;
		task_put(st, t);
	}
	td_ustack_free(ke->us);
	ipool_put(&st->key_pool, k);
	st->stats.pending_stacks--;
}

/* ---- emitting ---- */

static void emit(struct td_stitcher *st, struct td_event *ev, const struct td_ustack *us,
		 enum td_status status)
{
	ev->seq = st->next_seq++;
	/* The deferred stack's own record says the process, should the event not. */
	if (ev->pid <= 0 && us && us->tgid > 0)
		ev->pid = us->tgid;
	st->stats.emitted[status]++;
	st->emit(ev, us, status, st->arg);
}

static void emit_free(struct td_stitcher *st, struct td_event *ev, const struct td_ustack *us,
		      enum td_status status)
{
	emit(st, ev, us, status);
	td_event_free(ev);
}

/* Emit waiting event @i (off every list already) and free it. */
static void emit_pending(struct td_stitcher *st, uint32_t i, const struct td_ustack *us,
			 enum td_status status)
{
	struct pending *p = pend(st, i);
	uint32_t body = p->body;
	struct td_event ev;

	if (body & BODY_WHOLE) {
		struct td_event *whole = st->whole[body & ~BODY_WHOLE];

		st->whole_free[st->nr_whole_free++] = body & ~BODY_WHOLE;
		ipool_put(&st->pending_pool, i);
		st->stats.pending_events--;
		emit_free(st, whole, us, status);
		return;
	}
	evpack_unpack(&st->pack, body, &ev);
	ev.ts = p->ts;
	ev.cookie = p->cookie;
	ipool_put(&st->pending_pool, i);
	st->stats.pending_events--;
	emit(st, &ev, us, status);
	evpack_put(&st->pack, body);
}

static enum td_status stack_status(const struct td_ustack *us)
{
	/* The new program's stack: not the one of the events before the execve() */
	if (us->flags & TD_USTACK_EXEC)
		return TD_USER_LOST;
	return us->ips.nr ? TD_STITCHED : TD_UNWIND_FAILED;
}

static bool within(uint64_t a, uint64_t b, uint64_t limit)
{
	return (a > b ? a - b : b - a) <= limit;
}

/* ---- lost stacks, known from the task's next entry ---- */

/* @t's waiting key waits no more (@t may be freed). */
static void twait_del(struct td_stitcher *st, struct ttask *t)
{
	t->waiting = false;
	task_put(st, t);
}

/* Key (@tid, @cookie) waits no more. */
static void twait_forget(struct td_stitcher *st, int tid, uint64_t cookie)
{
	struct ttask *t = task_find(st, tid);

	if (t && t->waiting && t->wcookie == cookie)
		twait_del(st, t);
}

/*
 * The stack of key (@tid, @cookie), if the kernel wrote one, is older than
 * @until: queued for td_stitch_settle(). A full queue, or no memory, only
 * leaves the key to max_wait_ns.
 */
static void supersede(struct td_stitcher *st, int tid, uint64_t cookie, uint64_t until)
{
	if (st->sq_nr == st->sq_cap) {
		size_t cap = st->sq_cap ? 2 * st->sq_cap : 64, i;
		struct superseded *n;

		if (st->sq_nr >= st->cfg.max_pending_events)
			return;
		n = malloc(cap * sizeof(*n));
		if (!n)
			return;
		for (i = 0; i < st->sq_nr; i++)
			n[i] = st->sq[(st->sq_head + i) % st->sq_cap];
		free(st->sq);
		st->sq = n;
		st->sq_cap = cap;
		st->sq_head = 0;
	}
	st->sq[(st->sq_head + st->sq_nr++) % st->sq_cap] =
		(struct superseded){ .cookie = cookie, .until = until, .tid = tid };
}

/*
 * Key (@tid, @cookie) starts waiting, with an event at @ts. Of two waiting
 * keys of a task the older is superseded by the newer's first event; a
 * stack of a later entry of the task may also have come first (records of
 * two CPUs come out of order).
 */
static void twait_note(struct td_stitcher *st, int tid, uint64_t cookie, uint64_t ts)
{
	struct ttask *t = task_find(st, tid);
	uint32_t c = t ? t->current : NIL;

	if (c && kent(st, c)->us->ts > ts) {
		supersede(st, tid, cookie, kent(st, c)->us->ts);
		return;
	}
	if (t && t->waiting && t->wts > ts) {
		supersede(st, tid, cookie, t->wts);
		return;
	}
	if (t && t->waiting)
		supersede(st, tid, t->wcookie, ts);
	if (!t)
		t = task_new(st, tid);
	/* No memory: the key is left to max_wait_ns. */
	if (!t)
		return;
	t->waiting = true;
	t->wcookie = cookie;
	t->wts = ts;
}

/*
 * Stack @us came, @t is its task's entry (or NULL): its key waits no more,
 * and an older waiting key of its task is superseded. @t stays even if it
 * holds nothing now: the caller makes the stack its current, or puts it.
 */
static void twait_stack(struct td_stitcher *st, struct ttask *t, const struct td_ustack *us)
{
	if (!t || !t->waiting)
		return;
	if (t->wcookie == us->cookie) {
		t->waiting = false;
	} else if (us->ts > t->wts) {
		supersede(st, us->tid, t->wcookie, us->ts);
		t->waiting = false;
	}
}

/*
 * Emit every event waiting on the key whose newest is @ref, oldest first,
 * off every list (the key's slot is the caller's): with stack @us when
 * within max_wait_ns of it, else as lost (stale); @us NULL: all lost, the
 * key superseded. Returns whether @us went to any.
 */
static bool emit_key(struct td_stitcher *st, uint32_t ref, const struct td_ustack *us)
{
	uint32_t i = pend(st, ref)->knext;	/* the oldest */
	bool used = false;

	for (;;) {
		struct pending *p = pend(st, i);
		uint32_t next = p->knext;
		bool last = i == ref;

		pending_list_del(st, p);
		if (!us) {
			st->stats.superseded++;
			emit_pending(st, i, NULL, TD_USER_LOST);
		} else if (within(p->ts, us->ts, st->cfg.max_wait_ns)) {
			used = true;
			emit_pending(st, i, us, stack_status(us));
		} else {
			st->stats.stale_records++;
			emit_pending(st, i, NULL, TD_USER_LOST);
		}
		if (last)
			return used;
		i = next;
	}
}

/* Write what still waits on key (@tid, @cookie) as lost. */
static void release_key(struct td_stitcher *st, int tid, uint64_t cookie)
{
	size_t s = table_find(st, tid, cookie, key_tag(tid, cookie));
	uint32_t ref = st->tab.slots[s].ref;

	if (!ref || (ref & REF_STACK))
		return;
	table_remove_at(&st->tab, s);
	twait_forget(st, tid, cookie);
	emit_key(st, ref, NULL);
}

/*
 * Emit the oldest waiting event as lost. It is the oldest of its key too:
 * the event after the newest on the key's circular list.
 */
static void pending_expire_oldest(struct td_stitcher *st)
{
	uint32_t i = st->phead;
	struct pending *p = pend(st, i);
	int tid = body_tid(st, p->body);
	size_t s = table_find(st, tid, p->cookie, key_tag(tid, p->cookie));
	uint32_t tail = st->tab.slots[s].ref;

	pending_list_del(st, p);
	if (tail == i) {
		table_remove_at(&st->tab, s);
		twait_forget(st, tid, p->cookie);
	} else {
		pend(st, tail)->knext = p->knext;
	}
	emit_pending(st, i, NULL, TD_USER_LOST);
}

static void stack_expire(struct td_stitcher *st, uint32_t k)
{
	struct key_entry *ke = kent(st, k);

	table_remove(st, ke->tid, ke->cookie);
	stack_drop(st, k);
}

/*
 * Current stack @k of its tid is done: stack @later of the same tid, unwound
 * at @later_ts, is of a later kernel entry, and every event of @k's entry
 * came before it. The caller makes the later one its task's current.
 */
static void stack_done(struct td_stitcher *st, uint32_t k, uint64_t later_ts)
{
	struct key_entry *ke = kent(st, k);

	stack_list_del(st, k);
	ke->done = true;
	ke->until = later_ts;
	stack_list_add(st, k);
}

/*
 * Key entry @k, not listed yet, becomes its tid's current stack, or done at
 * once if its tid has a later one (records of two CPUs come out of order),
 * or if there is no memory for its task's entry (then kept only until
 * every event before it was fed). @t is the tid's entry, or NULL if none.
 */
static void stack_keep(struct td_stitcher *st, uint32_t k, struct ttask *t)
{
	struct key_entry *ke = kent(st, k);
	uint32_t c = t ? t->current : NIL;

	if (!t)
		t = task_new(st, ke->tid);
	ke->done = false;
	if (!t || (c && kent(st, c)->us->ts > ke->us->ts)) {
		if (!t)
			st->stats.alloc_failures++;
		ke->done = true;
		ke->until = c ? kent(st, c)->us->ts : ke->us->ts;
		stack_list_add(st, k);
		return;
	}
	if (c)
		stack_done(st, c, ke->us->ts);
	t->current = k;
	ke->task = t->self;
	stack_list_add(st, k);
}

/* ---- API ---- */

void td_stitch_config_default(struct td_stitch_config *cfg)
{
	*cfg = (struct td_stitch_config){
		.max_pending_events = 1 << 20,
		.max_stacks = 1 << 16,
		.max_wait_ns = 60000000000ULL,
		.stack_keep_ns = 2000000000ULL,
		.settle_margin_ns = 1000000ULL,
	};
}

struct td_stitcher *td_stitch_new(const struct td_stitch_config *cfg, td_emit_fn emit_fn,
				  void *arg)
{
	struct td_stitch_config def;
	struct td_stitcher *st;
	uint64_t pmax, smax;

	if (!emit_fn)
		return NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	td_stitch_config_default(&def);
	st->cfg = cfg ? *cfg : def;
	if (!st->cfg.max_pending_events)
		st->cfg.max_pending_events = def.max_pending_events;
	if (!st->cfg.max_stacks)
		st->cfg.max_stacks = def.max_stacks;
	if (!st->cfg.max_wait_ns)
		st->cfg.max_wait_ns = def.max_wait_ns;
	if (!st->cfg.stack_keep_ns)
		st->cfg.stack_keep_ns = def.stack_keep_ns;
	if (!st->cfg.settle_margin_ns)
		st->cfg.settle_margin_ns = def.settle_margin_ns;
	st->emit = emit_fn;
	st->arg = arg;
	/*
	 * Waiting events and kept stacks are bounded (one of each more while
	 * room is made); a task entry is held by one or the other.
	 */
	pmax = st->cfg.max_pending_events < MAX_INDEX ? st->cfg.max_pending_events : MAX_INDEX;
	smax = st->cfg.max_stacks < MAX_INDEX ? st->cfg.max_stacks : MAX_INDEX;
	if (ipool_init(&st->pending_pool, sizeof(struct pending), pmax + 1) ||
	    ipool_init(&st->key_pool, sizeof(struct key_entry), smax + 1) ||
	    ipool_init(&st->task_pool, sizeof(struct ttask), pmax + smax + 2))
		goto free_pools;
	if (table_init(&st->tab, TABLE_MIN_SIZE))
		goto free_pools;
	if (htab_init(&st->tasks))
		goto free_tab;
	if (evpack_init(&st->pack))
		goto free_tasks;
	st->max_whole = st->cfg.pack_all ? 0 : st->cfg.max_whole_events ? : WHOLE_DEFAULT;
	if (st->max_whole > MAX_INDEX)
		st->max_whole = MAX_INDEX;
	if (st->max_whole) {
		st->whole = calloc(st->max_whole, sizeof(*st->whole));
		st->whole_free = malloc(st->max_whole * sizeof(*st->whole_free));
		if (!st->whole || !st->whole_free)
			goto free_whole;
		/* Handed out from 0 up: the ones in use stay together. */
		while (st->nr_whole_free < st->max_whole) {
			st->whole_free[st->nr_whole_free] = st->max_whole - 1 - st->nr_whole_free;
			st->nr_whole_free++;
		}
	}
	return st;
free_whole:
	free(st->whole);
	free(st->whole_free);
	evpack_destroy(&st->pack);
free_tasks:
	htab_destroy(&st->tasks, NULL);
free_tab:
	free(st->tab.slots);
free_pools:
	ipool_destroy(&st->pending_pool);
	ipool_destroy(&st->key_pool);
	ipool_destroy(&st->task_pool);
	free(st);
	return NULL;
}

void td_stitch_free(struct td_stitcher *st)
{
	uint32_t k;

	if (!st)
		return;
	for (k = st->shead; k; k = kent(st, k)->snext)
		td_ustack_free(kent(st, k)->us);
	for (k = st->dhead; k; k = kent(st, k)->snext)
		td_ustack_free(kent(st, k)->us);
	for (k = st->phead; k; k = pend(st, k)->next)
		if (pend(st, k)->body & BODY_WHOLE)
			td_event_free(st->whole[pend(st, k)->body & ~BODY_WHOLE]);
	free(st->whole);
	free(st->whole_free);
	/* Task entries live in their pool. */
	htab_destroy(&st->tasks, NULL);
	/* The bodies of waiting events go with the table. */
	evpack_destroy(&st->pack);
	ipool_destroy(&st->pending_pool);
	ipool_destroy(&st->key_pool);
	ipool_destroy(&st->task_pool);
	free(st->sq);
	free(st->tab.slots);
	free(st);
}

/*
 * Keep @ev, whole or packed, as the newest waiting event of its key (slot
 * @s: empty, or its newest). Returns 1 when the stitcher keeps @ev itself,
 * 0 when packed (the caller frees it), or -ENOMEM (@ev is still the
 * caller's).
 */
static int pending_add(struct td_stitcher *st, struct td_event *ev, size_t s, uint32_t tag)
{
	uint32_t tail = st->tab.slots[s].ref, i;
	struct pending *p;
	uint32_t body;

	if (st->nr_whole_free) {
		body = st->whole_free[--st->nr_whole_free];
		st->whole[body] = ev;
		body |= BODY_WHOLE;
		/* As a packed one comes out: no data, no size. */
		if (!ev->raw)
			ev->raw_size = 0;
	} else {
		body = evpack_get(&st->pack, ev);
		if (!body)
			return -ENOMEM;
	}
	i = ipool_get(&st->pending_pool);
	if (i == NIL)
		goto nomem;
	p = pend(st, i);
	if (tail) {
		p->knext = pend(st, tail)->knext;
		pend(st, tail)->knext = i;
		st->tab.slots[s].ref = i;
	} else {
		p->knext = i;
		if (table_insert(st, s, tag, i)) {
			ipool_put(&st->pending_pool, i);
			goto nomem;
		}
	}
	p->ts = ev->ts;
	p->cookie = ev->cookie;
	p->body = body;
	p->next = NIL;
	p->prev = st->ptail;
	if (st->ptail)
		pend(st, st->ptail)->next = i;
	else
		st->phead = i;
	st->ptail = i;
	st->stats.pending_events++;
	return body & BODY_WHOLE ? 1 : 0;
nomem:
	if (body & BODY_WHOLE)
		st->whole_free[st->nr_whole_free++] = body & ~BODY_WHOLE;
	else
		evpack_put(&st->pack, body);
	return -ENOMEM;
}

void td_stitch_event(struct td_stitcher *st, struct td_event *ev)
{
	uint32_t ref, tag;
	int kept;
	size_t s;

	st->stats.events++;
	if (ev->inplace) {
		emit_free(st, ev, NULL, TD_INPLACE);
		return;
	}
	if (!ev->has_cookie) {
		emit_free(st, ev, NULL, TD_NO_USER);
		return;
	}

	/* Make room first: eviction may move the very slot we would find. */
	if (st->stats.pending_events >= st->cfg.max_pending_events) {
		st->stats.evicted_events++;
		pending_expire_oldest(st);
	}

	tag = key_tag(ev->tid, ev->cookie);
	s = table_find(st, ev->tid, ev->cookie, tag);
	ref = st->tab.slots[s].ref;
	if (ref & REF_STACK) {
		struct key_entry *ke = kent(st, ref & ~REF_STACK);

		if (within(ev->ts, ke->us->ts, st->cfg.max_wait_ns)) {
			ke->used = true;
			st->stats.late_events++;
			emit_free(st, ev, ke->us, stack_status(ke->us));
			return;
		}
		/* The same key long ago: a wrapped counter, not our stack. */
		st->stats.stale_records++;
		stack_drop(st, ref & ~REF_STACK);
		table_remove_at(&st->tab, s);
		s = table_find(st, ev->tid, ev->cookie, tag);
	}

	kept = pending_add(st, ev, s, tag);
	if (kept < 0) {
		st->stats.alloc_failures++;
		emit_free(st, ev, NULL, TD_USER_LOST);
		return;
	}
	/* The first waiting event of its key (a stale key's stack was dropped above). */
	if (!st->cfg.keep_superseded && (!ref || (ref & REF_STACK)))
		twait_note(st, ev->tid, ev->cookie, ev->ts);
	if (!kept)
		td_event_free(ev);
}

void td_stitch_stack(struct td_stitcher *st, struct td_ustack *us)
{
	uint32_t ref, tag, k;
	struct key_entry *ke;
	bool used = false;
	struct ttask *t;
	size_t s;

	st->stats.stacks++;
	if (us->flags & TD_USTACK_EXEC)
		st->stats.exec_stacks++;
	/* One lookup of the task for all below; the rare paths that may free it find it again. */
	t = task_find(st, us->tid);
	if (!st->cfg.keep_superseded)
		twait_stack(st, t, us);
	tag = key_tag(us->tid, us->cookie);
	s = table_find(st, us->tid, us->cookie, tag);
	ref = st->tab.slots[s].ref;
	if (ref & REF_STACK) {
		ke = kent(st, ref & ~REF_STACK);
		if (within(us->ts, ke->us->ts, st->cfg.max_wait_ns)) {
			st->stats.duplicate_stacks++;
			td_ustack_free(us);
			if (t)
				task_put(st, t);
			return;
		}
		st->stats.stale_records++;
		stack_drop(st, ref & ~REF_STACK);
		st->tab.slots[s].ref = 0;	/* taken again below, same key */
		t = task_find(st, us->tid);
	} else if (ref) {
		/* Waiting events: all of them get this stack (or are stale). */
		st->tab.slots[s].ref = 0;
		used = emit_key(st, ref, us);
	}

	k = ipool_get(&st->key_pool);
	if (k == NIL || (!ref && table_insert(st, s, tag, k | REF_STACK))) {
		if (k != NIL)
			ipool_put(&st->key_pool, k);
		if (ref)	/* the slot we emptied above */
			table_remove_at(&st->tab, s);
		st->stats.alloc_failures++;
		st->stats.orphan_stacks++;
		td_ustack_free(us);
		if (t)
			task_put(st, t);
		return;
	}
	if (ref) {
		st->tab.slots[s].tag = tag;
		st->tab.slots[s].ref = k | REF_STACK;
	}
	ke = kent(st, k);
	ke->cookie = us->cookie;
	ke->tid = us->tid;
	ke->us = us;
	ke->used = used;

	/* Keep it for late events; make room first (done stacks go first). */
	if (st->stats.pending_stacks >= st->cfg.max_stacks) {
		uint32_t old = st->dhead ? st->dhead : st->shead;

		if (kent(st, old)->used)
			st->stats.evicted_used_stacks++;
		else
			st->stats.evicted_stacks++;
		stack_expire(st, old);
		t = task_find(st, us->tid);
	}
	stack_keep(st, k, t);
	st->stats.pending_stacks++;
}

void td_stitch_advance(struct td_stitcher *st, uint64_t now_ns)
{
	if (now_ns > st->now)
		st->now = now_ns;
	now_ns = st->now;

	/* Strictly more than the limit: a match at exactly the limit is allowed. */
	while (st->phead && pend(st, st->phead)->ts < now_ns &&
	       now_ns - pend(st, st->phead)->ts > st->cfg.max_wait_ns)
		pending_expire_oldest(st);
	while (st->shead && kent(st, st->shead)->us->ts < now_ns &&
	       now_ns - kent(st, st->shead)->us->ts > st->cfg.stack_keep_ns)
		stack_expire(st, st->shead);
	while (st->dhead && kent(st, st->dhead)->us->ts < now_ns &&
	       now_ns - kent(st, st->dhead)->us->ts > st->cfg.stack_keep_ns)
		stack_expire(st, st->dhead);
}

void td_stitch_settle(struct td_stitcher *st, uint64_t fed_ns)
{
	if (fed_ns > st->fed)
		st->fed = fed_ns;
	if (st->fed <= st->cfg.settle_margin_ns)
		return;
	fed_ns = st->fed - st->cfg.settle_margin_ns;
	while (st->dhead && kent(st, st->dhead)->until < fed_ns) {
		st->stats.settled_stacks++;
		stack_expire(st, st->dhead);
	}
	while (st->sq_nr && st->sq[st->sq_head].until < fed_ns) {
		struct superseded q = st->sq[st->sq_head];

		st->sq_head = (st->sq_head + 1) % st->sq_cap;
		st->sq_nr--;
		release_key(st, q.tid, q.cookie);
	}
}

void td_stitch_flush(struct td_stitcher *st)
{
	st->sq_nr = 0;
	while (st->phead)
		pending_expire_oldest(st);
	while (st->dhead)
		stack_expire(st, st->dhead);
	while (st->shead)
		stack_expire(st, st->shead);
}

void td_stitch_get_stats(const struct td_stitcher *st, struct td_stitch_stats *stats)
{
	*stats = st->stats;
	stats->packed_bodies = st->pack.bodies;
	stats->packed_bytes = st->pack.bytes;
	stats->whole_events = st->max_whole - st->nr_whole_free;
}
