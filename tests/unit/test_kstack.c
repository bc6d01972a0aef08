// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for shared kernel stacks (lib/kstack.c): equal stacks share
 * one copy, different ones do not, an event freed before or after the
 * table leaves the others' stacks intact (ASan and LeakSanitizer in the
 * unit-asan build check the counting), a full table starts again without
 * touching stacks events hold, an empty stack is no stack; a block's
 * slot gives back what was set only under the tag it was set with; the
 * blocks met last are found again without the table, and never once the
 * table has let them go.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <trace-defer/pagegen.h>
#include <trace-defer/types.h>

#include "../../lib/kstack.h"

static void le_ips(uint8_t *buf, const uint64_t *ips, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		td_put_le64(buf + 8 * i, ips[i]);
}

static const uint64_t a[] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL, 0xffffffff81000030ULL };
static const uint64_t b[] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL, 0xffffffff81000031ULL };

static void test_shared(void **state)
{
	struct td_kstacks *ks = td_kstacks_new(0);
	struct td_event *e1 = td_event_new(), *e2 = td_event_new(), *e3 = td_event_new();
	struct td_kstacks_stats st;
	uint8_t la[sizeof(a)], lb[sizeof(b)];

	(void)state;
	assert_non_null(ks);
	le_ips(la, a, 3);
	le_ips(lb, b, 3);
	assert_int_equal(td_kstacks_get(ks, e1, la, 3), 0);
	assert_int_equal(td_kstacks_get(ks, e2, la, 3), 0);
	assert_int_equal(td_kstacks_get(ks, e3, lb, 3), 0);
	assert_ptr_equal(e1->kstack.ips, e2->kstack.ips);
	assert_ptr_not_equal(e1->kstack.ips, e3->kstack.ips);
	assert_int_equal(e1->kstack.nr, 3);
	assert_memory_equal(e1->kstack.ips, a, sizeof(a));
	assert_memory_equal(e3->kstack.ips, b, sizeof(b));
	td_kstacks_get_stats(ks, &st);
	assert_int_equal(st.lookups, 3);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.stacks, 2);
	/* One holder gone, the other still reads its stack. */
	td_event_free(e1);
	assert_memory_equal(e2->kstack.ips, a, sizeof(a));
	/* The table gone first: events keep theirs. */
	td_kstacks_free(ks);
	assert_memory_equal(e2->kstack.ips, a, sizeof(a));
	assert_memory_equal(e3->kstack.ips, b, sizeof(b));
	td_event_free(e2);
	td_event_free(e3);
}

static void test_full_table(void **state)
{
	struct td_kstacks *ks = td_kstacks_new(4);
	struct td_event *ev[10];
	struct td_kstacks_stats st;
	uint64_t ips[2];
	uint8_t le[16];

	(void)state;
	assert_non_null(ks);
	for (int i = 0; i < 10; i++) {
		ips[0] = 0xffffffff81000000ULL + i;
		ips[1] = 0xffffffff82000000ULL;
		le_ips(le, ips, 2);
		ev[i] = td_event_new();
		assert_int_equal(td_kstacks_get(ks, ev[i], le, 2), 0);
	}
	td_kstacks_get_stats(ks, &st);
	assert_int_equal(st.stacks, 10);
	assert_int_equal(st.resets, 2);	/* at the 5th and the 9th */
	for (int i = 0; i < 10; i++) {
		assert_int_equal(ev[i]->kstack.ips[0], 0xffffffff81000000ULL + i);
		td_event_free(ev[i]);
	}
	td_kstacks_free(ks);
}

static void test_empty(void **state)
{
	struct td_kstacks *ks = td_kstacks_new(0);
	struct td_event *ev = td_event_new();

	(void)state;
	assert_int_equal(td_kstacks_get(ks, ev, NULL, 0), 0);
	assert_int_equal(ev->kstack.nr, 0);
	assert_null(ev->kstack.ips);
	td_event_free(ev);
	td_kstacks_free(ks);
}

static void test_recent(void **state)
{
	struct td_kstacks *ks = td_kstacks_new(2);
	struct td_event *ev[4];
	struct td_kstacks_stats st;
	uint64_t c[3] = { a[0], 0xffffffff81000077ULL, a[2] };
	uint8_t la[sizeof(a)], lb[sizeof(b)], lc[sizeof(c)];
	const uint64_t *first;

	(void)state;
	le_ips(la, a, 3);
	le_ips(lb, b, 3);
	le_ips(lc, c, 3);
	for (int i = 0; i < 4; i++)
		ev[i] = td_event_new();
	assert_int_equal(td_kstacks_get(ks, ev[0], la, 3), 0);
	first = ev[0]->kstack.ips;
	/* The same stack again: the same block, found as a hit. */
	assert_int_equal(td_kstacks_get(ks, ev[1], la, 3), 0);
	assert_ptr_equal(ev[1]->kstack.ips, first);
	td_kstacks_get_stats(ks, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.stacks, 1);
	td_event_free(ev[0]);
	td_event_free(ev[1]);
	/* b, then c (same first and last IP as a): the table is full, starts again, a is freed. */
	assert_int_equal(td_kstacks_get(ks, ev[2], lb, 3), 0);
	assert_int_equal(td_kstacks_get(ks, ev[3], lc, 3), 0);
	assert_memory_equal(ev[3]->kstack.ips, c, sizeof(c));
	td_kstacks_get_stats(ks, &st);
	assert_int_equal(st.resets, 1);
	/* a again: a new block (a freed one would be a use after free under ASan). */
	ev[0] = td_event_new();
	assert_int_equal(td_kstacks_get(ks, ev[0], la, 3), 0);
	assert_memory_equal(ev[0]->kstack.ips, a, sizeof(a));
	td_kstacks_get_stats(ks, &st);
	assert_int_equal(st.stacks, 4);
	assert_int_equal(st.hits, 1);
	td_event_free(ev[0]);
	td_event_free(ev[2]);
	td_event_free(ev[3]);
	td_kstacks_free(ks);
}

static void test_slot(void **state)
{
	struct td_kstacks *ks = td_kstacks_new(0);
	struct td_event *e1 = td_event_new(), *e2 = td_event_new(), *e3 = td_event_new();
	struct td_event unpacked = { 0 };
	uint8_t la[sizeof(a)], lb[sizeof(b)];
	int v1, v2;

	(void)state;
	le_ips(la, a, 3);
	le_ips(lb, b, 3);
	assert_int_equal(td_kstacks_get(ks, e1, la, 3), 0);
	assert_int_equal(td_kstacks_get(ks, e2, la, 3), 0);
	assert_int_equal(td_kstacks_get(ks, e3, lb, 3), 0);
	assert_true(td_kstack_is_shared(e1));
	/* A fresh block holds nothing, under any tag. */
	assert_null(td_kstack_slot_get(e1->kstack.ips, 1));
	assert_null(td_kstack_slot_get(e1->kstack.ips, 0));
	td_kstack_slot_set(e1->kstack.ips, 7, &v1);
	/* One block for the stack: the other event of it finds the value. */
	assert_ptr_equal(td_kstack_slot_get(e2->kstack.ips, 7), &v1);
	assert_null(td_kstack_slot_get(e2->kstack.ips, 8));
	assert_null(td_kstack_slot_get(e3->kstack.ips, 7));
	td_kstack_slot_set(e3->kstack.ips, 7, &v2);
	assert_ptr_equal(td_kstack_slot_get(e3->kstack.ips, 7), &v2);
	assert_ptr_equal(td_kstack_slot_get(e1->kstack.ips, 7), &v1);
	/* Tag 0 is the empty slot's: never a match. */
	td_kstack_slot_set(e1->kstack.ips, 0, &v1);
	assert_null(td_kstack_slot_get(e1->kstack.ips, 0));

	/* An event that borrows a block is shared too, and frees no IPs. */
	unpacked.kstack = e2->kstack;
	unpacked.alloc_flags = TD_ALLOC_KSTACK_BORROWED;
	assert_true(td_kstack_is_shared(&unpacked));
	td_event_free(e1);
	td_event_free(e2);
	unpacked.kstack.ips = NULL;
	assert_false(td_kstack_is_shared(&unpacked));
	/* Its own copy is not a block. */
	assert_int_equal(td_ips_copy(&unpacked.kstack, a, 3), 0);
	unpacked.alloc_flags = 0;
	assert_false(td_kstack_is_shared(&unpacked));
	td_ips_free(&unpacked.kstack);
	td_event_free(e3);
	td_kstacks_free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_slot),
		cmocka_unit_test(test_recent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
