// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the record parser (lib/parse.c): pages are synthesized
 * with lib/pagegen.c, parsed, and what the real stitcher emits is checked.
 * The page under test ends where an inaccessible page begins, so a read
 * past it faults even inside libtraceevent, which ASan does not watch.
 */
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>
#include <event-parse.h>

#include <trace-defer/filetab.h>
#include <trace-defer/pagegen.h>
#include <trace-defer/parse.h>

#include "parse-fixtures.h"
#include "parse-records.h"

#define MAX_OUT		64
#define MAX_IPS		24
#define HOLD_NS		(10ULL * 1000 * 1000)

struct out {
	enum td_status status;
	uint64_t ts;
	int cpu, tid, pid;
	char comm[TD_COMM_LEN];
	char name[32];
	bool has_cookie;
	uint64_t cookie;
	unsigned int nk, nu;
	uint64_t k[MAX_IPS], u[MAX_IPS];
	bool has_files;
	struct td_ufile f[MAX_IPS];
	int us_tgid;			/* what the stack record said */
	uint16_t us_dropped, us_flags;
};

struct ctx {
	struct tep_handle *tep;
	struct td_stitcher *st;
	struct td_parser *p;
	struct td_filetab *ft;		/* NULL unless set up with file identity */
	uint8_t *page;			/* TD_PAGE_SIZE bytes, then a guard page */
	struct td_pagegen pg;
	int nr_out;			/* emitted; the first MAX_OUT are kept */
	struct out out[MAX_OUT];
};

/* ---- helpers ---- */

static uint64_t cookie_of(int cpu, uint32_t n)
{
	return ((uint64_t)(2 * n + 1) << 32) | (uint32_t)(cpu + 1);
}

static void capture(const struct td_event *ev, const struct td_ustack *us, enum td_status status,
		    void *arg)
{
	const struct td_ips *u = NULL;
	struct ctx *c = arg;
	struct out *o;

	assert_non_null(ev->tep_event);
	assert_non_null(ev->raw);
	assert_true(ev->raw_size >= 8);
	if (c->nr_out++ >= MAX_OUT)
		return;
	o = &c->out[c->nr_out - 1];
	memset(o, 0, sizeof(*o));
	o->status = status;
	o->ts = ev->ts;
	o->cpu = ev->cpu;
	o->tid = ev->tid;
	o->pid = ev->pid;
	memcpy(o->comm, ev->comm, TD_COMM_LEN);
	snprintf(o->name, sizeof(o->name), "%s", ev->tep_event->name);
	o->has_cookie = ev->has_cookie;
	o->cookie = ev->cookie;
	assert_true(ev->kstack.nr <= MAX_IPS);
	o->nk = ev->kstack.nr;
	if (o->nk)
		memcpy(o->k, ev->kstack.ips, o->nk * sizeof(uint64_t));
	if (status == TD_INPLACE)
		u = &ev->inplace_stack;
	else if (us)
		u = &us->ips;
	if (u) {
		assert_true(u->nr <= MAX_IPS);
		o->nu = u->nr;
		if (o->nu)
			memcpy(o->u, u->ips, o->nu * sizeof(uint64_t));
	}
	if (us) {
		o->us_tgid = us->tgid;
		o->us_dropped = us->dropped;
		o->us_flags = us->flags;
	}
	if (us && status != TD_INPLACE && us->files) {
		o->has_files = true;
		memcpy(o->f, us->files, o->nu * sizeof(*us->files));
	}
}

static void parse_format(struct tep_handle *tep, const char *fmt, const char *sys)
{
	assert_int_equal(tep_parse_event(tep, fmt, strlen(fmt), sys), TEP_ERRNO__SUCCESS);
}

/* Set by a setup: sched_process_fork's format for the next tep, or none. */
static const char *fork_fmt;

/* @stack_fmt: the user_unwind_stack format (with file fields: the file event too). */
static struct tep_handle *make_tep_layout(bool unwind_events, const char *stack_fmt)
{
	bool files = stack_fmt == fmt_unwind_stack_files || stack_fmt == fmt_unwind_stack_full;
	struct tep_handle *tep = tep_alloc();

	assert_non_null(tep);
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, TD_PAGE_SIZE);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	parse_format(tep, fmt_kernel_stack, "ftrace");
	parse_format(tep, fmt_user_stack, "ftrace");
	if (unwind_events) {
		parse_format(tep, fmt_unwind_cookie, "ftrace");
		parse_format(tep, stack_fmt, "ftrace");
		if (files)
			parse_format(tep, fmt_unwind_file, "ftrace");
	}
	parse_format(tep, fmt_sched_switch, "sched");
	parse_format(tep, fmt_sched_exec, "sched");
	if (fork_fmt)
		parse_format(tep, fork_fmt, "sched");
	parse_format(tep, fmt_sys_enter, "raw_syscalls");
	return tep;
}

static struct tep_handle *make_tep(bool unwind_events)
{
	return make_tep_layout(unwind_events, fmt_unwind_stack);
}

static int setup_layout(void **state, const char *stack_fmt)
{
	bool files = stack_fmt == fmt_unwind_stack_files || stack_fmt == fmt_unwind_stack_full;
	struct td_stitch_config cfg;
	struct ctx *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->tep = make_tep_layout(true, stack_fmt);
	td_stitch_config_default(&cfg);
	c->st = td_stitch_new(&cfg, capture, c);
	assert_non_null(c->st);
	c->p = td_parser_new(c->tep, c->st, 4);
	assert_non_null(c->p);
	c->page = mmap(NULL, 2 * TD_PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(c->page != MAP_FAILED);
	assert_int_equal(mprotect(c->page + TD_PAGE_SIZE, TD_PAGE_SIZE, PROT_NONE), 0);
	if (files) {
		c->ft = td_filetab_new(0);
		assert_non_null(c->ft);
		td_parser_set_filetab(c->p, c->ft);
	}
	*state = c;
	return 0;
}

static int setup(void **state)
{
	return setup_layout(state, fmt_unwind_stack);
}

/* The records of a kernel with file identity, and a file table. */
static int setup_files(void **state)
{
	return setup_layout(state, fmt_unwind_stack_files);
}

/* The stack records of the series as it is now: dropped, flags, tgid. */
static int setup_tgid(void **state)
{
	return setup_layout(state, fmt_unwind_stack_tgid);
}

/* The series' whole layout: tgid and file identity in one record. */
static int setup_full(void **state)
{
	return setup_layout(state, fmt_unwind_stack_full);
}

/* sched_process_fork traced, in the layout of @fmt. */
static int setup_fork_fmt(void **state, const char *fmt)
{
	int ret;

	fork_fmt = fmt;
	ret = setup_layout(state, fmt_unwind_stack);
	fork_fmt = NULL;
	return ret;
}

static int setup_fork(void **state)
{
	return setup_fork_fmt(state, fmt_sched_fork);
}

static int setup_fork_array(void **state)
{
	return setup_fork_fmt(state, fmt_sched_fork_array);
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	td_parser_free(c->p);
	td_stitch_free(c->st);
	td_filetab_free(c->ft);
	tep_free(c->tep);
	munmap(c->page, 2 * TD_PAGE_SIZE);
	free(c);
	return 0;
}

static void page_start(struct ctx *c, uint64_t ts)
{
	td_pagegen_start(&c->pg, c->page, TD_PAGE_SIZE, ts);
}

static void page_add(struct ctx *c, uint64_t ts, const void *rec, unsigned int len)
{
	assert_int_equal(td_pagegen_add(&c->pg, ts, rec, len), 0);
}

/* Close the page and parse it; returns what td_parser_page() returned. */
static int page_parse(struct ctx *c, int cpu)
{
	td_pagegen_finish(&c->pg, false, 0);
	return td_parser_page(c->p, cpu, c->page, TD_PAGE_SIZE);
}

static void flush_all(struct ctx *c)
{
	td_parser_flush(c->p);
	td_stitch_flush(c->st);
}

static struct td_parser_stats stats_of(struct ctx *c)
{
	struct td_parser_stats s;

	td_parser_get_stats(c->p, &s);
	return s;
}

/* ---- record builders (layouts of parse-fixtures.h) ---- */

static unsigned int rec_ustack(uint8_t *b, int pid, int tgid, const uint64_t *ips, int nr)
{
	int i;

	memset(b, 0, 80);
	td_rec_common(b, ID_USER_STACK, pid);
	put32(b + 8, (uint32_t)tgid);
	for (i = 0; i < nr; i++)
		put64(b + 16 + 8 * i, ips[i]);
	return 80;
}

static const uint64_t kips[] = {
	0xffffffff81000010, 0xffffffff81000020, 0xffffffff81000030, 0xffffffff81000040,
	0xffffffff81000050, 0xffffffff81000060, 0xffffffff81000070, 0xffffffff81000080,
	0xffffffff81000090, 0xffffffff810000a0,
};

static const uint64_t uips[] = {
	0x401000, 0x401100, 0x401200, 0x7f0000001000, 0x7f0000002000, 0x7f0000003000,
	0x7f0000004000, 0x7f0000005000, 0x7f0000006000, 0x7f0000007000, 0x7f0000008000,
	0x7f0000009000,
};

static void assert_ips(const uint64_t *got, const uint64_t *want, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		assert_int_equal(got[i], want[i]);
}

/* ---- the parser and the stitcher together ---- */

/* event, kernel_stack, cookie; the deferred stack later: all of it joined. */
static void test_event_kstack_cookie_stitched(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(0, 7);
	struct td_parser_stats s;
	uint8_t r[256];

	page_start(c, 1000);
	page_add(c, 1000, r, rec_sys_enter(r, 100, 39));
	page_add(c, 1010, r, rec_kstack(r, 100, kips, 3));
	page_add(c, 1020, r, rec_cookie(r, 100, ck));
	page_add(c, 5000, r, rec_unwind(r, 100, ck, uips, 4));
	assert_int_equal(page_parse(c, 0), 4);
	flush_all(c);

	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].status, TD_STITCHED);
	assert_int_equal(c->out[0].ts, 1000);
	assert_int_equal(c->out[0].cpu, 0);
	assert_int_equal(c->out[0].tid, 100);
	assert_string_equal(c->out[0].name, "sys_enter");
	assert_true(c->out[0].has_cookie);
	assert_int_equal(c->out[0].cookie, ck);
	assert_int_equal(c->out[0].nk, 3);
	assert_ips(c->out[0].k, kips, 3);
	assert_int_equal(c->out[0].nu, 4);
	assert_ips(c->out[0].u, uips, 4);
	/* A kernel without file identity: no files array. */
	assert_false(c->out[0].has_files);

	s = stats_of(c);
	assert_int_equal(s.records, 4);
	assert_int_equal(s.events, 1);
	assert_int_equal(s.cookies, 1);
	assert_int_equal(s.stacks, 1);
	assert_int_equal(s.bad_records, 0);
	assert_int_equal(s.orphans, 0);
	assert_int_equal(s.pages, 1);
	assert_int_equal(s.last_ts, 5000);
	assert_int_equal(s.bytes, 64 + 40 + 16 + 56);
}

static void test_cookie_without_stack_is_lost(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(1, 3);
	uint8_t r[128];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 200, 0));
	page_add(c, 110, r, rec_cookie(r, 200, ck));
	assert_int_equal(page_parse(c, 1), 2);
	td_parser_flush(c->p);
	/* Handed to the stitcher, which waits for the stack. */
	assert_int_equal(c->nr_out, 0);
	td_stitch_flush(c->st);
	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].status, TD_USER_LOST);
	assert_int_equal(c->out[0].cookie, ck);
	assert_int_equal(c->out[0].cpu, 1);
	assert_int_equal(c->out[0].nu, 0);
}

/* The stack is read from CPU 1 before the event and its cookie on CPU 0. */
static void test_stack_before_cookie_other_cpu(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(0, 11);
	uint8_t r[256];

	page_start(c, 600);
	page_add(c, 600, r, rec_unwind(r, 300, ck, uips, 6));
	assert_int_equal(page_parse(c, 1), 1);
	assert_int_equal(c->nr_out, 0);

	page_start(c, 400);
	page_add(c, 400, r, rec_switch(r, "app", 300, "swapper/0", 0));
	page_add(c, 420, r, rec_kstack(r, 300, kips, 5));
	page_add(c, 450, r, rec_cookie(r, 300, ck));
	assert_int_equal(page_parse(c, 0), 3);
	/* Held: a follower may still come on CPU 0. */
	assert_int_equal(c->nr_out, 0);
	flush_all(c);

	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].status, TD_STITCHED);
	assert_string_equal(c->out[0].name, "sched_switch");
	assert_string_equal(c->out[0].comm, "app");
	assert_int_equal(c->out[0].nk, 5);
	assert_ips(c->out[0].k, kips, 5);
	assert_int_equal(c->out[0].nu, 6);
	assert_ips(c->out[0].u, uips, 6);
}

/*
 * The idle task is <idle> on every event, its switches too (their
 * prev_comm is each CPU's swapper/N): one name, one root in a profile.
 */
static void test_idle_one_name(void **state)
{
	struct ctx *c = *state;
	uint8_t r[256];

	page_start(c, 10);
	page_add(c, 10, r, rec_switch(r, "swapper/1", 0, "app", 300));
	page_add(c, 20, r, rec_sys_enter(r, 0, 1));
	page_add(c, 30, r, rec_switch(r, "app", 300, "swapper/1", 0));
	assert_int_equal(page_parse(c, 1), 3);
	flush_all(c);

	assert_int_equal(c->nr_out, 3);
	assert_int_equal(c->out[0].tid, 0);
	assert_string_equal(c->out[0].comm, "<idle>");
	assert_int_equal(c->out[1].tid, 0);
	assert_string_equal(c->out[1].comm, "<idle>");
	assert_string_equal(c->out[2].comm, "app");
}

static void test_fallback_user_stack_inplace(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];

	page_start(c, 10);
	page_add(c, 10, r, rec_sys_enter(r, 301, 1));
	page_add(c, 11, r, rec_kstack(r, 301, kips, 2));
	page_add(c, 12, r, rec_ustack(r, 301, 299, uips, 3));
	/* A kernel thread: the in-place unwind finds nothing. */
	page_add(c, 20, r, rec_sys_enter(r, 302, 2));
	page_add(c, 21, r, rec_ustack(r, 302, 302, NULL, 0));
	/* All 8 slots used. */
	page_add(c, 30, r, rec_sys_enter(r, 303, 3));
	page_add(c, 31, r, rec_ustack(r, 303, 303, uips, 8));
	assert_int_equal(page_parse(c, 2), 7);
	flush_all(c);

	assert_int_equal(c->nr_out, 3);
	assert_int_equal(c->out[0].status, TD_INPLACE);
	assert_int_equal(c->out[0].tid, 301);
	assert_int_equal(c->out[0].pid, 299);
	assert_int_equal(c->out[0].nk, 2);
	assert_int_equal(c->out[0].nu, 3);
	assert_ips(c->out[0].u, uips, 3);
	assert_false(c->out[0].has_cookie);
	assert_int_equal(c->out[1].status, TD_INPLACE);
	assert_int_equal(c->out[1].nu, 0);
	assert_int_equal(c->out[1].nk, 0);
	assert_int_equal(c->out[2].nu, 8);
	assert_ips(c->out[2].u, uips, 8);
	assert_int_equal(stats_of(c).orphans, 0);
}

/*
 * Two events of one task in a row on one CPU, the first without a
 * follower: the second may be an interrupt's, nested in the first, so the
 * first is held under it; the cookie goes to the newest. Both come out as
 * before, the first without a stack.
 */
static void test_two_events_in_a_row(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(0, 1);
	uint8_t r[128];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 400, 0));
	page_add(c, 200, r, rec_sys_enter(r, 400, 1));
	page_add(c, 210, r, rec_cookie(r, 400, ck));
	assert_int_equal(page_parse(c, 0), 3);
	assert_int_equal(c->nr_out, 0);
	assert_int_equal(td_parser_held_since(c->p), 100);

	page_start(c, 300);
	page_add(c, 300, r, rec_unwind(r, 400, ck, uips, 2));
	assert_int_equal(page_parse(c, 1), 1);
	flush_all(c);
	assert_int_equal(c->nr_out, 2);
	assert_int_equal(c->out[0].status, TD_NO_USER);
	assert_int_equal(c->out[0].ts, 100);
	assert_int_equal(c->out[1].status, TD_STITCHED);
	assert_int_equal(c->out[1].ts, 200);
	assert_int_equal(c->out[1].nu, 2);
	assert_int_equal(stats_of(c).interleaved, 0);
	assert_int_equal(stats_of(c).orphans, 0);
}

/* Several events of one kernel entry share a cookie and one stack. */
static void test_shared_cookie(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(3, 5);
	uint8_t r[128];
	int i;

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 450, 0));
	page_add(c, 101, r, rec_cookie(r, 450, ck));
	page_add(c, 200, r, rec_switch(r, "srv", 450, "idle", 0));
	page_add(c, 201, r, rec_cookie(r, 450, ck));
	page_add(c, 300, r, rec_unwind(r, 450, ck, uips, 3));
	assert_int_equal(page_parse(c, 3), 5);
	flush_all(c);
	assert_int_equal(c->nr_out, 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(c->out[i].status, TD_STITCHED);
		assert_int_equal(c->out[i].nu, 3);
		assert_ips(c->out[i].u, uips, 3);
	}
}

/* Followers of another task belong to no event: counted, never attached. */
static void test_follower_of_other_task(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 500, 0));
	page_add(c, 101, r, rec_cookie(r, 501, cookie_of(0, 1)));
	page_add(c, 102, r, rec_kstack(r, 501, kips, 2));
	page_add(c, 103, r, rec_ustack(r, 501, 501, uips, 2));
	assert_int_equal(page_parse(c, 0), 4);
	flush_all(c);
	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].status, TD_NO_USER);
	assert_int_equal(c->out[0].nk, 0);
	assert_int_equal(stats_of(c).orphans, 3);
	assert_int_equal(stats_of(c).events, 1);
}

/* A second cookie or kernel stack for one event is not attached twice. */
static void test_duplicate_followers(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 520, 0));
	page_add(c, 101, r, rec_kstack(r, 520, kips, 2));
	page_add(c, 102, r, rec_kstack(r, 520, kips + 2, 2));
	page_add(c, 103, r, rec_cookie(r, 520, cookie_of(0, 1)));
	assert_int_equal(page_parse(c, 0), 4);
	flush_all(c);
	/* The second kernel stack ended the event; the cookie found none. */
	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].status, TD_NO_USER);
	assert_int_equal(c->out[0].nk, 2);
	assert_ips(c->out[0].k, kips, 2);
	assert_int_equal(stats_of(c).orphans, 2);
}

/*
 * An interrupt's event between an event and its followers (the first
 * written with interrupts on, the interrupt's event in the same instance):
 * the kernel writes the interrupt's event and its followers first, then
 * the first event's. Each event gets its own kernel stack, both the cookie
 * of the task's kernel entry (an interrupt runs on the task it
 * interrupts), nothing is left over.
 */
static void test_interrupt_event_nested(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(0, 3);
	uint8_t r[256];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 530, 1));
	page_add(c, 101, r, rec_sys_enter(r, 530, 2));	/* the interrupt's */
	page_add(c, 102, r, rec_kstack(r, 530, kips + 4, 3));
	page_add(c, 103, r, rec_cookie(r, 530, ck));
	page_add(c, 104, r, rec_kstack(r, 530, kips, 2));
	page_add(c, 105, r, rec_cookie(r, 530, ck));
	page_add(c, 900, r, rec_unwind(r, 530, ck, uips, 5));
	assert_int_equal(page_parse(c, 0), 7);
	flush_all(c);

	assert_int_equal(c->nr_out, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(c->out[i].status, TD_STITCHED);
		assert_int_equal(c->out[i].cookie, ck);
		assert_int_equal(c->out[i].nu, 5);
		assert_ips(c->out[i].u, uips, 5);
	}
	assert_int_equal(c->out[0].ts, 100);
	assert_int_equal(c->out[0].nk, 2);
	assert_ips(c->out[0].k, kips, 2);
	assert_int_equal(c->out[1].ts, 101);
	assert_int_equal(c->out[1].nk, 3);
	assert_ips(c->out[1].k, kips + 4, 3);
	assert_int_equal(stats_of(c).orphans, 0);
	assert_int_equal(stats_of(c).interleaved, 2);
}

/*
 * A second kernel stack for the interrupted event, after the one that
 * joined across the interrupt's: an orphan, and not counted interleaved.
 */
static void test_stray_kstack_across_nested(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(0, 5);
	uint8_t r[256];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 532, 1));
	page_add(c, 101, r, rec_sys_enter(r, 532, 2));
	page_add(c, 102, r, rec_kstack(r, 532, kips + 4, 3));
	page_add(c, 103, r, rec_cookie(r, 532, ck));
	page_add(c, 104, r, rec_kstack(r, 532, kips, 2));
	page_add(c, 105, r, rec_kstack(r, 532, kips, 3));
	assert_int_equal(page_parse(c, 0), 6);
	flush_all(c);

	assert_int_equal(c->nr_out, 2);
	assert_int_equal(c->out[0].ts, 100);
	assert_int_equal(c->out[0].nk, 2);
	assert_ips(c->out[0].k, kips, 2);
	assert_false(c->out[0].has_cookie);
	assert_int_equal(c->out[1].ts, 101);
	assert_int_equal(c->out[1].nk, 3);
	assert_true(c->out[1].has_cookie);
	assert_int_equal(stats_of(c).orphans, 1);
	assert_int_equal(stats_of(c).interleaved, 1);
}

/* The interrupt came between the kernel stack and the cookie. */
static void test_interrupt_between_followers(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(0, 4);
	uint8_t r[256];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 531, 1));
	page_add(c, 101, r, rec_kstack(r, 531, kips, 2));
	page_add(c, 102, r, rec_sys_enter(r, 531, 2));
	page_add(c, 103, r, rec_kstack(r, 531, kips + 4, 3));
	page_add(c, 104, r, rec_cookie(r, 531, ck));
	page_add(c, 105, r, rec_cookie(r, 531, ck));
	assert_int_equal(page_parse(c, 0), 6);
	flush_all(c);

	assert_int_equal(c->nr_out, 2);
	assert_int_equal(c->out[0].ts, 100);
	assert_int_equal(c->out[0].nk, 2);
	assert_ips(c->out[0].k, kips, 2);
	assert_true(c->out[0].has_cookie);
	assert_int_equal(c->out[1].ts, 102);
	assert_int_equal(c->out[1].nk, 3);
	assert_true(c->out[1].has_cookie);
	/* No stack came: both lost, neither left without its cookie. */
	assert_int_equal(c->out[0].status, TD_USER_LOST);
	assert_int_equal(c->out[1].status, TD_USER_LOST);
	assert_int_equal(stats_of(c).orphans, 0);
	assert_int_equal(stats_of(c).interleaved, 1);
}

/* Three levels (task, softirq, irq), in fallback mode (in-place stacks). */
static void test_interrupts_nested_inplace(void **state)
{
	struct ctx *c = *state;
	uint8_t r[256];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 532, 1));
	page_add(c, 101, r, rec_sys_enter(r, 532, 2));
	page_add(c, 102, r, rec_sys_enter(r, 532, 3));
	page_add(c, 103, r, rec_kstack(r, 532, kips + 6, 1));
	page_add(c, 104, r, rec_ustack(r, 532, 532, uips + 6, 1));
	page_add(c, 105, r, rec_kstack(r, 532, kips + 3, 2));
	page_add(c, 106, r, rec_ustack(r, 532, 532, uips + 3, 2));
	page_add(c, 107, r, rec_kstack(r, 532, kips, 3));
	page_add(c, 108, r, rec_ustack(r, 532, 532, uips, 3));
	/* Then an event of the next task on this CPU: all three go on. */
	page_add(c, 200, r, rec_sys_enter(r, 533, 1));
	assert_int_equal(page_parse(c, 0), 10);
	assert_int_equal(c->nr_out, 3);

	for (int i = 0; i < 3; i++) {
		unsigned int nr = 3 - i, first = 3 * i;

		assert_int_equal(c->out[i].ts, 100 + i);
		assert_int_equal(c->out[i].status, TD_INPLACE);
		assert_int_equal(c->out[i].nk, nr);
		assert_ips(c->out[i].k, kips + first, nr);
		assert_int_equal(c->out[i].nu, nr);
		assert_ips(c->out[i].u, uips + first, nr);
	}
	assert_int_equal(stats_of(c).interleaved, 4);
	assert_int_equal(stats_of(c).orphans, 0);
	flush_all(c);
	assert_int_equal(c->nr_out, 4);
}

/*
 * What the parser cannot tell: an interrupt's event that gets no followers
 * at all (a trigger on the first event only, both events in the instance)
 * takes the first event's, as it did before events were nested. Both
 * followers are the task's own entry's (the cookie) but the kernel stack is
 * the first event's: documented in trace-defer(8), NOTES.
 */
static void test_unfollowed_interrupt_event(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(0, 5);
	uint8_t r[256];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 534, 1));
	page_add(c, 101, r, rec_sys_enter(r, 534, 2));
	page_add(c, 102, r, rec_kstack(r, 534, kips, 2));
	page_add(c, 103, r, rec_cookie(r, 534, ck));
	assert_int_equal(page_parse(c, 0), 4);
	flush_all(c);
	assert_int_equal(c->nr_out, 2);
	assert_int_equal(c->out[0].ts, 100);
	assert_int_equal(c->out[0].nk, 0);
	assert_false(c->out[0].has_cookie);
	assert_int_equal(c->out[1].ts, 101);
	assert_int_equal(c->out[1].nk, 2);
}

/* A task's events that never get a last follower are held at most HOLD_DEPTH deep. */
static void test_hold_depth_bounded(void **state)
{
	struct ctx *c = *state;
	uint8_t r[256];

	page_start(c, 100);
	for (int i = 0; i < 9; i++) {
		page_add(c, 100 + 10 * i, r, rec_sys_enter(r, 535, i));
		page_add(c, 101 + 10 * i, r, rec_kstack(r, 535, kips + i, 1));
	}
	assert_int_equal(page_parse(c, 0), 18);
	/* The ninth came with eight held: those went on, each with its own stack. */
	assert_int_equal(c->nr_out, 8);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(c->out[i].ts, 100 + 10 * i);
		assert_int_equal(c->out[i].nk, 1);
		assert_int_equal(c->out[i].k[0], kips[i]);
	}
	assert_int_equal(td_parser_held_since(c->p), 180);
	/* hold_ns after the oldest held one, it goes on too. */
	td_parser_advance(c->p, 180 + HOLD_NS);
	assert_int_equal(c->nr_out, 9);
	assert_int_equal(td_parser_held_since(c->p), UINT64_MAX);
	assert_int_equal(stats_of(c).orphans, 0);
	assert_int_equal(stats_of(c).interleaved, 0);
}

/* A deferred stack between an event and its cookie does not end the event. */
static void test_unwind_does_not_end_held(void **state)
{
	struct ctx *c = *state;
	uint64_t mine = cookie_of(0, 21), other = cookie_of(1, 9);
	uint8_t r[256];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 600, 0));
	page_add(c, 105, r, rec_unwind(r, 700, other, uips + 5, 2));
	page_add(c, 110, r, rec_cookie(r, 600, mine));
	page_add(c, 900, r, rec_unwind(r, 600, mine, uips, 5));
	assert_int_equal(page_parse(c, 0), 4);
	flush_all(c);
	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].status, TD_STITCHED);
	assert_int_equal(c->out[0].cookie, mine);
	assert_int_equal(c->out[0].nu, 5);
	assert_ips(c->out[0].u, uips, 5);
	assert_int_equal(stats_of(c).stacks, 2);
}

/* An empty deferred stack: the unwind found nothing. */
static void test_unwind_failed(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(2, 2);
	uint8_t r[128];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 650, 0));
	page_add(c, 101, r, rec_cookie(r, 650, ck));
	page_add(c, 150, r, rec_unwind(r, 650, ck, NULL, 0));
	assert_int_equal(page_parse(c, 2), 3);
	flush_all(c);
	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].status, TD_UNWIND_FAILED);
	assert_int_equal(c->out[0].nu, 0);
}

static void test_malformed_records(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(0, 4);
	uint8_t r[256];
	unsigned int n;

	memset(r, 0, sizeof(r));
	page_start(c, 100);
	/* Shorter than the common fields. */
	page_add(c, 100, r, 4);
	/* A sys_enter cut after 12 bytes of its 64. */
	rec_sys_enter(r, 800, 0);
	page_add(c, 101, r, 12);
	/* A sched_switch cut short. */
	rec_switch(r, "a", 800, "b", 801);
	page_add(c, 102, r, 40);
	/* A good event... */
	page_add(c, 110, r, rec_sys_enter(r, 800, 0));
	/* ...kernel stacks claiming more entries than the record holds, or < 0. */
	n = rec_kstack(r, 800, kips, 3);
	put32(r + 8, 100);
	page_add(c, 111, r, n);
	n = rec_kstack(r, 800, kips, 3);
	put32(r + 8, (uint32_t)-1);
	page_add(c, 112, r, n);
	/* A cookie record with 4 bytes of its 8. */
	rec_cookie(r, 800, ck);
	page_add(c, 113, r, 12);
	/* Deferred stacks pointing outside their record, or not whole entries. */
	n = rec_unwind(r, 800, ck, uips, 2);
	put32(r + 16, 800u << 16 | 24);
	page_add(c, 114, r, n);
	n = rec_unwind(r, 800, ck, uips, 2);
	put32(r + 16, 16u << 16 | 0xfff0);
	page_add(c, 115, r, n);
	n = rec_unwind(r, 800, ck, uips, 2);
	put32(r + 16, 12u << 16 | 24);
	page_add(c, 116, r, n);
	/* An exec whose filename lies past the record. */
	page_add(c, 117, r, rec_exec(r, 800, "/bin/true", 10u << 16 | 200));
	/* All skipped as if absent: the good kernel stack and cookie still attach. */
	page_add(c, 120, r, rec_kstack(r, 800, kips, 2));
	page_add(c, 121, r, rec_cookie(r, 800, ck));
	/* A record of an event the tep does not know ends the held event. */
	td_rec_common(r, 999, 800);
	page_add(c, 130, r, 16);
	/* A well-formed exec is an event. */
	page_add(c, 140, r, rec_exec(r, 801, "/bin/true", 0));
	assert_int_equal(page_parse(c, 0), 15);
	flush_all(c);

	assert_int_equal(stats_of(c).bad_records, 10);
	assert_int_equal(stats_of(c).unknown, 1);
	assert_int_equal(stats_of(c).orphans, 0);
	assert_int_equal(c->nr_out, 2);
	/* Flushing orders by the stitcher: the lone exec first, the lost one after. */
	assert_string_equal(c->out[0].name, "sched_process_exec");
	assert_int_equal(c->out[0].status, TD_NO_USER);
	assert_int_equal(c->out[1].status, TD_USER_LOST);
	assert_int_equal(c->out[1].tid, 800);
	assert_int_equal(c->out[1].cookie, ck);
	assert_int_equal(c->out[1].nk, 2);
}

/* Corrupt sub-buffers: cut where they stop making sense, never over-read. */
static void test_corrupt_pages(void **state)
{
	struct ctx *c = *state;
	struct td_parser_stats s;
	uint8_t r[128];
	uint32_t off;

	/* A commit larger than the page. */
	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 900, 0));
	page_add(c, 101, r, rec_sys_enter(r, 900, 1));
	td_pagegen_finish(&c->pg, false, 0);
	put64(c->page + 8, 8000);
	assert_int_equal(td_parser_page(c->p, 0, c->page, TD_PAGE_SIZE), 2);
	/* Followers may have been in what was cut: the last event is not held. */
	assert_int_equal(c->nr_out, 2);

	/* A discarded event whose length points backwards (kbuffer would spin). */
	page_start(c, 200);
	page_add(c, 200, r, rec_sys_enter(r, 900, 2));
	off = TD_PAGE_HDR_SIZE + c->pg.len;
	page_add(c, 201, r, rec_sys_enter(r, 900, 3));
	put32(c->page + off, 1u << 5 | TD_RB_TYPE_PADDING);
	put32(c->page + off + 4, (uint32_t)-4);
	assert_int_equal(page_parse(c, 0), 1);

	/* A long record whose length word runs past the commit. */
	page_start(c, 300);
	page_add(c, 300, r, rec_sys_enter(r, 900, 4));
	off = TD_PAGE_HDR_SIZE + c->pg.len;
	page_add(c, 301, r, rec_unwind(r, 900, 1, uips, 12));
	put32(c->page + off + 4, 4000);
	assert_int_equal(page_parse(c, 0), 1);

	/* A commit that ends inside the last record. */
	page_start(c, 400);
	page_add(c, 400, r, rec_sys_enter(r, 900, 5));
	page_add(c, 401, r, rec_sys_enter(r, 900, 6));
	td_pagegen_finish(&c->pg, false, 0);
	put64(c->page + 8, c->pg.len - 8);
	assert_int_equal(td_parser_page(c->p, 0, c->page, TD_PAGE_SIZE), 1);

	/* A page shorter than its header, a CPU out of range. */
	assert_int_equal(td_parser_page(c->p, 0, c->page, 8), -EINVAL);
	assert_int_equal(td_parser_page(c->p, 4, c->page, TD_PAGE_SIZE), -EINVAL);
	assert_int_equal(td_parser_page(c->p, -1, c->page, TD_PAGE_SIZE), -EINVAL);

	s = stats_of(c);
	assert_int_equal(s.bad_pages, 4);
	assert_int_equal(s.records, 5);
	assert_int_equal(s.pages, 4);
	flush_all(c);
	assert_int_equal(c->nr_out, 5);
}

/* Random and mutated pages: whatever comes in, no crash, no over-read, no hang. */
static void test_fuzzed_pages(void **state)
{
	struct ctx *c = *state;
	struct td_parser_stats s;
	unsigned int seed = 12345;
	uint8_t r[256];
	int i, j, ret;

	for (i = 0; i < 2000; i++) {
		page_start(c, 1000 * i);
		for (j = 0; j < 40; j++) {
			switch (rand_r(&seed) % 4) {
			case 0:
				rec_sys_enter(r, 42, j);
				td_pagegen_add(&c->pg, 1000 * i + j, r, 64);
				break;
			case 1:
				td_pagegen_add(&c->pg, 1000 * i + j, r,
					       rec_kstack(r, 42, kips, rand_r(&seed) % 10));
				break;
			case 2:
				td_pagegen_add(&c->pg, 1000 * i + j, r,
					       rec_cookie(r, 42, cookie_of(0, j)));
				break;
			default:
				td_pagegen_add(&c->pg, 1000 * i + j, r,
					       rec_unwind(r, 42, cookie_of(0, j), uips,
							  rand_r(&seed) % 10));
			}
		}
		td_pagegen_finish(&c->pg, rand_r(&seed) % 2, rand_r(&seed) % 3 - 1);
		if (i % 2) {
			/* Flip bytes of a good page. */
			for (j = 0; j < 1 + i % 16; j++)
				c->page[rand_r(&seed) % TD_PAGE_SIZE] = rand_r(&seed);
		} else {
			for (j = TD_PAGE_HDR_SIZE; j < TD_PAGE_SIZE; j++)
				c->page[j] = rand_r(&seed);
			put64(c->page + 8, rand_r(&seed) % (TD_PAGE_SIZE + 64));
		}
		ret = td_parser_page(c->p, i % 4, c->page, TD_PAGE_SIZE);
		assert_true(ret >= 0 && ret <= (TD_PAGE_SIZE - TD_PAGE_HDR_SIZE) / 4);
	}
	flush_all(c);
	s = stats_of(c);
	assert_int_equal(s.pages, 2000);
	assert_true(s.bad_pages > 0);
	assert_true(s.bad_records > 0);
	/* Every event handed on was emitted exactly once. */
	assert_int_equal(s.events, c->nr_out);
}

/* Lost records before a page: the held event cannot take followers across them. */
static void test_missed_events_page(void **state)
{
	struct ctx *c = *state;
	struct td_parser_stats s;
	uint8_t r[128];

	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 1000, 0));
	assert_int_equal(page_parse(c, 0), 1);
	assert_int_equal(c->nr_out, 0);

	page_start(c, 200);
	page_add(c, 200, r, rec_cookie(r, 1000, cookie_of(0, 1)));
	page_add(c, 300, r, rec_sys_enter(r, 1000, 1));
	td_pagegen_finish(&c->pg, false, 5);
	assert_int_equal(td_parser_page(c->p, 0, c->page, TD_PAGE_SIZE), 2);
	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].status, TD_NO_USER);
	assert_int_equal(c->out[0].ts, 100);

	/* Flagged without a count, and a full page (no room for one). */
	page_start(c, 400);
	page_add(c, 400, r, rec_sys_enter(r, 1000, 2));
	td_pagegen_finish(&c->pg, true, -1);
	assert_int_equal(td_parser_page(c->p, 0, c->page, TD_PAGE_SIZE), 1);
	page_start(c, 500);
	page_add(c, 500, r, rec_sys_enter(r, 1000, 3));
	td_pagegen_finish(&c->pg, true, 9);
	assert_int_equal(td_parser_page(c->p, 0, c->page, TD_PAGE_SIZE), 1);

	/* A full page claiming a stored count that would lie past its end. */
	page_start(c, 600);
	page_add(c, 600, r, rec_sys_enter(r, 1000, 4));
	td_pagegen_finish(&c->pg, true, 0);
	put64(c->page + 8, c->pg.len | TD_PAGE_MISSED_EVENTS | TD_PAGE_MISSED_STORED);
	assert_int_equal(td_parser_page(c->p, 0, c->page, TD_PAGE_SIZE), 1);

	s = stats_of(c);
	assert_int_equal(s.missed_pages, 4);
	assert_int_equal(s.missed_events, 5);
	assert_int_equal(s.orphans, 1);
	assert_int_equal(s.bad_pages, 0);
}

/* Time extends, discarded events, an absolute time stamp, tail padding. */
static void test_timestamps_through_parser(void **state)
{
	static const uint64_t ts[] = {
		1000, 3000 + (1ULL << 27), 5000000000ULL, (1ULL << 40) + 7, (1ULL << 40) + 9,
	};
	struct ctx *c = *state;
	uint8_t r[128];
	int i;

	page_start(c, 1000);
	page_add(c, ts[0], r, rec_sys_enter(r, 1, 0));
	assert_int_equal(td_pagegen_discard(&c->pg, 2000, 64), 0);
	page_add(c, ts[1], r, rec_sys_enter(r, 1, 1));
	page_add(c, ts[2], r, rec_sys_enter(r, 1, 2));
	assert_int_equal(td_pagegen_time_stamp(&c->pg, (1ULL << 40)), 0);
	page_add(c, ts[3], r, rec_sys_enter(r, 1, 3));
	page_add(c, ts[4], r, rec_sys_enter(r, 1, 4));
	assert_true(c->pg.extends >= 2);
	td_pagegen_finish(&c->pg, true, 0);
	assert_int_equal(td_parser_page(c->p, 0, c->page, TD_PAGE_SIZE), 5);
	flush_all(c);
	assert_int_equal(c->nr_out, 5);
	for (i = 0; i < 5; i++)
		assert_int_equal(c->out[i].ts, ts[i]);
	assert_int_equal(stats_of(c).last_ts, ts[4]);
	assert_int_equal(stats_of(c).bad_pages, 0);
}

/* A page ending in a 4-byte null padding: kbuffer must not read past it. */
static void test_null_padding_tail(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];
	int i;

	page_start(c, 1);
	for (i = 0; i < 59; i++)
		page_add(c, 1 + i, r, rec_sys_enter(r, 5, i));
	/* 68 bytes left: a 64-byte discarded event leaves 4. */
	assert_int_equal(td_pagegen_discard(&c->pg, 100, 60), 0);
	assert_int_equal(td_pagegen_room(&c->pg), 4);
	td_pagegen_finish(&c->pg, true, 0);
	assert_int_equal(td_parser_page(c->p, 0, c->page, TD_PAGE_SIZE), 59);
	assert_int_equal(stats_of(c).bad_pages, 0);
}

static void test_advance_hold(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];

	page_start(c, 5000);
	page_add(c, 5000, r, rec_sys_enter(r, 1100, 0));
	assert_int_equal(page_parse(c, 0), 1);
	page_start(c, 7000);
	page_add(c, 7000, r, rec_sys_enter(r, 1101, 0));
	assert_int_equal(page_parse(c, 1), 1);

	td_parser_advance(c->p, 5000 + HOLD_NS - 1);
	assert_int_equal(c->nr_out, 0);
	td_parser_advance(c->p, 5000 + HOLD_NS);
	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].tid, 1100);
	/* An earlier time never hands anything on. */
	td_parser_advance(c->p, 100);
	assert_int_equal(c->nr_out, 1);

	td_parser_set_hold_ns(c->p, 1000);
	td_parser_advance(c->p, 7999);
	assert_int_equal(c->nr_out, 1);
	td_parser_advance(c->p, 8000);
	assert_int_equal(c->nr_out, 2);
	assert_int_equal(c->out[1].tid, 1101);
	assert_int_equal(stats_of(c).events, 2);
}

static void test_comms(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];

	page_start(c, 100);
	page_add(c, 100, r, rec_switch(r, "abcdefghijklmnop", 1200, "app", 1201));
	page_add(c, 200, r, rec_sys_enter(r, 1201, 0));
	page_add(c, 300, r, rec_sys_enter(r, 1200, 0));
	page_add(c, 400, r, rec_sys_enter(r, 1202, 0));
	page_add(c, 500, r, rec_switch(r, "renamed", 1201, "x", 0));
	assert_int_equal(page_parse(c, 0), 5);
	flush_all(c);
	assert_int_equal(c->nr_out, 5);
	/* A full 16-byte comm is cut to fit with its NUL. */
	assert_string_equal(c->out[0].comm, "abcdefghijklmno");
	assert_string_equal(c->out[1].comm, "app");
	assert_string_equal(c->out[2].comm, "abcdefghijklmno");
	assert_string_equal(c->out[3].comm, "<...>");
	/* sched_switch always names its own task from the record. */
	assert_string_equal(c->out[4].comm, "renamed");
}

/*
 * A thread is called what the last switch said: exec renames a task, and
 * a reused tid is another task. The names are the parser's own: the tep's
 * comm table (every pid ever seen, sorted on insert) is not grown.
 */
static void test_comms_latest(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];

	page_start(c, 100);
	page_add(c, 100, r, rec_switch(r, "bash", 1500, "x", 1501));
	page_add(c, 200, r, rec_sys_enter(r, 1500, 0));
	/* 1500 execs "true" (or exits and its tid is handed out again). */
	page_add(c, 300, r, rec_switch(r, "true", 1500, "x", 1501));
	page_add(c, 400, r, rec_sys_enter(r, 1500, 0));
	/* A tid sharing 1500's slot takes it: 1500 is unknown, not "other". */
	page_add(c, 500, r, rec_switch(r, "other", 1500 + 65536, "x", 1501));
	page_add(c, 600, r, rec_sys_enter(r, 1500, 0));
	page_add(c, 700, r, rec_sys_enter(r, 1501, 0));
	assert_int_equal(page_parse(c, 0), 7);
	flush_all(c);
	assert_int_equal(c->nr_out, 7);
	assert_string_equal(c->out[1].comm, "bash");
	assert_string_equal(c->out[3].comm, "true");
	assert_string_equal(c->out[5].comm, "<...>");
	assert_string_equal(c->out[6].comm, "x");
	assert_false(tep_is_pid_registered(c->tep, 1500));
	assert_false(tep_is_pid_registered(c->tep, 1501));
}

/* A comm hook that names tid 1301 "first", then "second"; no other tid. */
static int comm_asked;
static bool fake_comm(int tid, char *comm, void *arg)
{
	(void)arg;
	if (tid != 1301)
		return false;
	strcpy(comm, comm_asked++ ? "second" : "first");
	return true;
}

/*
 * Live: a thread no record named is named by the comm hook (/proc), asked
 * once, then again a second (2^30 ns) of trace time later, as it may have
 * exec'd; the tep's names are not used then (read at start, a reused pid's
 * would be wrong); a record's name wins over the hook's.
 */
static void test_comms_hook(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];

	comm_asked = 0;
	assert_int_equal(tep_register_comm(c->tep, "stale", 1302), 0);
	td_parser_set_comm_fn(c->p, fake_comm, NULL);
	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 1301, 0));
	page_add(c, 200, r, rec_sys_enter(r, 1301, 0));
	page_add(c, 300, r, rec_sys_enter(r, 1302, 0));
	page_add(c, (1ULL << 30) + 400, r, rec_sys_enter(r, 1301, 0));
	page_add(c, (1ULL << 30) + 500, r, rec_switch(r, "switched", 1301, "x", 0));
	page_add(c, (1ULL << 30) + 600, r, rec_sys_enter(r, 1301, 0));
	assert_int_equal(page_parse(c, 0), 6);
	flush_all(c);
	assert_int_equal(c->nr_out, 6);
	assert_string_equal(c->out[0].comm, "first");
	assert_string_equal(c->out[1].comm, "first");
	assert_string_equal(c->out[2].comm, "<...>");
	assert_string_equal(c->out[3].comm, "second");
	assert_string_equal(c->out[4].comm, "switched");
	assert_string_equal(c->out[5].comm, "switched");
	assert_int_equal(comm_asked, 2);
}

/* sched_process_exec, when traced, renames its task at once: no switch needed. */
static void test_comms_exec(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];

	page_start(c, 100);
	page_add(c, 100, r, rec_switch(r, "x", 1501, "bash", 1600));
	page_add(c, 200, r, rec_sys_enter(r, 1600, 0));
	page_add(c, 300, r, rec_exec(r, 1600, "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus-long-name", 0));
	page_add(c, 400, r, rec_sys_enter(r, 1600, 0));
	page_add(c, 500, r, rec_exec(r, 1600, "make", 0));
	page_add(c, 600, r, rec_sys_enter(r, 1600, 0));
	/* A filename ending in '/' names nothing: the last name stays. */
	page_add(c, 700, r, rec_exec(r, 1600, "/odd/", 0));
	page_add(c, 800, r, rec_sys_enter(r, 1600, 0));
	/* fexecve(): the kernel names it after the file, not "3": unknown here. */
	page_add(c, 900, r, rec_exec(r, 1600, "/dev/fd/3", 0));
	page_add(c, 1000, r, rec_sys_enter(r, 1600, 0));
	assert_int_equal(page_parse(c, 0), 10);
	flush_all(c);
	assert_int_equal(c->nr_out, 10);
	assert_string_equal(c->out[1].comm, "bash");
	assert_string_equal(c->out[2].comm, "cc1plus-long-na");
	assert_string_equal(c->out[3].comm, "cc1plus-long-na");
	assert_string_equal(c->out[4].comm, "make");
	assert_string_equal(c->out[5].comm, "make");
	assert_string_equal(c->out[7].comm, "make");
	assert_string_equal(c->out[9].comm, "<...>");
}

static const struct out *out_at(const struct ctx *c, uint64_t ts)
{
	for (int i = 0; i < c->nr_out && i < MAX_OUT; i++)
		if (c->out[i].ts == ts)
			return &c->out[i];
	return NULL;
}

/* /proc's name of any task now: what a forked shell child is once it exec'd. */
static int fork_asked;
static bool comm_now_true(int tid, char *comm, void *arg)
{
	(void)arg;
	(void)tid;
	fork_asked++;
	strcpy(comm, "true");
	return true;
}

/*
 * Live, a child is named as its parent from its fork on (child_comm), not
 * asked of the hook (/proc, where it may run its next program by now);
 * its exec renames it. Both layouts of sched_process_fork's names:
 * __data_loc strings (Linux 6.10 on) and char[16] arrays (before).
 */
static void check_fork_names(struct ctx *c, unsigned int (*rec)(uint8_t *, const char *, int,
								  const char *, int))
{
	uint8_t r[128];

	fork_asked = 0;
	td_parser_set_comm_fn(c->p, comm_now_true, NULL);
	page_start(c, 100);
	page_add(c, 100, r, rec_switch(r, "bash", 1600, "x", 1501));
	/* The child's name differs from its parent's only here: child_comm is read. */
	page_add(c, 200, r, rec(r, "bash", 1600, "bash-child", 1700));
	page_add(c, 300, r, rec_sys_enter(r, 1700, 0));
	page_add(c, 400, r, rec_exec(r, 1700, "/usr/bin/make", 0));
	page_add(c, 500, r, rec_sys_enter(r, 1700, 0));
	assert_int_equal(page_parse(c, 0), 5);
	flush_all(c);
	assert_int_equal(c->nr_out, 5);
	assert_string_equal(out_at(c, 200)->name, "sched_process_fork");
	assert_string_equal(out_at(c, 200)->comm, "bash");
	assert_string_equal(out_at(c, 300)->comm, "bash-child");
	assert_string_equal(out_at(c, 500)->comm, "make");
	assert_int_equal(fork_asked, 0);
}

static void test_comms_fork(void **state)
{
	check_fork_names(*state, rec_fork);
}

static void test_comms_fork_array(void **state)
{
	check_fork_names(*state, rec_fork_array);
}

/*
 * The fork just before a period of the hook's names ends, the child's
 * first record just after: still the parent's name, the hook not asked
 * (t_comm saw one of 31 children named "true" so, once in CI).
 */
static void test_comms_fork_across_period(void **state)
{
	struct ctx *c = *state;
	const uint64_t end = 1ULL << 30;
	uint8_t r[128];

	fork_asked = 0;
	td_parser_set_comm_fn(c->p, comm_now_true, NULL);
	page_start(c, end - 200);
	page_add(c, end - 200, r, rec_switch(r, "x", 1501, "bash", 1600));
	page_add(c, end - 100, r, rec_fork(r, "bash", 1600, "bash", 1700));
	page_add(c, end + 100, r, rec_sys_enter(r, 1700, 0));
	/* A period later the hook is asked again (the thread may have renamed itself). */
	page_add(c, 2 * end + 100, r, rec_sys_enter(r, 1700, 0));
	assert_int_equal(page_parse(c, 0), 4);
	flush_all(c);
	assert_string_equal(out_at(c, end + 100)->comm, "bash");
	assert_string_equal(out_at(c, 2 * end + 100)->comm, "true");
	assert_int_equal(fork_asked, 1);
}

/*
 * A batch of two CPUs' pages, read CPU 0 first: the records come out by
 * time, so the exec read on CPU 1 names the task's later events on CPU 0,
 * and each CPU's held event waits for its own CPU's next record.
 */
static void test_pages_merged(void **state)
{
	struct ctx *c = *state;
	uint8_t *pg0 = malloc(TD_PAGE_SIZE), *pg1 = malloc(TD_PAGE_SIZE), *pg2 = malloc(TD_PAGE_SIZE);
	struct td_page_ref refs[4];
	struct td_pagegen g;
	uint64_t want_ts[] = { 100, 200, 300, 400, 500, 600, 700, 800 };
	struct td_parser_stats s;
	uint8_t r[128];
	int i;

	assert_true(pg0 && pg1 && pg2);
	/* CPU 0: the task runs "bash", moves to CPU 1 to exec, comes back. */
	td_pagegen_start(&g, pg0, TD_PAGE_SIZE, 100);
	assert_int_equal(td_pagegen_add(&g, 100, r, rec_switch(r, "x", 1501, "bash", 1600)), 0);
	assert_int_equal(td_pagegen_add(&g, 300, r, rec_sys_enter(r, 1600, 0)), 0);
	td_pagegen_finish(&g, false, 0);
	td_pagegen_start(&g, pg1, TD_PAGE_SIZE, 500);
	assert_int_equal(td_pagegen_add(&g, 500, r, rec_sys_enter(r, 1600, 0)), 0);
	assert_int_equal(td_pagegen_add(&g, 700, r, rec_sys_enter(r, 1600, 0)), 0);
	td_pagegen_finish(&g, false, 0);
	/* CPU 1: the exec, and another task. */
	td_pagegen_start(&g, pg2, TD_PAGE_SIZE, 200);
	assert_int_equal(td_pagegen_add(&g, 200, r, rec_exec(r, 1600, "/usr/bin/make", 0)), 0);
	assert_int_equal(td_pagegen_add(&g, 400, r, rec_sys_enter(r, 1700, 0)), 0);
	assert_int_equal(td_pagegen_add(&g, 600, r, rec_sys_enter(r, 1700, 0)), 0);
	assert_int_equal(td_pagegen_add(&g, 800, r, rec_sys_enter(r, 1700, 0)), 0);
	td_pagegen_finish(&g, false, 0);
	refs[0] = (struct td_page_ref){ 0, pg0, TD_PAGE_SIZE };
	refs[1] = (struct td_page_ref){ 0, pg1, TD_PAGE_SIZE };
	refs[2] = (struct td_page_ref){ 1, pg2, TD_PAGE_SIZE };

	/* A bad page anywhere: nothing parsed. */
	refs[3] = (struct td_page_ref){ 4, pg2, TD_PAGE_SIZE };
	assert_int_equal(td_parser_pages(c->p, refs, 4), -EINVAL);
	refs[3] = (struct td_page_ref){ 1, pg2, 8 };
	assert_int_equal(td_parser_pages(c->p, refs, 4), -EINVAL);
	assert_int_equal(stats_of(c).records, 0);
	assert_int_equal(td_parser_pages(c->p, refs, 0), 0);

	assert_int_equal(td_parser_pages(c->p, refs, 3), 8);
	flush_all(c);
	assert_int_equal(c->nr_out, 8);
	/* Emitted as they complete (a task's events stack up): found by time. */
	for (i = 0; i < 8; i++)
		assert_non_null(out_at(c, want_ts[i]));
	assert_int_equal(out_at(c, 100)->cpu, 0);
	assert_int_equal(out_at(c, 200)->cpu, 1);
	assert_string_equal(out_at(c, 100)->comm, "x");
	/* Before: CPU 0 read whole first, these were "bash". */
	assert_string_equal(out_at(c, 300)->comm, "make");
	assert_string_equal(out_at(c, 500)->comm, "make");
	assert_string_equal(out_at(c, 700)->comm, "make");
	s = stats_of(c);
	assert_int_equal(s.pages, 3);
	assert_int_equal(s.records, 8);

	/* One CPU's pages alone, or a CPU's pages apart in the batch: in their order. */
	c->nr_out = 0;
	refs[0] = (struct td_page_ref){ 0, pg1, TD_PAGE_SIZE };
	refs[1] = (struct td_page_ref){ 1, pg2, TD_PAGE_SIZE };
	refs[2] = (struct td_page_ref){ 0, pg0, TD_PAGE_SIZE };
	assert_int_equal(td_parser_pages(c->p, refs, 3), 8);
	flush_all(c);
	assert_int_equal(c->nr_out, 8);
	/* CPU 0's 500 and 700 first (their page came first), then its 100 and 300. */
	assert_int_equal(c->out[0].ts, 200);
	for (i = 0, s.records = 0; i < 8; i++)
		if (c->out[i].cpu == 0)
			want_ts[s.records++] = c->out[i].ts;
	assert_int_equal(s.records, 4);
	assert_int_equal(want_ts[0], 500);
	assert_int_equal(want_ts[1], 700);
	assert_int_equal(want_ts[2], 100);
	assert_int_equal(want_ts[3], 300);

	/* A CPU whose pages hold no record: each page opened once all the same. */
	s = stats_of(c);
	td_pagegen_start(&g, pg0, TD_PAGE_SIZE, 900);
	td_pagegen_finish(&g, false, 0);
	td_pagegen_start(&g, pg1, TD_PAGE_SIZE, 1000);
	td_pagegen_finish(&g, false, 0);
	td_pagegen_start(&g, pg2, TD_PAGE_SIZE, 950);
	assert_int_equal(td_pagegen_add(&g, 950, r, rec_sys_enter(r, 1600, 0)), 0);
	td_pagegen_finish(&g, false, 0);
	refs[0] = (struct td_page_ref){ 1, pg0, TD_PAGE_SIZE };
	refs[1] = (struct td_page_ref){ 0, pg2, TD_PAGE_SIZE };
	refs[2] = (struct td_page_ref){ 1, pg1, TD_PAGE_SIZE };
	assert_int_equal(td_parser_pages(c->p, refs, 3), 1);
	assert_int_equal(stats_of(c).pages, s.pages + 3);
	assert_int_equal(stats_of(c).records, s.records + 1);
	free(pg0);
	free(pg1);
	free(pg2);
}

/*
 * A round of reads that began at 250: CPU 0 read first, its fork at 200
 * not yet written; CPU 1 read after, the child's first record (300) in.
 * With the round's start as the cut, the child's record waits (copied:
 * the reader reuses its buffers) for the next round, which brings the
 * fork: the child is named as its parent, not asked of /proc, where it
 * runs another program by now. What the last round kept is parsed before
 * a page handed on alone, and at the end.
 */
static void test_pages_cut(void **state)
{
	struct ctx *c = *state;
	uint8_t *pg0 = malloc(TD_PAGE_SIZE), *pg1 = malloc(TD_PAGE_SIZE);
	struct td_page_ref refs[2];
	struct td_pagegen g;
	uint8_t r[128];

	assert_true(pg0 && pg1);
	fork_asked = 0;
	td_parser_set_comm_fn(c->p, comm_now_true, NULL);
	td_pagegen_start(&g, pg0, TD_PAGE_SIZE, 100);
	assert_int_equal(td_pagegen_add(&g, 100, r, rec_switch(r, "x", 1501, "bash", 1600)), 0);
	td_pagegen_finish(&g, false, 0);
	td_pagegen_start(&g, pg1, TD_PAGE_SIZE, 300);
	assert_int_equal(td_pagegen_add(&g, 300, r, rec_sys_enter(r, 1700, 0)), 0);
	assert_int_equal(td_pagegen_add(&g, 310, r, rec_sys_enter(r, 1700, 0)), 0);
	td_pagegen_finish(&g, false, 0);
	refs[0] = (struct td_page_ref){ 0, pg0, TD_PAGE_SIZE };
	refs[1] = (struct td_page_ref){ 1, pg1, TD_PAGE_SIZE };
	assert_int_equal(td_parser_pages_until(c->p, refs, 2, 250), 1);
	assert_int_equal(td_parser_held_since(c->p), 100);
	memset(pg1, 0xff, TD_PAGE_SIZE);

	/* The next round: the fork, the parent's next record, the child's next page. */
	td_pagegen_start(&g, pg0, TD_PAGE_SIZE, 200);
	assert_int_equal(td_pagegen_add(&g, 200, r, rec_fork(r, "bash", 1600, "bash", 1700)), 0);
	assert_int_equal(td_pagegen_add(&g, 400, r, rec_sys_enter(r, 1600, 0)), 0);
	td_pagegen_finish(&g, false, 0);
	td_pagegen_start(&g, pg1, TD_PAGE_SIZE, 500);
	assert_int_equal(td_pagegen_add(&g, 500, r, rec_sys_enter(r, 1700, 0)), 0);
	td_pagegen_finish(&g, false, 0);
	assert_int_equal(td_parser_pages_until(c->p, refs, 2, 450), 4);
	/* 500 waits: the oldest not handed on is no later than it. */
	assert_true(td_parser_held_since(c->p) <= 500);

	/* A page alone (a short read's fallback): after what was kept. */
	td_pagegen_start(&g, pg0, TD_PAGE_SIZE, 600);
	assert_int_equal(td_pagegen_add(&g, 600, r, rec_sys_enter(r, 1700, 0)), 0);
	td_pagegen_finish(&g, false, 0);
	assert_int_equal(td_parser_page(c->p, 0, pg0, TD_PAGE_SIZE), 1);
	/* Kept again at the next cut, then parsed at the end. */
	td_pagegen_start(&g, pg1, TD_PAGE_SIZE, 700);
	assert_int_equal(td_pagegen_add(&g, 700, r, rec_sys_enter(r, 1600, 0)), 0);
	td_pagegen_finish(&g, false, 0);
	assert_int_equal(td_parser_pages_until(c->p, &refs[1], 1, 650), 0);
	flush_all(c);

	assert_int_equal(c->nr_out, 8);
	assert_int_equal(out_at(c, 300)->cpu, 1);
	assert_string_equal(out_at(c, 300)->comm, "bash");
	assert_string_equal(out_at(c, 310)->comm, "bash");
	assert_string_equal(out_at(c, 500)->comm, "bash");
	assert_string_equal(out_at(c, 600)->comm, "bash");
	assert_string_equal(out_at(c, 700)->comm, "bash");
	assert_int_equal(out_at(c, 700)->tid, 1600);
	assert_int_equal(fork_asked, 0);
	/* Each page opened once, kept or not. */
	assert_int_equal(stats_of(c).pages, 6);
	assert_int_equal(stats_of(c).records, 8);
	assert_int_equal(td_parser_held_since(c->p), UINT64_MAX);
	free(pg0);
	free(pg1);
}

/* The order a merge reads records in, told by the fork hook (called as each is read). */
struct read_order {
	int n;
	int child[32];
};

static void order_event(struct td_event *ev, void *arg)
{
	(void)arg;
	td_event_free(ev);
}

static void order_stack(struct td_ustack *us, void *arg)
{
	(void)arg;
	td_ustack_free(us);
}

static void order_fork(int tid, int child, uint64_t ts, void *arg)
{
	struct read_order *o = arg;

	(void)tid;
	(void)ts;
	if (o->n < 32)
		o->child[o->n++] = child;
}

/* One page of @cpu's forks at @ts[0..n), each child named ts * 10 + cpu. */
static void fork_page(uint8_t *pg, int cpu, const uint64_t *ts, int n)
{
	struct td_pagegen g;
	uint8_t r[128];

	td_pagegen_start(&g, pg, TD_PAGE_SIZE, ts[0]);
	for (int i = 0; i < n; i++)
		assert_int_equal(td_pagegen_add(&g, ts[i], r,
						rec_fork(r, "p", 1000 + cpu, "c", (int)ts[i] * 10 + cpu)),
				 0);
	td_pagegen_finish(&g, false, 0);
}

/*
 * A merge reads the CPUs' records oldest first, a CPU in runs as long as
 * it stays oldest: on a tie the CPU met first in the batch goes first,
 * records of one CPU keep their order, across its pages too, and a run
 * stops at the cut. CPU 1's page comes first in the batch, so its 300
 * goes before CPU 0's two, and those before CPU 2's.
 */
static void test_pages_merge_order(void **state)
{
	static const uint64_t c0a[] = { 100, 200 }, c0b[] = { 300, 300, 500 };
	static const uint64_t c1[] = { 150, 300, 310, 320 }, c2[] = { 300, 600 };
	static const int want[] = { 1000, 1501, 2000, 3001, 3000, 3000, 3002, 3101, 3201, 5000,
				    6002 };
	struct ctx *c = *state;
	struct read_order o = { 0 };
	struct td_parser_out out = { .event = order_event, .stack = order_stack,
				     .fork = order_fork, .arg = &o };
	uint8_t *pg[4];
	struct td_page_ref refs[4];
	struct td_parser *p;
	int i;

	for (i = 0; i < 4; i++) {
		pg[i] = malloc(TD_PAGE_SIZE);
		assert_non_null(pg[i]);
	}
	p = td_parser_new_out(c->tep, &out, 4);
	assert_non_null(p);
	fork_page(pg[0], 1, c1, 4);
	fork_page(pg[1], 0, c0a, 2);
	fork_page(pg[2], 2, c2, 2);
	fork_page(pg[3], 0, c0b, 3);
	refs[0] = (struct td_page_ref){ 1, pg[0], TD_PAGE_SIZE };
	refs[1] = (struct td_page_ref){ 0, pg[1], TD_PAGE_SIZE };
	refs[2] = (struct td_page_ref){ 2, pg[2], TD_PAGE_SIZE };
	refs[3] = (struct td_page_ref){ 0, pg[3], TD_PAGE_SIZE };

	/* Cut at 310: 310 and later wait, copied, for the next call. */
	assert_int_equal(td_parser_pages_until(p, refs, 4, 310), 7);
	assert_int_equal(o.n, 7);
	for (i = 0; i < 4; i++)
		memset(pg[i], 0xff, TD_PAGE_SIZE);
	assert_int_equal(td_parser_pages(p, refs, 0), 4);
	assert_int_equal(o.n, 11);
	for (i = 0; i < 11; i++)
		assert_int_equal(o.child[i], want[i]);

	/* Without a cut, the same order in one call. */
	fork_page(pg[0], 1, c1, 4);
	fork_page(pg[1], 0, c0a, 2);
	fork_page(pg[2], 2, c2, 2);
	fork_page(pg[3], 0, c0b, 3);
	o.n = 0;
	assert_int_equal(td_parser_pages(p, refs, 4), 11);
	for (i = 0; i < 11; i++)
		assert_int_equal(o.child[i], want[i]);
	td_parser_flush(p);
	td_parser_free(p);
	for (i = 0; i < 4; i++)
		free(pg[i]);
}

static int hook_calls;

/* The comm hook of a task gone at first (false), then "renamed". */
static bool gone_then_renamed(int tid, char *comm, void *arg)
{
	(void)arg;
	if (tid != 1800 || !hook_calls++)
		return false;
	strcpy(comm, "renamed");
	return true;
}

/*
 * An exec traced only for names gives a name for a while, as the hook
 * does: then the hook is asked again (the task may have renamed itself,
 * its tid be another task's), and a task gone keeps the exec's name.
 */
static void test_exec_names_expire(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];

	hook_calls = 0;
	assert_non_null(td_parser_set_exec_names_only(c->p));
	td_parser_set_comm_fn(c->p, gone_then_renamed, NULL);
	page_start(c, 100);
	page_add(c, 100, r, rec_exec(r, 1800, "/usr/bin/cc", 0));
	page_add(c, 200, r, rec_sys_enter(r, 1800, 0));
	page_add(c, (1ULL << 30) + 300, r, rec_sys_enter(r, 1800, 0));
	page_add(c, (2ULL << 30) + 400, r, rec_sys_enter(r, 1800, 0));
	assert_int_equal(page_parse(c, 0), 4);
	flush_all(c);
	assert_int_equal(c->nr_out, 3);
	assert_string_equal(c->out[0].comm, "cc");
	assert_string_equal(c->out[1].comm, "cc");	/* asked: gone */
	assert_string_equal(c->out[2].comm, "renamed");
	assert_int_equal(hook_calls, 2);
}

/* td_exec_comm(): the name exec gives, as the kernel gives it (base name, 15 bytes). */
static void test_exec_comm(void **state)
{
	static const struct {
		const char *file;
		size_t len;
		int ret;
		const char *comm;
	} cases[] = {
		{ "/usr/bin/cat", 12, 1, "cat" },
		{ "cat", 3, 1, "cat" },
		{ "./a/b/prog", 10, 1, "prog" },
		{ "/x/abcdefghijklmnopq", 20, 1, "abcdefghijklmno" },	/* cut to 15 */
		{ "/usr/bin/cat\0junk", 17, 1, "cat" },			/* the NUL ends it */
		{ "/usr/bin/catalog", 12, 1, "cat" },			/* so does @len */
		{ "/dev/fd/3", 9, -1, NULL },				/* fexecve() */
		{ "/dev/fd/", 8, 0, NULL },				/* no descriptor */
		{ "/usr/bin/", 9, 0, NULL },
		{ "", 0, 0, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char comm[TD_COMM_LEN], want[TD_COMM_LEN] = { 0 };
		int ret;

		memset(comm, 'x', sizeof(comm));
		ret = td_exec_comm(cases[i].file, cases[i].len, comm);
		assert_int_equal(ret, cases[i].ret);
		if (ret <= 0) {
			assert_int_equal(comm[0], 'x');	/* untouched */
			continue;
		}
		strcpy(want, cases[i].comm);
		assert_memory_equal(comm, want, TD_COMM_LEN);	/* zero after the name */
	}
}

/*
 * sched_process_exec traced only to name tasks: it names them all the
 * same, is counted apart and not handed on, unless a deferred stack
 * follows it (it has a cookie), which must find it.
 */
static void test_exec_names_only(void **state)
{
	struct ctx *c = *state;
	struct td_parser_stats s;
	uint64_t ips[] = { 0x401000, 0x402000 };
	uint8_t r[256];

	assert_non_null(td_parser_set_exec_names_only(c->p));
	page_start(c, 100);
	page_add(c, 100, r, rec_switch(r, "x", 1701, "bash", 1700));
	page_add(c, 200, r, rec_exec(r, 1700, "/usr/bin/cc", 0));
	page_add(c, 300, r, rec_sys_enter(r, 1700, 0));
	page_add(c, 400, r, rec_exec(r, 1700, "/usr/bin/ld", 0));
	page_add(c, 401, r, rec_cookie(r, 1700, cookie_of(0, 1)));
	page_add(c, 500, r, rec_sys_enter(r, 1700, 0));
	page_add(c, 600, r, rec_unwind(r, 1700, cookie_of(0, 1), ips, 2));
	/* With its kernel and in-place stacks (options): freed with them. */
	page_add(c, 700, r, rec_exec(r, 1700, "/usr/bin/as", 0));
	page_add(c, 701, r, rec_kstack(r, 1700, ips, 2));
	page_add(c, 702, r, rec_ustack(r, 1700, 1700, ips, 2));
	assert_int_equal(page_parse(c, 0), 10);
	flush_all(c);
	s = stats_of(c);
	assert_int_equal(s.events, 3);		/* the switch and the two sys_enter */
	assert_int_equal(s.naming_events, 3);
	assert_int_equal(s.orphans, 0);
	/* Handed on: the switch, the sys_enters and the exec that met its stack. */
	assert_int_equal(c->nr_out, 4);
	assert_string_equal(c->out[1].name, "sys_enter");
	assert_string_equal(c->out[1].comm, "cc");
	assert_string_equal(c->out[2].name, "sched_process_exec");
	assert_int_equal(c->out[2].status, TD_STITCHED);
	assert_string_equal(c->out[3].comm, "ld");
}

static int tgid_of(int tid, void *arg)
{
	int *calls = arg;

	(*calls)++;
	return tid - tid % 10;
}

static void test_tgid_fn(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];
	int calls = 0;

	td_parser_set_tgid_fn(c->p, tgid_of, &calls);
	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 1305, 0));
	page_add(c, 101, r, rec_sys_enter(r, 1317, 0));
	assert_int_equal(page_parse(c, 0), 2);
	flush_all(c);
	assert_int_equal(calls, 2);
	assert_int_equal(c->out[0].pid, 1300);
	assert_int_equal(c->out[1].pid, 1310);
}

/*
 * An in-place user_stack record says the tgid: /proc is not asked (the tid
 * may be gone or reused by then); an event without one still is, once.
 */
static void test_tgid_from_record(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];
	int calls = 0;

	td_parser_set_tgid_fn(c->p, tgid_of, &calls);
	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 1405, 0));
	page_add(c, 101, r, rec_kstack(r, 1405, kips, 2));
	page_add(c, 102, r, rec_ustack(r, 1405, 1399, uips, 3));
	page_add(c, 200, r, rec_sys_enter(r, 1417, 0));
	page_add(c, 201, r, rec_kstack(r, 1417, kips, 2));
	assert_int_equal(page_parse(c, 0), 5);
	flush_all(c);
	assert_int_equal(c->nr_out, 2);
	assert_int_equal(c->out[0].pid, 1399);
	assert_int_equal(c->out[1].pid, 1410);
	assert_int_equal(calls, 1);
}

/*
 * A deferred stack record that says its tgid: the events waiting for it
 * do not ask /proc (the process may be gone by then, or by read time);
 * an event that made no request still does. The cut count and the flags
 * come through too.
 */
static void test_tgid_from_stack(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(0, 5);
	uint8_t r[256];
	int calls = 0;

	td_parser_set_tgid_fn(c->p, tgid_of, &calls);
	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 1507, 0));
	page_add(c, 101, r, rec_cookie(r, 1507, ck));
	page_add(c, 102, r, rec_sys_enter(r, 1508, 0));	/* no request */
	page_add(c, 103, r, rec_unwind_tgid(r, 1507, ck, uips, 3, 2, TD_USTACK_EXEC, 1499));
	assert_int_equal(page_parse(c, 0), 4);
	flush_all(c);
	assert_int_equal(c->nr_out, 2);
	assert_int_equal(calls, 1);
	/* Emitted when its stack came; the other one when the flush handed it on. */
	assert_int_equal(c->out[0].tid, 1507);
	assert_int_equal(c->out[0].status, TD_USER_LOST);	/* the exec mark */
	assert_int_equal(c->out[0].pid, 1499);	/* not asked: the stack said it */
	assert_int_equal(c->out[0].us_tgid, 1499);
	assert_int_equal(c->out[0].us_dropped, 2);
	assert_int_equal(c->out[0].us_flags, TD_USTACK_EXEC);
	assert_int_equal(c->out[0].nu, 3);
	assert_int_equal(c->out[1].tid, 1508);
	assert_int_equal(c->out[1].pid, 1500);
}

/* Older stack records (no tgid field): the waiting event asks /proc, as before. */
static void test_tgid_no_field(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(0, 6);
	uint8_t r[256];
	int calls = 0;

	td_parser_set_tgid_fn(c->p, tgid_of, &calls);
	page_start(c, 100);
	page_add(c, 100, r, rec_sys_enter(r, 1607, 0));
	page_add(c, 101, r, rec_cookie(r, 1607, ck));
	page_add(c, 102, r, rec_sys_enter(r, 1608, 0));
	page_add(c, 103, r, rec_unwind(r, 1607, ck, uips, 3));
	assert_int_equal(page_parse(c, 0), 4);
	flush_all(c);
	assert_int_equal(c->nr_out, 2);
	assert_int_equal(calls, 2);
	assert_int_equal(c->out[0].status, TD_STITCHED);
	assert_int_equal(c->out[0].pid, 1600);
	assert_int_equal(c->out[0].us_tgid, 0);
}

/* Records one at a time, as libtracecmd hands them out of a trace.dat. */
static void test_record_api(void **state)
{
	struct ctx *c = *state;
	uint64_t ck = cookie_of(1, 77);
	struct tep_record rec;
	uint8_t r[4][128];
	int n[4];

	n[0] = rec_sys_enter(r[0], 1400, 0);
	n[1] = rec_kstack(r[1], 1400, kips, 4);
	n[2] = rec_cookie(r[2], 1400, ck);
	n[3] = rec_unwind(r[3], 1400, ck, uips, 7);
	for (int i = 0; i < 4; i++) {
		memset(&rec, 0, sizeof(rec));
		rec.ts = 100 + i;
		rec.data = r[i];
		rec.size = n[i];
		rec.cpu = 1;
		assert_int_equal(td_parser_record(c->p, 1, &rec), 0);
	}
	/* A record after lost events ends the held event before it. */
	memset(&rec, 0, sizeof(rec));
	rec.ts = 200;
	rec.data = r[0];
	rec.size = n[0];
	rec.missed_events = 3;
	assert_int_equal(td_parser_record(c->p, 1, &rec), 0);
	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].status, TD_STITCHED);
	assert_int_equal(c->out[0].nk, 4);
	assert_int_equal(c->out[0].nu, 7);
	assert_ips(c->out[0].u, uips, 7);
	assert_int_equal(td_parser_record(c->p, 9, &rec), -EINVAL);
	assert_int_equal(stats_of(c).missed_events, 3);
	flush_all(c);
	assert_int_equal(c->nr_out, 2);
}

/* A real 6.18 sub-buffer (options stacktrace + userstacktrace). */
static void test_real_page(void **state)
{
	struct ctx *c = *state;
	struct td_parser_stats s;
	int i;

	memset(c->page, 0, TD_PAGE_SIZE);
	memcpy(c->page, real_page_6_18, sizeof(real_page_6_18));
	assert_int_equal(td_parser_page(c->p, 0, c->page, TD_PAGE_SIZE), 51);
	flush_all(c);
	s = stats_of(c);
	assert_int_equal(s.records, 51);
	assert_int_equal(s.events, 17);
	assert_int_equal(s.bad_records, 0);
	assert_int_equal(s.bad_pages, 0);
	assert_int_equal(s.orphans, 0);
	assert_int_equal(c->nr_out, 17);
	for (i = 0; i < 17; i++) {
		assert_int_equal(c->out[i].status, TD_INPLACE);
		assert_true(c->out[i].nk >= 4);
		assert_true(c->out[i].nu >= 1);
		assert_int_equal(c->out[i].pid, c->out[i].tid);
	}
	assert_int_equal(c->out[0].ts, 501675773720ULL);
	assert_int_equal(c->out[0].tid, 24892);
	assert_string_equal(c->out[0].comm, "cc1");
	assert_string_equal(c->out[0].name, "sched_switch");
	assert_int_equal(c->out[0].nk, 6);
	assert_int_equal(c->out[0].nu, 2);
	/* sys_enter of the task the first switch named. */
	assert_string_equal(c->out[1].name, "sys_enter");
	assert_int_equal(c->out[1].tid, 24901);
	assert_string_equal(c->out[1].comm, "bash");
	assert_int_equal(c->out[1].nk, 4);
	assert_int_equal(c->out[2].nk, 14);
	assert_int_equal(c->out[4].nk, 20);
}

/* ---- file identity ---- */

static const uint8_t bid_a[20] = { 0xab, 0xcd, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
				   0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12 };

static const uint64_t fbases[] = { 0x400000, 0x401200 };
static const uint32_t fids[] = { 7, 9 };

/* event + cookie, then the stack record with @ff (one per uips entry). */
static void event_and_stack(struct ctx *c, uint64_t ts, int tid, uint64_t ck, const uint8_t *ff,
			    unsigned int nr, unsigned int nfiles)
{
	uint8_t r[512];

	page_add(c, ts, r, rec_sys_enter(r, tid, 1));
	page_add(c, ts + 1, r, rec_cookie(r, tid, ck));
	page_add(c, ts + 2, r,
		 td_rec_unwind_stack(r, sizeof(r), ID_UNWIND_STACK, tid, ck, uips, nr, fbases,
				     fids, nfiles, ff));
}

static void test_files_parsed(void **state)
{
	static const uint8_t ff[] = { 0, 0, 1, TD_FF_ANON, TD_FF_VDSO, TD_FF_UNRECORDED };
	struct ctx *c = *state;
	uint64_t ck = cookie_of(0, 1);
	struct td_parser_stats s;
	struct td_file *f;
	uint8_t r[256];

	page_start(c, 1000);
	page_add(c, 1000, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 100, 7, bid_a, 20,
						 "/usr/bin/prog"));
	page_add(c, 1001, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 100, 9, NULL, 0,
						 "/lib/libx.so (deleted)"));
	event_and_stack(c, 1002, 100, ck, ff, 6, 2);
	assert_int_equal(page_parse(c, 0), 5);
	flush_all(c);

	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].status, TD_STITCHED);
	assert_int_equal(c->out[0].nu, 6);
	assert_ips(c->out[0].u, uips, 6);
	assert_true(c->out[0].has_files);
	assert_int_equal(c->out[0].f[0].kind, TD_FILE_IN);
	assert_int_equal(c->out[0].f[0].id, 7);
	assert_int_equal(c->out[0].f[0].offset, uips[0] - fbases[0]);
	assert_int_equal(c->out[0].f[1].offset, uips[1] - fbases[0]);
	assert_int_equal(c->out[0].f[2].kind, TD_FILE_IN);
	assert_int_equal(c->out[0].f[2].id, 9);
	assert_int_equal(c->out[0].f[2].offset, uips[2] - fbases[1] + 0);
	assert_int_equal(c->out[0].f[3].kind, TD_FILE_ANON);
	assert_int_equal(c->out[0].f[4].kind, TD_FILE_VDSO);
	assert_int_equal(c->out[0].f[5].kind, TD_FILE_UNRECORDED);

	f = td_filetab_get(c->ft, 7);
	assert_non_null(f);
	assert_string_equal(f->path, "/usr/bin/prog");
	assert_int_equal(f->build_id_len, 20);
	assert_string_equal(f->build_id_hex, "abcd0102030405060708090a0b0c0d0e0f101112");
	f = td_filetab_get(c->ft, 9);
	assert_non_null(f);
	assert_string_equal(f->path, "/lib/libx.so (deleted)");
	assert_null(f->build_id_hex);
	assert_null(td_filetab_get(c->ft, 8));

	s = stats_of(c);
	assert_int_equal(s.file_records, 2);
	assert_int_equal(s.bad_file_info, 0);
	assert_int_equal(s.bad_records, 0);
	assert_int_equal(s.stacks, 1);
}

/*
 * The record as the patched kernel writes it: the tgid, cut count and
 * flags (before the arrays, which moves them 8 bytes on) and the file
 * identity come through together, each from its own field.
 */
static void test_full_layout(void **state)
{
	static const uint8_t ff[] = { 0, TD_FF_VDSO, 1 };
	const struct td_rec_ustack us = {
		.cookie = cookie_of(1, 3), .ips = uips, .nr = 3, .bases = fbases, .ids = fids,
		.nr_files = 2, .frame_files = ff, .tgid_layout = true, .dropped = 5,
		.flags = 0, .tgid = 2990,
	};
	struct ctx *c = *state;
	uint8_t r[512];
	int calls = 0;

	td_parser_set_tgid_fn(c->p, tgid_of, &calls);
	page_start(c, 1000);
	page_add(c, 1000, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 3000, 7, bid_a, 20,
						 "/usr/bin/prog"));
	page_add(c, 1001, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 3000, 9, NULL, 0,
						 "/lib/libx.so"));
	page_add(c, 1002, r, rec_sys_enter(r, 3000, 1));
	page_add(c, 1003, r, rec_cookie(r, 3000, us.cookie));
	page_add(c, 1004, r, td_rec_ustack(r, sizeof(r), ID_UNWIND_STACK, 3000, &us));
	assert_int_equal(page_parse(c, 0), 5);
	flush_all(c);

	assert_int_equal(c->nr_out, 1);
	assert_int_equal(c->out[0].status, TD_STITCHED);
	assert_int_equal(calls, 0);		/* the record said the process */
	assert_int_equal(c->out[0].us_tgid, 2990);
	assert_int_equal(c->out[0].us_dropped, 5);
	assert_int_equal(c->out[0].nu, 3);
	assert_ips(c->out[0].u, uips, 3);
	assert_true(c->out[0].has_files);
	assert_int_equal(c->out[0].f[0].kind, TD_FILE_IN);
	assert_int_equal(c->out[0].f[0].id, 7);
	assert_int_equal(c->out[0].f[0].offset, uips[0] - fbases[0]);
	assert_int_equal(c->out[0].f[1].kind, TD_FILE_VDSO);
	assert_int_equal(c->out[0].f[2].kind, TD_FILE_IN);
	assert_int_equal(c->out[0].f[2].id, 9);
	assert_int_equal(c->out[0].f[2].offset, uips[2] - fbases[1]);
	assert_int_equal(stats_of(c).bad_file_info, 0);
	assert_string_equal(td_filetab_get(c->ft, 7)->path, "/usr/bin/prog");
}

/* The same record bytes, one lie at a time: frames unrecorded, never out of bounds. */
static void test_files_malformed(void **state)
{
	static const uint8_t ff[] = { 0, 0, 1 };
	static const uint8_t ff_bad_index[] = { 0, 2, TD_FF_ANON };
	struct ctx *c = *state;
	struct td_parser_stats s;
	uint8_t r[512];
	unsigned int len, i, n = 0;
	uint64_t ck;

	/* A sound one first. */
	page_start(c, 1000);
	event_and_stack(c, 1000, 100, cookie_of(0, ++n), ff, 3, 2);
	/* Index 2 of 2 files: that frame only. */
	event_and_stack(c, 1100, 100, cookie_of(0, ++n), ff_bad_index, 3, 2);
	assert_int_equal(page_parse(c, 0), 6);
	flush_all(c);
	assert_int_equal(c->nr_out, 2);
	for (i = 0; i < 3; i++)
		assert_int_equal(c->out[0].f[i].kind, TD_FILE_IN);
	assert_int_equal(c->out[1].f[0].kind, TD_FILE_IN);
	assert_int_equal(c->out[1].f[1].kind, TD_FILE_UNRECORDED);
	assert_int_equal(c->out[1].f[2].kind, TD_FILE_ANON);
	assert_int_equal(stats_of(c).bad_file_info, 1);

	/* Whole-record lies: every frame unrecorded, the IPs still there. */
	for (i = 0; i < 7; i++) {
		c->nr_out = 0;
		ck = cookie_of(0, ++n);
		page_start(c, 2000);
		page_add(c, 2000, r, rec_sys_enter(r, 100, 1));
		page_add(c, 2001, r, rec_cookie(r, 100, ck));
		len = td_rec_unwind_stack(r, sizeof(r), ID_UNWIND_STACK, 100, ck, uips, 3, fbases,
					  fids, 2, ff);
		assert_true(len > 0);
		switch (i) {
		case 0:	/* frame_files one short */
			put32(r + 28, (2u << 16) | (32 + 24 + 16 + 8));
			break;
		case 1:	/* file_bases not whole entries */
			put32(r + 20, (12u << 16) | (32 + 24));
			break;
		case 2:	/* one id for two bases */
			put32(r + 24, (4u << 16) | (32 + 24 + 16));
			break;
		case 3:	/* frame_files past the record's end */
			put32(r + 28, (3u << 16) | (len - 1));
			break;
		case 4:	/* file_ids at an offset past the record */
			put32(r + 24, (8u << 16) | 0xfff0);
			break;
		case 5:	/* an id of 0 and a base above its IPs */
			put32(r + 32 + 24 + 16, 0);
			put64(r + 32 + 24 + 8, UINT64_MAX);
			break;
		case 6:	/* frame_files longer than the stack */
			put32(r + 28, (4u << 16) | (32 + 24 + 16 + 8));
			break;
		}
		page_add(c, 2002, r, len);
		page_parse(c, 0);
		flush_all(c);
		assert_int_equal(c->nr_out, 1);
		assert_int_equal(c->out[0].status, TD_STITCHED);
		assert_int_equal(c->out[0].nu, 3);
		assert_ips(c->out[0].u, uips, 3);
		assert_true(c->out[0].has_files);
		for (unsigned int j = 0; j < 3; j++)
			assert_int_equal(c->out[0].f[j].kind, TD_FILE_UNRECORDED);
	}
	s = stats_of(c);
	assert_int_equal(s.bad_file_info, 8);
}

static void test_file_records_malformed(void **state)
{
	struct ctx *c = *state;
	struct td_filetab_stats fs;
	struct td_parser_stats s;
	uint8_t r[256];
	unsigned int len;

	page_start(c, 1000);
	/* build_id_size over 20 */
	len = td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 100, 1, bid_a, 20, "/a");
	put32(r + 12, 21);
	page_add(c, 1000, r, len);
	/* path outside the record */
	len = td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 100, 2, bid_a, 20, "/b");
	put32(r + 36, (64u << 16) | 40);
	page_add(c, 1001, r, len);
	/* id 0 */
	page_add(c, 1002, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 100, 0, bid_a, 20,
						 "/c"));
	/* cut short: fixed fields only partly there */
	page_add(c, 1003, r, 24);
	/* empty path */
	len = td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 100, 3, bid_a, 20, "/d");
	put32(r + 36, (0u << 16) | 40);
	page_add(c, 1004, r, len);
	/* and a good one */
	page_add(c, 1005, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 100, 4, bid_a, 4,
						 "/e"));
	assert_int_equal(page_parse(c, 0), 6);
	s = stats_of(c);
	assert_int_equal(s.bad_records, 5);
	assert_null(td_filetab_get(c->ft, 1));
	assert_null(td_filetab_get(c->ft, 2));
	assert_null(td_filetab_get(c->ft, 3));
	assert_non_null(td_filetab_get(c->ft, 4));
	assert_string_equal(td_filetab_get(c->ft, 4)->build_id_hex, "abcd0102");
	td_filetab_get_stats(c->ft, &fs);
	assert_int_equal(fs.files, 1);
}

/* ---- creation ---- */

static void test_new_checks(void **state)
{
	struct td_stitch_config cfg;
	struct tep_handle *tep;
	struct td_stitcher *st;
	struct td_parser *p;

	(void)state;
	td_stitch_config_default(&cfg);
	st = td_stitch_new(&cfg, capture, NULL);
	assert_non_null(st);

	/* Without the deferred events (a kernel without the series): fine. */
	tep = make_tep(false);
	p = td_parser_new(tep, st, 2);
	assert_non_null(p);
	td_parser_free(p);
	assert_null(td_parser_new(tep, st, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(td_parser_new(NULL, st, 2));
	assert_int_equal(errno, EINVAL);
	tep_set_long_size(tep, 4);
	assert_null(td_parser_new(tep, st, 2));
	assert_int_equal(errno, ENOTSUP);
	tep_free(tep);

	/* A cookie event with another layout than the interface. */
	tep = make_tep(false);
	parse_format(tep, fmt_unwind_cookie_bad, "ftrace");
	assert_null(td_parser_new(tep, st, 2));
	assert_int_equal(errno, EPROTO);
	tep_free(tep);
	td_stitch_free(st);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_event_kstack_cookie_stitched),
		T(test_cookie_without_stack_is_lost),
		T(test_stack_before_cookie_other_cpu),
		T(test_idle_one_name),
		T(test_fallback_user_stack_inplace),
		T(test_two_events_in_a_row),
		T(test_shared_cookie),
		T(test_follower_of_other_task),
		T(test_duplicate_followers),
		T(test_interrupt_event_nested),
		T(test_interrupt_between_followers),
		T(test_stray_kstack_across_nested),
		T(test_interrupts_nested_inplace),
		T(test_unfollowed_interrupt_event),
		T(test_hold_depth_bounded),
		T(test_unwind_does_not_end_held),
		T(test_unwind_failed),
		T(test_malformed_records),
		T(test_corrupt_pages),
		T(test_fuzzed_pages),
		T(test_missed_events_page),
		T(test_timestamps_through_parser),
		T(test_null_padding_tail),
		T(test_advance_hold),
		T(test_comms),
		T(test_comms_latest),
		T(test_comms_hook),
		T(test_comms_exec),
		cmocka_unit_test_setup_teardown(test_comms_fork, setup_fork, teardown),
		cmocka_unit_test_setup_teardown(test_comms_fork_array, setup_fork_array, teardown),
		cmocka_unit_test_setup_teardown(test_comms_fork_across_period, setup_fork, teardown),
		T(test_exec_names_only),
		T(test_exec_names_expire),
		T(test_tgid_from_record),
		T(test_tgid_fn),
		T(test_record_api),
		T(test_real_page),
		cmocka_unit_test_setup_teardown(test_tgid_from_stack, setup_tgid, teardown),
		T(test_tgid_no_field),
		cmocka_unit_test_setup_teardown(test_files_parsed, setup_files, teardown),
		cmocka_unit_test_setup_teardown(test_full_layout, setup_full, teardown),
		cmocka_unit_test_setup_teardown(test_files_malformed, setup_files, teardown),
		cmocka_unit_test_setup_teardown(test_file_records_malformed, setup_files, teardown),
		cmocka_unit_test(test_new_checks),
		cmocka_unit_test(test_exec_comm),
		cmocka_unit_test_setup_teardown(test_pages_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pages_cut, setup_fork, teardown),
		cmocka_unit_test_setup_teardown(test_pages_merge_order, setup_fork, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
