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

/* td_pagewalk_next() of anything but a sound data record next: out of line. */
bool td_pagewalk_next_slow(struct td_pagewalk *w, uint64_t *ts, const uint8_t **data,
			   unsigned int *size);

/*
 * The next data record: its timestamp, its body and the body's size in
 * bytes (a multiple of 4). false at the end of the chain (w->corrupt
 * then says whether it ended early).
 *
 * Inline for the record that is next nearly every time, a data record
 * that lies inside the chain: called for each record of every page, the
 * call and the walk's state in memory cost as much as the reading.
 */
static inline bool td_pagewalk_next(struct td_pagewalk *w, uint64_t *ts, const uint8_t **data,
				    unsigned int *size)
{
	unsigned int left = w->len - w->off, type, body;
	const uint8_t *at = w->d + w->off;
	uint32_t hdr;

	if (w->off >= w->len || left < 8)
		return td_pagewalk_next_slow(w, ts, data, size);
	hdr = td_get_le32(at);
	type = hdr & 31;
	if (type && type <= 28) {
		body = type * 4;
		if (4 + body > left)
			return td_pagewalk_next_slow(w, ts, data, size);
		*data = at + 4;
	} else if (!type) {
		/* The length word counts itself. */
		body = td_get_le32(at + 4);
		if (body < 4 || body % 4 || body > left - 4)
			return td_pagewalk_next_slow(w, ts, data, size);
		body -= 4;
		*data = at + 8;
		w->off += 4;
	} else {
		return td_pagewalk_next_slow(w, ts, data, size);
	}
	*size = body;
	w->off += 4 + body;
	w->ts += hdr >> 5;
	*ts = w->ts;
	return true;
}

#endif /* TD_LIB_PAGEWALK_H */
