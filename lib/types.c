// SPDX-License-Identifier: GPL-2.0
/*
 * Constructors, destructors and names for the core record types of
 * include/trace-defer/types.h. Every *_free() accepts NULL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <trace-defer/types.h>

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

struct td_event *td_event_new(void)
{
	return calloc(1, sizeof(struct td_event));
}

void td_event_free(struct td_event *ev)
{
	if (!ev)
		return;
	free(ev->raw);
	td_ips_free(&ev->kstack);
	td_ips_free(&ev->inplace_stack);
	free(ev);
}

struct td_ustack *td_ustack_new(void)
{
	return calloc(1, sizeof(struct td_ustack));
}

void td_ustack_free(struct td_ustack *us)
{
	if (!us)
		return;
	td_ips_free(&us->ips);
	free(us);
}
