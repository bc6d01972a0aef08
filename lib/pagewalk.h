/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records of a ring-buffer sub-buffer, one at a time, each with its
 * timestamp: the event chain after the page header, read as the kernel
 * writes it (kernel/trace/ring_buffer.c) and as libtraceevent's kbuffer
 * reads it, in one pass that also checks it. Private to the library.
 *
 * The chain is untrusted: a header, length word or body that does not lie
 * inside the given length, or a length that would not move forward, ends
 * the walk there, flagged corrupt; what came before it was handed out. A
 * padding event without a delta ends the data (the rest of the page is
 * padding) without being an error. Time extends and absolute time stamps
 * move the clock and are not handed out; neither are discarded events
 * (padding with a delta), whose delta still counts, as kbuffer counts it.
 */
#ifndef TD_LIB_PAGEWALK_H
#define TD_LIB_PAGEWALK_H

#include <stdbool.h>
#include <stdint.h>

#include "le.h"

struct td_pagewalk {
	const uint8_t *d;
	unsigned int off, len;	/* at the end: off is where the (sound) data ends */
	uint64_t ts;
	bool corrupt;		/* the walk ended at a bad structure */
};

/* Walk the @len bytes of events at @events, of a page whose timestamp is @ts. */
void td_pagewalk_start(struct td_pagewalk *w, const void *events, unsigned int len, uint64_t ts);

/*
 * The data record at the walk's position, if it is one and lies inside
 * the chain: taken (its body, size and timestamp), true. Inline: every
 * record of every page comes through here, and a call with the walk's
 * state in memory would cost as much as the reading.
 */
static inline bool td_pagewalk_data(struct td_pagewalk *w, uint64_t *ts, const uint8_t **data,
				    unsigned int *size)
{
	unsigned int left = w->len - w->off, type, body, head = 4;
	const uint8_t *at = w->d + w->off;
	uint32_t hdr;

	if (w->off >= w->len || left < 8)
		return false;
	hdr = td_get_le32(at);
	type = hdr & 31;
	if (type > 28)
		return false;
	if (type) {
		body = type * 4;
	} else {
		/* A length word follows, counting itself. */
		body = td_get_le32(at + 4);
		if (body < 4 || body % 4)
			return false;
		body -= 4;
		head = 8;
	}
	if (body > left - head)
		return false;
	/*
	 * Pages handed over long after they were written (a replay, a
	 * file) come from memory, not cache: ask for what lies a few
	 * records ahead, as the page's own prefetcher is slow to start.
	 */
	__builtin_prefetch(at + 512);
	*data = at + head;
	*size = body;
	w->off += head + body;
	w->ts += hdr >> 5;
	*ts = w->ts;
	return true;
}

/* td_pagewalk_next() past what td_pagewalk_data() did not take: out of line, rare. */
bool td_pagewalk_next_slow(struct td_pagewalk *w, uint64_t *ts, const uint8_t **data,
			   unsigned int *size);

/*
 * The next data record: its timestamp, its body and the body's size in
 * bytes (a multiple of 4). false at the end of the chain (w->corrupt
 * then says whether it ended early).
 */
static inline bool td_pagewalk_next(struct td_pagewalk *w, uint64_t *ts, const uint8_t **data,
				    unsigned int *size)
{
	return td_pagewalk_data(w, ts, data, size) || td_pagewalk_next_slow(w, ts, data, size);
}

#endif /* TD_LIB_PAGEWALK_H */
