// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the sub-buffer walk (lib/pagewalk.c), against the reader
 * it replaced, libtraceevent's kbuffer: on generated pages with short and
 * long records (type_len 0), time extends, discarded events, absolute time
 * stamps and the kernel's end padding, and on thousands of those pages with
 * bytes changed at random, both give the same records, with the same
 * timestamps, bodies and sizes. kbuffer trusts its input, so it reads the
 * sound part the walk found (a copy of the page with the commit cut there,
 * as the parser used to hand it), and the walk must stop where the chain
 * breaks: a length out of the page, a header cut short.
 */
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <kbuffer.h>

#include <trace-defer/pagegen.h>
#include <trace-defer/ringbuf.h>

#include "../../lib/pagewalk.h"

struct rec {
	uint64_t ts;
	unsigned int off, size;
};

#define MAX_RECS	1024

/* The walk's records; returns how many, *sound: where the sound part ends. */
static unsigned int walk(const uint8_t *page, unsigned int limit, struct rec *out,
			 unsigned int *sound, bool *corrupt)
{
	struct td_pagewalk w;
	const uint8_t *data;
	unsigned int n = 0, size;
	uint64_t ts, page_ts;

	memcpy(&page_ts, page, 8);
	td_pagewalk_start(&w, page + TD_PAGE_HDR_SIZE, limit, le64toh(page_ts));
	while (td_pagewalk_next(&w, &ts, &data, &size)) {
		assert_true(n < MAX_RECS);
		assert_true(data >= page + TD_PAGE_HDR_SIZE);
		assert_true(data + size <= page + TD_PAGE_HDR_SIZE + limit);
		out[n++] = (struct rec){ ts, (unsigned int)(data - page), size };
	}
	*sound = w.off;
	*corrupt = w.corrupt;
	return n;
}

/* kbuffer's records of @page's first @len event bytes (flags cleared). */
static unsigned int kbuf_read(const uint8_t *page, unsigned int len, struct rec *out)
{
	static uint8_t copy[TD_PAGE_SIZE];
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	unsigned long long ts;
	unsigned int n = 0;
	void *data;

	assert_non_null(kb);
	memcpy(copy, page, TD_PAGE_HDR_SIZE + len);
	td_put_le64(copy + 8, len);
	assert_int_equal(kbuffer_load_subbuffer(kb, copy), 0);
	for (data = kbuffer_read_event(kb, &ts); data; data = kbuffer_next_event(kb, &ts)) {
		assert_true(n < MAX_RECS);
		out[n++] = (struct rec){ ts, (unsigned int)((uint8_t *)data - copy),
					 (unsigned int)kbuffer_event_size(kb) };
	}
	kbuffer_free(kb);
	return n;
}

/* Both readers on @page (@limit event bytes); returns the walk's record count. */
static unsigned int same_as_kbuffer(const uint8_t *page, unsigned int limit, bool *corrupt)
{
	static struct rec a[MAX_RECS], b[MAX_RECS];
	unsigned int na, nb, sound;

	na = walk(page, limit, a, &sound, corrupt);
	assert_true(sound <= limit);
	/* Not broken: to the end, or to the padding that ends the data. */
	if (!*corrupt && sound < limit)
		assert_int_equal(page[TD_PAGE_HDR_SIZE + sound], TD_RB_TYPE_PADDING);
	nb = kbuf_read(page, sound, b);
	assert_int_equal(na, nb);
	for (unsigned int i = 0; i < na; i++) {
		assert_int_equal(a[i].ts, b[i].ts);
		assert_int_equal(a[i].off, b[i].off);
		assert_int_equal(a[i].size, b[i].size);
	}
	return na;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A page of everything the kernel writes, from @seed; returns the commit. */
static unsigned int make_page(uint8_t *page, uint64_t seed)
{
	static uint8_t body[512];
	struct td_pagegen pg;
	uint64_t ts = 1000000 + seed * 7919;

	rnd_state = seed * 2654435761ULL + 1;
	for (unsigned int i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)rnd();
	td_pagegen_start(&pg, page, TD_PAGE_SIZE, ts);
	for (;;) {
		unsigned int kind = rnd() % 16, len = 4 + rnd() % 120;
		int ret;

		if (kind == 0)
			ts += 1ULL << (28 + rnd() % 20);	/* a time extend first */
		else
			ts += rnd() % 5000;
		if (kind == 1)
			len = 120 + rnd() % 380;		/* type_len 0: length word */
		if (kind == 2) {
			ret = td_pagegen_discard(&pg, ++ts, 4 + 4 * (rnd() % 30));
		} else if (kind == 3) {
			ts += rnd() % 100000;
			ret = td_pagegen_time_stamp(&pg, ts);
		} else {
			ret = td_pagegen_add(&pg, ts, body, len);
		}
		if (ret == -ENOSPC)
			break;
		assert_int_equal(ret, 0);
	}
	td_pagegen_finish(&pg, rnd() % 2, 0);
	return (unsigned int)(le64toh(*(uint64_t *)(page + 8)) & TD_PAGE_COMMIT_MASK);
}

static void test_generated_pages(void **state)
{
	static uint8_t page[TD_PAGE_SIZE];
	unsigned int records = 0;
	bool corrupt;

	(void)state;
	for (uint64_t seed = 1; seed <= 300; seed++) {
		unsigned int commit = make_page(page, seed);

		records += same_as_kbuffer(page, commit, &corrupt);
		assert_false(corrupt);
	}
	/* Dozens of records a page: the pages were not empty. */
	assert_true(records > 300 * 10);
}

/* The same pages with bytes changed: the same records up to the break. */
static void test_damaged_pages(void **state)
{
	static uint8_t page[TD_PAGE_SIZE];
	unsigned int broken = 0;
	bool corrupt;

	(void)state;
	for (uint64_t seed = 1; seed <= 3000; seed++) {
		unsigned int commit = make_page(page, seed), hits = 1 + rnd() % 4;

		for (unsigned int i = 0; i < hits; i++) {
			unsigned int at = TD_PAGE_HDR_SIZE + rnd() % commit;

			/* Headers and length words mostly: the low bytes of words. */
			page[at & ~3U] = (uint8_t)rnd();
		}
		same_as_kbuffer(page, commit, &corrupt);
		broken += corrupt;
	}
	/* Some of them broke the chain, and were compared up to the break. */
	assert_true(broken > 100);
}

/* Chains cut short: each ends where it breaks, what came before handed out. */
static void test_breaks(void **state)
{
	static uint8_t page[TD_PAGE_SIZE];
	struct rec r[MAX_RECS];
	unsigned int sound, n;
	struct td_pagegen pg;
	uint8_t body[16] = { 0 };
	bool corrupt;

	(void)state;
	td_pagegen_start(&pg, page, TD_PAGE_SIZE, 100);
	assert_int_equal(td_pagegen_add(&pg, 110, body, 16), 0);	/* 20 bytes */
	assert_int_equal(td_pagegen_add(&pg, 120, body, 16), 0);
	td_pagegen_finish(&pg, false, 0);
	/* Cut inside the second record's body. */
	n = walk(page, 30, r, &sound, &corrupt);
	assert_int_equal(n, 1);
	assert_true(corrupt);
	assert_int_equal(sound, 20);
	assert_int_equal(r[0].ts, 110);
	/* Cut inside a header. */
	n = walk(page, 22, r, &sound, &corrupt);
	assert_int_equal(n, 1);
	assert_true(corrupt);
	/* A type_len 0 length word that points past the end. */
	td_put_le32(page + TD_PAGE_HDR_SIZE + 20, 0);
	td_put_le32(page + TD_PAGE_HDR_SIZE + 24, 4000);
	n = walk(page, 40, r, &sound, &corrupt);
	assert_int_equal(n, 1);
	assert_true(corrupt);
	assert_int_equal(sound, 20);
	/* The kernel's end: padding without a delta ends the data, no error. */
	td_put_le32(page + TD_PAGE_HDR_SIZE + 20, TD_RB_TYPE_PADDING);
	n = walk(page, 40, r, &sound, &corrupt);
	assert_int_equal(n, 1);
	assert_false(corrupt);
	assert_int_equal(sound, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated_pages),
		cmocka_unit_test(test_damaged_pages),
		cmocka_unit_test(test_breaks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
