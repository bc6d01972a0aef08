// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the record types' constructors and destructors
 * (lib/types.c): an event's raw copy and a stack's IPs and file identity
 * come in the record's own block, zeroed headers, blocks handed out again
 * to the next record of their size class (not under AddressSanitizer,
 * where every block is malloc'ed and freed, so that a use after free
 * stays visible), and a record whose owner replaced its storage is freed
 * whole (ASan and LeakSanitizer in the unit-asan build check that).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <trace-defer/types.h>

#if defined(__SANITIZE_ADDRESS__)
#define RECYCLES	0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RECYCLES	0
#endif
#endif
#ifndef RECYCLES
#define RECYCLES	1
#endif

static void test_event_blocks(void **state)
{
	struct td_event *ev, *again, *bigger;
	void *first;

	(void)state;
	ev = td_event_new_raw(68);
	assert_non_null(ev);
	assert_int_equal(ev->raw_size, 68);
	/* The raw copy lies in the event's block, after it. */
	assert_true((char *)ev->raw >= (char *)(ev + 1));
	assert_true((char *)ev->raw < (char *)(ev + 1) + 16);
	memset(ev->raw, 0xaa, 68);
	ev->tid = 42;
	first = ev;
	td_event_free(ev);

	/* The next of the same size class gets the block, header zeroed. */
	again = td_event_new_raw(70);
	assert_non_null(again);
	if (RECYCLES)
		assert_ptr_equal(again, first);
	assert_int_equal(again->tid, 0);
	assert_int_equal(again->raw_size, 70);
	assert_false(again->has_cookie);
	assert_null(again->kstack.ips);
	/* Another class: another block. */
	bigger = td_event_new_raw(1000);
	assert_non_null(bigger);
	assert_ptr_not_equal(bigger, again);
	memset(bigger->raw, 0x55, 1000);
	td_event_free(bigger);
	td_event_free(again);

	/* Raw replaced by the owner: its copy is freed, the block too. */
	ev = td_event_new_raw(68);
	assert_non_null(ev);
	ev->raw = malloc(300);
	assert_non_null(ev->raw);
	ev->raw_size = 300;
	td_event_free(ev);

	/* Larger than any class: malloc'ed and freed as it is. */
	ev = td_event_new_raw(8192);
	assert_non_null(ev);
	memset(ev->raw, 1, 8192);
	td_event_free(ev);

	ev = td_event_new();
	assert_non_null(ev);
	assert_null(ev->raw);
	assert_int_equal(ev->raw_size, 0);
	assert_int_equal(td_ips_copy(&ev->kstack, (const uint64_t[]){ 1, 2, 3 }, 3), 0);
	td_event_free(ev);
	td_event_free(NULL);
}

static void test_ustack_blocks(void **state)
{
	struct td_ustack *us, *again;
	void *first;

	(void)state;
	us = td_ustack_new_files(11, true);
	assert_non_null(us);
	assert_int_equal(us->ips.nr, 11);
	/* The file identity follows the IPs in the same block. */
	assert_ptr_equal(us->files, (struct td_ufile *)(us->ips.ips + 11));
	for (unsigned int i = 0; i < 11; i++) {
		us->ips.ips[i] = 0x400000 + i;
		us->files[i] = (struct td_ufile){ .kind = TD_FILE_IN, .id = i, .offset = i };
	}
	us->cookie = 7;
	first = us;
	td_ustack_free(us);

	again = td_ustack_new_files(11, true);
	assert_non_null(again);
	if (RECYCLES)
		assert_ptr_equal(again, first);
	assert_int_equal(again->cookie, 0);
	assert_int_equal(again->dropped, 0);
	td_ustack_free(again);

	/* Without file identity: no files, IPs inline. */
	us = td_ustack_new_ips(3);
	assert_non_null(us);
	assert_null(us->files);
	us->ips.ips[2] = 1;
	td_ustack_free(us);

	/* IPs replaced by the owner: freed with the stack. */
	us = td_ustack_new_ips(3);
	assert_non_null(us);
	assert_int_equal(td_ips_copy(&us->ips, (const uint64_t[]){ 1, 2, 3, 4 }, 4), 0);
	td_ustack_free(us);

	us = td_ustack_new();
	assert_non_null(us);
	assert_int_equal(us->ips.nr, 0);
	td_ustack_free(us);
	td_ustack_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_blocks),
		cmocka_unit_test(test_ustack_blocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
