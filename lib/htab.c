// SPDX-License-Identifier: GPL-2.0
/*
 * The library's chained hash table (see htab.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "htab.h"

#define HTAB_MIN_BUCKETS	64

int htab_init(struct htab *t)
{
	t->b = calloc(HTAB_MIN_BUCKETS, sizeof(*t->b));
	t->mask = HTAB_MIN_BUCKETS - 1;
	t->nr = 0;
	return t->b ? 0 : -ENOMEM;
}

struct hnode *htab_first(const struct htab *t, uint64_t hash)
{
	struct hnode *n = t->b[hash & t->mask];

	while (n && n->hash != hash)
		n = n->next;
	return n;
}

struct hnode *htab_next(struct hnode *n)
{
	uint64_t hash = n->hash;

	for (n = n->next; n && n->hash != hash; n = n->next)
		;
	return n;
}

static void grow(struct htab *t)
{
	size_t cap = (t->mask + 1) * 2, i;
	struct hnode **b = calloc(cap, sizeof(*b));

	/* Out of memory: keep the table as it is, only longer chains. */
	if (!b)
		return;
	for (i = 0; i <= t->mask; i++) {
		while (t->b[i]) {
			struct hnode *x = t->b[i];

			t->b[i] = x->next;
			x->next = b[x->hash & (cap - 1)];
			b[x->hash & (cap - 1)] = x;
		}
	}
	free(t->b);
	t->b = b;
	t->mask = cap - 1;
}

void htab_add(struct htab *t, struct hnode *n, uint64_t hash)
{
	n->hash = hash;
	if (2 * (t->nr + 1) > t->mask + 1)
		grow(t);
	n->next = t->b[hash & t->mask];
	t->b[hash & t->mask] = n;
	t->nr++;
}

void htab_del(struct htab *t, struct hnode *n)
{
	struct hnode **pp;

	for (pp = &t->b[n->hash & t->mask]; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			t->nr--;
			return;
		}
	}
}

void htab_filter(struct htab *t, bool (*keep)(struct hnode *n, void *arg),
		 void (*drop)(struct hnode *n), void *arg)
{
	size_t i;

	if (!t->b)
		return;
	for (i = 0; i <= t->mask; i++) {
		struct hnode **pp = &t->b[i];

		while (*pp) {
			struct hnode *x = *pp;

			if (keep(x, arg)) {
				pp = &x->next;
				continue;
			}
			*pp = x->next;
			t->nr--;
			if (drop)
				drop(x);
		}
	}
}

void htab_destroy(struct htab *t, void (*fn)(struct hnode *))
{
	size_t i;

	if (!t->b)
		return;
	for (i = 0; fn && i <= t->mask; i++) {
		while (t->b[i]) {
			struct hnode *x = t->b[i];

			t->b[i] = x->next;
			fn(x);
		}
	}
	free(t->b);
	t->b = NULL;
	t->nr = 0;
}

uint64_t htab_hash_bytes(const void *p, size_t len, uint64_t h)
{
	const unsigned char *s = p;

	while (len--)
		h = (h ^ *s++) * 0x100000001b3ull;
	return h;
}
