// SPDX-License-Identifier: GPL-2.0
/*
 * Walking a sub-buffer's event chain (see pagewalk.h).
 *
 * Each event starts with a 32-bit word: type_len in the low 5 bits, the
 * time delta from the previous event in the other 27. type_len 1..28: a
 * body of type_len * 4 bytes follows; 0: a length word follows, counting
 * itself, then the body; 29 padding (a length word; no delta: the end);
 * 30 a time extend (the next word holds the delta's bits above 27);
 * 31 an absolute time stamp (the same, its top 5 bits taken from the clock).
 */

#include <trace-defer/ringbuf.h>

#include "le.h"
#include "pagewalk.h"

#define TS_SHIFT	27
#define TS_MSB		(0xf8ULL << 56)		/* what an absolute time stamp leaves out */

void td_pagewalk_start(struct td_pagewalk *w, const void *events, unsigned int len, uint64_t ts)
{
	*w = (struct td_pagewalk){ .d = events, .len = len, .ts = ts };
}

/*
 * Step over what is at the walk's position and is not a data record (a
 * time extend, an absolute time stamp, a discarded event): true. false at
 * the end of the chain, or at a bad structure (w->corrupt), a data record
 * td_pagewalk_data() did not take included.
 */
static bool skip(struct td_pagewalk *w)
{
	unsigned int left = w->len - w->off, type, delta, a0;
	uint32_t hdr;

	if (w->off >= w->len) {
		w->off = w->len;
		return false;
	}
	if (left < 4)
		goto bad;
	hdr = td_get_le32(w->d + w->off);
	type = hdr & 31;
	delta = hdr >> 5;
	if (type == TD_RB_TYPE_PADDING && !delta) {
		/* The rest is padding: the data ends here. */
		w->len = w->off;
		return false;
	}
	/* A data record here is one td_pagewalk_data() found unsound. */
	if (type <= 28 || left < 8)
		goto bad;
	a0 = td_get_le32(w->d + w->off + 4);
	switch (type) {
	case TD_RB_TYPE_TIME_EXTEND:
		w->ts += ((uint64_t)a0 << TS_SHIFT) + delta;
		w->off += 8;
		return true;
	case TD_RB_TYPE_TIME_STAMP:
		w->ts = (((uint64_t)a0 << TS_SHIFT) + delta) | (w->ts & TS_MSB);
		w->off += 8;
		return true;
	default:
		/* Padding with a delta, a discarded event: the length word counts its body. */
		if (a0 < 4 || a0 % 4 || a0 > left - 4)
			goto bad;
		w->ts += delta;
		w->off += 4 + a0;
		return true;
	}
bad:
	/* Nothing more: w->off stays where the sound part ends. */
	w->corrupt = true;
	w->len = w->off;
	return false;
}

bool td_pagewalk_next_slow(struct td_pagewalk *w, uint64_t *ts, const uint8_t **data,
			   unsigned int *size)
{
	while (skip(w))
		if (td_pagewalk_data(w, ts, data, size))
			return true;
	return false;
}
