// SPDX-License-Identifier: GPL-2.0
/*
 * The library's hash table: lookups through collisions, growth, deletion,
 * filtering, destruction with a callback.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/htab.h"

struct item {
	struct hnode node;
	int key;
};

static int freed;

static void free_item(struct hnode *n)
{
	freed++;
	free(container_of(n, struct item, node));
}

static struct item *find(struct htab *t, int key, uint64_t hash)
{
	struct hnode *n;

	for (n = htab_first(t, hash); n; n = htab_next(n)) {
		struct item *it = container_of(n, struct item, node);

		if (it->key == key)
			return it;
	}
	return NULL;
}

/* A weak hash (key % 7): long chains of equal hashes must still be told apart. */
static void test_collisions_and_growth(void **state)
{
	struct htab t;
	int i;

	assert_int_equal(htab_init(&t), 0);
	for (i = 0; i < 1000; i++) {
		struct item *it = malloc(sizeof(*it));

		assert_non_null(it);
		it->key = i;
		htab_add(&t, &it->node, i % 7);
	}
	assert_int_equal(t.nr, 1000);
	assert_true(t.mask + 1 >= 1000);	/* grew */
	for (i = 0; i < 1000; i++) {
		struct item *it = find(&t, i, i % 7);

		assert_non_null(it);
		assert_int_equal(it->key, i);
	}
	assert_null(find(&t, 1000, 1000 % 7));
	assert_null(find(&t, 3, 4));		/* right key, wrong hash */

	for (i = 0; i < 1000; i += 2) {
		struct item *it = find(&t, i, i % 7);

		htab_del(&t, &it->node);
		free(it);
	}
	assert_int_equal(t.nr, 500);
	for (i = 0; i < 1000; i++)
		assert_true((find(&t, i, i % 7) != NULL) == (i % 2 == 1));

	freed = 0;
	htab_destroy(&t, free_item);
	assert_int_equal(freed, 500);
	assert_null(t.b);
	assert_int_equal(t.nr, 0);
}

static void test_hashes(void **state)
{
	/* FNV-1a's published value for "a" */
	assert_true(htab_hash_bytes("a", 1, HTAB_SEED) == 0xaf63dc4c8601ec8cull);
	assert_true(htab_hash_bytes("ab", 2, HTAB_SEED) ==
		    htab_hash_bytes("b", 1, htab_hash_bytes("a", 1, HTAB_SEED)));
	assert_true(htab_hash_u64(1, 2) != htab_hash_u64(1, 3));
	assert_true(htab_hash_u64(1, 2) != htab_hash_u64(2, 2));
}

/*
 * A stack's hash: every value and its place count, in any lane and the
 * tail; the length too (a stack and the same one cut short); and the low
 * bits, which pick a bucket, still tell apart IPs that differ only in
 * their high bits.
 */
static void test_hash_u64s(void **state)
{
	uint64_t v[12], w[12], h, buckets[64] = { 0 };
	unsigned int nr, i, used = 0;

	(void)state;
	for (i = 0; i < 12; i++)
		v[i] = 0xffffffff81000000ULL + 0x40 * i;
	for (nr = 1; nr <= 12; nr++) {
		h = htab_hash_u64s(HTAB_SEED, v, nr);
		assert_true(h == htab_hash_u64s(HTAB_SEED, v, nr));
		assert_true(h != htab_hash_u64s(HTAB_SEED, v, nr - 1));
		assert_true(h != htab_hash_u64s(HTAB_SEED ^ 1, v, nr));
		for (i = 0; i < nr; i++) {
			memcpy(w, v, sizeof(v));
			w[i] ^= 0x10;
			assert_true(h != htab_hash_u64s(HTAB_SEED, w, nr));
			if (i + 1 < nr) {
				memcpy(w, v, sizeof(v));
				w[i] = v[i + 1];
				w[i + 1] = v[i];
				assert_true(h != htab_hash_u64s(HTAB_SEED, w, nr));
			}
		}
	}
	/* 64 stacks whose last IP differs only above bit 40: spread over 64 buckets. */
	for (i = 0; i < 64; i++) {
		memcpy(w, v, sizeof(v));
		w[7] += (uint64_t)i << 40;
		buckets[htab_hash_u64s(HTAB_SEED, w, 8) & 63]++;
	}
	for (i = 0; i < 64; i++)
		used += buckets[i] != 0;
	assert_true(used >= 32);
}

static bool keep_even(struct hnode *n, void *arg)
{
	int *asked = arg;

	(*asked)++;
	return container_of(n, struct item, node)->key % 2 == 0;
}

static void test_filter(void **state)
{
	struct htab t;
	int asked = 0;

	(void)state;
	assert_int_equal(htab_init(&t), 0);
	/* Few distinct hashes: long chains, removals in the middle of them. */
	for (int i = 0; i < 500; i++) {
		struct item *it = malloc(sizeof(*it));

		assert_non_null(it);
		it->key = i;
		htab_add(&t, &it->node, (uint64_t)(i % 7));
	}
	freed = 0;
	htab_filter(&t, keep_even, free_item, &asked);
	assert_int_equal(asked, 500);
	assert_int_equal(freed, 250);
	assert_int_equal(t.nr, 250);
	for (int i = 0; i < 500; i++) {
		if (i % 2)
			assert_null(find(&t, i, (uint64_t)(i % 7)));
		else
			assert_non_null(find(&t, i, (uint64_t)(i % 7)));
	}
	freed = 0;
	htab_destroy(&t, free_item);
	assert_int_equal(freed, 250);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collisions_and_growth),
		cmocka_unit_test(test_hashes),
		cmocka_unit_test(test_hash_u64s),
		cmocka_unit_test(test_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
