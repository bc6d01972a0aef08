// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for named stacks (lib/stackmemo.c): a stack kept is found
 * again with its frames and counts (also when named again the same) and one id; another stamp finds nothing
 * (stale), and keeping it again keeps the id if the frames are the same,
 * else gives a new one; kind, process, IPs and
 * file identity each tell stacks apart; the frame bound drops the stacks
 * not used lately (found, kept or said used) and keeps the rest, or
 * empties the table when the rest would still fill it, never growing past
 * it, and a stack larger than the bound is not kept; ids are never reused, not even by another memo; the epoch moves
 * whenever a stack handed out may have gone, and only then.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/stackmemo.h"

static const uint64_t ips[] = { 0x401000, 0x401100, 0x401200 };
static const struct td_frame frames[] = {
	{ .addr = 0x401000, .symbol = "c", .object = "/bin/x", .strings_id = 7 },
	{ .addr = 0x401100, .symbol = "b", .object = "/bin/x", .strings_id = 7 },
	{ .addr = 0x401200, .symbol = NULL, .object = "/bin/x", .strings_id = 7 },
};

static struct td_memo_key key(enum td_memo_kind kind, int pid, uint64_t stamp)
{
	return (struct td_memo_key){
		.kind = kind, .pid = pid, .stamp = stamp, .ips = ips, .nr = 3,
	};
}

/* Keep @f (key->nr frames) named so for @key, as the pipeline keeps what it named. */
static const struct td_memo_stack *add(struct td_memo *m, const struct td_memo_key *key,
				       const struct td_frame *f, unsigned int named,
				       unsigned int fileid_named, unsigned int fileid_unknown)
{
	const struct td_memo_stack own = {
		.frames = f, .nr = key->nr, .named = named,
		.fileid_named = fileid_named, .fileid_unknown = fileid_unknown,
	};

	return td_memo_add(m, key, &own);
}

static void test_find_what_was_kept(void **state)
{
	struct td_memo *m = td_memo_new(0);
	struct td_memo_key k = key(TD_MEMO_UMAPS, 42, 5);
	const struct td_memo_stack *a, *b;
	struct td_memo_stats st;

	(void)state;
	assert_non_null(m);
	assert_null(td_memo_find(m, &k));
	a = add(m, &k, frames, 2, 0, 0);
	assert_non_null(a);
	assert_int_not_equal(a->id, 0);
	assert_int_equal(a->nr, 3);
	assert_int_equal(a->named, 2);
	/* A copy: the caller's frames may change after. */
	assert_ptr_not_equal(a->frames, frames);
	assert_memory_equal(a->frames, frames, sizeof(frames));
	b = td_memo_find(m, &k);
	assert_ptr_equal(a, b);
	assert_int_equal(b->id, a->id);
	td_memo_get_stats(m, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.stacks, 1);
	assert_int_equal(st.frames, 3);
	td_memo_free(m);
}

static void test_stale_stamp(void **state)
{
	struct td_memo *m = td_memo_new(0);
	struct td_memo_key k = key(TD_MEMO_UMAPS, 42, 5);
	struct td_frame named[3];
	const struct td_memo_stack *a;
	struct td_memo_stats st;
	uint64_t first;

	(void)state;
	assert_non_null(m);
	a = add(m, &k, frames, 2, 0, 0);
	assert_non_null(a);
	first = a->id;
	k.stamp = 6;			/* the maps were read again: the same names */
	assert_null(td_memo_find(m, &k));
	a = add(m, &k, frames, 2, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->id, first);
	assert_ptr_equal(td_memo_find(m, &k), a);
	k.stamp = 7;			/* and again: now one frame has a name */
	assert_null(td_memo_find(m, &k));
	memcpy(named, frames, sizeof(named));
	named[2].symbol = "a";
	a = add(m, &k, named, 3, 0, 0);
	assert_non_null(a);
	assert_true(a->id > first);
	assert_string_equal(a->frames[2].symbol, "a");
	assert_int_equal(a->named, 3);
	assert_ptr_equal(td_memo_find(m, &k), a);
	k.stamp = 5;			/* the old one was replaced, not kept beside */
	assert_null(td_memo_find(m, &k));
	td_memo_get_stats(m, &st);
	assert_int_equal(st.stale, 3);
	assert_int_equal(st.renamed_same, 1);
	assert_int_equal(st.stacks, 1);
	td_memo_free(m);
}

static void test_keys_apart(void **state)
{
	struct td_memo *m = td_memo_new(0);
	struct td_memo_key k = key(TD_MEMO_UFILES, 42, 1), other;
	struct td_ufile files[3] = {
		{ .offset = 0x1000, .id = 1, .kind = TD_FILE_IN },
		{ .offset = 0x1100, .id = 1, .kind = TD_FILE_IN },
		{ .offset = 0x1200, .id = 2, .kind = TD_FILE_IN },
	};
	uint64_t ips2[3] = { 0x401000, 0x401100, 0x401201 };

	(void)state;
	assert_non_null(m);
	k.files = files;
	assert_non_null(add(m, &k, frames, 2, 2, 0));
	assert_non_null(td_memo_find(m, &k));

	other = k;
	other.pid = 43;			/* another process's root may name it otherwise */
	assert_null(td_memo_find(m, &other));
	other = k;
	other.kind = TD_MEMO_UMAPS;
	other.files = NULL;
	assert_null(td_memo_find(m, &other));
	other = k;
	other.ips = ips2;
	assert_null(td_memo_find(m, &other));
	other = k;
	other.nr = 2;
	assert_null(td_memo_find(m, &other));
	files[2].id = 3;		/* same IPs, another file */
	assert_null(td_memo_find(m, &k));
	files[2].id = 2;
	assert_non_null(td_memo_find(m, &k));
	td_memo_free(m);
}

static void test_bound(void **state)
{
	struct td_memo *m = td_memo_new(7);
	struct td_memo_key k1 = key(TD_MEMO_KERNEL, 0, 0), k2 = k1, k3 = k1;
	const struct td_memo_stack *s3;
	uint64_t big[8] = { 0 };
	struct td_frame bigf[8] = { 0 };
	struct td_memo_stats st;

	(void)state;
	assert_non_null(m);
	k2.pid = 1;
	k3.pid = 2;
	assert_non_null(add(m, &k1, frames, 0, 0, 0));
	assert_non_null(add(m, &k2, frames, 0, 0, 0));
	td_memo_get_stats(m, &st);
	assert_int_equal(st.frames, 6);
	/* Both in use now: a sweep would leave too much. */
	assert_non_null(td_memo_find(m, &k1));
	assert_non_null(td_memo_find(m, &k2));
	/* 9 frames would not fit in 7: everything goes, then k3 is kept. */
	s3 = add(m, &k3, frames, 0, 0, 0);
	assert_non_null(s3);
	td_memo_get_stats(m, &st);
	assert_int_equal(st.sweeps, 1);
	assert_int_equal(st.swept, 0);
	assert_int_equal(st.resets, 1);
	assert_int_equal(st.stacks, 1);
	assert_int_equal(st.frames, 3);
	assert_null(td_memo_find(m, &k1));
	assert_ptr_equal(td_memo_find(m, &k3), s3);
	/* Larger than the bound: not kept, nothing dropped for it. */
	k1.ips = big;
	k1.nr = 8;
	assert_null(add(m, &k1, bigf, 0, 0, 0));
	assert_ptr_equal(td_memo_find(m, &k3), s3);
	td_memo_free(m);
}

/*
 * Stacks of processes that came and went, among stacks in use: when the
 * bound is reached, what was not used in this quarter of the bound's
 * frames or the last goes, what was (found, or said used from a slot of
 * the caller's) stays with its id.
 */
static void test_sweep(void **state)
{
	/* 12 frames: 4 stacks of 3; an age passes with every stack kept. */
	struct td_memo *m = td_memo_new(12);
	const struct td_memo_stack *s[6], *again;
	struct td_memo_key k[6];
	struct td_memo_stats st;
	uint64_t epoch, id1;

	(void)state;
	assert_non_null(m);
	for (int i = 0; i < 6; i++)
		k[i] = key(TD_MEMO_UMAPS, 100 + i, 1);
	s[0] = add(m, &k[0], frames, 0, 0, 0);	/* kept in age 0 */
	s[1] = add(m, &k[1], frames, 0, 0, 0);	/* 1 */
	s[2] = add(m, &k[2], frames, 0, 0, 0);	/* 2 */
	assert_ptr_equal(td_memo_find(m, &k[0]), s[0]);	/* used in 3 */
	s[3] = add(m, &k[3], frames, 0, 0, 0);	/* 3 */
	id1 = s[1]->id;
	epoch = td_memo_epoch(m);
	/* Full in age 4: k[1] and k[2], not used in 3 or 4, go. */
	s[4] = add(m, &k[4], frames, 0, 0, 0);	/* 4 */
	assert_non_null(s[4]);
	td_memo_get_stats(m, &st);
	assert_int_equal(st.sweeps, 1);
	assert_int_equal(st.swept, 2);
	assert_int_equal(st.resets, 0);
	assert_int_equal(st.stacks, 3);
	assert_int_equal(st.frames, 9);
	assert_int_not_equal(td_memo_epoch(m), epoch);
	/* Used from a slot of the caller's, not through td_memo_find(). */
	td_memo_used(m, s[0]);				/* 5 */
	s[5] = add(m, &k[5], frames, 0, 0, 0);	/* 5 */
	/* Full in age 6: k[3] and k[4] go, k[0] (said used) and k[5] stay. */
	again = add(m, &k[1], frames, 0, 0, 0);
	assert_non_null(again);
	assert_int_not_equal(again->id, id1);
	td_memo_get_stats(m, &st);
	assert_int_equal(st.sweeps, 2);
	assert_int_equal(st.swept, 4);
	assert_int_equal(st.resets, 0);
	assert_int_equal(st.stacks, 3);
	assert_ptr_equal(td_memo_find(m, &k[0]), s[0]);
	assert_ptr_equal(td_memo_find(m, &k[5]), s[5]);
	assert_ptr_equal(td_memo_find(m, &k[1]), again);
	for (int i = 2; i < 5; i++)
		assert_null(td_memo_find(m, &k[i]));
	td_memo_free(m);
}

static void test_epoch(void **state)
{
	struct td_memo *m = td_memo_new(5), *other = td_memo_new(0);
	struct td_memo_key k1 = key(TD_MEMO_UMAPS, 1, 5), k2 = key(TD_MEMO_UMAPS, 2, 5);
	struct td_frame renamed[3];
	uint64_t e0, e;

	(void)state;
	assert_non_null(m);
	assert_non_null(other);
	e0 = td_memo_epoch(m);
	assert_int_not_equal(e0, 0);
	assert_int_not_equal(td_memo_epoch(other), e0);
	/* Adding, finding, renaming the same: nothing handed out goes. */
	assert_non_null(add(m, &k1, frames, 0, 0, 0));
	assert_non_null(td_memo_find(m, &k1));
	k1.stamp = 6;
	assert_null(td_memo_find(m, &k1));
	assert_non_null(add(m, &k1, frames, 0, 0, 0));
	assert_int_equal(td_memo_epoch(m), e0);
	/* Renamed to other frames: the old entry goes. */
	memcpy(renamed, frames, sizeof(renamed));
	renamed[2].symbol = "a";
	k1.stamp = 7;
	assert_non_null(add(m, &k1, renamed, 0, 0, 0));
	e = td_memo_epoch(m);
	assert_int_not_equal(e, e0);
	/* Past the bound: everything goes. */
	assert_non_null(add(m, &k2, frames, 0, 0, 0));
	assert_int_not_equal(td_memo_epoch(m), e);
	assert_int_not_equal(td_memo_epoch(m), td_memo_epoch(other));
	td_memo_free(m);
	td_memo_free(other);
}

/*
 * An event's kernel frames, handed out, then its user stack kept: even if
 * that add empties the memo, the kernel frames stay readable until the
 * add after it (under AddressSanitizer a read of freed frames fails).
 */
static void test_handed_out_survive_next_add(void **state)
{
	struct td_memo *m = td_memo_new(6);
	struct td_memo_key k1 = key(TD_MEMO_KERNEL, 0, 0), k2 = k1, k3 = k1;
	const struct td_memo_stack *kstack;
	struct td_memo_stats st;

	(void)state;
	assert_non_null(m);
	k2.pid = 1;
	k3.pid = 2;
	assert_non_null(add(m, &k1, frames, 0, 0, 0));
	assert_non_null(add(m, &k2, frames, 0, 0, 0));
	kstack = td_memo_find(m, &k1);
	assert_non_null(td_memo_find(m, &k2));
	assert_non_null(kstack);
	/* Both in use, the bound reached: everything goes. */
	assert_non_null(add(m, &k3, frames, 0, 0, 0));
	td_memo_get_stats(m, &st);
	assert_int_equal(st.resets, 1);
	assert_null(td_memo_find(m, &k1));
	assert_int_equal(kstack->nr, 3);
	assert_memory_equal(kstack->frames, frames, sizeof(frames));
	td_memo_free(m);
}

static void test_ids_never_reused(void **state)
{
	struct td_memo *m1 = td_memo_new(3), *m2 = td_memo_new(0);
	struct td_memo_key k = key(TD_MEMO_KERNEL, 0, 0);
	const struct td_memo_stack *s;
	uint64_t seen[6];

	(void)state;
	assert_non_null(m1);
	assert_non_null(m2);
	for (int i = 0; i < 6; i++) {
		k.pid = i;
		/* m1 holds one stack at a time: every add empties it. */
		s = add(i % 2 ? m2 : m1, &k, frames, 0, 0, 0);
		assert_non_null(s);
		seen[i] = s->id;
		for (int j = 0; j < i; j++)
			assert_int_not_equal(seen[j], seen[i]);
	}
	td_memo_free(m1);
	td_memo_free(m2);
}

/* What the namer counted comes back with the stack, also when named again the same. */
static void test_counts_kept(void **state)
{
	struct td_memo *m = td_memo_new(0);
	struct td_memo_key k = key(TD_MEMO_KERNEL, 0, 0);
	struct td_memo_stack own = {
		.frames = frames, .nr = 3, .named = 2, .fileid_named = 1, .fileid_unknown = 1,
		.tracer = 1,
	};
	const struct td_memo_stack *a, *b;

	(void)state;
	assert_non_null(m);
	a = td_memo_add(m, &k, &own);
	assert_non_null(a);
	assert_int_equal(a->tracer, 1);
	assert_int_equal(a->fileid_named, 1);
	assert_int_equal(a->fileid_unknown, 1);
	assert_ptr_equal(td_memo_find(m, &k), a);
	k.stamp = 1;			/* stale, the same frames: the same id, new counts */
	own.tracer = 2;
	b = td_memo_add(m, &k, &own);
	assert_non_null(b);
	assert_int_equal(b->id, a->id);
	assert_int_equal(b->tracer, 2);
	td_memo_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_what_was_kept),
		cmocka_unit_test(test_counts_kept),
		cmocka_unit_test(test_stale_stamp),
		cmocka_unit_test(test_keys_apart),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_handed_out_survive_next_add),
		cmocka_unit_test(test_ids_never_reused),
		cmocka_unit_test(test_epoch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
