// SPDX-License-Identifier: GPL-2.0
/*
 * Shared kernel and user stacks (see kstack.h).
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
	struct {
		uint64_t tag;	/* 0: empty */
		const void *val;
	} slots[TD_STACK_SLOTS];	/* td_kstack_slot_*() use the first */
	/*
	 * User stacks: the record's file identity bytes (part of the key),
	 * and the frames' files decoded from them (NULL when the record had
	 * none), both after the IPs; the count of frames it could not vouch
	 * for.
	 */
	const uint8_t *fkey;
	uint32_t fkey_len;
	uint16_t fkey_kind;
	uint16_t bad;
	struct td_ufile *files;
	uint64_t ips[];
};

/* What a stack is told apart by: its IPs, and (user stacks) its file identity bytes. */
struct kkey {
	const uint8_t *le;	/* nr little-endian IPs */
	unsigned int nr;
	const uint8_t *fkey;
	unsigned int fkey_len;
	enum { FKEY_NONE, FKEY_RECORD, FKEY_BUILT } fkey_kind;
	const struct td_ufile_area *area;	/* user stacks: what @fkey was made from */
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
	/*
	 * The frames the table holds, and their bound: user stacks may be
	 * hundreds of frames deep, and the table keeps each one it met (with
	 * its decoded files) until it starts again.
	 */
	uint64_t frames, max_frames;
	uint64_t *buf;		/* the IPs looked up, in host order */
	unsigned int cap;
	uint8_t *fkey;		/* the file identity bytes looked up */
	size_t fkey_cap;
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
	ks->max_frames = (uint64_t)ks->max * TD_KSTACKS_FRAMES_PER_STACK;
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
	free(ks->fkey);
	free(ks);
}

static bool same_files(const struct kblock *b, const struct kkey *k)
{
	return b->fkey_kind == k->fkey_kind && b->fkey_len == k->fkey_len &&
	       (!k->fkey_len || !memcmp(b->fkey, k->fkey, k->fkey_len));
}

static struct kblock *lookup(struct td_kstacks *ks, const uint64_t *ips, const struct kkey *k,
			     uint64_t hash)
{
	struct hnode *n;

	for (n = htab_first(&ks->tab, hash); n; n = htab_next(n)) {
		struct kblock *b = container_of(n, struct kblock, node);

		if (b->nr == k->nr && !memcmp(b->ips, ips, k->nr * sizeof(*ips)) &&
		    same_files(b, k))
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

static struct kblock *recent_find(struct td_kstacks *ks, const struct kkey *k)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	struct kblock *b = ks->recent[recent_slot(k->le, k->nr)];

	if (b && b->nr == k->nr && !memcmp(b->ips, k->le, k->nr * sizeof(*b->ips)) &&
	    same_files(b, k))
		return b;
#endif
	return NULL;
}

/* A new block for @k, its IPs those of @ips (host order), files decoded. */
static struct kblock *new_block(const uint64_t *ips, const struct kkey *k)
{
	size_t nfiles = k->area ? k->nr : 0;
	struct kblock *b;

	b = malloc(sizeof(*b) + k->nr * sizeof(*b->ips) + nfiles * sizeof(*b->files) +
		   k->fkey_len);
	if (!b)
		return NULL;
	b->nr = k->nr;
	memset(b->slots, 0, sizeof(b->slots));
	memcpy(b->ips, ips, k->nr * sizeof(*b->ips));
	/* 8-byte IPs keep the entries after them 8-byte aligned. */
	b->files = nfiles ? (struct td_ufile *)(b->ips + k->nr) : NULL;
	b->bad = b->files ? td_ufile_area_decode(k->area, b->ips, b->files) : 0;
	b->fkey = (const uint8_t *)(b->ips + k->nr) + nfiles * sizeof(*b->files);
	b->fkey_len = k->fkey_len;
	b->fkey_kind = k->fkey_kind;
	if (k->fkey_len)
		memcpy((uint8_t *)b->fkey, k->fkey, k->fkey_len);
	return b;
}

/* intern() of a block not met lately: found in the table, or new. */
static __attribute__((noinline)) struct kblock *intern_table(struct td_kstacks *ks,
							     const struct kkey *k)
{
	struct kblock *b;
	uint64_t hash;
	unsigned int i;

	/* A reset that could not set the table up again: try now. */
	if (!ks->tab.b && htab_init(&ks->tab))
		return NULL;
	if (k->nr > ks->cap) {
		uint64_t *n = realloc(ks->buf, k->nr * sizeof(*n));

		if (!n)
			return NULL;
		ks->buf = n;
		ks->cap = k->nr;
	}
	for (i = 0; i < k->nr; i++)
		ks->buf[i] = td_get_le64(k->le + 8 * i);
	/* The file bytes are not hashed: they only tell apart stacks of the same IPs. */
	hash = htab_hash_u64s(HTAB_SEED, ks->buf, k->nr);
	ks->st.lookups++;
	b = lookup(ks, ks->buf, k, hash);
	if (b) {
		ks->st.hits++;
	} else {
		b = new_block(ks->buf, k);
		if (!b)
			return NULL;
		if (ks->tab.nr >= ks->max || ks->frames + k->nr > ks->max_frames) {
			/* Full: start again; holders keep the stacks they hold. */
			htab_destroy(&ks->tab, put_node);
			memset(ks->recent, 0, sizeof(ks->recent));
			ks->frames = 0;
			ks->st.resets++;
			if (htab_init(&ks->tab)) {
				free(b);
				return NULL;
			}
		}
		b->refs = 1;
		htab_add(&ks->tab, &b->node, hash);
		ks->frames += k->nr;
		ks->st.stacks++;
	}
	ks->recent[recent_slot(k->le, k->nr)] = b;
	b->refs++;
	return b;
}

/*
 * The block of @k (nr > 0), interned when new, with a reference for the
 * caller. Most records repeat a stack met lately: that case is inline,
 * without the frame of the table's path.
 */
static inline struct kblock *intern(struct td_kstacks *ks, const struct kkey *k)
{
	struct kblock *b = recent_find(ks, k);

	if (!b)
		return intern_table(ks, k);
	ks->st.lookups++;
	ks->st.hits++;
	b->refs++;
	return b;
}

int td_kstacks_get(struct td_kstacks *ks, struct td_event *ev, const uint8_t *le,
		   unsigned int nr)
{
	struct kkey k = { .le = le, .nr = nr };
	struct kblock *b;

	ev->kstack.nr = 0;
	ev->kstack.ips = NULL;
	if (!nr)
		return 0;
	b = intern(ks, &k);
	if (!b)
		return -ENOMEM;
	ev->kstack.ips = b->ips;
	ev->kstack.nr = nr;
	ev->alloc_flags |= TD_ALLOC_KSTACK_SHARED;
	return 0;
}

/*
 * The bytes a user stack's files are decoded from. The kernel writes the
 * arrays one after the other: then they are the record's bytes as they
 * are (their length and the IP count say where each array starts).
 * Otherwise a copy, the arrays' lengths first, or a mark of none found.
 */
static int area_key(struct td_kstacks *ks, const struct td_ufile_area *a, struct kkey *k)
{
	uint32_t head[2] = { a->found ? a->nr_files : UINT32_MAX, a->nr };
	size_t len = sizeof(head);

	if (a->found && a->ids == a->bases + 8 * a->nr_files &&
	    a->frame_files == a->ids + 4 * a->nr_files) {
		k->fkey_kind = FKEY_RECORD;
		k->fkey = a->bases;
		k->fkey_len = a->nr_files * 12 + a->nr;
		return 0;
	}
	if (a->found)
		len += a->nr_files * 12 + a->nr;
	if (len > ks->fkey_cap) {
		uint8_t *n = realloc(ks->fkey, len);

		if (!n)
			return -ENOMEM;
		ks->fkey = n;
		ks->fkey_cap = len;
	}
	memcpy(ks->fkey, head, sizeof(head));
	if (a->found) {
		memcpy(ks->fkey + sizeof(head), a->bases, a->nr_files * 8);
		memcpy(ks->fkey + sizeof(head) + a->nr_files * 8, a->ids, a->nr_files * 4);
		memcpy(ks->fkey + sizeof(head) + a->nr_files * 12, a->frame_files, a->nr);
	}
	k->fkey_kind = FKEY_BUILT;
	k->fkey = ks->fkey;
	k->fkey_len = len;
	return 0;
}

int td_ustacks_get(struct td_kstacks *ks, struct td_ustack *us, const uint8_t *le,
		   unsigned int nr, const struct td_ufile_area *area, unsigned int *bad)
{
	struct kkey k = { .le = le, .nr = nr, .area = area };
	struct kblock *b;

	/* No frames: nothing to share, but a record that is not sound still counts. */
	*bad = !nr && area && !area->found;
	if (!nr)
		return 0;
	if (area && area_key(ks, area, &k))
		return -ENOMEM;
	b = intern(ks, &k);
	if (!b)
		return -ENOMEM;
	us->ips.ips = b->ips;
	us->ips.nr = nr;
	us->files = b->files;
	us->alloc_flags |= TD_ALLOC_USTACK_SHARED;
	*bad = b->bad;
	return 0;
}

void td_ustack_put(struct td_ustack *us)
{
	if (!(us->alloc_flags & TD_ALLOC_USTACK_SHARED) || !us->ips.ips)
		return;
	put_block(container_of((void *)us->ips.ips, struct kblock, ips));
	us->ips.ips = NULL;
	us->ips.nr = 0;
	us->files = NULL;
	us->alloc_flags &= ~TD_ALLOC_USTACK_SHARED;
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

const void *td_stack_slot_get(const uint64_t *ips, uint64_t tag, unsigned int way)
{
	const struct kblock *b = block_of(ips);

	way %= TD_STACK_SLOTS;
	return tag && b->slots[way].tag == tag ? b->slots[way].val : NULL;
}

void td_stack_slot_set(const uint64_t *ips, uint64_t tag, unsigned int way, const void *val)
{
	struct kblock *b = block_of(ips);

	way %= TD_STACK_SLOTS;
	b->slots[way].tag = tag;
	b->slots[way].val = val;
}

void td_kstacks_get_stats(const struct td_kstacks *ks, struct td_kstacks_stats *st)
{
	*st = ks->st;
}
