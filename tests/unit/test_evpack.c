// SPDX-License-Identifier: GPL-2.0
/*
 * Packed event bodies: one body per distinct (thread, record, kernel
 * stack), named by an id that is reused once free; what an unpacked body
 * gives back; the byte count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <trace-defer/types.h>

#include "../../lib/evpack.h"

static uint64_t kips[3] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL, 0xffffffff81000030ULL };

static void make_event(struct td_event *ev, int tid, void *raw, int raw_size)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts = 1000 + tid;
	ev->cpu = 1;
	ev->tid = tid;
	ev->pid = 42;
	memcpy(ev->comm, "worker", sizeof("worker"));
	ev->raw = raw;
	ev->raw_size = raw_size;
	ev->kstack.ips = kips;
	ev->kstack.nr = 3;
	ev->has_cookie = true;
	ev->cookie = 7;
}

static void test_one_body_per_thread(void **state)
{
	unsigned char raw[24] = { 1, 2, 3 };
	struct td_event a, b, c, out;
	struct evpack pk;
	uint32_t ia, ib, ic;

	(void)state;
	assert_int_equal(evpack_init(&pk), 0);
	make_event(&a, 100, raw, sizeof(raw));
	make_event(&b, 100, raw, sizeof(raw));
	b.ts = 5000;		/* per-record parts are not the body's */
	b.cookie = 8;
	make_event(&c, 101, raw, sizeof(raw));

	ia = evpack_get(&pk, &a);
	ib = evpack_get(&pk, &b);
	ic = evpack_get(&pk, &c);
	assert_int_not_equal(ia, 0);
	assert_int_equal(ia, ib);
	assert_int_not_equal(ic, 0);
	assert_int_not_equal(ic, ia);
	assert_int_equal(pk.bodies, 2);
	assert_int_equal(evpack_tid(&pk, ia), 100);
	assert_int_equal(evpack_tid(&pk, ic), 101);

	evpack_unpack(&pk, ic, &out);
	assert_int_equal(out.tid, 101);
	assert_int_equal(out.pid, 42);
	assert_int_equal(out.cpu, 1);
	assert_string_equal(out.comm, "worker");
	assert_int_equal(out.raw_size, sizeof(raw));
	assert_memory_equal(out.raw, raw, sizeof(raw));
	assert_int_equal(out.kstack.nr, 3);
	assert_memory_equal(out.kstack.ips, kips, sizeof(kips));
	/* The caller's copy is not referred to: the body has its own. */
	assert_ptr_not_equal(out.raw, raw);
	assert_ptr_not_equal(out.kstack.ips, kips);

	evpack_put(&pk, ia);
	assert_int_equal(pk.bodies, 2);		/* one reference left */
	evpack_put(&pk, ib);
	assert_int_equal(pk.bodies, 1);
	evpack_put(&pk, ic);
	assert_int_equal(pk.bodies, 0);
	assert_int_equal(pk.bytes, 0);
	evpack_destroy(&pk);
}

static void test_ids_reused(void **state)
{
	struct td_event ev;
	struct evpack pk;
	uint32_t id, again;

	(void)state;
	assert_int_equal(evpack_init(&pk), 0);
	make_event(&ev, 200, NULL, 0);
	id = evpack_get(&pk, &ev);
	evpack_put(&pk, id);
	make_event(&ev, 201, NULL, 0);
	again = evpack_get(&pk, &ev);
	assert_int_equal(again, id);
	assert_int_equal(evpack_tid(&pk, again), 201);
	evpack_put(&pk, again);
	evpack_destroy(&pk);
}

/*
 * Many bodies at once (the id table grows), some too large to be recycled,
 * all freed: counts go back to 0, ids are reused.
 */
static void test_many_bodies(void **state)
{
	enum { N = 10000 };
	uint32_t *ids = calloc(N, sizeof(*ids));
	unsigned char big[1200];
	struct td_event ev;
	struct evpack pk;
	int i;

	(void)state;
	assert_non_null(ids);
	memset(big, 0x5a, sizeof(big));
	assert_int_equal(evpack_init(&pk), 0);
	for (i = 0; i < N; i++) {
		/* Every tenth body is too large (over 1 KiB) to be recycled. */
		make_event(&ev, 1000 + i, i % 10 ? NULL : big, i % 10 ? 0 : (int)sizeof(big));
		ids[i] = evpack_get(&pk, &ev);
		assert_int_not_equal(ids[i], 0);
	}
	assert_int_equal(pk.bodies, N);
	for (i = 0; i < N; i++)
		assert_int_equal(evpack_tid(&pk, ids[i]), 1000 + i);
	for (i = 0; i < N; i++)
		evpack_put(&pk, ids[i]);
	assert_int_equal(pk.bodies, 0);
	assert_int_equal(pk.bytes, 0);

	/* The freed ids serve again, and the table holds the new bodies. */
	for (i = 0; i < N; i++) {
		make_event(&ev, 5000 + i, NULL, 0);
		ids[i] = evpack_get(&pk, &ev);
		assert_true(ids[i] > 0 && ids[i] <= N);
	}
	for (i = 0; i < N; i++)
		assert_int_equal(evpack_tid(&pk, ids[i]), 5000 + i);
	evpack_destroy(&pk);	/* with every body still held */
	assert_int_equal(pk.bodies, 0);
	free(ids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_body_per_thread),
		cmocka_unit_test(test_ids_reused),
		cmocka_unit_test(test_many_bodies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
