/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Page generator: writes ring-buffer sub-buffers byte for byte in the layout
 * per_cpu/cpuN/trace_pipe_raw returns on a 64-bit little-endian kernel, so
 * the parser can be tested and benchmarked without a kernel.
 *
 * Layout written (kernel/trace/ring_buffer.c, events/header_page; the
 * constants are in trace-defer/ringbuf.h):
 *   u64 timestamp;  local_t commit (bytes of data, flags in bits 30/31);
 *   data: events, each a u32 header {type_len:5, time_delta:27} and a body:
 *     type_len 1..28: body of type_len * 4 bytes;
 *     type_len 0: u32 length (body + 4), then the body (bodies over 112 bytes);
 *     29 padding: time_delta != 0: u32 length, then length - 4 bytes
 *                 (a discarded event); time_delta == 0: rest of the page;
 *     30 time extend: u32 upper bits of the delta (delta = upper << 27 | low);
 *     31 time stamp: absolute time, same encoding (59 bits).
 * Record sizes are rounded the way the kernel rounds them: to 4 bytes, and a
 * 12-byte event (8 bytes of data) grows to 16 so it can become a time extend.
 *
 * Timestamps are what libtraceevent's kbuffer reads back: the page stamp plus
 * every delta before the record, padding deltas included.
 *
 * No allocation, no hidden state beyond struct td_pagegen: cheap enough to
 * synthesize millions of records for the benchmark.
 */
#ifndef TRACE_DEFER_PAGEGEN_H
#define TRACE_DEFER_PAGEGEN_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <trace-defer/ringbuf.h>

struct td_pagegen {
	uint8_t *page;
	unsigned int size;		/* bytes of the page, header included */
	unsigned int len;		/* bytes of data written (the commit) */
	uint64_t ts;			/* reader's clock after the last thing written */
	unsigned int nr;		/* data records on the page */
	unsigned int extends;		/* time extends written on the page */
};

/*
 * Start a page in @page (@size bytes, at least TD_PAGE_HDR_SIZE + 8, usually
 * TD_PAGE_SIZE) with page timestamp @ts. The data area is zeroed.
 */
void td_pagegen_start(struct td_pagegen *pg, void *page, unsigned int size, uint64_t ts);

/*
 * Append one record of @len data bytes at time @ts (not earlier than the
 * previous record). A delta that does not fit 27 bits is written as a time
 * extend before the record. Returns 0, -ENOSPC if the record (with its
 * extend) does not fit (nothing written), -EINVAL for a time going backwards
 * or a delta over 59 bits.
 */
int td_pagegen_add(struct td_pagegen *pg, uint64_t ts, const void *data, unsigned int len);

/*
 * Append a discarded event (padding with a length) of @len data bytes at
 * time @ts, as left by a filtered event the kernel could not take back.
 * @ts must be later than the previous record: the kernel gives a discarded
 * event a non-zero delta and kbuffer adds it to its clock.
 */
int td_pagegen_discard(struct td_pagegen *pg, uint64_t ts, unsigned int len);

/* Append an absolute time stamp event (type 31) setting the clock to @ts. */
int td_pagegen_time_stamp(struct td_pagegen *pg, uint64_t ts);

/*
 * Close the page: with @fill, pad the rest of the page the way the kernel
 * does when the next event does not fit (a discarded event covering it,
 * part of the commit; fewer than 8 bytes left, a null padding event after
 * the commit, as rb_reset_tail() leaves it). @missed > 0: set MISSED_EVENTS and store the count after
 * the data if there is room (MISSED_STORED); @missed < 0: MISSED_EVENTS
 * without a count. Returns the number of bytes to hand to a reader (the
 * whole page, as trace_pipe_raw does).
 */
unsigned int td_pagegen_finish(struct td_pagegen *pg, bool fill, int64_t missed);

/* Bytes of data left on the page. */
static inline unsigned int td_pagegen_room(const struct td_pagegen *pg)
{
	return pg->size - TD_PAGE_HDR_SIZE - pg->len;
}

/* Bytes a record of @len data bytes takes on a page (header included). */
unsigned int td_pagegen_event_size(unsigned int len);

/* Little-endian stores at any alignment, for record builders. */
static inline void td_put_le32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void td_put_le64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

/* Write the 8-byte common header of a record: common_type, flags, preempt, common_pid. */
void td_rec_common(void *rec, unsigned int type, int pid);

/*
 * Records with file identity, in the layouts of the kernel series (the
 * format texts are in bench/formats/ and tests/unit/parse-fixtures.h):
 *
 * ftrace:user_unwind_stack: u64 cookie at 8; __data_loc words at 16
 * (stack), 20 (file_bases), 24 (file_ids), 28 (frame_files); data from 32
 * in that order: @nr u64 IPs, @nr_files u64 bases, @nr_files u32 ids, @nr
 * u8 frame_files (TD_FF_* of trace-defer/filetab.h or an index).
 *
 * ftrace:user_unwind_file: u32 id at 8, u32 build_id_size at 12, u8
 * build_id[20] at 16, __data_loc char[] path at 36, the path (with its NUL)
 * from 40.
 *
 * Both write at most @size bytes to @rec and return the record's length,
 * or 0 when it does not fit (or a length exceeds a data_loc's 16 bits).
 */
unsigned int td_rec_unwind_stack(void *rec, unsigned int size, unsigned int type, int pid,
				 uint64_t cookie, const uint64_t *ips, unsigned int nr,
				 const uint64_t *bases, const uint32_t *ids, unsigned int nr_files,
				 const uint8_t *frame_files);
unsigned int td_rec_unwind_file(void *rec, unsigned int size, unsigned int type, int pid,
				uint32_t id, const uint8_t *build_id, unsigned int build_id_len,
				const char *path);

/*
 * A user_unwind_stack record in either layout with file identity: the one
 * above, or (@tgid_layout) the series as it is now, which puts u16
 * dropped at 16, u16 flags at 18 and int tgid at 20 before the four
 * __data_loc words (24..36) and their data (from 40; the format text is
 * bench/formats/user_unwind_stack.format). @nr_files bases and ids, and
 * one frame_files byte per IP. Returns as td_rec_unwind_stack().
 */
struct td_rec_ustack {
	uint64_t cookie;
	const uint64_t *ips;
	unsigned int nr;
	const uint64_t *bases;
	const uint32_t *ids;
	unsigned int nr_files;
	const uint8_t *frame_files;
	bool tgid_layout;
	uint16_t dropped, flags;
	int tgid;
};

unsigned int td_rec_ustack(void *rec, unsigned int size, unsigned int type, int pid,
			   const struct td_rec_ustack *us);

#endif /* TRACE_DEFER_PAGEGEN_H */
