/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Resolved stacks, named once: the pipeline names the frames of a kernel
 * or user stack the first time it meets the stack, and hands the same
 * frames out again every later time, as long as what named them has not
 * changed. The same few stacks come back all the time (a sched_switch from
 * the same loop), so an event then costs a hash of its IPs instead of a
 * symbolizer lookup per frame. Private to the library.
 *
 * A stack is told apart by its key: the kind of naming, the IPs, the file
 * identity of each frame (user stacks with file identity), the process
 * whose maps or root named it, and a stamp the caller takes from what the
 * naming depended on (the symbolizer's and the file table's generations).
 * An entry whose stamp is no longer the caller's is stale: named again,
 * and keeps its id if the frames come out the same.
 *
 * Bounded by frames held: when a new stack would not fit, the stacks not
 * used lately are dropped (a sweep: those of processes that came and went;
 * "lately": while the last quarter to half of the bound's frames were
 * kept), and if what is left still fills three quarters of the bound,
 * every entry is (a reset). Frames handed out stay valid through the
 * next td_memo_add() (what an add drops, the one after it frees), until
 * td_memo_free(): an event's kernel frames survive keeping its user stack.
 * Not thread safe.
 */
#ifndef TD_LIB_STACKMEMO_H
#define TD_LIB_STACKMEMO_H

#include <stdint.h>

#include <trace-defer/symbolize.h>
#include <trace-defer/types.h>

/* How a stack's frames were named: part of the key. */
enum td_memo_kind {
	TD_MEMO_KERNEL = 1,	/* by address alone */
	TD_MEMO_UFILES,		/* user, from the record's file identity (+ the pid's root) */
	TD_MEMO_UMAPS,		/* user, through the maps of a process */
	TD_MEMO_URAW,		/* user, not named (no process to ask) */
};

struct td_memo_key {
	enum td_memo_kind kind;
	/*
	 * The process whose maps or root named it; 0: any (kernel and raw
	 * stacks, user stacks whose files were found without a root), -1:
	 * none (its process gone, a file found nowhere).
	 */
	int pid;
	uint64_t stamp;
	const uint64_t *ips;
	const struct td_ufile *files;		/* TD_MEMO_UFILES: one per IP, else NULL */
	unsigned int nr;			/* > 0 */
};

/* A named stack, as td_memo_find() and td_memo_add() give it. */
struct td_memo_stack {
	uint64_t id;			/* never 0, never reused in the process */
	const struct td_frame *frames;
	unsigned int nr;
	/* Counted once when named, added to the pipeline's stats per use. */
	unsigned int named;		/* frames with a symbol */
	unsigned int fileid_named;	/* TD_FILE_IN frames named */
	unsigned int fileid_unknown;	/* TD_FILE_IN frames of an id no record described */
	unsigned int tracer;		/* kernel: innermost frames the tracer's own (tracerframes.h) */
};

struct td_memo_stats {
	uint64_t hits, misses;		/* stacks found, stacks named */
	uint64_t stale;			/* found with an old stamp: named again */
	uint64_t renamed_same;		/* ... and the same frames came out: id kept */
	uint64_t sweeps;		/* the frame bound was reached: unused stacks dropped */
	uint64_t swept;			/* stacks dropped so */
	uint64_t resets;		/* emptied: what a sweep left was still too much */
	uint64_t stacks, frames;	/* held now */
};

struct td_memo;

/* At most @max_frames frames held (0: TD_MEMO_MAX_FRAMES). NULL when out of memory. */
#define TD_MEMO_MAX_FRAMES	65536
struct td_memo *td_memo_new(unsigned int max_frames);
void td_memo_free(struct td_memo *m);

/*
 * The stack of @key, or NULL (not held, or held with another stamp, which
 * td_memo_add() then replaces).
 */
const struct td_memo_stack *td_memo_find(struct td_memo *m, const struct td_memo_key *key);

/*
 * Keep the stack @own named for @key (own->nr == key->nr; its id is not
 * read), replacing a stale entry of the key; if its frames are the same
 * bytes, it keeps its id. Returns the kept stack, or NULL when out of
 * memory or larger than the bound (the caller then uses its own, unkept).
 */
const struct td_memo_stack *td_memo_add(struct td_memo *m, const struct td_memo_key *key,
					const struct td_memo_stack *own);

/*
 * @s (handed out by this memo, still valid by its epoch) was used: a
 * caller that found it without td_memo_find() (a slot of its own) says so,
 * or the next sweep may take it for unused.
 */
void td_memo_used(struct td_memo *m, const struct td_memo_stack *s);

void td_memo_get_stats(const struct td_memo *m, struct td_memo_stats *st);

/*
 * Drop every stack (not counted as a reset): what named them is gone (a
 * symbolizer started again). Frames handed out stay valid until the next
 * td_memo_add(), as for a reset; the epoch changes.
 */
void td_memo_clear(struct td_memo *m);

/*
 * Nonzero, unique in the process, and changed whenever a stack this memo
 * handed out may have gone (a stale entry replaced, a reset): a caller
 * that keeps handed-out stacks of its own, keyed by something cheaper than
 * the key, keeps them tagged with the epoch and trusts only those whose
 * tag is still the epoch.
 */
uint64_t td_memo_epoch(const struct td_memo *m);

/*
 * Was @s (handed out by this memo, still valid by its epoch) named for the
 * kind, process and stamp of @key? A caller that found @s by the IPs and
 * files (a shared stack's slot) checks the rest of the key with it.
 */
bool td_memo_stack_is(const struct td_memo_stack *s, const struct td_memo_key *key);

#endif /* TD_LIB_STACKMEMO_H */
