/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The library's one hash table: chained, intrusive (embed a struct hnode in
 * your entry and get back to it with container_of()), keyed by a 64-bit hash
 * the caller computes; equal hashes are told apart by the caller, walking
 * htab_first()/htab_next(). The table doubles when it would hold more
 * entries than half its buckets: a lookup then mostly finds its entry first
 * in its bucket, or an empty bucket, instead of walking a chain through
 * lines of cache it has no use for (some 3% of the replay's time at load 1,
 * for 8 more bytes per entry). When that allocation fails it keeps its
 * size (longer chains, never an error). Not thread-safe.
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
/*
 * Empty @t, calling @fn on every entry; @t needs htab_init() again. With
 * @fn NULL (entries owned elsewhere, an arena's) no entry is touched.
 */
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

/*
 * @nr 64-bit values (a stack's IPs) mixed into @h, order included. Four
 * lanes each take every fourth value with a multiply alone (the high bits
 * of a product depend on every bit below them) and are joined, mixed in
 * full, at the end: one chain of htab_hash_u64() would wait on a multiply
 * and a shift per value, and a stack is hashed on every event.
 */
static inline uint64_t htab_hash_u64s(uint64_t h, const uint64_t *v, unsigned int nr)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t l0 = h, l1 = h ^ 1, l2 = h ^ 2, l3 = h ^ 3;
	unsigned int i = 0;

	for (; i + 4 <= nr; i += 4) {
		l0 = (l0 ^ v[i]) * k;
		l1 = (l1 ^ v[i + 1]) * k;
		l2 = (l2 ^ v[i + 2]) * k;
		l3 = (l3 ^ v[i + 3]) * k;
	}
	for (; i < nr; i++)
		l0 = (l0 ^ v[i]) * k;
	return htab_hash_u64(htab_hash_u64(htab_hash_u64(htab_hash_u64(l0, l1), l2), l3), nr);
}

#endif /* TD_LIB_HTAB_H */
