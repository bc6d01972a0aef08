// SPDX-License-Identifier: GPL-2.0
/*
 * Constructors, destructors and names for the core record types of
 * include/trace-defer/types.h. Every *_free() accepts NULL.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <trace-defer/types.h>

#include "kstack.h"
#include "recycle.h"

static const char *const status_names[TD_NR_STATUS] = {
	[TD_STITCHED]		= "stitched",
	[TD_USER_LOST]		= "user_lost",
	[TD_UNWIND_FAILED]	= "unwind_failed",
	[TD_NO_USER]		= "no_user",
	[TD_INPLACE]		= "inplace",
};

const char *td_status_name(enum td_status st)
{
	/* Compare as unsigned: an enum may hold a negative value too. */
	if ((unsigned int)st >= TD_NR_STATUS)
		return NULL;
	return status_names[st];
}

void td_ips_free(struct td_ips *ips)
{
	if (!ips)
		return;
	free(ips->ips);
	ips->ips = NULL;
	ips->nr = 0;
}

int td_ips_copy(struct td_ips *dst, const uint64_t *ips, unsigned int nr)
{
	uint64_t *copy = NULL;

	if (nr) {
		copy = malloc(nr * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, ips, nr * sizeof(*copy));
	}
	dst->ips = copy;
	dst->nr = nr;
	return 0;
}

/*
 * Storage allocated with the record, right after it: used only while the
 * pointer still points there (the owner may have replaced it). Flags 0x2,
 * 0x4 and 0x10 are kstack.h's (TD_ALLOC_KSTACK_*, TD_ALLOC_USTACK_SHARED).
 */
#define TD_ALLOC_INLINE	0x1
#define TD_ALLOC_BLOCK	0x8	/* from td_block_alloc(): its size is the class of its length */

static inline void *inline_area(void *rec, size_t rec_size)
{
	return (char *)rec + ((rec_size + 15) & ~(size_t)15);
}

struct td_event *td_event_new(void)
{
	struct td_event *ev = td_block_alloc(sizeof(*ev));

	if (ev) {
		memset(ev, 0, sizeof(*ev));
		ev->alloc_flags = TD_ALLOC_BLOCK;
	}
	return ev;
}

struct td_event *td_event_new_raw(size_t raw_size)
{
	struct td_event *ev;
	size_t head = (sizeof(*ev) + 15) & ~(size_t)15;

	if (raw_size > INT_MAX)
		return NULL;
	ev = td_block_alloc(head + raw_size);
	if (!ev)
		return NULL;
	memset(ev, 0, sizeof(*ev));
	ev->alloc_flags = TD_ALLOC_BLOCK;
	if (raw_size) {
		ev->raw = inline_area(ev, sizeof(*ev));
		ev->raw_size = (int)raw_size;
		ev->alloc_flags |= TD_ALLOC_INLINE;
	}
	return ev;
}

void td_event_free(struct td_event *ev)
{
	/* Made for itself, and with its raw inline for that too. */
	size_t len = sizeof(*ev);

	if (!ev)
		return;
	if (!(ev->alloc_flags & TD_ALLOC_INLINE) || ev->raw != inline_area(ev, sizeof(*ev))) {
		if (ev->raw)
			free(ev->raw);
	} else if (ev->raw_size > 0)
		len = (char *)inline_area(ev, sizeof(*ev)) - (char *)ev + ev->raw_size;
	if (ev->alloc_flags & TD_ALLOC_KSTACK_SHARED)
		td_kstack_put(ev);
	else if (!(ev->alloc_flags & TD_ALLOC_KSTACK_BORROWED))
		td_ips_free(&ev->kstack);
	/* Most events have neither: no call to free() for nothing. */
	if (ev->inplace_stack.ips)
		free(ev->inplace_stack.ips);
	if (ev->alloc_flags & TD_ALLOC_BLOCK)
		td_block_free(ev, len);
	else
		free(ev);
}

struct td_ustack *td_ustack_new(void)
{
	struct td_ustack *us = td_block_alloc(sizeof(*us));

	if (us) {
		memset(us, 0, sizeof(*us));
		us->alloc_flags = TD_ALLOC_BLOCK;
	}
	return us;
}

struct td_ustack *td_ustack_new_files(unsigned int nr, bool with_files)
{
	struct td_ustack *us;
	size_t head = (sizeof(*us) + 15) & ~(size_t)15;
	size_t per = sizeof(uint64_t) + (with_files ? sizeof(struct td_ufile) : 0);

	if (nr > (SIZE_MAX - head) / per)
		return NULL;
	us = td_block_alloc(head + (size_t)nr * per);
	if (!us)
		return NULL;
	memset(us, 0, sizeof(*us));
	us->alloc_flags = TD_ALLOC_BLOCK;
	if (nr) {
		us->ips.ips = inline_area(us, sizeof(*us));
		us->ips.nr = nr;
		us->alloc_flags |= TD_ALLOC_INLINE;
		/* 8-byte IPs keep the entries after them 8-byte aligned. */
		if (with_files)
			us->files = (struct td_ufile *)(us->ips.ips + nr);
	}
	return us;
}

struct td_ustack *td_ustack_new_ips(unsigned int nr)
{
	return td_ustack_new_files(nr, false);
}

void td_ustack_free(struct td_ustack *us)
{
	size_t len = sizeof(*us);

	if (!us)
		return;
	if (us->alloc_flags & TD_ALLOC_USTACK_SHARED) {
		td_ustack_put(us);
	} else if (!(us->alloc_flags & TD_ALLOC_INLINE) ||
		   us->ips.ips != inline_area(us, sizeof(*us))) {
		td_ips_free(&us->ips);
	} else {
		len = (char *)inline_area(us, sizeof(*us)) - (char *)us +
		      us->ips.nr * sizeof(*us->ips.ips);
		/* Allocated with the stack, right after its IPs. */
		if (us->files == (struct td_ufile *)(us->ips.ips + us->ips.nr))
			len += us->ips.nr * sizeof(*us->files);
	}
	us->files = NULL;
	if (us->alloc_flags & TD_ALLOC_BLOCK)
		td_block_free(us, len);
	else
		free(us);
}
