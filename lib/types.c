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
 * pointer still points there (the owner may have replaced it).
 */
#define TD_ALLOC_INLINE	0x1	/* (0x2, 0x4: TD_ALLOC_KSTACK_*, kstack.h) */

static inline void *inline_area(void *rec, size_t rec_size)
{
	return (char *)rec + ((rec_size + 15) & ~(size_t)15);
}

struct td_event *td_event_new(void)
{
	return calloc(1, sizeof(struct td_event));
}

struct td_event *td_event_new_raw(size_t raw_size)
{
	struct td_event *ev;
	size_t head = (sizeof(*ev) + 15) & ~(size_t)15;

	if (raw_size > INT_MAX)
		return NULL;
	ev = malloc(head + raw_size);
	if (!ev)
		return NULL;
	memset(ev, 0, sizeof(*ev));
	if (raw_size) {
		ev->raw = inline_area(ev, sizeof(*ev));
		ev->raw_size = (int)raw_size;
		ev->alloc_flags = TD_ALLOC_INLINE;
	}
	return ev;
}

void td_event_free(struct td_event *ev)
{
	if (!ev)
		return;
	if (!(ev->alloc_flags & TD_ALLOC_INLINE) || ev->raw != inline_area(ev, sizeof(*ev)))
		free(ev->raw);
	if (ev->alloc_flags & TD_ALLOC_KSTACK_SHARED)
		td_kstack_put(ev);
	else if (!(ev->alloc_flags & TD_ALLOC_KSTACK_BORROWED))
		td_ips_free(&ev->kstack);
	td_ips_free(&ev->inplace_stack);
	free(ev);
}

struct td_ustack *td_ustack_new(void)
{
	return calloc(1, sizeof(struct td_ustack));
}

struct td_ustack *td_ustack_new_files(unsigned int nr, bool with_files)
{
	struct td_ustack *us;
	size_t head = (sizeof(*us) + 15) & ~(size_t)15;
	size_t per = sizeof(uint64_t) + (with_files ? sizeof(struct td_ufile) : 0);

	if (nr > (SIZE_MAX - head) / per)
		return NULL;
	us = malloc(head + (size_t)nr * per);
	if (!us)
		return NULL;
	memset(us, 0, sizeof(*us));
	if (nr) {
		us->ips.ips = inline_area(us, sizeof(*us));
		us->ips.nr = nr;
		us->alloc_flags = TD_ALLOC_INLINE;
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
	if (!us)
		return;
	if (!(us->alloc_flags & TD_ALLOC_INLINE) || us->ips.ips != inline_area(us, sizeof(*us)))
		td_ips_free(&us->ips);
	/* Only ever allocated with the stack. */
	us->files = NULL;
	free(us);
}
