/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The library's one hash table: chained, intrusive (embed a struct hnode in
 * your entry and get back to it with container_of()), keyed by a 64-bit hash
 * the caller computes; equal hashes are told apart by the caller, walking
 * htab_first()/htab_next(). The table doubles when it holds as many entries
 * as buckets; when that allocation fails it keeps its size (longer chains,
 * never an error). Not thread-safe.
 */
#ifndef TD_LIB_HTAB_H
#define TD_LIB_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#endif

struct hnode {
	struct hnode *next;
	uint64_t hash;
};

struct htab {
	struct hnode **b;
	size_t mask;
	size_t nr;		/* entries */
};

/* 64 buckets to start with. Returns 0 or -ENOMEM. */
int htab_init(struct htab *t);
/* The first, then the next, entry with exactly this hash; NULL at the end. */
struct hnode *htab_first(const struct htab *t, uint64_t hash);
struct hnode *htab_next(struct hnode *n);
void htab_add(struct htab *t, struct hnode *n, uint64_t hash);
void htab_del(struct htab *t, struct hnode *n);
/*
 * Keep the entries @keep says true for; every other one is unlinked, then
 * handed to @drop (may be NULL), which may free it.
 */
void htab_filter(struct htab *t, bool (*keep)(struct hnode *n, void *arg),
		 void (*drop)(struct hnode *n), void *arg);
/* Empty @t, calling @fn (may be NULL) on every entry; @t needs htab_init() again. */
void htab_destroy(struct htab *t, void (*fn)(struct hnode *));

#define HTAB_SEED	0xcbf29ce484222325ull

/* FNV-1a of @len bytes, going on from @h (HTAB_SEED to start). */
uint64_t htab_hash_bytes(const void *p, size_t len, uint64_t h);
/*
 * One 64-bit value mixed into @h: cheaper than the bytes one by one.
 * Inline: the hot paths hash every IP of every stack with it.
 */
static inline uint64_t htab_hash_u64(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

#endif /* TD_LIB_HTAB_H */
