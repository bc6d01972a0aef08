/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An arena: many small allocations that all end together. The pprof
 * profile's tables (strings, locations, samples, the caches in front of
 * them) grow through an interval and are dropped at its cut all at once:
 * from an arena, an entry costs a pointer bump instead of a malloc(), and
 * the cut frees a few chunks instead of walking every table to free each
 * entry. glibc's obstack does the same, but reports running out of memory
 * through a process-wide handler that must not return: a library cannot.
 * Private to the library. Not thread safe.
 */
#ifndef TD_LIB_ARENA_H
#define TD_LIB_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *chunks;	/* the newest first */
	size_t used;			/* bytes handed out of the newest */
	size_t bytes;			/* bytes of every chunk */
	size_t handed;			/* bytes handed out since the last reset */
};

#define ARENA_INIT	{ NULL, 0, 0, 0 }

/*
 * @size bytes, aligned for any object, valid until arena_reset() or
 * arena_free(); NULL when out of memory (the arena is as it was).
 */
void *arena_alloc(struct arena *a, size_t size);

/* Every allocation gone; the first chunk kept for the next ones. */
void arena_reset(struct arena *a);

/* Every allocation and chunk gone: the arena is ARENA_INIT again. */
void arena_free(struct arena *a);

#endif /* TD_LIB_ARENA_H */
