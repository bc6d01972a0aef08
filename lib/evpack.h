/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Packed events: what an event waiting for its user stack must keep to be
 * emitted later, without the event itself. Private to the library (the
 * stitcher uses it).
 *
 * An event is its per-record part (timestamp and cookie: the stitcher
 * keeps those) and a body: the record's format, CPU, thread, process,
 * comm, data and kernel stack. Bodies repeat: the same task switches out
 * from the same kernel path with the same fields again and again, so each
 * distinct body is kept once, counted, and freed with its last event.
 * A shared kernel stack (kstack.h) is held by reference, not copied.
 *
 * A body is named by a 32-bit id, not a pointer, and holds the thread
 * (which the record's own header field makes part of a body anyway): a
 * waiting event is then a timestamp, a cookie, an id and three list links,
 * 32 bytes, and a million of them fit in 32 MiB.
 *
 * Not thread safe; one table per stitcher.
 */
#ifndef TD_LIB_EVPACK_H
#define TD_LIB_EVPACK_H

#include <stddef.h>
#include <stdint.h>

#include <trace-defer/types.h>

#include "htab.h"

/* Private to evpack.c but for evpack_tid(). */
struct evbody {
	struct hnode node;
	uint32_t refs;
	uint32_t nr_kips;
	struct tep_event *tep_event;
	const uint64_t *kips;	/* a shared block (kshared) or our own, after data */
	uint32_t id;
	int cpu;
	int tid;
	int pid;
	int raw_size;
	bool kshared;
	char comm[TD_COMM_LEN];
	/* raw_size bytes of record data, then (not kshared) the kernel IPs, aligned */
	unsigned char data[] __attribute__((aligned(8)));
};

struct evpack {
	struct htab tab;
	struct evbody **byid;	/* [id], 0 unused; a free id's slot is NULL */
	uint32_t *free_ids;	/* a stack of ids to hand out again */
	uint32_t nr_ids;	/* ids handed out so far: 1 .. nr_ids - 1 */
	uint32_t cap_ids;	/* byid's and free_ids' size */
	uint32_t nr_free;
	size_t bodies;		/* distinct bodies now */
	size_t bytes;		/* their size as allocated, headers included */
};

/* Returns 0 or -ENOMEM. */
int evpack_init(struct evpack *pk);
/* Frees every body, held or not. */
void evpack_destroy(struct evpack *pk);

/*
 * The id of @ev's body, interned: a reference the caller drops with
 * evpack_put(). @ev is not changed and may be freed right after. 0 when
 * out of memory.
 */
uint32_t evpack_get(struct evpack *pk, const struct td_event *ev);
void evpack_put(struct evpack *pk, uint32_t id);

/* The thread of body @id (held). Inline: the stitcher's key compare. */
static inline int evpack_tid(const struct evpack *pk, uint32_t id)
{
	return pk->byid[id]->tid;
}

/*
 * Fill @ev (zeroed first) with body @id's part of an event: its pointers
 * lead into the body, so @ev is valid while the reference is held, and is
 * never passed to td_event_free(). The caller sets ts and the cookie.
 */
void evpack_unpack(const struct evpack *pk, uint32_t id, struct td_event *ev);

#endif /* TD_LIB_EVPACK_H */
