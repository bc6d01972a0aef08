// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the stitcher (lib/stitch.c): order independence, shared
 * cookies, cookie counter wrap, lost and failed stacks, statuses, bounds,
 * flush, a randomized run checked against the records' own keys,
 * waiting events packed and unpacked field by field (every case run with
 * waiting events kept whole, packed, and both), and stacks dropped
 * once every event older than them has been fed (settle).
 */
#include <endian.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <trace-defer/stitch.h>

#include "../../lib/kstack.h"

#define MS	1000000ULL
#define SEC	1000000000ULL

/*
 * Every test runs three times: waiting events kept whole (the default),
 * all packed, and a few whole then packed, so that each case meets both
 * kinds of waiting events and the change from one to the other.
 */
enum pack_mode { WHOLE, PACKED, MIXED };
static enum pack_mode pack_mode;

#define MIXED_WHOLE	3

/* td_stitch_new() with @cfg (NULL: the defaults) as the run's mode has it. */
static struct td_stitcher *stitch_new(const struct td_stitch_config *cfg, td_emit_fn fn,
				      void *arg)
{
	struct td_stitch_config c;

	if (cfg)
		c = *cfg;
	else
		td_stitch_config_default(&c);
	c.pack_all = pack_mode == PACKED;
	c.max_whole_events = pack_mode == MIXED ? MIXED_WHOLE : 0;
	return td_stitch_new(&c, fn, arg);
}

/* One emitted event, as the callback saw it. */
struct rec {
	int id;			/* ev->pid, used as the event's name in tests */
	int tid;
	uint64_t cookie;
	uint64_t ts;
	uint64_t seq;
	enum td_status status;
	bool has_us;
	unsigned int nr;
	uint64_t ip0;
};

struct log {
	struct rec *recs;
	size_t n, cap;
};

static void record(const struct td_event *ev, const struct td_ustack *us, enum td_status status,
		   void *arg)
{
	struct log *log = arg;
	struct rec *r;

	if (log->n == log->cap) {
		log->cap = log->cap ? log->cap * 2 : 64;
		log->recs = realloc(log->recs, log->cap * sizeof(*log->recs));
		assert_non_null(log->recs);
	}
	r = &log->recs[log->n++];
	r->id = ev->pid;
	r->tid = ev->tid;
	r->cookie = ev->cookie;
	r->ts = ev->ts;
	r->seq = ev->seq;
	r->status = status;
	r->has_us = us != NULL;
	r->nr = us ? us->ips.nr : 0;
	r->ip0 = us && us->ips.nr ? us->ips.ips[0] : 0;
	if (us) {
		/* A stack is only ever given to the events of its own key. */
		assert_int_equal(us->tid, ev->tid);
		assert_int_equal(us->cookie, ev->cookie);
	}
	if (status == TD_INPLACE)
		assert_true(ev->inplace);
}

static uint64_t cookie(int cpu, uint32_t counter)
{
	return ((uint64_t)counter << 32) | (uint32_t)(cpu + 1);
}

static struct td_event *event(int id, int tid, uint64_t ck, uint64_t ts, int cpu)
{
	struct td_event *ev = td_event_new();

	assert_non_null(ev);
	ev->pid = id;
	ev->tid = tid;
	ev->ts = ts;
	ev->cpu = cpu;
	ev->has_cookie = ck != 0;
	ev->cookie = ck;
	/* Give it owned memory so leaks show under ASan and valgrind. */
	ev->raw = malloc(8);
	assert_non_null(ev->raw);
	ev->raw_size = 8;
	return ev;
}

static struct td_ustack *stack(int tid, uint64_t ck, uint64_t ts, int cpu, unsigned int nr,
			       uint64_t ip0)
{
	struct td_ustack *us = td_ustack_new();
	uint64_t ips[16];
	unsigned int i;

	assert_non_null(us);
	assert_true(nr <= 16);
	for (i = 0; i < nr; i++)
		ips[i] = ip0 + i * 0x10;
	assert_int_equal(td_ips_copy(&us->ips, ips, nr), 0);
	us->tid = tid;
	us->cookie = ck;
	us->ts = ts;
	us->cpu = cpu;
	return us;
}

struct fixture {
	struct td_stitcher *st;
	struct log log;
	struct td_stitch_config cfg;
};

static struct fixture *fixture_new(size_t max_events, size_t max_stacks)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	td_stitch_config_default(&fx->cfg);
	fx->cfg.max_wait_ns = 2 * SEC;
	fx->cfg.stack_keep_ns = 1 * SEC;
	if (max_events)
		fx->cfg.max_pending_events = max_events;
	if (max_stacks)
		fx->cfg.max_stacks = max_stacks;
	fx->st = stitch_new(&fx->cfg, record, &fx->log);
	assert_non_null(fx->st);
	return fx;
}

static void fixture_free(struct fixture *fx)
{
	td_stitch_free(fx->st);
	free(fx->log.recs);
	free(fx);
}

static struct td_stitch_stats stats(const struct fixture *fx)
{
	struct td_stitch_stats s;

	td_stitch_get_stats(fx->st, &s);
	return s;
}

static const struct rec *find(const struct fixture *fx, int id)
{
	size_t i;

	for (i = 0; i < fx->log.n; i++)
		if (fx->log.recs[i].id == id)
			return &fx->log.recs[i];
	fail_msg("event %d was not emitted", id);
	return NULL;
}

static size_t times_emitted(const struct fixture *fx, int id)
{
	size_t i, n = 0;

	for (i = 0; i < fx->log.n; i++)
		n += fx->log.recs[i].id == id;
	return n;
}

/* ---- tests ---- */

static void test_defaults(void **state)
{
	struct td_stitch_config cfg;
	struct log log = { 0 };
	struct td_stitcher *st;
	struct td_stitch_stats s;

	td_stitch_config_default(&cfg);
	assert_int_equal(cfg.max_pending_events, 1 << 20);
	assert_int_equal(cfg.max_stacks, 1 << 16);
	assert_int_equal(cfg.max_wait_ns, 60 * SEC);
	assert_int_equal(cfg.stack_keep_ns, 2 * SEC);
	assert_int_equal(cfg.settle_margin_ns, 1 * MS);
	assert_string_equal(td_status_name(TD_STITCHED), "stitched");
	assert_string_equal(td_status_name(TD_USER_LOST), "user_lost");
	assert_string_equal(td_status_name(TD_UNWIND_FAILED), "unwind_failed");
	assert_string_equal(td_status_name(TD_NO_USER), "no_user");
	assert_string_equal(td_status_name(TD_INPLACE), "inplace");
	assert_null(td_status_name(TD_NR_STATUS));
	assert_null(td_status_name((enum td_status)-1));

	assert_null(td_stitch_new(NULL, NULL, NULL));
	/*
	 * NULL config: defaults. The 60 s wait applies: an event of a task
	 * that slept 30 s gets its stack, one whose stack never came is let
	 * go 60 s after it.
	 */
	st = stitch_new(NULL, record, &log);
	assert_non_null(st);
	td_stitch_event(st, event(1, 10, cookie(0, 1), 1 * SEC, 0));
	td_stitch_event(st, event(2, 11, cookie(0, 2), 1 * SEC + 1, 0));
	td_stitch_advance(st, 31 * SEC);
	assert_int_equal(log.n, 0);
	td_stitch_stack(st, stack(11, cookie(0, 2), 31 * SEC, 0, 1, 0x4000));
	assert_int_equal(log.n, 1);
	assert_int_equal(log.recs[0].status, TD_STITCHED);
	assert_int_equal(log.recs[0].id, 2);
	td_stitch_advance(st, 61 * SEC);
	assert_int_equal(log.n, 1);
	td_stitch_advance(st, 61 * SEC + 1);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.recs[1].status, TD_USER_LOST);
	assert_int_equal(log.recs[1].id, 1);
	td_stitch_get_stats(st, &s);
	assert_int_equal(s.emitted[TD_USER_LOST], 1);
	assert_int_equal(s.emitted[TD_STITCHED], 1);
	td_stitch_free(st);
	free(log.recs);
}

static void test_stack_after_event(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	uint64_t ck = cookie(0, 1);
	struct td_stitch_stats s;
	const struct rec *r;

	td_stitch_event(fx->st, event(1, 100, ck, 1000, 0));
	assert_int_equal(fx->log.n, 0);
	assert_int_equal(stats(fx).pending_events, 1);
	td_stitch_stack(fx->st, stack(100, ck, 5000, 0, 3, 0x401000));
	assert_int_equal(fx->log.n, 1);
	r = find(fx, 1);
	assert_int_equal(r->status, TD_STITCHED);
	assert_true(r->has_us);
	assert_int_equal(r->nr, 3);
	assert_int_equal(r->ip0, 0x401000);
	s = stats(fx);
	assert_int_equal(s.events, 1);
	assert_int_equal(s.stacks, 1);
	assert_int_equal(s.emitted[TD_STITCHED], 1);
	assert_int_equal(s.pending_events, 0);
	assert_int_equal(s.pending_stacks, 1);	/* kept for late events */
	assert_int_equal(s.late_events, 0);

	/* Kept for stack_keep_ns after its own timestamp, then dropped as used. */
	td_stitch_advance(fx->st, 5000 + fx->cfg.stack_keep_ns);
	assert_int_equal(stats(fx).pending_stacks, 1);
	td_stitch_advance(fx->st, 5000 + fx->cfg.stack_keep_ns + 1);
	s = stats(fx);
	assert_int_equal(s.pending_stacks, 0);
	assert_int_equal(s.orphan_stacks, 0);
	assert_int_equal(fx->log.n, 1);
	fixture_free(fx);
}

/*
 * The process of an event whose record did not say it (pid 0) is the one
 * its deferred stack record says, waiting or late; an event's own pid is
 * kept; a stack record without one leaves it 0.
 */
static void test_pid_from_stack(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	struct td_ustack *us;

	(void)state;
	td_stitch_event(fx->st, event(0, 100, cookie(0, 1), 1000, 0));	/* waits */
	td_stitch_event(fx->st, event(7, 100, cookie(0, 1), 1001, 0));	/* its own pid */
	us = stack(100, cookie(0, 1), 2000, 0, 3, 0x401000);
	us->tgid = 99;
	td_stitch_stack(fx->st, us);
	td_stitch_event(fx->st, event(0, 100, cookie(0, 1), 1002, 0));	/* late */
	td_stitch_event(fx->st, event(0, 200, cookie(1, 1), 1003, 1));
	td_stitch_stack(fx->st, stack(200, cookie(1, 1), 2001, 1, 2, 0x402000));	/* no tgid */
	assert_int_equal(fx->log.n, 4);
	assert_int_equal(fx->log.recs[0].id, 99);
	assert_int_equal(fx->log.recs[1].id, 7);
	assert_int_equal(fx->log.recs[2].id, 99);
	assert_int_equal(fx->log.recs[2].status, TD_STITCHED);
	assert_int_equal(fx->log.recs[3].id, 0);
	assert_int_equal(fx->log.recs[3].tid, 200);
	fixture_free(fx);
}

static void test_stack_before_event(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	uint64_t ck = cookie(1, 7);
	const struct rec *r;

	/* The stack was read first, from CPU 0's buffer; the cookie sits on CPU 1. */
	td_stitch_stack(fx->st, stack(200, ck, 9000, 0, 2, 0x5000));
	assert_int_equal(fx->log.n, 0);
	td_stitch_event(fx->st, event(1, 200, ck, 8000, 1));
	assert_int_equal(fx->log.n, 1);
	r = find(fx, 1);
	assert_int_equal(r->status, TD_STITCHED);
	assert_int_equal(r->ip0, 0x5000);
	assert_int_equal(r->nr, 2);
	assert_int_equal(stats(fx).late_events, 1);
	assert_int_equal(stats(fx).pending_events, 0);
	fixture_free(fx);
}

/*
 * A task's stack comes before it can enter the kernel again: a record of
 * its next entry says the stack of a waiting key was lost, and settle
 * writes its events as lost once every event before that record was fed,
 * not max_wait_ns later. Whatever order two CPUs' records come in.
 */
static void test_superseded(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	uint64_t m = fx->cfg.settle_margin_ns;
	uint64_t k1 = cookie(0, 1), k2 = cookie(1, 2), k3 = cookie(0, 3);
	uint64_t j1 = cookie(1, 4), j2 = cookie(0, 5), j3 = cookie(1, 6);

	/* Task 100: entry k1 waits, then an event of entry k2. */
	td_stitch_event(fx->st, event(1, 100, k1, 10 * MS, 0));
	td_stitch_event(fx->st, event(2, 100, k1, 11 * MS, 0));
	td_stitch_event(fx->st, event(3, 100, k2, 20 * MS, 1));
	/* Task 200: the stack of its later entry j2 is read before j1's event. */
	td_stitch_stack(fx->st, stack(200, j2, 30 * MS, 1, 1, 0x402000));
	td_stitch_event(fx->st, event(4, 200, j1, 12 * MS, 0));
	/* Task 300: the later entry's event is read first; j3's stack is in flight. */
	td_stitch_event(fx->st, event(5, 300, j3, 25 * MS, 1));
	td_stitch_event(fx->st, event(6, 300, k3, 15 * MS, 0));
	assert_int_equal(fx->log.n, 0);

	/* Not everything before 20 ms is in yet: nothing goes. */
	td_stitch_settle(fx->st, 20 * MS + m);
	assert_int_equal(fx->log.n, 0);
	td_stitch_settle(fx->st, 20 * MS + m + 1);
	assert_int_equal(fx->log.n, 2);
	assert_int_equal(find(fx, 1)->status, TD_USER_LOST);
	assert_int_equal(find(fx, 2)->status, TD_USER_LOST);
	assert_int_equal(stats(fx).superseded, 2);

	/* A stack that was on its way (read late from another CPU) still joins. */
	td_stitch_stack(fx->st, stack(300, k3, 18 * MS, 0, 2, 0x403000));
	assert_int_equal(find(fx, 6)->status, TD_STITCHED);

	td_stitch_settle(fx->st, 40 * MS);
	assert_int_equal(find(fx, 4)->status, TD_USER_LOST);
	assert_int_equal(stats(fx).superseded, 3);
	/* The newest entries still wait for their stacks. */
	assert_int_equal(times_emitted(fx, 3), 0);
	assert_int_equal(times_emitted(fx, 5), 0);
	td_stitch_stack(fx->st, stack(100, k2, 41 * MS, 1, 1, 0x401000));
	td_stitch_stack(fx->st, stack(300, j3, 42 * MS, 1, 1, 0x404000));
	assert_int_equal(find(fx, 3)->status, TD_STITCHED);
	assert_int_equal(find(fx, 5)->status, TD_STITCHED);
	td_stitch_settle(fx->st, 1 * SEC);
	assert_int_equal(fx->log.n, 6);
	assert_int_equal(stats(fx).superseded, 3);
	assert_int_equal(stats(fx).pending_events, 0);
	fixture_free(fx);
}

/* keep_superseded: a capture that holds stacks back on purpose waits them out. */
static void test_keep_superseded(void **state)
{
	struct td_stitch_config cfg;
	struct log log = { 0 };
	struct td_stitcher *st;

	td_stitch_config_default(&cfg);
	cfg.keep_superseded = true;
	st = stitch_new(&cfg, record, &log);
	assert_non_null(st);
	td_stitch_event(st, event(1, 100, cookie(0, 1), 10 * MS, 0));
	td_stitch_event(st, event(2, 100, cookie(0, 2), 20 * MS, 0));
	td_stitch_settle(st, 1 * SEC);
	assert_int_equal(log.n, 0);
	td_stitch_stack(st, stack(100, cookie(0, 1), 2 * SEC, 0, 1, 0x401000));
	assert_int_equal(log.n, 1);
	assert_int_equal(log.recs[0].status, TD_STITCHED);
	td_stitch_flush(st);
	assert_int_equal(log.n, 2);
	td_stitch_free(st);
	free(log.recs);
}

/*
 * A stack stays for late events until a stack of a later kernel entry of the
 * same task came and everything before it was fed; however far settle goes.
 */
static void test_settle(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	uint64_t a = cookie(0, 1), b = cookie(0, 2), c = cookie(1, 3);
	uint64_t a2 = cookie(1, 7), b0 = cookie(1, 5), m = fx->cfg.settle_margin_ns;
	struct td_stitch_stats s;

	/* a: used; b: no event yet; c: another task. */
	td_stitch_event(fx->st, event(1, 100, a, 10 * MS, 0));
	td_stitch_stack(fx->st, stack(100, a, 11 * MS, 0, 3, 0x401000));
	td_stitch_stack(fx->st, stack(200, b, 12 * MS, 1, 2, 0x402000));
	td_stitch_stack(fx->st, stack(300, c, 14 * MS, 1, 2, 0x403000));
	assert_int_equal(stats(fx).pending_stacks, 3);

	/* Fed far past all three: no task is known to have left its entry. */
	td_stitch_settle(fx->st, 30 * MS);
	assert_int_equal(stats(fx).pending_stacks, 3);
	assert_int_equal(stats(fx).settled_stacks, 0);
	/* Preempted on its way out, 14 ms after its stack: still served. */
	td_stitch_event(fx->st, event(2, 100, a, 25 * MS, 0));
	assert_int_equal(find(fx, 2)->status, TD_STITCHED);
	assert_int_equal(find(fx, 2)->ip0, 0x401000);

	/* Task 100's next entry: a is done once everything before 40 ms is in. */
	td_stitch_stack(fx->st, stack(100, a2, 40 * MS, 1, 1, 0x405000));
	td_stitch_settle(fx->st, 40 * MS + m);
	assert_int_equal(stats(fx).pending_stacks, 4);
	td_stitch_event(fx->st, event(3, 100, a, 39 * MS, 0));
	assert_int_equal(find(fx, 3)->status, TD_STITCHED);
	td_stitch_settle(fx->st, 40 * MS + m + 1);
	s = stats(fx);
	assert_int_equal(s.pending_stacks, 3);
	assert_int_equal(s.settled_stacks, 1);
	assert_int_equal(s.orphan_stacks, 0);
	/* Never emits; time does not go back; the others are untouched. */
	assert_int_equal(fx->log.n, 3);
	td_stitch_settle(fx->st, 1 * MS);
	td_stitch_event(fx->st, event(4, 300, c, 13 * MS, 1));
	assert_int_equal(find(fx, 4)->status, TD_STITCHED);
	td_stitch_event(fx->st, event(5, 100, a2, 39 * MS, 1));
	assert_int_equal(find(fx, 5)->ip0, 0x405000);

	/* A stack settled is gone: an event of its key (it could not come) waits. */
	td_stitch_event(fx->st, event(6, 100, a, 10 * MS + 5, 0));
	assert_int_equal(stats(fx).pending_events, 1);

	/*
	 * Task 200's earlier entry comes second (another CPU): done at once,
	 * until b's time; b stays the current one. Unused, it is an orphan.
	 */
	td_stitch_stack(fx->st, stack(200, b0, 8 * MS, 0, 1, 0x406000));
	td_stitch_settle(fx->st, 50 * MS);
	s = stats(fx);
	assert_int_equal(s.settled_stacks, 2);
	assert_int_equal(s.orphan_stacks, 1);
	assert_int_equal(s.pending_stacks, 3);
	td_stitch_event(fx->st, event(7, 200, b, 45 * MS, 1));
	assert_int_equal(find(fx, 7)->ip0, 0x402000);

	td_stitch_flush(fx->st);
	assert_int_equal(find(fx, 6)->status, TD_USER_LOST);
	s = stats(fx);
	assert_int_equal(s.settled_stacks, 2);
	assert_int_equal(s.pending_stacks, 0);
	fixture_free(fx);
}

/*
 * Thousands of done stacks, more than the done ring first holds, some
 * dropped out of turn (a wrapped cookie's event made them stale): late
 * events still find theirs, and settle drops exactly the ones whose later
 * stack is older than what was fed, in turn, then all of them.
 */
#define RING_TASKS	4
#define RING_ENTRIES	700
static uint64_t ring_ts(int t, int j)
{
	return 1 * MS + (uint64_t)(j * RING_TASKS + t) * 10000;
}

static bool ring_hole(int t, int j)
{
	return t == 1 && j % 7 == 3;
}

static void test_done_ring(void **state)
{
	struct fixture *fx = fixture_new(0, 1 << 14);
	uint64_t m = fx->cfg.settle_margin_ns, fed = ring_ts(0, RING_ENTRIES / 2);
	size_t holes = 0, expect = 0, n;
	struct td_stitch_stats s;
	int t, j, id = 1;

	for (j = 0; j < RING_ENTRIES; j++) {
		uint64_t ip = 0x400000 + (uint64_t)j * 0x100;

		for (t = 0; t < RING_TASKS; t++)
			td_stitch_stack(fx->st,
					stack(100 + t, cookie(t, j + 1), ring_ts(t, j), t, 1, ip));
		/*
		 * Holes while the ring fills and grows: the same key 3 s later
		 * is not its stack's, which is dropped.
		 */
		if (j && ring_hole(1, j - 1)) {
			uint64_t ts = ring_ts(1, j - 1) + 3 * SEC;

			td_stitch_event(fx->st, event(id++, 101, cookie(1, j), ts, 1));
			holes++;
		}
	}
	s = stats(fx);
	assert_int_equal(s.stale_records, holes);
	assert_int_equal(s.pending_stacks, RING_TASKS * RING_ENTRIES - holes);

	/* A late event of an early done stack, and of one past the first thousand. */
	td_stitch_event(fx->st, event(1000, 102, cookie(2, 6), ring_ts(2, 5) + 1, 2));
	assert_int_equal(find(fx, 1000)->status, TD_STITCHED);
	assert_int_equal(find(fx, 1000)->ip0, 0x400000 + 5 * 0x100);
	td_stitch_event(fx->st, event(1001, 103, cookie(3, 601), ring_ts(3, 600) + 1, 3));
	assert_int_equal(find(fx, 1001)->ip0, 0x400000 + 600 * 0x100);

	for (t = 0; t < RING_TASKS; t++)
		for (j = 0; j < RING_ENTRIES - 1; j++)
			expect += !ring_hole(t, j) && ring_ts(t, j + 1) < fed;
	td_stitch_settle(fx->st, fed + m);
	s = stats(fx);
	assert_int_equal(s.settled_stacks, expect);
	assert_int_equal(s.pending_stacks, RING_TASKS * RING_ENTRIES - holes - expect);
	/* Those kept are still served. */
	td_stitch_event(fx->st, event(1002, 100, cookie(0, RING_ENTRIES / 2),
				      ring_ts(0, RING_ENTRIES / 2 - 1) + 1, 0));
	assert_int_equal(find(fx, 1002)->status, TD_STITCHED);

	td_stitch_settle(fx->st, 10 * SEC);
	s = stats(fx);
	assert_int_equal(s.settled_stacks, RING_TASKS * (RING_ENTRIES - 1) - holes);
	/* Each task's newest stack stays: no later entry says it is done. */
	assert_int_equal(s.pending_stacks, RING_TASKS);
	td_stitch_flush(fx->st);
	/* The stale keys' events waited (superseded by each other, the last flushed): lost. */
	for (n = 1; n <= holes; n++) {
		assert_int_equal(times_emitted(fx, (int)n), 1);
		assert_int_equal(find(fx, (int)n)->status, TD_USER_LOST);
	}
	assert_int_equal(fx->log.n, holes + 3);
	assert_int_equal(stats(fx).pending_stacks, 0);
	fixture_free(fx);
}

/* At max_stacks, a stack whose task left its entry goes before a current one. */
static void test_evict_done_first(void **state)
{
	struct fixture *fx = fixture_new(0, 3);
	struct td_stitch_stats s;

	td_stitch_stack(fx->st, stack(100, cookie(0, 1), 1 * MS, 0, 1, 0x401000));
	td_stitch_stack(fx->st, stack(200, cookie(0, 2), 2 * MS, 0, 1, 0x402000));
	td_stitch_stack(fx->st, stack(200, cookie(0, 3), 3 * MS, 0, 1, 0x403000));
	/* Full: task 200's first stack goes, not task 100's older one. */
	td_stitch_stack(fx->st, stack(300, cookie(0, 4), 4 * MS, 0, 1, 0x404000));
	s = stats(fx);
	assert_int_equal(s.pending_stacks, 3);
	assert_int_equal(s.evicted_stacks, 1);
	td_stitch_event(fx->st, event(1, 100, cookie(0, 1), 1 * MS, 0));
	assert_int_equal(find(fx, 1)->ip0, 0x401000);
	td_stitch_event(fx->st, event(2, 200, cookie(0, 2), 2 * MS, 0));
	assert_int_equal(stats(fx).pending_events, 1);
	/* With no done stack, the oldest current one goes. */
	td_stitch_stack(fx->st, stack(400, cookie(0, 5), 5 * MS, 0, 1, 0x405000));
	td_stitch_event(fx->st, event(3, 100, cookie(0, 1), 1 * MS, 0));
	assert_int_equal(stats(fx).pending_events, 2);
	td_stitch_flush(fx->st);
	assert_int_equal(find(fx, 2)->status, TD_USER_LOST);
	assert_int_equal(find(fx, 3)->status, TD_USER_LOST);
	fixture_free(fx);
}

static void test_across_cpus(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	/* Same cookie value on two tasks: the key is (tid, cookie), not cookie. */
	uint64_t a = cookie(0, 1), b = cookie(1, 1);

	td_stitch_event(fx->st, event(1, 300, a, 100, 0));
	td_stitch_event(fx->st, event(2, 301, b, 110, 1));
	td_stitch_event(fx->st, event(3, 301, a, 120, 0));	/* tid 301 got a's value */
	td_stitch_stack(fx->st, stack(301, a, 200, 1, 1, 0x3a000));
	td_stitch_stack(fx->st, stack(300, a, 210, 1, 1, 0x300a0));
	assert_int_equal(fx->log.n, 2);
	assert_int_equal(find(fx, 3)->ip0, 0x3a000);
	assert_int_equal(find(fx, 1)->ip0, 0x300a0);
	/* Event 2 is still waiting: nothing else matched (301, b). */
	assert_int_equal(stats(fx).pending_events, 1);
	td_stitch_stack(fx->st, stack(301, b, 230, 0, 1, 0x3b000));
	assert_int_equal(find(fx, 2)->status, TD_STITCHED);
	assert_int_equal(find(fx, 2)->ip0, 0x3b000);
	/* Resolution order, not arrival order: 3, 1, 2. */
	assert_int_equal(fx->log.recs[0].id, 3);
	assert_int_equal(fx->log.recs[1].id, 1);
	assert_int_equal(fx->log.recs[2].id, 2);
	/* seq is the emission order. */
	assert_int_equal(find(fx, 3)->seq, 0);
	assert_int_equal(find(fx, 1)->seq, 1);
	assert_int_equal(find(fx, 2)->seq, 2);
	fixture_free(fx);
}

static void test_shared_cookie(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	uint64_t ck = cookie(0, 3);
	struct td_stitch_stats s;
	int i;

	/* Two events of one kernel entry, then the stack, then a late third. */
	td_stitch_event(fx->st, event(1, 400, ck, 1000, 0));
	td_stitch_event(fx->st, event(2, 400, ck, 1100, 0));
	td_stitch_stack(fx->st, stack(400, ck, 2000, 1, 4, 0x7000));
	assert_int_equal(fx->log.n, 2);
	/* Its cookie record was on another CPU and read after the stack was used. */
	td_stitch_event(fx->st, event(3, 400, ck, 1200, 1));
	assert_int_equal(fx->log.n, 3);
	for (i = 1; i <= 3; i++) {
		const struct rec *r = find(fx, i);

		assert_int_equal(r->status, TD_STITCHED);
		assert_int_equal(r->ip0, 0x7000);
		assert_int_equal(r->nr, 4);
		assert_int_equal(times_emitted(fx, i), 1);
	}
	s = stats(fx);
	assert_int_equal(s.emitted[TD_STITCHED], 3);
	assert_int_equal(s.late_events, 1);
	assert_int_equal(s.pending_stacks, 1);

	/* After stack_keep_ns the stack is gone: a later event of that key waits. */
	td_stitch_advance(fx->st, 2000 + fx->cfg.stack_keep_ns + 1);
	assert_int_equal(stats(fx).pending_stacks, 0);
	assert_int_equal(stats(fx).orphan_stacks, 0);
	td_stitch_event(fx->st, event(4, 400, ck, 2000 + fx->cfg.stack_keep_ns + 2, 0));
	assert_int_equal(fx->log.n, 3);
	td_stitch_flush(fx->st);
	assert_int_equal(find(fx, 4)->status, TD_USER_LOST);
	assert_false(find(fx, 4)->has_us);
	fixture_free(fx);
}

/* The counter wrapped: the same (tid, cookie) comes back much later. */
static void test_counter_wrap(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	uint64_t ck = cookie(0, 0x7fffffff);
	uint64_t later = 100 * SEC;
	struct td_stitch_stats s;

	fx->cfg.stack_keep_ns = 50 * SEC;	/* a long keep must not matter either */
	td_stitch_free(fx->st);
	fx->st = stitch_new(&fx->cfg, record, &fx->log);
	assert_non_null(fx->st);

	/* 1: old stack still kept (no advance): a new event must not take it. */
	td_stitch_event(fx->st, event(1, 500, ck, 1000, 0));
	td_stitch_stack(fx->st, stack(500, ck, 2000, 0, 2, 0x1000));
	assert_int_equal(find(fx, 1)->ip0, 0x1000);
	td_stitch_event(fx->st, event(2, 500, ck, later, 0));
	assert_int_equal(fx->log.n, 1);
	s = stats(fx);
	assert_int_equal(s.stale_records, 1);
	assert_int_equal(s.pending_events, 1);
	assert_int_equal(s.pending_stacks, 0);
	/* Its own stack joins it. */
	td_stitch_stack(fx->st, stack(500, ck, later + 500, 1, 3, 0x2000));
	assert_int_equal(find(fx, 2)->status, TD_STITCHED);
	assert_int_equal(find(fx, 2)->ip0, 0x2000);
	assert_int_equal(find(fx, 2)->nr, 3);

	/* 2: an old event still waiting (no advance) must not take a new stack. */
	ck = cookie(1, 0x7ffffffd);
	td_stitch_event(fx->st, event(3, 501, ck, 1000, 1));
	td_stitch_stack(fx->st, stack(501, ck, later, 1, 2, 0x3000));
	assert_int_equal(find(fx, 3)->status, TD_USER_LOST);
	assert_false(find(fx, 3)->has_us);
	td_stitch_event(fx->st, event(4, 501, ck, later - 100, 1));
	assert_int_equal(find(fx, 4)->status, TD_STITCHED);
	assert_int_equal(find(fx, 4)->ip0, 0x3000);

	/* 3: an old stack against an old stack: the new one replaces it. */
	ck = cookie(1, 0x7ffffffb);
	td_stitch_stack(fx->st, stack(502, ck, 3000, 1, 1, 0x4000));
	td_stitch_stack(fx->st, stack(502, ck, later, 1, 1, 0x5000));
	td_stitch_event(fx->st, event(5, 502, ck, later - 10, 1));
	assert_int_equal(find(fx, 5)->ip0, 0x5000);
	s = stats(fx);
	assert_int_equal(s.stale_records, 3);
	assert_int_equal(s.orphan_stacks, 1);	/* 0x4000 nobody asked for */

	/* 4: at exactly max_wait_ns apart they still match; one ns more, not. */
	ck = cookie(0, 0x11);
	td_stitch_event(fx->st, event(6, 503, ck, 1000, 0));
	td_stitch_stack(fx->st, stack(503, ck, 1000 + fx->cfg.max_wait_ns, 0, 1, 0x6000));
	assert_int_equal(find(fx, 6)->status, TD_STITCHED);
	ck = cookie(0, 0x13);
	td_stitch_event(fx->st, event(7, 503, ck, 1000, 0));
	td_stitch_stack(fx->st, stack(503, ck, 1001 + fx->cfg.max_wait_ns, 0, 1, 0x7000));
	assert_int_equal(find(fx, 7)->status, TD_USER_LOST);
	fixture_free(fx);
}

/* Wrap with time advancing normally: expiry alone keeps them apart. */
static void test_counter_wrap_expired(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	uint64_t ck = cookie(0, 5);

	td_stitch_event(fx->st, event(1, 600, ck, 1000, 0));
	td_stitch_stack(fx->st, stack(600, ck, 1500, 0, 1, 0x1000));
	td_stitch_advance(fx->st, 10 * SEC);
	assert_int_equal(stats(fx).pending_stacks, 0);
	td_stitch_event(fx->st, event(2, 600, ck, 10 * SEC + 1, 0));
	assert_int_equal(fx->log.n, 1);
	td_stitch_advance(fx->st, 13 * SEC);
	assert_int_equal(find(fx, 2)->status, TD_USER_LOST);
	assert_int_equal(stats(fx).stale_records, 0);
	fixture_free(fx);
}

static void test_lost_stack(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	struct td_stitch_stats s;

	td_stitch_event(fx->st, event(1, 700, cookie(0, 1), 1 * SEC, 0));
	td_stitch_event(fx->st, event(2, 701, cookie(1, 1), 2 * SEC, 1));
	/* Trace time only: nothing expires until the caller says so. */
	td_stitch_advance(fx->st, 3 * SEC);
	assert_int_equal(fx->log.n, 0);
	td_stitch_advance(fx->st, 3 * SEC + 1);
	assert_int_equal(fx->log.n, 1);
	assert_int_equal(find(fx, 1)->status, TD_USER_LOST);
	/* Time never goes back. */
	td_stitch_advance(fx->st, 1);
	assert_int_equal(fx->log.n, 1);
	td_stitch_advance(fx->st, 4 * SEC + 1);
	assert_int_equal(find(fx, 2)->status, TD_USER_LOST);
	/* A stack arriving after its event expired is kept, then an orphan. */
	td_stitch_stack(fx->st, stack(700, cookie(0, 1), 3 * SEC + 10, 0, 2, 0x1000));
	assert_int_equal(fx->log.n, 2);
	td_stitch_advance(fx->st, 10 * SEC);
	s = stats(fx);
	assert_int_equal(s.emitted[TD_USER_LOST], 2);
	assert_int_equal(s.orphan_stacks, 1);
	assert_int_equal(s.pending_stacks, 0);
	assert_int_equal(s.pending_events, 0);
	assert_int_equal(s.evicted_events, 0);
	fixture_free(fx);
}

static void test_unwind_failed(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	uint64_t ck = cookie(0, 9);

	td_stitch_event(fx->st, event(1, 800, ck, 100, 0));
	td_stitch_stack(fx->st, stack(800, ck, 200, 0, 0, 0));
	td_stitch_event(fx->st, event(2, 800, ck, 150, 0));
	assert_int_equal(fx->log.n, 2);
	assert_int_equal(find(fx, 1)->status, TD_UNWIND_FAILED);
	assert_true(find(fx, 1)->has_us);
	assert_int_equal(find(fx, 1)->nr, 0);
	assert_int_equal(find(fx, 2)->status, TD_UNWIND_FAILED);
	assert_int_equal(stats(fx).emitted[TD_UNWIND_FAILED], 2);
	assert_int_equal(stats(fx).emitted[TD_STITCHED], 0);
	fixture_free(fx);
}

/*
 * A stack the kernel unwound after an execve() is the new program's: the
 * events of its cookie, before or after it arrives, get no user stack.
 */
static void test_exec_stack(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	uint64_t ck = cookie(0, 11), ck2 = cookie(0, 13);
	struct td_ustack *us = stack(900, ck, 200, 0, 4, 0x7000);

	us->flags = TD_USTACK_EXEC;
	td_stitch_event(fx->st, event(1, 900, ck, 100, 0));
	td_stitch_stack(fx->st, us);
	td_stitch_event(fx->st, event(2, 900, ck, 150, 0));
	/* The next entry of the same task stitches as usual. */
	td_stitch_event(fx->st, event(3, 900, ck2, 300, 0));
	td_stitch_stack(fx->st, stack(900, ck2, 400, 0, 2, 0x8000));
	assert_int_equal(fx->log.n, 3);
	assert_int_equal(find(fx, 1)->status, TD_USER_LOST);
	assert_int_equal(find(fx, 2)->status, TD_USER_LOST);
	assert_int_equal(find(fx, 3)->status, TD_STITCHED);
	assert_int_equal(find(fx, 3)->ip0, 0x8000);
	assert_int_equal(stats(fx).exec_stacks, 1);
	assert_int_equal(stats(fx).emitted[TD_USER_LOST], 2);
	assert_int_equal(stats(fx).emitted[TD_STITCHED], 1);
	fixture_free(fx);
}

static void test_no_user_and_inplace(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	struct td_event *ev;
	uint64_t ips[3] = { 0x10, 0x20, 0x30 };
	struct td_stitch_stats s;

	td_stitch_event(fx->st, event(1, 0, 0, 100, 0));
	assert_int_equal(fx->log.n, 1);
	assert_int_equal(find(fx, 1)->status, TD_NO_USER);
	assert_false(find(fx, 1)->has_us);

	ev = event(2, 900, 0, 200, 1);
	ev->inplace = true;
	assert_int_equal(td_ips_copy(&ev->inplace_stack, ips, 3), 0);
	td_stitch_event(fx->st, ev);
	assert_int_equal(find(fx, 2)->status, TD_INPLACE);
	assert_false(find(fx, 2)->has_us);

	/* In-place wins even when a cookie is set: no table work, no waiting. */
	ev = event(3, 900, cookie(1, 1), 300, 1);
	ev->inplace = true;
	td_stitch_event(fx->st, ev);
	assert_int_equal(find(fx, 3)->status, TD_INPLACE);

	s = stats(fx);
	assert_int_equal(s.events, 3);
	assert_int_equal(s.emitted[TD_NO_USER], 1);
	assert_int_equal(s.emitted[TD_INPLACE], 2);
	assert_int_equal(s.pending_events, 0);
	fixture_free(fx);
}

static void test_bound_events(void **state)
{
	struct fixture *fx = fixture_new(4, 0);
	struct td_stitch_stats s;
	int i;

	for (i = 1; i <= 6; i++)
		td_stitch_event(fx->st, event(i, 1000 + i, cookie(0, 2 * i + 1), 100 * i, 0));
	/* The two oldest were emitted as lost, in order, when room was needed. */
	assert_int_equal(fx->log.n, 2);
	assert_int_equal(fx->log.recs[0].id, 1);
	assert_int_equal(fx->log.recs[1].id, 2);
	assert_int_equal(fx->log.recs[0].status, TD_USER_LOST);
	assert_int_equal(fx->log.recs[1].status, TD_USER_LOST);
	s = stats(fx);
	assert_int_equal(s.evicted_events, 2);
	assert_int_equal(s.pending_events, 4);
	assert_int_equal(s.emitted[TD_USER_LOST], 2);

	for (i = 6; i >= 1; i--)
		td_stitch_stack(fx->st, stack(1000 + i, cookie(0, 2 * i + 1), 1000 + i, 1, 1,
					      0x1000 * i));
	for (i = 3; i <= 6; i++) {
		assert_int_equal(find(fx, i)->status, TD_STITCHED);
		assert_int_equal(find(fx, i)->ip0, 0x1000 * i);
	}
	for (i = 1; i <= 6; i++)
		assert_int_equal(times_emitted(fx, i), 1);
	s = stats(fx);
	assert_int_equal(s.pending_events, 0);
	assert_int_equal(s.pending_stacks, 6);
	td_stitch_flush(fx->st);
	s = stats(fx);
	assert_int_equal(s.orphan_stacks, 2);	/* the stacks of events 1 and 2 */
	assert_int_equal(s.pending_stacks, 0);
	fixture_free(fx);
}

/* Eviction of the oldest event must not break its key's remaining events. */
static void test_bound_events_same_key(void **state)
{
	struct fixture *fx = fixture_new(2, 0);
	uint64_t ck = cookie(0, 1);

	td_stitch_event(fx->st, event(1, 1100, ck, 100, 0));
	td_stitch_event(fx->st, event(2, 1100, ck, 110, 0));
	td_stitch_event(fx->st, event(3, 1100, ck, 120, 0));
	assert_int_equal(find(fx, 1)->status, TD_USER_LOST);
	td_stitch_stack(fx->st, stack(1100, ck, 200, 0, 1, 0xabc));
	assert_int_equal(find(fx, 2)->status, TD_STITCHED);
	assert_int_equal(find(fx, 3)->status, TD_STITCHED);
	assert_int_equal(find(fx, 3)->ip0, 0xabc);
	assert_int_equal(stats(fx).evicted_events, 1);
	fixture_free(fx);
}

static void test_bound_stacks(void **state)
{
	struct fixture *fx = fixture_new(0, 2);
	struct td_stitch_stats s;

	td_stitch_stack(fx->st, stack(1200, cookie(0, 1), 100, 0, 1, 0x100));
	td_stitch_stack(fx->st, stack(1201, cookie(0, 3), 110, 0, 1, 0x200));
	/* Stack 0x200 is used before the third comes; then 0x100 is evicted unused. */
	td_stitch_event(fx->st, event(2, 1201, cookie(0, 3), 90, 0));
	td_stitch_stack(fx->st, stack(1202, cookie(0, 5), 120, 0, 1, 0x300));
	s = stats(fx);
	assert_int_equal(s.evicted_stacks, 1);
	assert_int_equal(s.orphan_stacks, 1);
	assert_int_equal(s.pending_stacks, 2);
	/* The evicted stack's event arrives: it waits and ends lost. */
	td_stitch_event(fx->st, event(1, 1200, cookie(0, 1), 95, 0));
	assert_int_equal(stats(fx).pending_events, 1);
	/* A fourth stack evicts the used 0x200: neither unused nor orphan. */
	td_stitch_stack(fx->st, stack(1203, cookie(0, 7), 130, 0, 1, 0x400));
	s = stats(fx);
	assert_int_equal(s.evicted_stacks, 1);
	assert_int_equal(s.evicted_used_stacks, 1);
	assert_int_equal(s.orphan_stacks, 1);
	td_stitch_event(fx->st, event(3, 1202, cookie(0, 5), 105, 0));
	assert_int_equal(find(fx, 3)->ip0, 0x300);
	td_stitch_flush(fx->st);
	assert_int_equal(find(fx, 1)->status, TD_USER_LOST);
	assert_int_equal(find(fx, 2)->ip0, 0x200);
	s = stats(fx);
	assert_int_equal(s.orphan_stacks, 2);	/* + 0x400 at flush */
	assert_int_equal(s.evicted_events, 0);
	fixture_free(fx);
}

static void test_duplicate_stack(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	uint64_t ck = cookie(0, 1);

	td_stitch_stack(fx->st, stack(1300, ck, 100, 0, 1, 0x100));
	td_stitch_stack(fx->st, stack(1300, ck, 200, 1, 1, 0x200));
	td_stitch_event(fx->st, event(1, 1300, ck, 50, 0));
	assert_int_equal(find(fx, 1)->ip0, 0x100);
	assert_int_equal(stats(fx).duplicate_stacks, 1);
	assert_int_equal(stats(fx).pending_stacks, 1);
	fixture_free(fx);
}

static void test_flush(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	struct td_stitch_stats s;

	td_stitch_event(fx->st, event(1, 1400, cookie(0, 1), 100, 0));
	td_stitch_event(fx->st, event(2, 1401, cookie(1, 1), 50, 1));
	td_stitch_event(fx->st, event(3, 1400, cookie(0, 1), 110, 0));
	td_stitch_stack(fx->st, stack(1402, cookie(0, 3), 120, 0, 1, 0x1));
	td_stitch_stack(fx->st, stack(1403, cookie(0, 5), 130, 0, 1, 0x2));
	td_stitch_event(fx->st, event(4, 1403, cookie(0, 5), 125, 0));
	td_stitch_flush(fx->st);
	/* Lost in arrival order, after the one stitched before the flush. */
	assert_int_equal(fx->log.n, 4);
	assert_int_equal(fx->log.recs[0].id, 4);
	assert_int_equal(fx->log.recs[1].id, 1);
	assert_int_equal(fx->log.recs[2].id, 2);
	assert_int_equal(fx->log.recs[3].id, 3);
	s = stats(fx);
	assert_int_equal(s.emitted[TD_USER_LOST], 3);
	assert_int_equal(s.emitted[TD_STITCHED], 1);
	assert_int_equal(s.pending_events, 0);
	assert_int_equal(s.pending_stacks, 0);
	assert_int_equal(s.orphan_stacks, 1);
	assert_int_equal(s.evicted_events, 0);
	/* Usable after a flush. */
	td_stitch_event(fx->st, event(5, 1400, cookie(0, 1), 200, 0));
	td_stitch_stack(fx->st, stack(1400, cookie(0, 1), 210, 0, 1, 0x9));
	assert_int_equal(find(fx, 5)->status, TD_STITCHED);
	fixture_free(fx);
}

/* Freeing with work pending emits nothing and leaks nothing. */
static void test_free_pending(void **state)
{
	struct fixture *fx = fixture_new(0, 0);

	td_stitch_event(fx->st, event(1, 1500, cookie(0, 1), 100, 0));
	td_stitch_stack(fx->st, stack(1501, cookie(0, 3), 100, 0, 1, 0x1));
	fixture_free(fx);
}

/* ---- randomized: many keys, shuffled arrival, tables grow and shrink ---- */

static uint64_t rng_state = 0x853c49e6748fea9bULL;

static uint32_t rnd(void)
{
	/* xorshift64*: deterministic, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

struct item {
	bool is_stack;
	int tid;
	uint64_t cookie;
	uint64_t ts;
	int id;
	unsigned int nr;
};

static uint64_t key_ip(int tid, uint64_t ck)
{
	return ((uint64_t)tid << 40) ^ ck ^ 0x1000;
}

static void test_randomized(void **state)
{
	enum { ENTRIES = 20000 };
	struct fixture *fx = fixture_new(0, 0);
	struct item *items = calloc(ENTRIES * 4, sizeof(*items));
	size_t n = 0, i, stitched = 0, failed = 0, lost = 0;
	struct td_stitch_stats s;
	int id = 0;

	assert_non_null(items);
	/* Short windows so expiry runs during the test, not only at flush. */
	fx->cfg.max_wait_ns = 300000;
	fx->cfg.stack_keep_ns = 300000;
	td_stitch_free(fx->st);
	fx->st = stitch_new(&fx->cfg, record, &fx->log);
	assert_non_null(fx->st);
	/* Kernel entries 10 us apart; 1-3 events each; most with a stack. */
	for (i = 0; i < ENTRIES; i++) {
		int tid = 1 + rnd() % 97, k, nev = 1 + rnd() % 3;
		uint64_t ck = cookie(rnd() % 4, (uint32_t)(2 * i + 1));
		uint64_t ts = 1000 + i * 10000;
		unsigned int r = rnd() % 10;

		for (k = 0; k < nev; k++)
			items[n++] = (struct item){ false, tid, ck, ts + k, ++id, 0 };
		if (r < 8)
			items[n++] = (struct item){ true, tid, ck, ts + 5000, 0, 1 + rnd() % 8 };
		else if (r == 8)
			items[n++] = (struct item){ true, tid, ck, ts + 5000, 0, 0 };
	}
	/* Shuffle within blocks of 32: records reach the stitcher out of order. */
	for (i = 0; i < n; i++) {
		size_t base = i - i % 32, left = (base + 32 < n ? base + 32 : n) - i;
		size_t j = i + rnd() % left;
		struct item t = items[i];

		items[i] = items[j];
		items[j] = t;
	}
	for (i = 0; i < n; i++) {
		struct item *it = &items[i];

		if (it->is_stack) {
			struct td_ustack *us = stack(it->tid, it->cookie, it->ts, 0, it->nr,
						     key_ip(it->tid, it->cookie));

			td_stitch_stack(fx->st, us);
		} else {
			td_stitch_event(fx->st, event(it->id, it->tid, it->cookie, it->ts, 0));
		}
		if (i % 64 == 63 && it->ts > 50 * 10000)
			td_stitch_advance(fx->st, it->ts - 40 * 10000);
	}
	td_stitch_flush(fx->st);

	assert_int_equal(fx->log.n, id);
	for (i = 0; i < fx->log.n; i++) {
		const struct rec *r = &fx->log.recs[i];

		if (r->status == TD_STITCHED) {
			assert_int_equal(r->ip0, key_ip(r->tid, r->cookie));
			stitched++;
		} else if (r->status == TD_UNWIND_FAILED) {
			failed++;
		} else {
			assert_int_equal(r->status, TD_USER_LOST);
			lost++;
		}
	}
	/* Every event exactly once (ids are 1..id, count equals, no duplicates). */
	{
		char *seen = calloc(id + 1, 1);

		assert_non_null(seen);
		for (i = 0; i < fx->log.n; i++) {
			assert_in_range(fx->log.recs[i].id, 1, id);
			assert_int_equal(seen[fx->log.recs[i].id], 0);
			seen[fx->log.recs[i].id] = 1;
		}
		free(seen);
	}
	/* About 80 % of entries have a stack, 10 % failed, 10 % none. */
	assert_true(stitched > (size_t)id * 7 / 10);
	assert_true(failed > 0 && lost > 0);
	s = stats(fx);
	assert_int_equal(s.emitted[TD_STITCHED], stitched);
	assert_int_equal(s.emitted[TD_UNWIND_FAILED], failed);
	assert_int_equal(s.emitted[TD_USER_LOST], lost);
	assert_int_equal(s.pending_events, 0);
	assert_int_equal(s.pending_stacks, 0);
	assert_int_equal(s.stale_records, 0);
	assert_int_equal(s.duplicate_stacks, 0);
	assert_int_equal(s.orphan_stacks, 0);
	free(items);
	fixture_free(fx);
}

/*
 * Tens of thousands of live keys: the table grows; a small stack bound makes
 * entries leave in hash-random order while lookups go on.
 */
/*
 * Records allocated with their data (as the parser makes them), with that
 * data kept or replaced by the owner, go through the stitcher and are
 * emitted with that data and freed by it (ASan and valgrind check that
 * nothing leaks and nothing is freed twice).
 */
static void test_inline_records(void **state)
{
	struct fixture *fx = fixture_new(0, 0);
	unsigned int i;

	for (i = 0; i < 8; i++) {
		uint64_t ck = cookie(0, 2 * i + 1);
		struct td_event *ev = td_event_new_raw(24);
		struct td_ustack *us = td_ustack_new_ips(i);
		const struct rec *r;
		unsigned int k;

		assert_non_null(ev);
		assert_non_null(us);
		assert_int_equal(ev->raw_size, 24);
		assert_non_null(ev->raw);
		memset(ev->raw, 0xa5, 24);
		assert_false(ev->has_cookie || ev->inplace || ev->kstack.nr || ev->seq);
		ev->pid = (int)i + 1;
		ev->tid = 100;
		ev->ts = 1000 * (i + 1);
		ev->has_cookie = true;
		ev->cookie = ck;
		/* Some owners replace the data: the new one is theirs to give away. */
		if (i & 1) {
			ev->raw = calloc(1, 8);
			assert_non_null(ev->raw);
			ev->raw_size = 8;
		}
		assert_int_equal(us->ips.nr, i);
		if (i)
			assert_non_null(us->ips.ips);
		for (k = 0; k < i; k++)
			us->ips.ips[k] = 0x401000 + 0x10 * k;
		if (i == 5)
			assert_int_equal(td_ips_copy(&us->ips, (uint64_t[]){ 0x401000, 0x401010 },
						     2), 0);
		us->tid = 100;
		us->cookie = ck;
		us->ts = 1000 * (i + 1) + 10;
		td_stitch_event(fx->st, ev);
		td_stitch_stack(fx->st, us);
		r = find(fx, (int)i + 1);
		assert_int_equal(r->status, i ? TD_STITCHED : TD_UNWIND_FAILED);
		assert_int_equal(r->nr, i == 5 ? 2 : i);
		if (i)
			assert_int_equal(r->ip0, 0x401000);
	}
	td_event_free(td_event_new_raw(0));
	td_ustack_free(td_ustack_new_ips(0));
	td_stitch_flush(fx->st);
	fixture_free(fx);
}

static void test_many_keys(void **state)
{
	enum { N = 50000, KEEP = N / 10, NSTACKS = N * 2 / 3 };
	struct fixture *fx = fixture_new(0, KEEP);
	uint32_t *perm = malloc(N * sizeof(*perm));
	size_t i, lost = 0, stitched = 0, late = 0;
	struct td_stitch_stats s;

	assert_non_null(perm);
	for (i = 0; i < N; i++) {
		perm[i] = (uint32_t)i;
		/* Few tids, cookies from 4 CPUs: keys differ in both halves. */
		td_stitch_event(fx->st, event((int)i + 1, 1 + (int)(i % 13),
					      cookie(i % 4, 2 * (uint32_t)i + 1), 1000 + i, 0));
	}
	assert_int_equal(stats(fx).pending_events, N);
	for (i = N - 1; i > 0; i--) {
		size_t j = rnd() % (i + 1);
		uint32_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	/* Stacks for two thirds of them, in random order, plus late events. */
	for (i = 0; i < NSTACKS; i++) {
		uint32_t k = perm[i];
		int tid = 1 + (int)(k % 13);
		uint64_t ck = cookie(k % 4, 2 * k + 1);

		td_stitch_stack(fx->st, stack(tid, ck, 5000 + k, 1, 1, key_ip(tid, ck)));
		assert_int_equal(fx->log.recs[fx->log.n - 1].id, (int)k + 1);
		if (i % 7 == 0) {
			/*
			 * Any of the last KEEP - 13 stacks is still there: the
			 * 13 tasks' current stacks may be older, done ones go first.
			 */
			k = perm[i - rnd() % (i < KEEP - 13 ? i + 1 : KEEP - 13)];
			td_stitch_event(fx->st, event(N + 1 + (int)i, 1 + (int)(k % 13),
						      cookie(k % 4, 2 * k + 1), 1000 + k, 0));
			assert_int_equal(fx->log.recs[fx->log.n - 1].status, TD_STITCHED);
			assert_int_equal(fx->log.recs[fx->log.n - 1].id, N + 1 + (int)i);
			late++;
		}
	}
	td_stitch_flush(fx->st);
	for (i = 0; i < fx->log.n; i++) {
		const struct rec *r = &fx->log.recs[i];

		if (r->status == TD_STITCHED) {
			assert_int_equal(r->ip0, key_ip(r->tid, r->cookie));
			stitched++;
		} else {
			assert_int_equal(r->status, TD_USER_LOST);
			lost++;
		}
	}
	assert_int_equal(stitched, NSTACKS + late);
	assert_int_equal(lost, N - NSTACKS);
	s = stats(fx);
	assert_int_equal(s.emitted[TD_USER_LOST], lost);
	assert_int_equal(s.late_events, late);
	assert_int_equal(s.evicted_used_stacks, NSTACKS - KEEP);
	assert_int_equal(s.evicted_stacks, 0);
	assert_int_equal(s.orphan_stacks, 0);
	assert_int_equal(s.pending_events, 0);
	assert_int_equal(s.pending_stacks, 0);
	free(perm);
	fixture_free(fx);
}

/* ---- packed events ---- */

/* What an emitted event held, byte for byte. */
struct seen {
	int n;
	struct {
		int tid, cpu, pid;
		uint64_t ts, cookie;
		char comm[TD_COMM_LEN];
		const struct tep_event *tep_event;
		unsigned char raw[32];
		int raw_size;
		uint64_t kips[8];
		unsigned int nr_kips;
		enum td_status status;
	} ev[16];
};

static void keep(const struct td_event *ev, const struct td_ustack *us, enum td_status status,
		 void *arg)
{
	struct seen *s = arg;
	int i = s->n++;

	(void)us;
	assert_true(i < 16);
	s->ev[i].tid = ev->tid;
	s->ev[i].cpu = ev->cpu;
	s->ev[i].pid = ev->pid;
	s->ev[i].ts = ev->ts;
	s->ev[i].cookie = ev->cookie;
	assert_true(ev->has_cookie);
	memcpy(s->ev[i].comm, ev->comm, TD_COMM_LEN);
	s->ev[i].tep_event = ev->tep_event;
	assert_true(ev->raw_size <= 32);
	if (ev->raw_size)
		memcpy(s->ev[i].raw, ev->raw, ev->raw_size);
	s->ev[i].raw_size = ev->raw_size;
	assert_true(ev->kstack.nr <= 8);
	if (ev->kstack.nr)
		memcpy(s->ev[i].kips, ev->kstack.ips, ev->kstack.nr * sizeof(uint64_t));
	s->ev[i].nr_kips = ev->kstack.nr;
	s->ev[i].status = status;
}

static int some_format;

/* An event with 13 bytes of data (not a multiple of 8) and @nr kernel IPs. */
static struct td_event *full_event(int tid, uint64_t ck, uint64_t ts, unsigned char fill,
				   unsigned int nr)
{
	struct td_event *ev = td_event_new_raw(13);
	uint64_t ips[8];
	unsigned int i;

	assert_non_null(ev);
	ev->tid = tid;
	ev->pid = tid - 1;
	ev->cpu = 1;
	ev->ts = ts;
	ev->has_cookie = true;
	ev->cookie = ck;
	/* tids here are under 65536: the name always fits */
	snprintf(ev->comm, TD_COMM_LEN, "task-%hu", (unsigned short)tid);
	ev->tep_event = (struct tep_event *)&some_format;	/* never read */
	memset(ev->raw, fill, 13);
	for (i = 0; i < nr; i++)
		ips[i] = 0xffffffff81000000ull + fill * 0x100 + i;
	assert_int_equal(td_ips_copy(&ev->kstack, ips, nr), 0);
	return ev;
}

static void test_packed_events(void **state)
{
	struct seen *seen = calloc(1, sizeof(*seen));
	struct td_stitcher *st = stitch_new(NULL, keep, seen);
	struct td_kstacks *ks = td_kstacks_new(0);
	const void *tep_of[4];
	struct td_stitch_stats s;
	uint8_t le[3 * 8];
	int i;

	(void)state;
	assert_non_null(st);
	assert_non_null(ks);
	/* Four events of one body (same data, comm, process, kernel stack)... */
	for (i = 0; i < 4; i++) {
		struct td_event *ev = full_event(40, cookie(0, 1 + i), 100 + i, 0xa5, 3);

		ev->tep_event = (struct tep_event *)tep_of;
		td_stitch_event(st, ev);
	}
	td_stitch_get_stats(st, &s);
	assert_int_equal(s.pending_events, 4);
	/* Whole: none packed; mixed: the 4th packed. */
	assert_int_equal(s.packed_bodies, pack_mode == WHOLE ? 0 : 1);
	assert_int_equal(s.whole_events, pack_mode == WHOLE ? 4 : pack_mode == MIXED ? 3 : 0);
	/* ... one that differs only in its data, one only in its kernel stack ... */
	td_stitch_event(st, full_event(40, cookie(0, 9), 200, 0xa6, 3));
	td_stitch_event(st, full_event(40, cookie(0, 10), 201, 0xa5, 2));
	/* ... and two whose kernel stack is one shared block (the parser's). */
	for (i = 0; i < 3; i++) {
		uint64_t v = htole64(0xffffffff82000000ull + i);

		memcpy(le + 8 * i, &v, 8);
	}
	for (i = 0; i < 2; i++) {
		struct td_event *ev = full_event(41, cookie(1, 1 + i), 300 + i, 0x11, 0);

		assert_int_equal(td_kstacks_get(ks, ev, le, 3), 0);
		td_stitch_event(st, ev);
	}
	/* The table may go: the waiting events hold their stack. */
	td_kstacks_free(ks);
	td_stitch_get_stats(st, &s);
	assert_int_equal(s.pending_events, 8);
	if (pack_mode == WHOLE) {
		assert_int_equal(s.packed_bodies, 0);
		assert_int_equal(s.packed_bytes, 0);
		assert_int_equal(s.whole_events, 8);
	} else {
		assert_int_equal(s.packed_bodies, 1 + 1 + 1 + 1);
		assert_true(s.packed_bytes > 0);
		assert_int_equal(s.whole_events, pack_mode == MIXED ? 3 : 0);
	}

	/* Out in order, as they came, every field as it was fed. */
	td_stitch_flush(st);
	assert_int_equal(seen->n, 8);
	for (i = 0; i < 8; i++) {
		unsigned char fill = i == 4 ? 0xa6 : i < 6 ? 0xa5 : 0x11;
		unsigned int nr = i == 5 ? 2 : 3;
		int tid = i < 6 ? 40 : 41;
		char comm[TD_COMM_LEN];
		unsigned int k;

		assert_int_equal(seen->ev[i].status, TD_USER_LOST);
		assert_int_equal(seen->ev[i].tid, tid);
		assert_int_equal(seen->ev[i].pid, tid - 1);
		assert_int_equal(seen->ev[i].cpu, 1);
		snprintf(comm, sizeof(comm), "task-%d", tid);
		assert_string_equal(seen->ev[i].comm, comm);
		assert_int_equal(seen->ev[i].raw_size, 13);
		for (k = 0; k < 13; k++)
			assert_int_equal(seen->ev[i].raw[k], fill);
		assert_int_equal(seen->ev[i].nr_kips, nr);
		for (k = 0; k < nr; k++)
			assert_int_equal(seen->ev[i].kips[k], i < 6 ?
					 0xffffffff81000000ull + fill * 0x100 + k :
					 0xffffffff82000000ull + k);
		if (i < 4)
			assert_ptr_equal(seen->ev[i].tep_event, tep_of);
	}
	assert_int_equal(seen->ev[0].ts, 100);
	assert_int_equal(seen->ev[3].cookie, cookie(0, 4));
	assert_int_equal(seen->ev[7].ts, 301);
	td_stitch_get_stats(st, &s);
	assert_int_equal(s.packed_bodies, 0);
	assert_int_equal(s.packed_bytes, 0);
	assert_int_equal(s.whole_events, 0);
	td_stitch_free(st);
	free(seen);
}

/* Events left waiting at td_stitch_free(): bodies and shared stacks go too. */
static void test_packed_free(void **state)
{
	struct seen *seen = calloc(1, sizeof(*seen));
	struct td_stitcher *st = stitch_new(NULL, keep, seen);
	struct td_kstacks *ks = td_kstacks_new(0);
	uint8_t le[8] = { 1 };
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		struct td_event *ev = full_event(50, cookie(0, 1 + i), 10 + i, 0x22, 0);

		assert_int_equal(td_kstacks_get(ks, ev, le, 1), 0);
		td_stitch_event(st, ev);
	}
	td_stitch_event(st, full_event(51, cookie(0, 1), 20, 0x23, 4));
	td_stitch_free(st);	/* ASan, valgrind: nothing leaks */
	td_kstacks_free(ks);
	assert_int_equal(seen->n, 0);
	free(seen);
}

/* An event that says it has data but has none waits and comes out without. */
static void test_packed_no_data(void **state)
{
	struct seen *seen = calloc(1, sizeof(*seen));
	struct td_stitcher *st = stitch_new(NULL, keep, seen);
	struct td_event *ev = full_event(60, cookie(0, 1), 10, 0x33, 0);
	struct td_event *ev2 = full_event(60, cookie(0, 2), 11, 0x33, 0);
	struct td_stitch_stats s;

	(void)state;
	ev->raw = NULL;		/* the inline block stays unused */
	ev->raw_size = 8;
	ev2->raw = NULL;
	ev2->raw_size = 8;
	td_stitch_event(st, ev);
	td_stitch_event(st, ev2);
	td_stitch_get_stats(st, &s);
	assert_int_equal(s.packed_bodies, pack_mode == PACKED ? 1 : 0);
	assert_int_equal(s.whole_events, pack_mode == PACKED ? 0 : 2);
	td_stitch_flush(st);
	assert_int_equal(seen->n, 2);
	assert_int_equal(seen->ev[0].raw_size, 0);
	assert_int_equal(seen->ev[1].ts, 11);
	td_stitch_free(st);
	free(seen);
}

struct body_check {
	unsigned int n, wrong;
};

/* Events of full_event(tid, ..., ts = 1000 + fill, fill, 2): each must carry its own body. */
static void check_body(const struct td_event *ev, const struct td_ustack *us,
		       enum td_status status, void *arg)
{
	unsigned char fill = (unsigned char)(ev->ts - 1000);
	struct body_check *c = arg;
	char comm[TD_COMM_LEN];
	unsigned int k;

	(void)us;
	(void)status;
	c->n++;
	snprintf(comm, sizeof(comm), "task-%hu", (unsigned short)ev->tid);
	/* The IPs are read as the pipeline reads them: aligned 64-bit words. */
	if (ev->pid != ev->tid - 1 || strcmp(ev->comm, comm) || ev->raw_size != 13 ||
	    ev->kstack.nr != 2 || (uintptr_t)ev->kstack.ips % sizeof(uint64_t)) {
		c->wrong++;
		return;
	}
	for (k = 0; k < 2; k++)
		c->wrong += ev->kstack.ips[k] != 0xffffffff81000000ull + fill * 0x100 + k;
	for (k = 0; k < 13; k++)
		c->wrong += ((const unsigned char *)ev->raw)[k] != fill;
}

/*
 * A waiting event whose kernel stack is its own (not the parser's shared
 * block) keeps the IPs in its packed body after the record data, 13 bytes
 * here: they must come out aligned, whatever the data's length.
 */
static void test_packed_own_kstack(void **state)
{
	struct body_check c = { 0 };
	struct td_stitcher *st = stitch_new(NULL, check_body, &c);
	unsigned int i;

	(void)state;
	assert_non_null(st);
	for (i = 0; i < 4; i++)
		td_stitch_event(st, full_event(40 + i, cookie(0, 1), 1000 + i, (unsigned char)i, 2));
	for (i = 0; i < 4; i++)
		td_stitch_stack(st, stack(40 + i, cookie(0, 1), 1010, 0, 2, 0x400000));
	assert_int_equal(c.n, 4);
	assert_int_equal(c.wrong, 0);
	td_stitch_free(st);
}

/*
 * max_whole_events: the first events wait whole, the rest packed; a stack
 * finds both kinds, a freed whole slot is taken again, and what still
 * waits at td_stitch_free() is freed (ASan, valgrind).
 */
static void test_whole_bound(void **state)
{
	struct td_stitch_config cfg;
	struct log log = { 0 };
	struct td_stitch_stats s;
	struct td_stitcher *st;
	int i;

	(void)state;
	td_stitch_config_default(&cfg);
	cfg.max_whole_events = 2;
	st = td_stitch_new(&cfg, record, &log);
	assert_non_null(st);
	for (i = 0; i < 5; i++)
		td_stitch_event(st, event(i, 100 + i, cookie(0, 1), 10 + i, 0));
	/* A second event of key 3, packed, behind the packed first. */
	td_stitch_event(st, event(5, 103, cookie(0, 1), 16, 1));
	td_stitch_get_stats(st, &s);
	assert_int_equal(s.pending_events, 6);
	assert_int_equal(s.whole_events, 2);
	assert_int_equal(s.packed_bodies, 4);
	/* Stacks in another order than the events: whole and packed alike. */
	for (i = 4; i >= 0; i--)
		td_stitch_stack(st, stack(100 + i, cookie(0, 1), 30 + i, 1, 2, 0x1000 * (i + 1)));
	assert_int_equal(log.n, 6);
	for (i = 0; i < 6; i++) {
		const struct rec *r = &log.recs[i];
		int key = r->id == 5 ? 3 : r->id;

		assert_int_equal(r->status, TD_STITCHED);
		assert_int_equal(r->tid, 100 + key);
		assert_int_equal(r->ip0, 0x1000 * (key + 1));
	}
	td_stitch_get_stats(st, &s);
	assert_int_equal(s.pending_events, 0);
	assert_int_equal(s.whole_events, 0);
	assert_int_equal(s.packed_bodies, 0);
	/* The whole slots are free again; left waiting at free, both kinds go. */
	for (i = 0; i < 3; i++)
		td_stitch_event(st, event(10 + i, 200 + i, cookie(1, 3), 100 + i, 1));
	td_stitch_get_stats(st, &s);
	assert_int_equal(s.whole_events, 2);
	assert_int_equal(s.packed_bodies, 1);
	td_stitch_free(st);
	assert_int_equal(log.n, 6);
	free(log.recs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_stack_after_event),
		cmocka_unit_test(test_pid_from_stack),
		cmocka_unit_test(test_stack_before_event),
		cmocka_unit_test(test_settle),
		cmocka_unit_test(test_evict_done_first),
		cmocka_unit_test(test_done_ring),
		cmocka_unit_test(test_across_cpus),
		cmocka_unit_test(test_shared_cookie),
		cmocka_unit_test(test_counter_wrap),
		cmocka_unit_test(test_counter_wrap_expired),
		cmocka_unit_test(test_lost_stack),
		cmocka_unit_test(test_unwind_failed),
		cmocka_unit_test(test_exec_stack),
		cmocka_unit_test(test_no_user_and_inplace),
		cmocka_unit_test(test_bound_events),
		cmocka_unit_test(test_bound_events_same_key),
		cmocka_unit_test(test_bound_stacks),
		cmocka_unit_test(test_duplicate_stack),
		cmocka_unit_test(test_flush),
		cmocka_unit_test(test_free_pending),
		cmocka_unit_test(test_randomized),
		cmocka_unit_test(test_many_keys),
		cmocka_unit_test(test_inline_records),
		cmocka_unit_test(test_packed_events),
		cmocka_unit_test(test_packed_free),
		cmocka_unit_test(test_packed_no_data),
		cmocka_unit_test(test_packed_own_kstack),
		cmocka_unit_test(test_superseded),
		cmocka_unit_test(test_keep_superseded),
		cmocka_unit_test(test_whole_bound),
	};
	int failed;

	pack_mode = WHOLE;
	failed = cmocka_run_group_tests_name("stitch, waiting events whole", tests, NULL, NULL);
	pack_mode = PACKED;
	failed += cmocka_run_group_tests_name("stitch, waiting events packed", tests, NULL, NULL);
	pack_mode = MIXED;
	failed += cmocka_run_group_tests_name("stitch, a few whole, then packed", tests, NULL,
					      NULL);
	return failed;
}
