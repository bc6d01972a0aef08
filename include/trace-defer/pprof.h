/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Aggregated profiles in pprof's format (profile.proto, gzipped), the
 * input of `go tool pprof`, Parca, Pyroscope and the like.
 *
 * A td_pprof counts events over an interval: one sample type "events"
 * (unit "count"), one sample per distinct (stack, comm, pid, event) with
 * the number of events that had it. A sample's locations are its kernel
 * frames, innermost first, then its user frames, innermost first; an event
 * whose user stack is missing (status user_lost or unwind_failed) gets a
 * location "[user_lost]" or "[unwind_failed]" in its place, as in folded
 * stacks. Labels: "comm" and "event" (strings), "pid" (the process id,
 * else the thread id; none on a sample of any process, see
 * td_pprof_set_max_mem()). Frames are named as in folded stacks (symbol, else
 * "object+0xOFFSET" for user frames, else "0xADDR"); every function's
 * file name is its object; one mapping per (object, build-id), marked as
 * already symbolized so readers do not look for binaries. A user frame's
 * location address is its offset in the object, which is the same in
 * every process; other frames keep their address.
 *
 * Adding an event already seen allocates nothing when its frames come from
 * one symbolizer (td_frame.strings_id): the event is looked up by its
 * frames' addresses and string pointers, comm, pid, event and status, one
 * hash and one comparison; new frames are cached by their string pointers.
 * One thread at a time per td_pprof.
 */
#ifndef TRACE_DEFER_PPROF_H
#define TRACE_DEFER_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include <trace-defer/output.h>

struct td_pprof;

struct td_pprof_stats {
	uint64_t events;	/* events counted since the last reset */
	uint64_t samples;	/* distinct samples */
	uint64_t locations;
	uint64_t functions;
	uint64_t mappings;
	uint64_t strings;
	uint64_t mem_bytes;	/* bytes the tables hold: entries, buckets, arrays */
	/* Added later: events counted in the [memory_bound] sample (td_pprof_set_max_mem()). */
	uint64_t over_events;
	/* Added later: events counted in samples without a pid (td_pprof_set_max_mem()). */
	uint64_t folded_events;
};

/* @start_ns: wall-clock (CLOCK_REALTIME) start of the first interval. */
struct td_pprof *td_pprof_new(uint64_t start_ns);
void td_pprof_free(struct td_pprof *pp);

/*
 * Added later. Once the tables hold three quarters of @bytes (0: no
 * bound, the default), an event whose sample is there counts there
 * (found by its stacks' ids, else frame by frame by name, adding nothing:
 * frames named anew, by a symbolizer started again, find theirs), and
 * every other one counts in the sample of its stacks, comm and event
 * that has no pid label, made if new (folded_events): the processes of
 * one program, started again and again, share one sample each stack.
 * Once the tables hold @bytes, what has neither sample counts in one
 * sample of its own, its one location "[memory_bound]" (comm and event
 * "[unknown]", pid 0): a profile of a long run on a machine of ever new
 * processes stays within its bound, and says how much it left out
 * (over_events; a reset counts both again from 0).
 */
void td_pprof_set_max_mem(struct td_pprof *pp, uint64_t bytes);

/*
 * Count one event. Returns 0 or -ENOMEM (the event is then not counted).
 * Events are told apart by the pointer of @r->event_name (output.h): a
 * caller of its own gives each kind of event one string that stays, and
 * no other name at that address, while @pp lives.
 */
int td_pprof_add(struct td_pprof *pp, const struct td_resolved *r);

/*
 * Write the profile of the events since the last reset, gzipped, to @f,
 * with duration @end_ns - start. Nothing is forgotten. Returns 0 or a
 * negative errno; *@bytes (may be NULL) gets the size written.
 */
int td_pprof_write(struct td_pprof *pp, FILE *f, uint64_t end_ns, size_t *bytes);

/* Start a new interval at @start_ns: every table emptied. */
void td_pprof_reset(struct td_pprof *pp, uint64_t start_ns);

/*
 * Say when this interval started, the counts kept. 0: not known (the
 * events came from a trace read later, whose clock is not the wall
 * clock): the profile then carries no time, and td_pprof_write()'s
 * @end_ns is its duration.
 */
void td_pprof_set_start(struct td_pprof *pp, uint64_t start_ns);

void td_pprof_stats(const struct td_pprof *pp, struct td_pprof_stats *st);

#endif /* TRACE_DEFER_PPROF_H */
