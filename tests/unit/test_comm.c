// SPDX-License-Identifier: GPL-2.0
/*
 * lib/comm.h: task names read a word at a time must be what strnlen() and
 * a copy make of them, for a NUL at every place, none, and bytes around it
 * that trip the word tricks (0x01 above a NUL borrows, 0x80 and 0xff have
 * the high bit, 0x7f is the last byte below it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../lib/comm.h"

/* What the parser did before: strnlen(), cut to 15 bytes, the rest zero here. */
static void ref_copy(char *dst, const char *src)
{
	size_t n = strnlen(src, TD_COMM_LEN);

	if (n > TD_COMM_LEN - 1)
		n = TD_COMM_LEN - 1;
	memset(dst, 0, TD_COMM_LEN);
	memcpy(dst, src, n);
}

/* The name's bytes up to its NUL (at most 16), the rest zero, as two words. */
static void ref_words(const char *src, uint64_t *lo, uint64_t *hi)
{
	unsigned char b[TD_COMM_LEN] = { 0 };

	memcpy(b, src, strnlen(src, TD_COMM_LEN));
	*lo = td_get_le64(b);
	*hi = td_get_le64(b + 8);
}

static void check(const char *src)
{
	char got[TD_COMM_LEN + 8], want[TD_COMM_LEN];
	uint64_t lo, hi, rlo, rhi;

	memset(got, 0x5a, sizeof(got));
	td_comm_copy(got, src);
	ref_copy(want, src);
	assert_memory_equal(got, want, TD_COMM_LEN);
	assert_int_equal(got[TD_COMM_LEN], 0x5a);	/* nothing written past 16 */
	td_comm_words(src, &lo, &hi);
	ref_words(src, &rlo, &rhi);
	assert_int_equal(lo, rlo);
	assert_int_equal(hi, rhi);
}

/* A NUL at every place (16: none), every other byte from the tricky ones. */
static void test_every_nul(void **state)
{
	static const unsigned char fill[] = { 'a', 0x01, 0x7f, 0x80, 0xff, 0x00 };
	char src[TD_COMM_LEN];

	(void)state;
	for (unsigned int nul = 0; nul <= TD_COMM_LEN; nul++)
		for (unsigned int f = 0; f < sizeof(fill); f++)
			for (unsigned int g = 0; g < sizeof(fill); g++) {
				for (unsigned int i = 0; i < TD_COMM_LEN; i++)
					src[i] = (char)(i < nul ? fill[(f + i) % 5] :
							    fill[(g + i) % sizeof(fill)]);
				if (nul < TD_COMM_LEN)
					src[nul] = '\0';
				check(src);
			}
}

/* Random bytes from that alphabet, zeros included: several NULs, or none. */
static void test_random(void **state)
{
	static const unsigned char alpha[] = { 'a', 'Z', 0x01, 0x7f, 0x80, 0xfe, 0xff, 0x00 };
	char src[TD_COMM_LEN];
	unsigned int seed = 42;

	(void)state;
	for (unsigned int n = 0; n < 200000; n++) {
		for (unsigned int i = 0; i < TD_COMM_LEN; i++) {
			seed = seed * 1103515245u + 12345u;
			src[i] = (char)alpha[(seed >> 16) % sizeof(alpha)];
		}
		check(src);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_nul),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
