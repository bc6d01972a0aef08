// SPDX-License-Identifier: GPL-2.0
/*
 * Shared kernel stacks (see kstack.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "kstack.h"
#include "le.h"

struct kblock {
	struct hnode node;
	uint32_t refs;		/* the table's (while in it) + one per event */
	uint32_t nr;
	uint64_t slot_tag;	/* td_kstack_slot_get/set(); 0: empty */
	const void *slot;
	uint64_t ips[];
};

/*
 * The blocks met last, by a few of their IPs: most records repeat one
 * of a few stacks, and on a little-endian host a record's bytes are the
 * block's IPs, so a memcmp finds it without converting or hashing. Only
 * blocks in the table (which holds them alive); emptied with it.
 */
#define RECENT		32

struct td_kstacks {
	struct htab tab;
	struct kblock *recent[RECENT];
	unsigned int max;
	uint64_t *buf;		/* the IPs looked up, in host order */
	unsigned int cap;
	struct td_kstacks_stats st;
};

static void put_block(struct kblock *b)
{
	if (!--b->refs)
		free(b);
}

static void put_node(struct hnode *n)
{
	put_block(container_of(n, struct kblock, node));
}

struct td_kstacks *td_kstacks_new(unsigned int max_stacks)
{
	struct td_kstacks *ks = calloc(1, sizeof(*ks));

	if (!ks)
		return NULL;
	ks->max = max_stacks ? max_stacks : 4096;
	if (htab_init(&ks->tab)) {
		free(ks);
		return NULL;
	}
	return ks;
}

void td_kstacks_free(struct td_kstacks *ks)
{
	if (!ks)
		return;
	htab_destroy(&ks->tab, put_node);
	free(ks->buf);
	free(ks);
}

static struct kblock *lookup(struct td_kstacks *ks, const uint64_t *ips, unsigned int nr,
			     uint64_t hash)
{
	struct hnode *n;

	for (n = htab_first(&ks->tab, hash); n; n = htab_next(n)) {
		struct kblock *b = container_of(n, struct kblock, node);

		if (b->nr == nr && !memcmp(b->ips, ips, nr * sizeof(*ips)))
			return b;
	}
	return NULL;
}

static inline unsigned int recent_slot(const uint8_t *le, unsigned int nr)
{
	/* The outermost and innermost frames are often shared: take the middle's too. */
	uint64_t h = (td_get_le64(le) ^ td_get_le64(le + 8 * (nr / 2)) * 3 ^
		      td_get_le64(le + 8 * (nr - 1)) ^ nr) * 0x9e3779b97f4a7c15ULL;

	return h >> (64 - 5);
}

static struct kblock *recent_find(struct td_kstacks *ks, const uint8_t *le, unsigned int nr)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	struct kblock *b = ks->recent[recent_slot(le, nr)];

	if (b && b->nr == nr && !memcmp(b->ips, le, nr * sizeof(*b->ips)))
		return b;
#endif
	return NULL;
}

int td_kstacks_get(struct td_kstacks *ks, struct td_event *ev, const uint8_t *le,
		   unsigned int nr)
{
	struct kblock *b;
	uint64_t hash;
	unsigned int i;

	ev->kstack.nr = 0;
	ev->kstack.ips = NULL;
	if (!nr)
		return 0;
	b = recent_find(ks, le, nr);
	if (b) {
		ks->st.lookups++;
		ks->st.hits++;
		goto found;
	}
	/* A reset that could not set the table up again: try now. */
	if (!ks->tab.b && htab_init(&ks->tab))
		return -ENOMEM;
	if (nr > ks->cap) {
		uint64_t *n = realloc(ks->buf, nr * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ks->buf = n;
		ks->cap = nr;
	}
	for (i = 0; i < nr; i++)
		ks->buf[i] = td_get_le64(le + 8 * i);
	hash = htab_hash_u64s(HTAB_SEED, ks->buf, nr);
	ks->st.lookups++;
	b = lookup(ks, ks->buf, nr, hash);
	if (b) {
		ks->st.hits++;
	} else {
		b = malloc(sizeof(*b) + nr * sizeof(*b->ips));
		if (!b)
			return -ENOMEM;
		b->nr = nr;
		b->slot_tag = 0;
		b->slot = NULL;
		memcpy(b->ips, ks->buf, nr * sizeof(*b->ips));
		if (ks->tab.nr >= ks->max) {
			/* Full: start again; events keep the stacks they hold. */
			htab_destroy(&ks->tab, put_node);
			memset(ks->recent, 0, sizeof(ks->recent));
			ks->st.resets++;
			if (htab_init(&ks->tab)) {
				free(b);
				return -ENOMEM;
			}
		}
		b->refs = 1;
		htab_add(&ks->tab, &b->node, hash);
		ks->st.stacks++;
	}
	ks->recent[recent_slot(le, nr)] = b;
found:
	b->refs++;
	ev->kstack.ips = b->ips;
	ev->kstack.nr = nr;
	ev->alloc_flags |= TD_ALLOC_KSTACK_SHARED;
	return 0;
}

void td_kstack_put(struct td_event *ev)
{
	if (!(ev->alloc_flags & TD_ALLOC_KSTACK_SHARED) || !ev->kstack.ips)
		return;
	put_block(container_of((void *)ev->kstack.ips, struct kblock, ips));
	ev->kstack.ips = NULL;
	ev->kstack.nr = 0;
	ev->alloc_flags &= ~TD_ALLOC_KSTACK_SHARED;
}

void td_kstack_hold(const uint64_t *ips)
{
	container_of((void *)ips, struct kblock, ips)->refs++;
}

void td_kstack_release(const uint64_t *ips)
{
	put_block(container_of((void *)ips, struct kblock, ips));
}

static inline struct kblock *block_of(const uint64_t *ips)
{
	return container_of((void *)ips, struct kblock, ips);
}

const void *td_kstack_slot_get(const uint64_t *ips, uint64_t tag)
{
	const struct kblock *b = block_of(ips);

	return tag && b->slot_tag == tag ? b->slot : NULL;
}

void td_kstack_slot_set(const uint64_t *ips, uint64_t tag, const void *val)
{
	struct kblock *b = block_of(ips);

	b->slot_tag = tag;
	b->slot = val;
}

void td_kstacks_get_stats(const struct td_kstacks *ks, struct td_kstacks_stats *st)
{
	*st = ks->st;
}
