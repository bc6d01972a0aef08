// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the page generator (lib/pagegen.c), checked against
 * libtraceevent's own sub-buffer reader (kbuffer): every record comes back
 * with its bytes, its size as the kernel rounds it and its exact timestamp,
 * across time extends, discarded events, tail padding and missed-events
 * flags.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>
#include <kbuffer.h>

#include <trace-defer/pagegen.h>

static void test_pagegen_event_size(void **state)
{
	(void)state;
	assert_int_equal(td_pagegen_event_size(0), 8);
	assert_int_equal(td_pagegen_event_size(1), 8);
	assert_int_equal(td_pagegen_event_size(4), 8);
	assert_int_equal(td_pagegen_event_size(8), 16);	/* 12 would be an extend's size + 4 */
	assert_int_equal(td_pagegen_event_size(9), 16);
	assert_int_equal(td_pagegen_event_size(16), 20);
	assert_int_equal(td_pagegen_event_size(112), 116);
	assert_int_equal(td_pagegen_event_size(113), 124);
	assert_int_equal(td_pagegen_event_size(4000), 4008);
}

struct want {
	uint64_t ts;
	unsigned int len;
	uint8_t byte;
};

static void test_pagegen_kbuffer_roundtrip(void **state)
{
	enum { NR = 20000 };
	struct want *want = calloc(NR, sizeof(*want));
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	/*
	 * The page ends where an unmapped one begins, as the last page of a
	 * trace.dat trace-cmd maps: a reader led past the sub-buffer (a null
	 * padding counted in the commit, whose length word kbuffer reads)
	 * faults here.
	 */
	uint8_t *map = mmap(NULL, 2 * TD_PAGE_SIZE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *page = map;
	unsigned int short_tails = 0;
	unsigned int seed = 7, pages = 0, extends = 0, i = 0, j, got = 0, k;
	unsigned int checked_missed = 0;
	unsigned long long ts;
	struct td_pagegen pg;
	uint64_t now = 123456789;
	int missed;
	bool fill, stored;
	uint8_t data[512];
	uint8_t *rec;

	(void)state;
	assert_non_null(want);
	assert_non_null(kb);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + TD_PAGE_SIZE, TD_PAGE_SIZE, PROT_NONE), 0);
	while (i < NR) {
		unsigned int first = i;

		td_pagegen_start(&pg, page, TD_PAGE_SIZE, now);
		for (;;) {
			unsigned int r = rand_r(&seed);

			/* Mostly small steps, some past 27 bits, a few past 32. */
			switch (r % 16) {
			case 0:
				now += (1ULL << 27) + r % 1000;
				break;
			case 1:
				now += (uint64_t)(r % 100) << 32;
				break;
			case 2:
				if (td_pagegen_discard(&pg, now + 1, r % 200) == 0)
					now++;
				break;
			case 3:
				/* An absolute stamp: the clock jumps there. */
				if (td_pagegen_time_stamp(&pg, now + 3000) == 0)
					now += 3000;
				break;
			default:
				now += r % 5000;
			}
			want[i].ts = now;
			want[i].len = (r >> 8) % 300;
			want[i].byte = (uint8_t)(i * 7);
			memset(data, want[i].byte, sizeof(data));
			if (want[i].len >= 8)
				memcpy(data, &i, sizeof(i));
			if (td_pagegen_add(&pg, now, data, want[i].len) == -ENOSPC)
				break;
			if (++i == NR)
				break;
		}
		extends += pg.extends;
		assert_true(pg.nr == i - first);
		fill = pages % 3 != 0;
		missed = pages % 5 == 1 ? pages : 0;
		/* The count is stored only if 8 bytes are left after the data. */
		stored = !fill && td_pagegen_room(&pg) >= 8;
		if (fill && td_pagegen_room(&pg) && td_pagegen_room(&pg) < 8)
			short_tails++;
		td_pagegen_finish(&pg, fill, missed);
		pages++;

		assert_int_equal(kbuffer_load_subbuffer(kb, page), 0);
		/* kbuffer reports the count only at a first record at offset 0. */
		if (missed && i > first && kbuffer_curr_offset(kb) == TD_PAGE_HDR_SIZE)
			assert_int_equal(kbuffer_missed_events(kb), stored ? missed : -1);
		if (missed && i > first && kbuffer_curr_offset(kb) == TD_PAGE_HDR_SIZE)
			checked_missed++;
		j = first;
		for (rec = kbuffer_read_event(kb, &ts); rec; rec = kbuffer_next_event(kb, &ts)) {
			assert_true(j < i);
			assert_int_equal(ts, want[j].ts);
			assert_int_equal(kbuffer_event_size(kb),
					 td_pagegen_event_size(want[j].len) -
					 (want[j].len > 112 ? 8 : 4));
			for (k = 0; k < want[j].len; k++) {
				if (want[j].len >= 8 && k < sizeof(j))
					continue;
				assert_int_equal(rec[k], want[j].byte);
			}
			if (want[j].len >= 8)
				assert_memory_equal(rec, &j, sizeof(j));
			j++;
			got++;
		}
		assert_int_equal(j, i);
	}
	assert_int_equal(got, NR);
	assert_true(checked_missed > 0);
	assert_true(extends > 100);
	assert_true(pages > 100);
	/* Pages padded with fewer than 8 bytes left were among them. */
	assert_true(short_tails > 0);
	kbuffer_free(kb);
	munmap(map, 2 * TD_PAGE_SIZE);
	free(want);
}

static void test_pagegen_errors(void **state)
{
	uint8_t *page = malloc(TD_PAGE_SIZE);
	struct td_pagegen pg;
	uint8_t data[128] = { 0 };

	(void)state;
	assert_non_null(page);
	td_pagegen_start(&pg, page, TD_PAGE_SIZE, 1000);
	assert_int_equal(td_pagegen_add(&pg, 999, data, 8), -EINVAL);
	assert_int_equal(td_pagegen_add(&pg, 1000, data, 8), 0);
	/* A discarded event needs a delta. */
	assert_int_equal(td_pagegen_discard(&pg, 1000, 8), -EINVAL);
	assert_int_equal(td_pagegen_add(&pg, 1000 + (1ULL << 60), data, 8), -EINVAL);
	/* Absolute time stamps keep the top 5 bits of the clock. */
	assert_int_equal(td_pagegen_time_stamp(&pg, 1ULL << 62), -EINVAL);
	assert_int_equal(td_pagegen_add(&pg, 2000, data, TD_PAGE_SIZE), -ENOSPC);
	assert_int_equal(pg.nr, 1);
	assert_int_equal(td_pagegen_finish(&pg, false, 0), TD_PAGE_SIZE);
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pagegen_event_size),
		cmocka_unit_test(test_pagegen_kbuffer_roundtrip),
		cmocka_unit_test(test_pagegen_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
