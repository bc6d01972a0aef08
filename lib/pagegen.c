// SPDX-License-Identifier: GPL-2.0
/*
 * Synthesized ring-buffer sub-buffers; see include/trace-defer/pagegen.h for
 * the layout. The encoding follows what kernel/trace/ring_buffer.c writes
 * (rb_calculate_event_length, rb_update_event, rb_event_discard,
 * rb_reset_tail, ring_buffer_read_page), written from its documented layout.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include <trace-defer/pagegen.h>

#define RB_MAX_SMALL_DATA	(28 * 4)
#define RB_HDR			4
#define TS_MSB			(0x1fULL << 59)	/* bits a time stamp event cannot hold */

static inline void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint32_t rb_header(unsigned int type_len, uint32_t delta)
{
	return (delta << 5) | type_len;
}

static inline uint8_t *tail(struct td_pagegen *pg)
{
	return pg->page + TD_PAGE_HDR_SIZE + pg->len;
}

unsigned int td_pagegen_event_size(unsigned int len)
{
	unsigned int total;

	if (!len)
		len = 1;
	len = (len + 3) & ~3U;
	if (len > RB_MAX_SMALL_DATA)
		return RB_HDR + 4 + len;
	total = RB_HDR + len;
	/* A 12-byte event could not be turned into a time extend in place. */
	if (total == 12)
		total = 16;
	return total;
}

void td_rec_common(void *rec, unsigned int type, int pid)
{
	uint8_t *p = rec;
	uint16_t t = htole16((uint16_t)type);

	memcpy(p, &t, sizeof(t));
	p[2] = 0;	/* common_flags */
	p[3] = 0;	/* common_preempt_count */
	put32(p + 4, (uint32_t)pid);
}

void td_pagegen_start(struct td_pagegen *pg, void *page, unsigned int size, uint64_t ts)
{
	pg->page = page;
	pg->size = size;
	pg->len = 0;
	pg->ts = ts;
	pg->nr = 0;
	pg->extends = 0;
	put64(pg->page, ts);
	put64(pg->page + 8, 0);
	memset(pg->page + TD_PAGE_HDR_SIZE, 0, size - TD_PAGE_HDR_SIZE);
}

/*
 * How the delta to @ts is written: a header delta alone, or a time extend
 * carrying it. Returns the bytes needed for an extend (0 or 8), or -EINVAL.
 */
static int delta_extend(const struct td_pagegen *pg, uint64_t ts, uint64_t *delta)
{
	if (ts < pg->ts)
		return -EINVAL;
	*delta = ts - pg->ts;
	if (*delta <= TD_RB_MAX_DELTA)
		return 0;
	if (*delta >> 59)
		return -EINVAL;
	return 8;
}

static void put_extend(struct td_pagegen *pg, uint64_t delta)
{
	uint8_t *p = tail(pg);

	put32(p, rb_header(TD_RB_TYPE_TIME_EXTEND, delta & TD_RB_MAX_DELTA));
	put32(p + 4, (uint32_t)(delta >> 27));
	pg->len += 8;
	pg->ts += delta;
	pg->extends++;
}

int td_pagegen_add(struct td_pagegen *pg, uint64_t ts, const void *data, unsigned int len)
{
	unsigned int total = td_pagegen_event_size(len);
	uint32_t delta32;
	uint64_t delta;
	uint8_t *p;
	int ext;

	ext = delta_extend(pg, ts, &delta);
	if (ext < 0)
		return ext;
	if (ext + total > td_pagegen_room(pg))
		return -ENOSPC;
	if (ext) {
		put_extend(pg, delta);
		delta = 0;
	}
	delta32 = (uint32_t)delta;
	p = tail(pg);
	if (total - RB_HDR > RB_MAX_SMALL_DATA) {
		put32(p, rb_header(0, delta32));
		put32(p + 4, total - RB_HDR);
		memcpy(p + 8, data, len);
	} else {
		put32(p, rb_header((total - RB_HDR) / 4, delta32));
		memcpy(p + RB_HDR, data, len);
	}
	/* The page was zeroed at start: the rounding bytes are already 0. */
	pg->len += total;
	pg->ts += delta;
	pg->nr++;
	return 0;
}

int td_pagegen_discard(struct td_pagegen *pg, uint64_t ts, unsigned int len)
{
	unsigned int total = td_pagegen_event_size(len);
	uint64_t delta;
	uint8_t *p;
	int ext;

	ext = delta_extend(pg, ts, &delta);
	if (ext < 0)
		return ext;
	/* A zero delta would make it the end-of-page padding. */
	if (!delta)
		return -EINVAL;
	if (ext + total > td_pagegen_room(pg))
		return -ENOSPC;
	if (ext) {
		/* The kernel forces the discarded event's own delta to 1. */
		put_extend(pg, delta - 1);
		delta = 1;
	}
	p = tail(pg);
	put32(p, rb_header(TD_RB_TYPE_PADDING, (uint32_t)delta));
	put32(p + 4, total - RB_HDR);
	pg->len += total;
	pg->ts += delta;
	return 0;
}

int td_pagegen_time_stamp(struct td_pagegen *pg, uint64_t ts)
{
	uint8_t *p;

	/* The top 5 bits come from the reader's clock: they must not change. */
	if ((ts & TS_MSB) != (pg->ts & TS_MSB))
		return -EINVAL;
	if (td_pagegen_room(pg) < 8)
		return -ENOSPC;
	p = tail(pg);
	put32(p, rb_header(TD_RB_TYPE_TIME_STAMP, ts & TD_RB_MAX_DELTA));
	put32(p + 4, (uint32_t)((ts & ~TS_MSB) >> 27));
	pg->len += 8;
	pg->ts = ts;
	return 0;
}

unsigned int td_pagegen_finish(struct td_pagegen *pg, bool fill, int64_t missed)
{
	uint64_t commit;
	unsigned int room;
	uint8_t *p;

	room = td_pagegen_room(pg);
	if (fill && room) {
		p = tail(pg);
		if (room >= 8) {
			/* rb_reset_tail: a discarded event covering the rest. */
			put32(p, rb_header(TD_RB_TYPE_PADDING, 1));
			put32(p + 4, room - RB_HDR);
			pg->ts += 1;
		} else {
			/* Too small for a length: a null padding event. */
			put32(p, rb_header(TD_RB_TYPE_PADDING, 0));
		}
		pg->len += room;
	}
	commit = pg->len;
	if (missed) {
		commit |= TD_PAGE_MISSED_EVENTS;
		if (missed > 0 && td_pagegen_room(pg) >= 8) {
			put64(tail(pg), (uint64_t)missed);
			commit |= TD_PAGE_MISSED_STORED;
		}
	}
	put64(pg->page + 8, commit);
	return pg->size;
}
