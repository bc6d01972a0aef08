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
	td_put_le32(p + 4, (uint32_t)pid);
}

/* A __data_loc word: length in the high 16 bits, offset in the low ones. */
static inline uint32_t data_loc(unsigned int off, unsigned int len)
{
	return (uint32_t)len << 16 | off;
}

unsigned int td_rec_ustack(void *rec, unsigned int size, unsigned int type, int pid,
			   const struct td_rec_ustack *us)
{
	/* Fixed part: cookie, [dropped, flags, tgid,] four __data_loc words. */
	unsigned int locs = us->tgid_layout ? 24 : 16;
	unsigned int off_ips = locs + 16, off_bases, off_ids, off_ff, end, i;
	uint8_t *p = rec;

	if (us->nr > 0xffff / 8 || us->nr_files > 0xffff / 8)
		return 0;
	off_bases = off_ips + 8 * us->nr;
	off_ids = off_bases + 8 * us->nr_files;
	off_ff = off_ids + 4 * us->nr_files;
	end = off_ff + us->nr;
	if (end > size || end > 0xffff)
		return 0;
	td_rec_common(p, type, pid);
	td_put_le64(p + 8, us->cookie);
	if (us->tgid_layout) {
		uint16_t v = htole16(us->dropped);

		memcpy(p + 16, &v, sizeof(v));
		v = htole16(us->flags);
		memcpy(p + 18, &v, sizeof(v));
		td_put_le32(p + 20, (uint32_t)us->tgid);
	}
	td_put_le32(p + locs, data_loc(off_ips, 8 * us->nr));
	td_put_le32(p + locs + 4, data_loc(off_bases, 8 * us->nr_files));
	td_put_le32(p + locs + 8, data_loc(off_ids, 4 * us->nr_files));
	td_put_le32(p + locs + 12, data_loc(off_ff, us->nr));
	for (i = 0; i < us->nr; i++)
		td_put_le64(p + off_ips + 8 * i, us->ips[i]);
	for (i = 0; i < us->nr_files; i++) {
		td_put_le64(p + off_bases + 8 * i, us->bases[i]);
		td_put_le32(p + off_ids + 4 * i, us->ids[i]);
	}
	if (us->nr)
		memcpy(p + off_ff, us->frame_files, us->nr);
	return end;
}

unsigned int td_rec_unwind_stack(void *rec, unsigned int size, unsigned int type, int pid,
				 uint64_t cookie, const uint64_t *ips, unsigned int nr,
				 const uint64_t *bases, const uint32_t *ids, unsigned int nr_files,
				 const uint8_t *frame_files)
{
	const struct td_rec_ustack us = {
		.cookie = cookie, .ips = ips, .nr = nr, .bases = bases, .ids = ids,
		.nr_files = nr_files, .frame_files = frame_files,
	};

	return td_rec_ustack(rec, size, type, pid, &us);
}

unsigned int td_rec_unwind_file(void *rec, unsigned int size, unsigned int type, int pid,
				uint32_t id, const uint8_t *build_id, unsigned int build_id_len,
				const char *path)
{
	size_t len = strlen(path) + 1;
	uint8_t *p = rec;

	if (build_id_len > 20 || len > 0xffff - 40 || 40 + len > size)
		return 0;
	memset(p, 0, 40);
	td_rec_common(p, type, pid);
	td_put_le32(p + 8, id);
	td_put_le32(p + 12, build_id_len);
	if (build_id_len)
		memcpy(p + 16, build_id, build_id_len);
	td_put_le32(p + 36, data_loc(40, (unsigned int)len));
	memcpy(p + 40, path, len);
	return 40 + (unsigned int)len;
}

void td_pagegen_start(struct td_pagegen *pg, void *page, unsigned int size, uint64_t ts)
{
	pg->page = page;
	pg->size = size;
	pg->len = 0;
	pg->ts = ts;
	pg->nr = 0;
	pg->extends = 0;
	td_put_le64(pg->page, ts);
	td_put_le64(pg->page + 8, 0);
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

	td_put_le32(p, rb_header(TD_RB_TYPE_TIME_EXTEND, delta & TD_RB_MAX_DELTA));
	td_put_le32(p + 4, (uint32_t)(delta >> 27));
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
		td_put_le32(p, rb_header(0, delta32));
		td_put_le32(p + 4, total - RB_HDR);
		memcpy(p + 8, data, len);
	} else {
		td_put_le32(p, rb_header((total - RB_HDR) / 4, delta32));
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
	td_put_le32(p, rb_header(TD_RB_TYPE_PADDING, (uint32_t)delta));
	td_put_le32(p + 4, total - RB_HDR);
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
	td_put_le32(p, rb_header(TD_RB_TYPE_TIME_STAMP, ts & TD_RB_MAX_DELTA));
	td_put_le32(p + 4, (uint32_t)((ts & ~TS_MSB) >> 27));
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
			td_put_le32(p, rb_header(TD_RB_TYPE_PADDING, 1));
			td_put_le32(p + 4, room - RB_HDR);
			pg->ts += 1;
			pg->len += room;
		} else {
			/*
			 * Too small for a length: a null padding event, left
			 * out of the commit as rb_reset_tail leaves it (write
			 * set back to the tail). Counted in, a reader that
			 * takes a padding's length word (kbuffer) reads past
			 * the sub-buffer: trace-cmd report crashed so on a
			 * trace.dat whose last page ended this way.
			 */
			td_put_le32(p, rb_header(TD_RB_TYPE_PADDING, 0));
		}
	}
	commit = pg->len;
	if (missed) {
		commit |= TD_PAGE_MISSED_EVENTS;
		if (missed > 0 && td_pagegen_room(pg) >= 8) {
			td_put_le64(tail(pg), (uint64_t)missed);
			commit |= TD_PAGE_MISSED_STORED;
		}
	}
	td_put_le64(pg->page + 8, commit);
	return pg->size;
}
