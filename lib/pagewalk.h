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

struct td_pagewalk {
	const uint8_t *d;
	unsigned int off, len;	/* at the end: off is where the (sound) data ends */
	uint64_t ts;
	bool corrupt;		/* the walk ended at a bad structure */
};

/* Walk the @len bytes of events at @events, of a page whose timestamp is @ts. */
void td_pagewalk_start(struct td_pagewalk *w, const void *events, unsigned int len, uint64_t ts);

/*
 * The next data record: its timestamp, its body and the body's size in
 * bytes (a multiple of 4). false at the end of the chain (w->corrupt
 * then says whether it ended early).
 */
bool td_pagewalk_next(struct td_pagewalk *w, uint64_t *ts, const uint8_t **data,
		      unsigned int *size);

#endif /* TD_LIB_PAGEWALK_H */
