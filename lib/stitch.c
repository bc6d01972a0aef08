// SPDX-License-Identifier: GPL-2.0
/*
 * The stitcher (see include/trace-defer/stitch.h for what it promises).
 *
 * One hash table maps (tid, cookie) to a key entry. A key entry is in one of
 * two modes, never both:
 *  - waiting: it holds the events that asked for a stack that has not come
 *    yet (a singly linked list in arrival order);
 *  - stack: it holds the stack, kept for late events of the same kernel
 *    entry until stack_keep_ns have passed.
 * Every pending event is also on one global list in arrival order (the
 * oldest is evicted first when max_pending_events is reached, and expired
 * first by td_stitch_advance()), and every kept stack is on a list in
 * arrival order (evicted at max_stacks, expired after stack_keep_ns).
 *
 * The global list is ordered by arrival, not by timestamp: records from
 * different CPUs are fed slightly out of time order, so an event may expire
 * a little after its deadline, when the older ones ahead of it have gone.
 * That never joins wrong records: a match always checks the timestamps.
 *
 * Nodes come from free lists allocated in chunks, so the steady state does
 * no allocation at all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <trace-defer/stitch.h>

#define POOL_CHUNK_ITEMS	512
#define TABLE_MIN_SIZE		1024	/* slots, a power of two */

struct key_entry;

/* One event waiting for its stack. */
struct pending {
	struct td_event *ev;
	struct pending *prev, *next;	/* global list, oldest first */
	struct pending *knext;		/* next waiting event of the same key */
	struct key_entry *ke;
};

struct key_entry {
	uint64_t cookie;
	int tid;
	bool used;			/* the stack went to at least one event */
	struct td_ustack *us;		/* stack mode when non-NULL */
	struct key_entry *sprev, *snext; /* kept stacks, oldest first */
	struct pending *phead, *ptail;	/* waiting mode */
};

/*
 * Open addressing, linear probing; ke == NULL marks an empty slot. The one
 * table of the library not built on lib/htab.c, on purpose: (tid, cookie)
 * sits in the slot, so the miss every new event costs reads no entry.
 * Measured on the replay bench with the chained table instead: stitching
 * went from ~250 to ~380 cpu ns/event.
 */
struct slot {
	uint64_t cookie;
	int tid;
	struct key_entry *ke;
};

struct table {
	struct slot *slots;
	size_t mask;
	size_t count;
};

struct pool_chunk {
	struct pool_chunk *next;
};

/* Fixed-size items; a free item stores the free list link in its first word. */
struct pool {
	size_t item_size;
	void *free;
	struct pool_chunk *chunks;
};

struct td_stitcher {
	struct td_stitch_config cfg;
	td_emit_fn emit;
	void *arg;

	struct table tab;
	struct pool pending_pool;
	struct pool key_pool;

	struct pending *phead, *ptail;	/* all waiting events */
	struct key_entry *shead, *stail; /* all kept stacks */

	uint64_t now;
	uint64_t next_seq;
	struct td_stitch_stats stats;
};

/* ---- pools ---- */

static void pool_init(struct pool *p, size_t item_size)
{
	p->item_size = (item_size + sizeof(void *) - 1) & ~(sizeof(void *) - 1);
	p->free = NULL;
	p->chunks = NULL;
}

static void *pool_get(struct pool *p)
{
	void *item;

	if (!p->free) {
		/* The chunk header is one pointer: items stay pointer aligned. */
		struct pool_chunk *c = malloc(sizeof(*c) + POOL_CHUNK_ITEMS * p->item_size);
		char *base;
		int i;

		if (!c)
			return NULL;
		c->next = p->chunks;
		p->chunks = c;
		base = (char *)(c + 1);
		for (i = POOL_CHUNK_ITEMS - 1; i >= 0; i--) {
			void *it = base + (size_t)i * p->item_size;

			*(void **)it = p->free;
			p->free = it;
		}
	}
	item = p->free;
	p->free = *(void **)item;
	return item;
}

static void pool_put(struct pool *p, void *item)
{
	*(void **)item = p->free;
	p->free = item;
}

static void pool_destroy(struct pool *p)
{
	while (p->chunks) {
		struct pool_chunk *c = p->chunks;

		p->chunks = c->next;
		free(c);
	}
	p->free = NULL;
}

/* ---- hash table on (tid, cookie) ---- */

static inline size_t key_hash(int tid, uint64_t cookie)
{
	uint64_t h = cookie ^ ((uint64_t)(uint32_t)tid * 0x9e3779b97f4a7c15ULL);

	/* splitmix64 finalizer: cookies differ mostly in their high half. */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (size_t)h;
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

static size_t table_find(const struct table *t, int tid, uint64_t cookie)
{
	size_t i = key_hash(tid, cookie) & t->mask;

	while (t->slots[i].ke) {
		if (t->slots[i].cookie == cookie && t->slots[i].tid == tid)
			return i;
		i = (i + 1) & t->mask;
	}
	return i;	/* the empty slot where the key would go */
}

static int table_grow(struct table *t)
{
	struct table nt;
	size_t i;

	if (table_init(&nt, (t->mask + 1) * 2))
		return -ENOMEM;
	for (i = 0; i <= t->mask; i++) {
		struct slot *s = &t->slots[i];

		if (s->ke)
			nt.slots[table_find(&nt, s->tid, s->cookie)] = *s;
	}
	nt.count = t->count;
	free(t->slots);
	*t = nt;
	return 0;
}

/*
 * @ke's key must not be in the table yet; @hint is where table_find() said
 * it would go (the table has not changed since).
 */
static int table_insert(struct table *t, struct key_entry *ke, size_t hint)
{
	struct slot *s;

	/* Keep the load at or under 3/4 so probe sequences stay short. */
	if ((t->count + 1) * 4 > (t->mask + 1) * 3) {
		if (table_grow(t)) {
			if (t->count + 1 > t->mask)
				return -ENOMEM;	/* keep one slot empty: probes must end */
		} else {
			hint = table_find(t, ke->tid, ke->cookie);
		}
	}
	s = &t->slots[hint];
	s->cookie = ke->cookie;
	s->tid = ke->tid;
	s->ke = ke;
	t->count++;
	return 0;
}

/* Backward-shift deletion: no tombstones, lookups stay short. */
static void table_remove(struct table *t, int tid, uint64_t cookie)
{
	size_t i = table_find(t, tid, cookie);
	size_t j = i;

	if (!t->slots[i].ke)
		return;
	for (;;) {
		size_t home;

		j = (j + 1) & t->mask;
		if (!t->slots[j].ke)
			break;
		home = key_hash(t->slots[j].tid, t->slots[j].cookie) & t->mask;
		/* Slot j may move to i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].ke = NULL;
	t->count--;
}

/* ---- key entries, lists ---- */

/* @slot: from table_find() for this key, with no table change since. */
static struct key_entry *key_new(struct td_stitcher *st, int tid, uint64_t cookie, size_t slot)
{
	struct key_entry *ke = pool_get(&st->key_pool);

	if (!ke)
		return NULL;
	memset(ke, 0, sizeof(*ke));
	ke->tid = tid;
	ke->cookie = cookie;
	if (table_insert(&st->tab, ke, slot)) {
		pool_put(&st->key_pool, ke);
		return NULL;
	}
	return ke;
}

static void key_free(struct td_stitcher *st, struct key_entry *ke)
{
	table_remove(&st->tab, ke->tid, ke->cookie);
	pool_put(&st->key_pool, ke);
}

static void stack_list_del(struct td_stitcher *st, struct key_entry *ke)
{
	if (ke->sprev)
		ke->sprev->snext = ke->snext;
	else
		st->shead = ke->snext;
	if (ke->snext)
		ke->snext->sprev = ke->sprev;
	else
		st->stail = ke->sprev;
	ke->sprev = ke->snext = NULL;
}

static void stack_list_add(struct td_stitcher *st, struct key_entry *ke)
{
	ke->snext = NULL;
	ke->sprev = st->stail;
	if (st->stail)
		st->stail->snext = ke;
	else
		st->shead = ke;
	st->stail = ke;
}

static void pending_list_del(struct td_stitcher *st, struct pending *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		st->phead = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		st->ptail = p->prev;
}

/* Drop @ke's stack; the entry stays (empty) for the caller to reuse or free. */
static void stack_drop(struct td_stitcher *st, struct key_entry *ke)
{
	if (!ke->used)
		st->stats.orphan_stacks++;
	stack_list_del(st, ke);
	td_ustack_free(ke->us);
	ke->us = NULL;
	ke->used = false;
	st->stats.pending_stacks--;
}

/* ---- emitting ---- */

static void emit(struct td_stitcher *st, struct td_event *ev, const struct td_ustack *us,
		 enum td_status status)
{
	st->stats.emitted[status]++;
	st->emit(ev, us, status, st->arg);
	td_event_free(ev);
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

/* Emit the oldest waiting event as lost; it heads its key's list too. */
static void pending_expire_oldest(struct td_stitcher *st)
{
	struct pending *p = st->phead;
	struct key_entry *ke = p->ke;
	struct td_event *ev = p->ev;

	pending_list_del(st, p);
	ke->phead = p->knext;
	if (!ke->phead)
		key_free(st, ke);
	pool_put(&st->pending_pool, p);
	st->stats.pending_events--;
	emit(st, ev, NULL, TD_USER_LOST);
}

static void stack_expire_oldest(struct td_stitcher *st)
{
	struct key_entry *ke = st->shead;

	stack_drop(st, ke);
	key_free(st, ke);
}

/* ---- API ---- */

void td_stitch_config_default(struct td_stitch_config *cfg)
{
	cfg->max_pending_events = 1 << 20;
	cfg->max_stacks = 1 << 16;
	cfg->max_wait_ns = 2000000000ULL;
	cfg->stack_keep_ns = 2000000000ULL;
}

struct td_stitcher *td_stitch_new(const struct td_stitch_config *cfg, td_emit_fn emit_fn,
				  void *arg)
{
	struct td_stitch_config def;
	struct td_stitcher *st;

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
	st->emit = emit_fn;
	st->arg = arg;
	pool_init(&st->pending_pool, sizeof(struct pending));
	pool_init(&st->key_pool, sizeof(struct key_entry));
	if (table_init(&st->tab, TABLE_MIN_SIZE)) {
		free(st);
		return NULL;
	}
	return st;
}

void td_stitch_free(struct td_stitcher *st)
{
	struct pending *p;
	struct key_entry *ke;

	if (!st)
		return;
	for (p = st->phead; p; p = p->next)
		td_event_free(p->ev);
	for (ke = st->shead; ke; ke = ke->snext)
		td_ustack_free(ke->us);
	pool_destroy(&st->pending_pool);
	pool_destroy(&st->key_pool);
	free(st->tab.slots);
	free(st);
}

void td_stitch_event(struct td_stitcher *st, struct td_event *ev)
{
	struct key_entry *ke;
	struct pending *p;
	size_t slot;

	st->stats.events++;
	ev->seq = st->next_seq++;
	if (ev->inplace) {
		emit(st, ev, NULL, TD_INPLACE);
		return;
	}
	if (!ev->has_cookie) {
		emit(st, ev, NULL, TD_NO_USER);
		return;
	}

	/* Make room first: eviction may free the very entry we would find. */
	if (st->stats.pending_events >= st->cfg.max_pending_events) {
		st->stats.evicted_events++;
		pending_expire_oldest(st);
	}

	slot = table_find(&st->tab, ev->tid, ev->cookie);
	ke = st->tab.slots[slot].ke;
	if (ke && ke->us) {
		if (within(ev->ts, ke->us->ts, st->cfg.max_wait_ns)) {
			ke->used = true;
			st->stats.late_events++;
			emit(st, ev, ke->us, stack_status(ke->us));
			return;
		}
		/* The same key long ago: a wrapped counter, not our stack. */
		st->stats.stale_records++;
		stack_drop(st, ke);
	}

	p = pool_get(&st->pending_pool);
	if (!p)
		goto nomem;
	if (!ke) {
		ke = key_new(st, ev->tid, ev->cookie, slot);
		if (!ke) {
			pool_put(&st->pending_pool, p);
			goto nomem;
		}
	}
	p->ev = ev;
	p->ke = ke;
	p->knext = NULL;
	if (ke->ptail)
		ke->ptail->knext = p;
	else
		ke->phead = p;
	ke->ptail = p;
	p->next = NULL;
	p->prev = st->ptail;
	if (st->ptail)
		st->ptail->next = p;
	else
		st->phead = p;
	st->ptail = p;
	st->stats.pending_events++;
	return;

nomem:
	/* An entry left empty by stack_drop() must not linger. */
	if (ke && !ke->us && !ke->phead)
		key_free(st, ke);
	st->stats.alloc_failures++;
	emit(st, ev, NULL, TD_USER_LOST);
}

void td_stitch_stack(struct td_stitcher *st, struct td_ustack *us)
{
	struct key_entry *ke;
	bool used = false;
	size_t slot;

	st->stats.stacks++;
	if (us->flags & TD_USTACK_EXEC)
		st->stats.exec_stacks++;
	slot = table_find(&st->tab, us->tid, us->cookie);
	ke = st->tab.slots[slot].ke;
	if (ke && ke->us) {
		if (within(us->ts, ke->us->ts, st->cfg.max_wait_ns)) {
			st->stats.duplicate_stacks++;
			td_ustack_free(us);
			return;
		}
		st->stats.stale_records++;
		stack_drop(st, ke);
	} else if (ke) {
		struct pending *p = ke->phead;

		/* Waiting events: all of them get this stack (or are stale). */
		ke->phead = ke->ptail = NULL;
		while (p) {
			struct pending *next = p->knext;
			struct td_event *ev = p->ev;

			pending_list_del(st, p);
			pool_put(&st->pending_pool, p);
			st->stats.pending_events--;
			if (within(ev->ts, us->ts, st->cfg.max_wait_ns)) {
				used = true;
				emit(st, ev, us, stack_status(us));
			} else {
				st->stats.stale_records++;
				emit(st, ev, NULL, TD_USER_LOST);
			}
			p = next;
		}
	} else {
		ke = key_new(st, us->tid, us->cookie, slot);
		if (!ke) {
			st->stats.alloc_failures++;
			st->stats.orphan_stacks++;
			td_ustack_free(us);
			return;
		}
	}

	/* Keep it for late events; make room if needed (ke is not listed yet). */
	if (st->stats.pending_stacks >= st->cfg.max_stacks) {
		if (st->shead->used)
			st->stats.evicted_used_stacks++;
		else
			st->stats.evicted_stacks++;
		stack_expire_oldest(st);
	}
	ke->us = us;
	ke->used = used;
	stack_list_add(st, ke);
	st->stats.pending_stacks++;
}

void td_stitch_advance(struct td_stitcher *st, uint64_t now_ns)
{
	if (now_ns > st->now)
		st->now = now_ns;
	now_ns = st->now;

	/* Strictly more than the limit: a match at exactly the limit is allowed. */
	while (st->phead && st->phead->ev->ts < now_ns &&
	       now_ns - st->phead->ev->ts > st->cfg.max_wait_ns)
		pending_expire_oldest(st);
	while (st->shead && st->shead->us->ts < now_ns &&
	       now_ns - st->shead->us->ts > st->cfg.stack_keep_ns)
		stack_expire_oldest(st);
}

void td_stitch_flush(struct td_stitcher *st)
{
	while (st->phead)
		pending_expire_oldest(st);
	while (st->shead)
		stack_expire_oldest(st);
}

void td_stitch_get_stats(const struct td_stitcher *st, struct td_stitch_stats *stats)
{
	*stats = st->stats;
}
