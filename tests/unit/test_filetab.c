// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the file table (lib/filetab.c): an id is known only from
 * its own file record, a repeated record changes nothing, a record that
 * gives a known id another file makes the id unusable, and the table is
 * bounded.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <event-parse.h>

#include <trace-defer/filetab.h>

static const uint8_t bid1[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
				  11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
static const uint8_t bid2[20] = { 0xff, 2, 3, 4, 5, 6, 7, 8, 9, 10,
				  11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };

static int add(struct td_filetab *ft, uint32_t id, const uint8_t *bid, const char *path)
{
	return td_filetab_add(ft, id, bid, bid ? 20 : 0, path, strlen(path));
}

static void test_unknown_stays_unknown(void **state)
{
	struct td_filetab *ft = td_filetab_new(0);
	struct td_filetab_stats st;
	struct td_file *f;

	(void)state;
	assert_non_null(ft);
	assert_null(td_filetab_get(ft, 1));
	assert_null(td_filetab_get(ft, 0));
	assert_int_equal(add(ft, 5, bid1, "/usr/bin/a"), 0);
	/* Its neighbours are not guessed. */
	assert_null(td_filetab_get(ft, 4));
	assert_null(td_filetab_get(ft, 6));
	f = td_filetab_get(ft, 5);
	assert_non_null(f);
	assert_int_equal(f->id, 5);
	assert_string_equal(f->path, "/usr/bin/a");
	assert_int_equal(f->build_id_len, 20);
	assert_memory_equal(f->build_id, bid1, 20);
	assert_string_equal(f->build_id_hex, "0102030405060708090a0b0c0d0e0f1011121314");
	assert_int_equal(f->sym_owner, 0);
	assert_null(f->sym_res);

	/* The refresh the kernel writes after a second: same entry, same pointer. */
	assert_int_equal(add(ft, 5, bid1, "/usr/bin/a"), 1);
	assert_ptr_equal(td_filetab_get(ft, 5), f);

	/* No build-id: no hex; a path is cut at its NUL. */
	assert_int_equal(td_filetab_add(ft, 6, NULL, 0, "/bin/b\0junk", 11), 0);
	assert_string_equal(td_filetab_get(ft, 6)->path, "/bin/b");
	assert_null(td_filetab_get(ft, 6)->build_id_hex);

	/* Bad records. */
	assert_int_equal(add(ft, 0, bid1, "/x"), -EINVAL);
	assert_int_equal(td_filetab_add(ft, 7, bid1, 21, "/x", 2), -EINVAL);
	assert_null(td_filetab_get(ft, 7));

	td_filetab_get_stats(ft, &st);
	assert_int_equal(st.files, 2);
	assert_int_equal(st.records, 3);
	assert_int_equal(st.refreshed, 1);
	assert_int_equal(st.bad_records, 2);
	assert_int_equal(st.conflicts, 0);
	td_filetab_free(ft);
}

/* A known id said to be another file: believed neither way, from then on. */
static void test_conflict(void **state)
{
	struct td_filetab *ft = td_filetab_new(0);
	struct td_filetab_stats st;

	(void)state;
	assert_non_null(ft);
	assert_int_equal(add(ft, 1, bid1, "/a"), 0);
	assert_int_equal(add(ft, 2, bid1, "/b"), 0);
	assert_int_equal(add(ft, 1, bid2, "/a"), -EEXIST);
	assert_null(td_filetab_get(ft, 1));
	assert_int_equal(add(ft, 1, bid1, "/a"), -EEXIST);
	assert_null(td_filetab_get(ft, 1));
	assert_int_equal(add(ft, 2, bid1, "/c"), -EEXIST);
	assert_null(td_filetab_get(ft, 2));
	td_filetab_get_stats(ft, &st);
	assert_int_equal(st.conflicts, 2);
	td_filetab_free(ft);
}

/*
 * Growing keeps every entry where it was. Full, a new id drops the quarter
 * of the ids recorded longest ago (a refresh counts as a record), the
 * others stay where they were, and a dropped id recorded again is known
 * again: a run that meets ever new ids keeps naming frames.
 */
static void test_bound_and_growth(void **state)
{
	struct td_filetab *ft = td_filetab_new(1000);
	struct td_file *first[1000];
	struct td_filetab_stats st;
	uint64_t gen;
	char path[32];
	uint32_t i;

	(void)state;
	assert_non_null(ft);
	for (i = 0; i < 1000; i++) {
		/* Spread ids, as the counter of a long-running instance would be. */
		snprintf(path, sizeof(path), "/f%u", i);
		assert_int_equal(add(ft, i * 7919 + 1, i % 2 ? bid1 : NULL, path), 0);
		first[i] = td_filetab_get(ft, i * 7919 + 1);
		assert_non_null(first[i]);
	}
	for (i = 0; i < 1000; i++)
		assert_ptr_equal(td_filetab_get(ft, i * 7919 + 1), first[i]);
	/* The first hundred are recorded again (still in use). */
	for (i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "/f%u", i);
		assert_int_equal(add(ft, i * 7919 + 1, i % 2 ? bid1 : NULL, path), 1);
	}
	gen = td_filetab_gen(ft);
	assert_int_equal(add(ft, 0xffffffffu, bid1, "/over"), 0);
	assert_string_equal(td_filetab_get(ft, 0xffffffffu)->path, "/over");
	assert_int_not_equal(td_filetab_gen(ft), gen);
	for (i = 0; i < 1000; i++) {
		snprintf(path, sizeof(path), "/f%u", i);
		if (i >= 100 && i < 350) {
			assert_null(td_filetab_get(ft, i * 7919 + 1));
			continue;
		}
		assert_ptr_equal(td_filetab_get(ft, i * 7919 + 1), first[i]);
		assert_string_equal(first[i]->path, path);
	}
	td_filetab_get_stats(ft, &st);
	assert_int_equal(st.files, 751);
	assert_int_equal(st.evicted, 250);
	assert_int_equal(st.full, 1);
	assert_int_equal(add(ft, 100 * 7919 + 1, NULL, "/f100"), 0);
	assert_string_equal(td_filetab_get(ft, 100 * 7919 + 1)->path, "/f100");

	/* Many times over the bound: never more than it, the newest always known. */
	for (i = 1; i <= 10000; i++) {
		assert_int_equal(add(ft, 0x10000000u + i, bid2, "/churn"), 0);
		assert_non_null(td_filetab_get(ft, 0x10000000u + i));
		td_filetab_get_stats(ft, &st);
		assert_true(st.files <= 1000);
	}
	td_filetab_free(ft);

	/* A table of one: the new id replaces the old. */
	ft = td_filetab_new(1);
	assert_int_equal(add(ft, 1, bid1, "/one"), 0);
	assert_int_equal(add(ft, 2, bid1, "/two"), 0);
	assert_null(td_filetab_get(ft, 1));
	assert_string_equal(td_filetab_get(ft, 2)->path, "/two");
	td_filetab_free(ft);
}

/*
 * Where a dynamic field's bytes lie: __data_loc from the record's start,
 * __rel_loc from the field's end, in either byte order, and never outside
 * the record or inside its fixed part.
 */
static void test_dyn_field(void **state)
{
	struct tep_format_field f = { .offset = 8, .size = 4, .flags = TEP_FIELD_IS_DYNAMIC };
	uint8_t rec[32] = { 0 };
	unsigned int off = 99, len = 99;

	(void)state;
	/* 6 bytes at 20: (len << 16) | offset, little-endian. */
	rec[8] = 20;
	rec[10] = 6;
	assert_true(td_dyn_field(&f, rec, sizeof(rec), false, &off, &len));
	assert_int_equal(off, 20);
	assert_int_equal(len, 6);
	/* The same bytes as a __rel_loc: 20 past the field's end (12). */
	f.flags |= TEP_FIELD_IS_RELATIVE;
	assert_false(td_dyn_field(&f, rec, sizeof(rec), false, &off, &len));
	rec[8] = 4;
	assert_true(td_dyn_field(&f, rec, sizeof(rec), false, &off, &len));
	assert_int_equal(off, 16);
	assert_int_equal(len, 6);
	/* Data running one byte past the record's end. */
	f.flags &= ~TEP_FIELD_IS_RELATIVE;
	rec[8] = 27;
	assert_false(td_dyn_field(&f, rec, sizeof(rec), false, &off, &len));
	rec[8] = 26;
	assert_true(td_dyn_field(&f, rec, sizeof(rec), false, &off, &len));
	/* A __data_loc into the fixed part, up to the field's own end (12). */
	rec[8] = 11;
	assert_false(td_dyn_field(&f, rec, sizeof(rec), false, &off, &len));
	rec[8] = 12;
	assert_true(td_dyn_field(&f, rec, sizeof(rec), false, &off, &len));
	assert_int_equal(off, 12);
	/* A big-endian record: the same word, bytes reversed. */
	memcpy(rec + 8, (uint8_t[]){ 0, 6, 0, 20 }, 4);
	assert_false(td_dyn_field(&f, rec, sizeof(rec), false, &off, &len));
	assert_true(td_dyn_field(&f, rec, sizeof(rec), true, &off, &len));
	assert_int_equal(off, 20);
	assert_int_equal(len, 6);
	memcpy(rec + 8, (uint8_t[]){ 26, 0, 6, 0 }, 4);
	/* The field itself cut off by a short record. */
	assert_false(td_dyn_field(&f, rec, 11, false, &off, &len));
	/* Not a dynamic field, not 4 bytes, no field, no record, a negative size. */
	f.flags = 0;
	assert_false(td_dyn_field(&f, rec, sizeof(rec), false, &off, &len));
	f.flags = TEP_FIELD_IS_DYNAMIC;
	f.size = 8;
	assert_false(td_dyn_field(&f, rec, sizeof(rec), false, &off, &len));
	assert_false(td_dyn_field(NULL, rec, sizeof(rec), false, &off, &len));
	f.size = 4;
	assert_false(td_dyn_field(&f, NULL, sizeof(rec), false, &off, &len));
	assert_false(td_dyn_field(&f, rec, -1, false, &off, &len));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_stays_unknown),
		cmocka_unit_test(test_conflict),
		cmocka_unit_test(test_bound_and_growth),
		cmocka_unit_test(test_dyn_field),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
