/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Blocks kept for reuse: the records the pipeline makes and drops by the
 * thousand a second (events, stacks, packed event bodies) come and go in
 * bursts that overflow malloc's per-thread cache, whose slow path cost
 * more than the rest of the stitching. A freed block goes to a per-thread
 * bin of its size class, and the next allocation of that class takes it.
 * Private to the library.
 *
 * Allocations are rounded up to a multiple of 64 bytes (up to 1 KiB;
 * larger ones are plain malloc()). A block is freed with the length it was
 * allocated with, or any length it still rounds to the same class (never
 * more than it was made for). At most 1 MiB is kept per thread; what a
 * thread keeps when it ends is not returned (the library's users parse in
 * one thread). Off under AddressSanitizer, which could not see a use
 * after free of a block kept here.
 */
#ifndef TD_LIB_RECYCLE_H
#define TD_LIB_RECYCLE_H

#include <stddef.h>
#include <stdlib.h>

#define TD_RECYCLE_GRAIN	64
#define TD_RECYCLE_CLASSES	16		/* blocks of 64 bytes to 1 KiB */
#if defined(__SANITIZE_ADDRESS__)
#define TD_RECYCLE_MAX_BYTES	0u
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TD_RECYCLE_MAX_BYTES	0u
#endif
#endif
#ifndef TD_RECYCLE_MAX_BYTES
#define TD_RECYCLE_MAX_BYTES	(1u << 20)
#endif

struct td_recycled {
	struct td_recycled *next;
};

/* Inline (the callers' per-event paths): the bins are the one shared state. */
struct td_recycle_bins {
	struct td_recycled *head[TD_RECYCLE_CLASSES + 1];
	size_t bytes;
};

extern __thread struct td_recycle_bins td_recycle_bins;

static inline size_t td_block_class(size_t len)
{
	return (len + TD_RECYCLE_GRAIN - 1) / TD_RECYCLE_GRAIN;
}

/* NULL when out of memory. */
static inline void *td_block_alloc(size_t len)
{
	size_t k = td_block_class(len);
	struct td_recycled *b;

	if (k > TD_RECYCLE_CLASSES)
		return malloc(len);
	b = td_recycle_bins.head[k];
	if (!b)
		return malloc(k * TD_RECYCLE_GRAIN);
	td_recycle_bins.head[k] = b->next;
	td_recycle_bins.bytes -= k * TD_RECYCLE_GRAIN;
	return b;
}

/* @p came from td_block_alloc(@len) or td_block_alloc() of more in its class. */
static inline void td_block_free(void *p, size_t len)
{
	size_t k = td_block_class(len);
	struct td_recycled *b = p;

	if (!k || k > TD_RECYCLE_CLASSES ||
	    td_recycle_bins.bytes + k * TD_RECYCLE_GRAIN > TD_RECYCLE_MAX_BYTES) {
		free(p);
		return;
	}
	b->next = td_recycle_bins.head[k];
	td_recycle_bins.head[k] = b;
	td_recycle_bins.bytes += k * TD_RECYCLE_GRAIN;
}

/* The bytes td_block_alloc(@len) takes. */
static inline size_t td_block_size(size_t len)
{
	size_t k = td_block_class(len);

	return k > TD_RECYCLE_CLASSES ? len : k * TD_RECYCLE_GRAIN;
}

#endif /* TD_LIB_RECYCLE_H */
