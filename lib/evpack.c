// SPDX-License-Identifier: GPL-2.0
/*
 * Packed events (see evpack.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "evpack.h"
#include "kstack.h"
#include "recycle.h"

/* The record data an event has: none when it says a size but has no data. */
static int raw_len(const struct td_event *ev)
{
	return ev->raw && ev->raw_size > 0 ? ev->raw_size : 0;
}

static size_t kips_offset(int raw_size)
{
	return ((size_t)raw_size + 7) & ~(size_t)7;
}

/*
 * Words, not bytes: this runs for every event that waits. A shared stack
 * is one block per distinct stack, so its address stands for its IPs.
 */
static uint64_t body_hash(const struct td_event *ev, bool kshared)
{
	const unsigned char *p = ev->raw;
	uint64_t h = HTAB_SEED, w;
	size_t n = (size_t)raw_len(ev);
	size_t i;

	h = htab_hash_u64(h, (uintptr_t)ev->tep_event);
	h = htab_hash_u64(h, ((uint64_t)(uint32_t)ev->cpu << 32) | (uint32_t)ev->pid);
	h = htab_hash_u64(h, (uint32_t)ev->tid);
	memcpy(&w, ev->comm, sizeof(w));
	h = htab_hash_u64(h, w);
	memcpy(&w, ev->comm + 8, sizeof(w));
	h = htab_hash_u64(h, w);
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, sizeof(w));
		h = htab_hash_u64(h, w);
	}
	if (i < n) {
		w = 0;
		memcpy(&w, p + i, n - i);
		h = htab_hash_u64(h, w ^ n);
	}
	h = htab_hash_u64(h, ev->kstack.nr);
	if (kshared)
		return htab_hash_u64(h, (uintptr_t)ev->kstack.ips);
	for (i = 0; i < ev->kstack.nr; i++)
		h = htab_hash_u64(h, ev->kstack.ips[i]);
	return h;
}

static bool body_is(const struct evbody *b, const struct td_event *ev, bool kshared)
{
	int size = raw_len(ev);

	if (b->tep_event != ev->tep_event || b->cpu != ev->cpu || b->pid != ev->pid ||
	    b->tid != ev->tid ||
	    b->raw_size != size || b->kshared != kshared || b->nr_kips != ev->kstack.nr ||
	    memcmp(b->comm, ev->comm, TD_COMM_LEN) || (size && memcmp(b->data, ev->raw, size)))
		return false;
	if (kshared)
		return b->kips == ev->kstack.ips;
	return !b->nr_kips || !memcmp(b->kips, ev->kstack.ips, b->nr_kips * sizeof(*b->kips));
}

int evpack_init(struct evpack *pk)
{
	*pk = (struct evpack){ .nr_ids = 1 };
	return htab_init(&pk->tab);
}

/* What a body of @size record bytes and @own_kips IPs of its own takes. */
static size_t body_len(int size, uint32_t own_kips)
{
	return sizeof(struct evbody) + kips_offset(size) + own_kips * sizeof(uint64_t);
}

static size_t body_len_of(const struct evbody *b)
{
	return body_len(b->raw_size, b->kshared ? 0 : b->nr_kips);
}

/* Bodies come and go with waiting events, thousands a second: recycled. */
static void body_free(struct evbody *b)
{
	if (b->kshared)
		td_kstack_release(b->kips);
	td_block_free(b, body_len_of(b));
}

static void drop_node(struct hnode *n)
{
	body_free(container_of(n, struct evbody, node));
}

void evpack_destroy(struct evpack *pk)
{
	htab_destroy(&pk->tab, drop_node);
	free(pk->byid);
	free(pk->free_ids);
	*pk = (struct evpack){ .nr_ids = 1 };
}

/* An id for @b: a freed one first, else the next, growing the arrays. */
static int id_new(struct evpack *pk, struct evbody *b)
{
	uint32_t id, cap;
	void *p;

	if (pk->nr_free) {
		id = pk->free_ids[--pk->nr_free];
	} else {
		if (pk->nr_ids >= pk->cap_ids) {
			if (pk->cap_ids > UINT32_MAX / 2)
				return -ENOMEM;
			cap = pk->cap_ids ? pk->cap_ids * 2 : 256;
			p = realloc(pk->byid, cap * sizeof(*pk->byid));
			if (!p)
				return -ENOMEM;
			pk->byid = p;
			p = realloc(pk->free_ids, cap * sizeof(*pk->free_ids));
			if (!p)
				return -ENOMEM;
			pk->free_ids = p;
			pk->cap_ids = cap;
		}
		id = pk->nr_ids++;
	}
	pk->byid[id] = b;
	b->id = id;
	return 0;
}

uint32_t evpack_get(struct evpack *pk, const struct td_event *ev)
{
	bool kshared = (ev->alloc_flags & TD_ALLOC_KSTACK_SHARED) && ev->kstack.ips;
	int size = raw_len(ev);
	uint64_t hash = body_hash(ev, kshared);
	struct evbody *b;
	struct hnode *n;
	size_t len;

	for (n = htab_first(&pk->tab, hash); n; n = htab_next(n)) {
		b = container_of(n, struct evbody, node);
		if (body_is(b, ev, kshared)) {
			b->refs++;
			return b->id;
		}
	}
	len = body_len(size, kshared ? 0 : ev->kstack.nr);
	b = td_block_alloc(len);
	if (!b)
		return 0;
	if (id_new(pk, b)) {
		td_block_free(b, len);
		return 0;
	}
	b->refs = 1;
	b->nr_kips = ev->kstack.nr;
	b->tep_event = ev->tep_event;
	b->cpu = ev->cpu;
	b->tid = ev->tid;
	b->pid = ev->pid;
	b->raw_size = size;
	b->kshared = kshared;
	memcpy(b->comm, ev->comm, TD_COMM_LEN);
	if (size)
		memcpy(b->data, ev->raw, size);
	if (kshared) {
		td_kstack_hold(ev->kstack.ips);
		b->kips = ev->kstack.ips;
	} else {
		uint64_t *own = (uint64_t *)(b->data + kips_offset(size));

		if (b->nr_kips)
			memcpy(own, ev->kstack.ips, b->nr_kips * sizeof(*own));
		b->kips = own;
	}
	htab_add(&pk->tab, &b->node, hash);
	pk->bodies++;
	pk->bytes += td_block_size(len);
	return b->id;
}

void evpack_put(struct evpack *pk, uint32_t id)
{
	struct evbody *b = pk->byid[id];

	if (--b->refs)
		return;
	pk->byid[id] = NULL;
	pk->free_ids[pk->nr_free++] = id;
	htab_del(&pk->tab, &b->node);
	pk->bodies--;
	pk->bytes -= td_block_size(body_len_of(b));
	body_free(b);
}

void evpack_unpack(const struct evpack *pk, uint32_t id, struct td_event *ev)
{
	const struct evbody *b = pk->byid[id];

	memset(ev, 0, sizeof(*ev));
	ev->cpu = b->cpu;
	ev->tid = b->tid;
	ev->pid = b->pid;
	memcpy(ev->comm, b->comm, TD_COMM_LEN);
	ev->tep_event = b->tep_event;
	ev->raw = b->raw_size ? (void *)b->data : NULL;
	ev->raw_size = b->raw_size;
	ev->kstack.nr = b->nr_kips;
	ev->kstack.ips = b->nr_kips ? (uint64_t *)b->kips : NULL;
	if (b->kshared)
		ev->alloc_flags = TD_ALLOC_KSTACK_BORROWED;
	ev->has_cookie = true;
}
