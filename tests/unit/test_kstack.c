// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for shared kernel stacks (lib/kstack.c): equal stacks share
 * one copy, different ones do not, an event freed before or after the
 * table leaves the others' stacks intact (ASan and LeakSanitizer in the
 * unit-asan build check the counting), a full table starts again without
 * touching stacks events hold (and so does one holding too many frames),
 * an empty stack is no stack; a block's
 * slot gives back what was set only under the tag it was set with; the
 * blocks met last are found again without the table, and never once the
 * table has let them go. User stacks: one block per stack record bytes
 * (IPs and file identity), the frames' files decoded once into it; the
 * same IPs with other file bytes, or with none found, are another stack;
 * the arrays as the kernel writes them (one after the other) or apart
 * come to the same decoding; a block's slots are one per way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <trace-defer/filetab.h>
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

/* Deep stacks: the table starts again at its frame bound, before its stack bound. */
static void test_frame_bound(void **state)
{
	enum { DEEP = 3 * TD_KSTACKS_FRAMES_PER_STACK };
	struct td_kstacks *ks = td_kstacks_new(4);
	struct td_ustack *us[4];
	struct td_kstacks_stats st;
	static uint8_t le[DEEP * 8];
	unsigned int bad;

	(void)state;
	assert_non_null(ks);
	for (int i = 0; i < 4; i++) {
		for (int f = 0; f < DEEP; f++)
			td_put_le64(le + 8 * f, 0x401000 + 16 * f + i);
		us[i] = td_ustack_new();
		assert_int_equal(td_ustacks_get(ks, us[i], le, DEEP, NULL, &bad), 0);
	}
	td_kstacks_get_stats(ks, &st);
	/* 4 stacks may be held, 4 * 32 frames: one of 96 frames fits, a second not. */
	assert_int_equal(st.stacks, 4);
	assert_int_equal(st.resets, 3);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(us[i]->ips.ips[DEEP - 1], 0x401000 + 16 * (DEEP - 1) + i);
		td_ustack_free(us[i]);
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


/* A user stack record's file arrays: 2 files, the frames' indexes. */
struct urec {
	uint8_t ips[3 * 8];
	uint8_t bases[2 * 8];
	uint8_t ids[2 * 4];
	uint8_t ff[3];
};

static const uint64_t ua[] = { 0x401010, 0x7f0000001020, 0x401030 };

static void urec_init(struct urec *r, uint64_t base0, uint64_t base1, uint8_t ff2)
{
	memset(r, 0, sizeof(*r));
	le_ips(r->ips, ua, 3);
	td_put_le64(r->bases, base0);
	td_put_le64(r->bases + 8, base1);
	td_put_le32(r->ids, 11);
	td_put_le32(r->ids + 4, 12);
	r->ff[0] = 0;
	r->ff[1] = 1;
	r->ff[2] = ff2;
}

static struct td_ufile_area urec_area(const struct urec *r)
{
	return (struct td_ufile_area){ .found = true, .nr = 3, .nr_files = 2, .bases = r->bases,
				       .ids = r->ids, .frame_files = r->ff };
}

static void test_ustack_shared(void **state)
{
	struct td_kstacks *ks = td_kstacks_new(0);
	struct td_ustack *u[6];
	struct td_ufile_area area[6];
	struct urec r1, r2, r3;
	uint8_t apart[64];
	unsigned int bad, i;

	(void)state;
	assert_non_null(ks);
	for (i = 0; i < 6; i++)
		assert_non_null(u[i] = td_ustack_new());
	urec_init(&r1, 0x400000, 0x7f0000000000, 0);
	r2 = r1;
	urec_init(&r3, 0x400000, 0x7f0000000000, TD_FF_ANON);
	area[0] = urec_area(&r1);
	area[1] = urec_area(&r2);
	area[2] = urec_area(&r3);
	/* Record 2's arrays not one after the other: the same stack decoded. */
	area[3] = area[0];
	memcpy(apart, r1.bases, 16);
	memcpy(apart + 24, r1.ids, 8);
	memcpy(apart + 40, r1.ff, 3);
	area[3].bases = apart;
	area[3].ids = apart + 24;
	area[3].frame_files = apart + 40;
	/* No file identity found: every frame unrecorded, a stack of its own. */
	area[4] = (struct td_ufile_area){ .nr = 3 };

	assert_int_equal(td_ustacks_get(ks, u[0], r1.ips, 3, &area[0], &bad), 0);
	assert_int_equal(bad, 0);
	assert_int_equal(td_ustacks_get(ks, u[1], r2.ips, 3, &area[1], &bad), 0);
	assert_int_equal(td_ustacks_get(ks, u[2], r3.ips, 3, &area[2], &bad), 0);
	assert_int_equal(td_ustacks_get(ks, u[3], r1.ips, 3, &area[3], &bad), 0);
	assert_int_equal(bad, 0);
	assert_int_equal(td_ustacks_get(ks, u[4], r1.ips, 3, &area[4], &bad), 0);
	assert_int_equal(bad, 3);
	/* No file identity in the format at all (older kernels). */
	assert_int_equal(td_ustacks_get(ks, u[5], r1.ips, 3, NULL, &bad), 0);
	assert_int_equal(bad, 0);

	for (i = 0; i < 6; i++) {
		assert_true(td_ustack_is_shared(u[i]));
		assert_int_equal(u[i]->ips.nr, 3);
		assert_memory_equal(u[i]->ips.ips, ua, sizeof(ua));
	}
	/* The same bytes: one block. */
	assert_ptr_equal(u[0]->ips.ips, u[1]->ips.ips);
	assert_ptr_equal(u[0]->files, u[1]->files);
	/* The same IPs, other file bytes (or none): other blocks. */
	assert_ptr_not_equal(u[0]->ips.ips, u[2]->ips.ips);
	assert_ptr_not_equal(u[0]->ips.ips, u[4]->ips.ips);
	assert_ptr_not_equal(u[0]->ips.ips, u[5]->ips.ips);
	assert_ptr_not_equal(u[4]->ips.ips, u[5]->ips.ips);
	assert_null(u[5]->files);

	/* Decoded once, as td_ufile_area_decode() does it. */
	assert_int_equal(u[0]->files[0].kind, TD_FILE_IN);
	assert_int_equal(u[0]->files[0].id, 11);
	assert_int_equal(u[0]->files[0].offset, 0x1010);
	assert_int_equal(u[0]->files[1].id, 12);
	assert_int_equal(u[0]->files[1].offset, 0x1020);
	assert_int_equal(u[2]->files[2].kind, TD_FILE_ANON);
	assert_memory_equal(u[3]->files, u[0]->files, 3 * sizeof(*u[0]->files));
	for (i = 0; i < 3; i++)
		assert_int_equal(u[4]->files[i].kind, TD_FILE_UNRECORDED);

	/* One holder gone, the other still reads the block; the table gone, too. */
	td_ustack_free(u[0]);
	assert_int_equal(u[1]->files[1].id, 12);
	td_kstacks_free(ks);
	assert_memory_equal(u[1]->ips.ips, ua, sizeof(ua));
	for (i = 1; i < 6; i++)
		td_ustack_free(u[i]);
}

/* A bad record's count comes back with every record of its bytes; an empty stack shares nothing. */
static void test_ustack_bad(void **state)
{
	struct td_kstacks *ks = td_kstacks_new(0);
	struct td_ustack *u1 = td_ustack_new(), *u2 = td_ustack_new(), *u3 = td_ustack_new();
	struct td_ufile_area area, none = { .nr = 0 };
	struct urec r;
	unsigned int bad;

	(void)state;
	urec_init(&r, 0x400000, 0x7f0000000000, 9);	/* index 9 of 2 files */
	area = urec_area(&r);
	assert_int_equal(td_ustacks_get(ks, u1, r.ips, 3, &area, &bad), 0);
	assert_int_equal(bad, 1);
	assert_int_equal(td_ustacks_get(ks, u2, r.ips, 3, &area, &bad), 0);
	assert_int_equal(bad, 1);
	assert_ptr_equal(u1->ips.ips, u2->ips.ips);
	assert_int_equal(u1->files[2].kind, TD_FILE_UNRECORDED);
	assert_int_equal(td_ustacks_get(ks, u3, r.ips, 0, &none, &bad), 0);
	assert_int_equal(bad, 1);	/* file arrays not found: unsound, even empty */
	assert_false(td_ustack_is_shared(u3));
	assert_int_equal(u3->ips.nr, 0);
	assert_null(u3->files);
	td_ustack_free(u1);
	td_ustack_free(u2);
	td_ustack_free(u3);
	td_kstacks_free(ks);
}

/* Ways: values set for one way are not another's. */
static void test_ustack_slots(void **state)
{
	struct td_kstacks *ks = td_kstacks_new(0);
	struct td_ustack *u = td_ustack_new();
	unsigned int bad;
	uint8_t la[sizeof(ua)];
	int v[TD_STACK_SLOTS];

	(void)state;
	le_ips(la, ua, 3);
	assert_int_equal(td_ustacks_get(ks, u, la, 3, NULL, &bad), 0);
	for (unsigned int w = 0; w < TD_STACK_SLOTS; w++)
		td_stack_slot_set(u->ips.ips, 5, w, &v[w]);
	for (unsigned int w = 0; w < TD_STACK_SLOTS; w++) {
		assert_ptr_equal(td_stack_slot_get(u->ips.ips, 5, w), &v[w]);
		/* Any number picks a way. */
		assert_ptr_equal(td_stack_slot_get(u->ips.ips, 5, w + TD_STACK_SLOTS), &v[w]);
		assert_null(td_stack_slot_get(u->ips.ips, 6, w));
	}
	/* The kernel's slot is the first way. */
	assert_ptr_equal(td_kstack_slot_get(u->ips.ips, 5), &v[0]);
	td_ustack_free(u);
	td_kstacks_free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_frame_bound),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_slot),
		cmocka_unit_test(test_recent),
		cmocka_unit_test(test_ustack_shared),
		cmocka_unit_test(test_ustack_bad),
		cmocka_unit_test(test_ustack_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
