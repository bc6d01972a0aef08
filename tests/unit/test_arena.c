// SPDX-License-Identifier: GPL-2.0
/*
 * The library's arena (lib/arena.c): alignment, entries larger than a
 * chunk, what a reset keeps and frees. Run under ASan (make unit-asan), a
 * reset or free that lost a chunk shows as a leak, one that freed a chunk
 * still in use as a use after free.
 */
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/arena.h"

static void test_aligned_and_distinct(void **state)
{
	struct arena a = ARENA_INIT;
	unsigned char *prev = NULL, *p;
	size_t i;

	for (i = 1; i < 2000; i++) {
		p = arena_alloc(&a, i % 37 + 1);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % alignof(max_align_t), 0);
		/* Written whole, then the previous one checked intact. */
		memset(p, (int)(i & 0xff), i % 37 + 1);
		if (prev)
			assert_int_equal(prev[0], (i - 1) & 0xff);
		prev = p;
	}
	assert_true(a.bytes >= 2000 * alignof(max_align_t));
	/* Every byte asked for, the sizes 1..37 over and over. */
	assert_int_equal(a.handed, 37964);
	arena_free(&a);
	assert_null(a.chunks);
	assert_int_equal(a.bytes, 0);
}

static void test_large_entries(void **state)
{
	struct arena a = ARENA_INIT;
	size_t big = 1 << 20;
	unsigned char *small, *large, *after;

	small = arena_alloc(&a, 16);
	large = arena_alloc(&a, big);
	after = arena_alloc(&a, 16);
	assert_non_null(small);
	assert_non_null(large);
	assert_non_null(after);
	memset(large, 0xab, big);
	memset(small, 1, 16);
	memset(after, 2, 16);
	assert_int_equal(large[0], 0xab);
	assert_int_equal(large[big - 1], 0xab);
	assert_true(a.bytes >= big + 16);
	assert_null(arena_alloc(&a, SIZE_MAX - 8));
	assert_int_equal(after[0], 2);
	arena_free(&a);
}

static void test_reset_keeps_one_chunk(void **state)
{
	struct arena a = ARENA_INIT;
	unsigned char *first, *p;
	size_t kept, i;

	arena_reset(&a);	/* nothing yet: nothing to do */
	assert_null(a.chunks);
	first = arena_alloc(&a, 64);
	assert_non_null(first);
	kept = a.bytes;
	for (i = 0; i < 10000; i++)
		assert_non_null(arena_alloc(&a, 100));
	assert_true(a.bytes > kept);
	arena_reset(&a);
	assert_int_equal(a.bytes, kept);
	assert_int_equal(a.handed, 0);
	/* The first chunk again, from its start. */
	p = arena_alloc(&a, 64);
	assert_ptr_equal(p, first);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aligned_and_distinct),
		cmocka_unit_test(test_large_entries),
		cmocka_unit_test(test_reset_keeps_one_chunk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
