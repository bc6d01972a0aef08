/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Packed events: what an event waiting for its user stack must keep to be
 * emitted later, without the event itself. Private to the library (the
 * stitcher uses it).
 *
 * An event is its per-record part (timestamp, thread, cookie: the
 * stitcher keeps those) and a body: the record's format, CPU, process,
 * comm, data and kernel stack. Bodies repeat: the same task switches out
 * from the same kernel path with the same fields again and again, so each
 * distinct body is kept once, counted, and freed with its last event.
 * A shared kernel stack (kstack.h) is held by reference, not copied.
 *
 * Not thread safe; one table per stitcher.
 */
#ifndef TD_LIB_EVPACK_H
#define TD_LIB_EVPACK_H

#include <stddef.h>
#include <stdint.h>

#include <trace-defer/types.h>

#include "htab.h"

struct evbody;

struct evpack {
	struct htab tab;
	size_t bodies;		/* distinct bodies now */
	size_t bytes;		/* their size, headers included */
};

/* Returns 0 or -ENOMEM. */
int evpack_init(struct evpack *pk);
/* Frees every body, held or not. */
void evpack_destroy(struct evpack *pk);

/*
 * The body of @ev, interned: a reference the caller drops with
 * evpack_put(). @ev is not changed and may be freed right after. NULL
 * when out of memory.
 */
struct evbody *evpack_get(struct evpack *pk, const struct td_event *ev);
void evpack_put(struct evpack *pk, struct evbody *b);

/*
 * Fill @ev (zeroed first) with @b's part of an event: its pointers lead
 * into @b, so @ev is valid while the reference is held, and is never
 * passed to td_event_free(). The caller sets ts, tid and the cookie.
 */
void evpack_unpack(const struct evbody *b, struct td_event *ev);

#endif /* TD_LIB_EVPACK_H */
