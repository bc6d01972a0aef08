// SPDX-License-Identifier: GPL-2.0
/*
 * The library's arena (see arena.h).
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

#include "arena.h"

/* Large enough that a chunk's malloc() is rare, small enough to matter little when idle. */
#define CHUNK_BYTES	(64 * 1024)
#define ALIGN		alignof(max_align_t)

struct arena_chunk {
	struct arena_chunk *next;
	size_t size;			/* bytes of data[] */
	alignas(max_align_t) unsigned char data[];
};

void *arena_alloc(struct arena *a, size_t size)
{
	struct arena_chunk *c = a->chunks;
	size_t at = (a->used + ALIGN - 1) & ~(ALIGN - 1);

	if (!c || at > c->size || size > c->size - at) {
		/* An entry larger than a chunk gets a chunk of its own. */
		size_t n = size > CHUNK_BYTES ? size : CHUNK_BYTES;

		if (size > SIZE_MAX - sizeof(*c))
			return NULL;
		c = malloc(sizeof(*c) + n);
		if (!c)
			return NULL;
		c->size = n;
		c->next = a->chunks;
		a->chunks = c;
		a->bytes += sizeof(*c) + n;
		at = 0;
	}
	a->used = at + size;
	a->handed += size;
	return c->data + at;
}

void arena_reset(struct arena *a)
{
	struct arena_chunk *keep = a->chunks, *c;

	if (!keep)
		return;
	/* The oldest chunk is the one to keep: the others may be an entry's own. */
	while (keep->next)
		keep = keep->next;
	for (c = a->chunks; c != keep;) {
		struct arena_chunk *next = c->next;

		free(c);
		c = next;
	}
	a->chunks = keep;
	a->used = 0;
	a->handed = 0;
	a->bytes = sizeof(*keep) + keep->size;
}

void arena_free(struct arena *a)
{
	struct arena_chunk *c = a->chunks;

	while (c) {
		struct arena_chunk *next = c->next;

		free(c);
		c = next;
	}
	*a = (struct arena)ARENA_INIT;
}
