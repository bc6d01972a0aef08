// SPDX-License-Identifier: GPL-2.0
/*
 * Seed writer of the fuzz targets (input layouts in fuzz-common.h):
 *
 *   fuzz_seed synth PAGEDIR PLUGINDIR
 *	generated seeds: pages written with lib/pagegen.c as a kernel with the
 *	series writes them (events with kernel stacks and cookies, stacks on
 *	the same and on another CPU, file records and stacks naming them, the
 *	old layout, in-place stacks) and edge cases (lost events, discarded
 *	events, time extends and stamps, deep stacks, lying file identity,
 *	ids reused, unknown ids, odd paths); plugin inputs of the same records.
 *   fuzz_seed dat PAGEDIR PLUGINDIR FILE.dat...
 *	real records of trace.dat files (trace-cmd record, trace-defer
 *	record), read with libtracecmd, their event ids mapped by name to the
 *	targets' ids and packed again into pages, one CPU's records per page.
 *   fuzz_seed raw PAGEDIR PLUGINDIR EVENTSDIR cpu0.raw [cpu1.raw...]
 *	real sub-buffers (per_cpu/cpuN/trace_pipe_raw, 4096 bytes each) kept
 *	byte for byte but for the event ids, mapped through the ID: lines of
 *	EVENTSDIR/SYSTEM/NAME/format (a copy of tracefs' events/).
 *
 * Only pages holding deferred stack records (or, failing those, the first
 * ones) become seeds, at most MAX_SEEDS per source: the committed corpus
 * stays small.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-cmd/trace-cmd.h>

#include <trace-defer/filetab.h>
#include <trace-defer/pagegen.h>

#include "fuzz-common.h"

#define MAX_SEEDS	8
#define PG		FUZZ_PAGE_SIZE

static const char *page_dir, *plugin_dir;
static unsigned int nr_written;

static void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return le16toh(v);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
	nr_written++;
}

/* ---- records in the fixtures' layouts ---- */

static uint64_t cookie_of(int cpu, uint32_t n)
{
	return ((uint64_t)(2 * n + 1) << 32) | (uint32_t)(cpu + 1);
}

static unsigned int rec_switch(uint8_t *r, int prev, const char *prev_comm, int next,
			       const char *next_comm)
{
	memset(r, 0, 64);
	td_rec_common(r, ID_SCHED_SWITCH, prev);
	strncpy((char *)r + 8, prev_comm, 16);
	put32(r + 24, (uint32_t)prev);
	put32(r + 28, 120);
	put64(r + 32, 1);
	strncpy((char *)r + 40, next_comm, 16);
	put32(r + 56, (uint32_t)next);
	put32(r + 60, 120);
	return 64;
}

static unsigned int rec_sys_enter(uint8_t *r, int pid, long nr)
{
	memset(r, 0, 64);
	td_rec_common(r, ID_SYS_ENTER, pid);
	put64(r + 8, (uint64_t)nr);
	put64(r + 16, 0x7ffd1234);
	return 64;
}

static unsigned int rec_exec(uint8_t *r, int pid, const char *file)
{
	unsigned int n = (unsigned int)strlen(file) + 1;

	memset(r, 0, 20);
	td_rec_common(r, ID_SCHED_EXEC, pid);
	put32(r + 8, n << 16 | 20);
	put32(r + 12, (uint32_t)pid);
	put32(r + 16, (uint32_t)pid);
	memcpy(r + 20, file, n);
	return 20 + n;
}

static unsigned int rec_kstack(uint8_t *r, int pid, unsigned int nr)
{
	unsigned int i;

	memset(r, 0, 80);
	td_rec_common(r, ID_KERNEL_STACK, pid);
	put32(r + 8, nr);
	for (i = 0; i < nr && i < 8; i++)
		put64(r + 16 + 8 * i, 0xffffffff81000000ULL + 0x1230 * (i + 1));
	return 80;
}

static unsigned int rec_ustack_inplace(uint8_t *r, int pid, unsigned int nr)
{
	unsigned int i;

	memset(r, 0, 80);
	td_rec_common(r, ID_USER_STACK, pid);
	put32(r + 8, (uint32_t)pid);
	for (i = 0; i < nr && i < 8; i++)
		put64(r + 16 + 8 * i, 0x401000 + 0x40 * i);
	return 80;
}

static unsigned int rec_cookie(uint8_t *r, int pid, uint64_t cookie)
{
	memset(r, 0, 16);
	td_rec_common(r, ID_UNWIND_COOKIE, pid);
	put64(r + 8, cookie);
	return 16;
}

/* The old layout: cookie and stack only. */
static unsigned int rec_unwind_old(uint8_t *r, int pid, uint64_t cookie, const uint64_t *ips,
				   unsigned int nr)
{
	unsigned int i;

	memset(r, 0, 20);
	td_rec_common(r, ID_UNWIND_STACK, pid);
	put64(r + 8, cookie);
	put32(r + 16, (8 * nr) << 16 | 20);
	for (i = 0; i < nr; i++)
		put64(r + 20 + 8 * i, ips[i]);
	return 20 + 8 * nr;
}

static const uint8_t bid_a[20] = { 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
				   0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11 };
static const uint8_t bid_b[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
				   7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/*
 * A program in a PIE (id 1) calling a library (id 2), the vDSO and a JIT
 * frame; in the current layout (@full) with its process, @dropped outer
 * frames left out, and @flags.
 */
static unsigned int rec_unwind_layout(uint8_t *r, unsigned int size, int pid, uint64_t cookie,
				      unsigned int depth, bool full, uint16_t dropped,
				      uint16_t flags)
{
	static const uint64_t bases[] = { 0x555555554000ULL, 0x7ffff7dd0000ULL };
	static const uint32_t ids[] = { 1, 2 };
	struct td_rec_ustack us = {
		.cookie = cookie, .bases = bases, .ids = ids, .nr_files = 2, .tgid_layout = full,
		.tgid = full ? pid : 0, .dropped = full ? dropped : 0, .flags = full ? flags : 0,
	};
	uint64_t ips[64];
	uint8_t ff[64];
	unsigned int i;

	if (depth > 64)
		depth = 64;
	for (i = 0; i < depth; i++) {
		switch (i % 5) {
		case 0:
			ips[i] = bases[1] + 0x1234 + i;
			ff[i] = 1;
			break;
		case 1:
			ips[i] = 0x7ffff7fc1000ULL + 0x80;
			ff[i] = TD_FF_VDSO;
			break;
		case 2:
			ips[i] = 0x7fffe0001000ULL + i;
			ff[i] = TD_FF_ANON;
			break;
		default:
			ips[i] = bases[0] + 0x1139 + 0x20 * i;
			ff[i] = 0;
			break;
		}
	}
	us.ips = ips;
	us.nr = depth;
	us.frame_files = ff;
	return td_rec_ustack(r, size, ID_UNWIND_STACK, pid, &us);
}

static unsigned int rec_unwind_files(uint8_t *r, unsigned int size, int pid, uint64_t cookie,
				     unsigned int depth)
{
	return rec_unwind_layout(r, size, pid, cookie, depth, false, 0, 0);
}

/* ---- pages ---- */

struct gen {
	uint8_t pages[FUZZ_NR_CPUS * 2][PG];
	struct td_pagegen pg[FUZZ_NR_CPUS * 2];
	bool finished[FUZZ_NR_CPUS * 2];
	uint64_t ts;
};

static void finish(struct gen *g, unsigned int page, bool fill, int64_t missed)
{
	td_pagegen_finish(&g->pg[page], fill, missed);
	g->finished[page] = true;
}

static void gen_start(struct gen *g, unsigned int nr_pages, uint64_t ts)
{
	unsigned int i;

	memset(g, 0, sizeof(*g));
	g->ts = ts;
	for (i = 0; i < nr_pages; i++)
		td_pagegen_start(&g->pg[i], g->pages[i], PG, ts);
}

static void add(struct gen *g, unsigned int page, const void *rec, unsigned int len)
{
	g->ts += 1500;
	if (!len || td_pagegen_add(&g->pg[page], g->ts, rec, len)) {
		fprintf(stderr, "fuzz_seed: a record does not fit\n");
		exit(1);
	}
}

static void gen_write(struct gen *g, unsigned int nr_pages, enum fuzz_layout layout,
		      const char *name)
{
	unsigned int i;

	for (i = 0; i < nr_pages; i++) {
		if (!g->pg[i].size)
			td_pagegen_start(&g->pg[i], g->pages[i], PG, g->ts);
		if (!g->finished[i])
			finish(g, i, i % 2, 0);
	}
	if (layout != FUZZ_LAYOUT_FILES) {
		uint64_t t;

		memcpy(&t, g->pages[0], 8);
		put64(g->pages[0], le64toh(t) | (layout == FUZZ_LAYOUT_OLD ? FUZZ_OLD_LAYOUT :
								   FUZZ_FULL_LAYOUT));
	}
	write_file(page_dir, name, g->pages, (size_t)nr_pages * PG);
}

/* One event of task @pid asking for its user stack, on page @page. */
static void event_with_cookie(struct gen *g, unsigned int page, int pid, uint64_t cookie,
			      bool kstack)
{
	uint8_t r[128];

	add(g, page, r, rec_sys_enter(r, pid, 39));
	if (kstack)
		add(g, page, r, rec_kstack(r, pid, 5));
	add(g, page, r, rec_cookie(r, pid, cookie));
}

static void files(struct gen *g, unsigned int page)
{
	uint8_t r[512];

	add(g, page, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 0, 1, bid_a, 20,
					   "/usr/bin/fx_fid_a"));
	add(g, page, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 0, 2, bid_b, 20,
					   "/usr/lib/x86_64-linux-gnu/libc.so.6"));
}

static void synth_pages(void)
{
	static struct gen g;
	uint8_t r[2048];
	uint64_t ips[8] = { 0x401136, 0x4012cb, 0x401300, 0x7f0011223344ULL };
	int i;

	/* Events and stacks of one task on one CPU, files first. */
	gen_start(&g, 2, 1000000);
	files(&g, 0);
	add(&g, 0, r, rec_switch(r, 4242, "fx_fid_a", 0, "swapper/0"));
	for (i = 0; i < 6; i++) {
		event_with_cookie(&g, 0, 4242, cookie_of(0, i), i % 2);
		add(&g, 0, r, rec_unwind_files(r, sizeof(r), 4242, cookie_of(0, i), 6 + i));
	}
	add(&g, 1, r, rec_switch(r, 0, "swapper/1", 4243, "fx_fid_a"));
	gen_write(&g, 2, FUZZ_LAYOUT_FILES, "synth-files-one-cpu");

	/* The stack on the other CPU (migrated), shared by two events, before them. */
	gen_start(&g, 2, 2000000);
	files(&g, 1);
	add(&g, 1, r, rec_unwind_files(r, sizeof(r), 4300, cookie_of(0, 1), 9));
	event_with_cookie(&g, 0, 4300, cookie_of(0, 1), true);
	event_with_cookie(&g, 0, 4300, cookie_of(0, 1), false);
	add(&g, 0, r, rec_exec(r, 4300, "/usr/bin/\xe2\x82\xac\"odd\\\x01name"));
	event_with_cookie(&g, 0, 4300, cookie_of(0, 2), true);
	add(&g, 1, r, rec_unwind_files(r, sizeof(r), 4300, cookie_of(0, 2), 3));
	gen_write(&g, 2, FUZZ_LAYOUT_FILES, "synth-files-cross-cpu");
	/* The same in a round cut at the second page's time: its records wait. */
	{
		uint64_t t;

		memcpy(&t, g.pages[0], 8);
		put64(g.pages[0], le64toh(t) | FUZZ_CUT_BATCHES);
		write_file(page_dir, "synth-files-cross-cpu-cut", g.pages, 2 * PG);
	}

	/*
	 * The current layout: each stack with its process, the same stack
	 * again (records of one stack share a decoded copy) in two processes,
	 * outer frames cut, and an empty stack.
	 */
	gen_start(&g, 2, 2500000);
	files(&g, 0);
	for (i = 0; i < 6; i++) {
		event_with_cookie(&g, 0, 5500 + i % 2, cookie_of(0, 40 + i), true);
		add(&g, 1, r, rec_unwind_layout(r, sizeof(r), 5500 + i % 2, cookie_of(0, 40 + i),
						i < 5 ? 9 : 0, true, i == 4 ? 3 : 0, i == 4));
	}
	gen_write(&g, 2, FUZZ_LAYOUT_FULL, "synth-full-layout");

	/* Old layout: no file identity, no file records. */
	gen_start(&g, 2, 3000000);
	for (i = 0; i < 8; i++) {
		event_with_cookie(&g, i % 2, 5000 + i, cookie_of(i % 2, i), true);
		add(&g, (i + 1) % 2, r, rec_unwind_old(r, 5000 + i, cookie_of(i % 2, i), ips,
						       i % 5));
	}
	gen_write(&g, 2, FUZZ_LAYOUT_OLD, "synth-old-layout");

	/* In-place stacks (fallback mode). */
	gen_start(&g, 1, 4000000);
	for (i = 0; i < 10; i++) {
		add(&g, 0, r, rec_sys_enter(r, 6000 + i % 3, i));
		add(&g, 0, r, rec_kstack(r, 6000 + i % 3, 8));
		add(&g, 0, r, rec_ustack_inplace(r, 6000 + i % 3, i % 9));
	}
	gen_write(&g, 1, FUZZ_LAYOUT_FILES, "synth-inplace");

	/* Lies: unknown id, bad indexes, id reused for another file, id 0, no build-id. */
	gen_start(&g, 2, 5000000);
	files(&g, 0);
	add(&g, 0, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 0, 1, bid_b, 20,
					 "/tmp/another"));
	add(&g, 0, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 0, 3, NULL, 0,
					 "/opt/x (deleted)"));
	add(&g, 0, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 0, 0, bid_a, 20, "/z"));
	{
		static const uint64_t b[] = { 0x400000, 0x500000, 0x600000 };
		static const uint32_t id[] = { 3, 7, 0 };
		uint8_t ff[6] = { 0, 1, 2, 9, TD_FF_UNRECORDED, 0xfc };
		uint64_t ip[6] = { 0x400100, 0x500200, 0x600300, 0x3fffff, 0x10, 0x20 };

		event_with_cookie(&g, 0, 7000, cookie_of(0, 3), true);
		add(&g, 1, r, td_rec_unwind_stack(r, sizeof(r), ID_UNWIND_STACK, 7000,
						  cookie_of(0, 3), ip, 6, b, id, 3, ff));
		/* Arrays whose lengths disagree. */
		event_with_cookie(&g, 0, 7001, cookie_of(0, 4), true);
		add(&g, 1, r, td_rec_unwind_stack(r, sizeof(r), ID_UNWIND_STACK, 7001,
						  cookie_of(0, 4), ip, 6, b, id, 3, ff));
		put32(r + 28, get32(r + 28) - (1 << 16));
		g.ts += 10;
		td_pagegen_add(&g.pg[1], g.ts, r, 32 + 6 * 8 + 3 * 12 + 6);
	}
	/* Unwind failed: no frames. */
	event_with_cookie(&g, 0, 7002, cookie_of(0, 5), false);
	add(&g, 1, r, rec_unwind_files(r, sizeof(r), 7002, cookie_of(0, 5), 0));
	/* A cookie whose stack never comes, a stack nobody asked for. */
	event_with_cookie(&g, 0, 7003, cookie_of(0, 6), false);
	add(&g, 1, r, rec_unwind_files(r, sizeof(r), 7004, cookie_of(0, 7), 2));
	gen_write(&g, 2, FUZZ_LAYOUT_FILES, "synth-files-lies");

	/* Deep stacks (long records), time extends and stamps, a discarded event, lost events. */
	gen_start(&g, 2, 6000000);
	files(&g, 0);
	event_with_cookie(&g, 0, 8000, cookie_of(0, 9), true);
	add(&g, 0, r, rec_unwind_files(r, sizeof(r), 8000, cookie_of(0, 9), 64));
	g.ts += 1ULL << 30;
	td_pagegen_discard(&g.pg[0], g.ts, 40);
	g.ts += 1ULL << 33;
	event_with_cookie(&g, 0, 8001, cookie_of(0, 10), true);
	g.ts += 5;
	td_pagegen_time_stamp(&g.pg[1], g.ts);
	add(&g, 1, r, rec_unwind_files(r, sizeof(r), 8001, cookie_of(0, 10), 40));
	finish(&g, 0, true, 17);
	finish(&g, 1, false, -1);
	gen_write(&g, 2, FUZZ_LAYOUT_FILES, "synth-deep-extends-lost");

	/* The real 6.18 sub-buffer of the unit tests (old layout, in-place stacks). */
	memset(g.pages, 0, sizeof(g.pages));
	memcpy(g.pages[0], real_page_6_18, sizeof(real_page_6_18));
	write_file(page_dir, "real-6.18-cpu0", g.pages[0], PG);
}

/* ---- plugin inputs ---- */

struct pin {
	uint8_t buf[16384];
	size_t len;
};

static void pin_start(struct pin *p, uint8_t flags)
{
	p->buf[0] = flags;
	p->len = 1;
}

static uint8_t pin_flags(enum fuzz_layout layout)
{
	return layout == FUZZ_LAYOUT_OLD ? FUZZ_PLUGIN_OLD :
	       layout == FUZZ_LAYOUT_FULL ? FUZZ_PLUGIN_FULL : 0;
}

static void pin_add(struct pin *p, unsigned int kind, const void *rec, unsigned int len)
{
	if (p->len + 3 + len > sizeof(p->buf))
		return;
	p->buf[p->len] = (uint8_t)kind;
	put16(p->buf + p->len + 1, (uint16_t)len);
	memcpy(p->buf + p->len + 3, rec, len);
	p->len += 3 + len;
}

static void synth_plugin(void)
{
	static struct pin p;
	uint8_t r[2048];
	uint64_t ips[4] = { 0x401136, 0x4012cb, 0x401300, 0 };

	pin_start(&p, 0);
	pin_add(&p, FUZZ_REC_FILE, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 0, 1, bid_a,
							 20, "/usr/bin/fx_fid_a"));
	pin_add(&p, FUZZ_REC_FILE, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 0, 2, bid_b,
							 20, "/lib/libc.so.6"));
	pin_add(&p, FUZZ_REC_COOKIE, r, rec_cookie(r, 4242, cookie_of(1, 7)));
	pin_add(&p, FUZZ_REC_STACK, r, rec_unwind_files(r, sizeof(r), 4242, cookie_of(1, 7), 7));
	write_file(plugin_dir, "synth-files", p.buf, p.len);

	pin_start(&p, FUZZ_PLUGIN_FULL);
	pin_add(&p, FUZZ_REC_FILE, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 0, 1, bid_a,
							 20, "/usr/bin/fx_fid_a"));
	pin_add(&p, FUZZ_REC_COOKIE, r, rec_cookie(r, 4243, cookie_of(1, 8)));
	pin_add(&p, FUZZ_REC_STACK, r, rec_unwind_layout(r, sizeof(r), 4243, cookie_of(1, 8), 7,
							 true, 2, 1));
	pin_add(&p, FUZZ_REC_STACK, r, rec_unwind_layout(r, sizeof(r), 4243, cookie_of(1, 9), 0,
							 true, 0, 0));
	write_file(plugin_dir, "synth-full-layout", p.buf, p.len);

	pin_start(&p, 0);
	pin_add(&p, FUZZ_REC_FILE, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 0, 1, bid_a,
							 20, "/a\x1b[31m\xff (deleted)"));
	pin_add(&p, FUZZ_REC_FILE, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 0, 1, bid_b,
							 7, "/b"));
	pin_add(&p, FUZZ_REC_FILE, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 0, 2, NULL,
							 0, "/c"));
	pin_add(&p, FUZZ_REC_STACK, r, rec_unwind_files(r, sizeof(r), 1, cookie_of(0, 1), 12));
	pin_add(&p, FUZZ_REC_COOKIE, r, rec_cookie(r, 1, 0x900000000ULL));
	pin_add(&p, FUZZ_REC_STACK, r, rec_unwind_files(r, sizeof(r), 1, cookie_of(0, 1), 0));
	write_file(plugin_dir, "synth-files-conflict", p.buf, p.len);

	pin_start(&p, FUZZ_PLUGIN_OLD);
	pin_add(&p, FUZZ_REC_COOKIE, r, rec_cookie(r, 99, cookie_of(2, 3)));
	pin_add(&p, FUZZ_REC_STACK, r, rec_unwind_old(r, 99, cookie_of(2, 3), ips, 3));
	pin_add(&p, FUZZ_REC_STACK, r, rec_unwind_old(r, 99, cookie_of(2, 3), ips, 0));
	write_file(plugin_dir, "synth-old-layout", p.buf, p.len);
}

/* ---- real traces ---- */

struct idmap {
	const char *sys, *name;
	unsigned int to;
	int from;			/* -1: not in the trace */
};

static struct idmap idmap[] = {
	{ "ftrace", "kernel_stack", ID_KERNEL_STACK, -1 },
	{ "ftrace", "user_stack", ID_USER_STACK, -1 },
	{ "ftrace", "user_unwind_cookie", ID_UNWIND_COOKIE, -1 },
	{ "ftrace", "user_unwind_stack", ID_UNWIND_STACK, -1 },
	{ "ftrace", "user_unwind_file", ID_UNWIND_FILE, -1 },
	{ "sched", "sched_switch", ID_SCHED_SWITCH, -1 },
	{ "sched", "sched_process_exec", ID_SCHED_EXEC, -1 },
	{ "raw_syscalls", "sys_enter", ID_SYS_ENTER, -1 },
};

#define NR_MAP (sizeof(idmap) / sizeof(idmap[0]))

/* The target id of trace id @id, 0 when the targets do not know the event. */
static unsigned int map_id(unsigned int id)
{
	unsigned int i;

	for (i = 0; i < NR_MAP; i++)
		if (idmap[i].from == (int)id)
			return idmap[i].to;
	return 0;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Per target CPU: the page being filled; full pages are kept when they hold stacks. */
struct packer {
	struct gen g;
	bool has_unwind[FUZZ_NR_CPUS];
	unsigned int seeds;
	unsigned int plugin_seeds;
	struct pin pin;
	enum fuzz_layout layout;
	const char *src;
};

static void packer_flush(struct packer *k, bool force)
{
	char name[512];
	unsigned int c;
	bool any = false;

	for (c = 0; c < FUZZ_NR_CPUS; c++)
		any |= k->has_unwind[c];
	if ((any || force || !k->seeds) && k->seeds < MAX_SEEDS) {
		snprintf(name, sizeof(name), "real-%s-%u", k->src, k->seeds++);
		gen_write(&k->g, FUZZ_NR_CPUS, k->layout, name);
	}
	gen_start(&k->g, FUZZ_NR_CPUS, k->g.ts);
	memset(k->has_unwind, 0, sizeof(k->has_unwind));
}

static void pin_flush(struct packer *k)
{
	char name[512];

	if (k->pin.len > 1 && k->plugin_seeds < MAX_SEEDS) {
		snprintf(name, sizeof(name), "real-%s-%u", k->src, k->plugin_seeds++);
		write_file(plugin_dir, name, k->pin.buf, k->pin.len);
	}
	pin_start(&k->pin, pin_flags(k->layout));
}

static void pack(struct packer *k, int cpu, uint64_t ts, uint8_t *data, unsigned int size)
{
	unsigned int c = (unsigned int)cpu % FUZZ_NR_CPUS, to, kind;

	if (size < 8)
		return;
	to = map_id(get16(data));
	if (!to)
		return;
	put16(data, (uint16_t)to);
	if (ts < k->g.pg[c].ts)
		ts = k->g.pg[c].ts;
	k->g.ts = ts;
	if (td_pagegen_add(&k->g.pg[c], ts, data, size) == -ENOSPC) {
		packer_flush(k, false);
		td_pagegen_add(&k->g.pg[c], ts, data, size);
	}
	if (to == ID_UNWIND_STACK)
		k->has_unwind[c] = true;
	if (to == ID_UNWIND_COOKIE || to == ID_UNWIND_STACK || to == ID_UNWIND_FILE) {
		kind = to == ID_UNWIND_COOKIE ? FUZZ_REC_COOKIE :
		       to == ID_UNWIND_STACK ? FUZZ_REC_STACK : FUZZ_REC_FILE;
		if (k->pin.len + 3 + size > 8192)
			pin_flush(k);
		pin_add(&k->pin, kind, data, size);
	}
}

static int from_dat(const char *path)
{
	struct tracecmd_input *in = tracecmd_open(path, 0);
	struct tep_record **next;
	static struct packer k;
	struct tep_handle *tep;
	struct tep_event *ev;
	int nr_cpus, cpu, best;
	unsigned int i;

	if (!in) {
		fprintf(stderr, "fuzz_seed: cannot read %s\n", path);
		return -1;
	}
	tep = tracecmd_get_tep(in);
	for (i = 0; i < NR_MAP; i++) {
		ev = tep_find_event_by_name(tep, idmap[i].sys, idmap[i].name);
		idmap[i].from = ev ? ev->id : -1;
	}
	ev = tep_find_event_by_name(tep, "ftrace", "user_unwind_stack");
	memset(&k, 0, sizeof(k));
	k.layout = !ev ? FUZZ_LAYOUT_FILES :
		   !tep_find_field(ev, "frame_files") ? FUZZ_LAYOUT_OLD :
		   tep_find_field(ev, "tgid") ? FUZZ_LAYOUT_FULL : FUZZ_LAYOUT_FILES;
	k.src = base(path);
	gen_start(&k.g, FUZZ_NR_CPUS, tracecmd_get_first_ts(in));
	pin_start(&k.pin, pin_flags(k.layout));

	nr_cpus = tep_get_cpus(tep);
	next = calloc(nr_cpus > 0 ? nr_cpus : 1, sizeof(*next));
	for (cpu = 0; cpu < nr_cpus; cpu++)
		next[cpu] = tracecmd_read_cpu_first(in, cpu);
	for (;;) {
		best = -1;
		for (cpu = 0; cpu < nr_cpus; cpu++)
			if (next[cpu] && (best < 0 || next[cpu]->ts < next[best]->ts))
				best = cpu;
		if (best < 0 || k.seeds >= MAX_SEEDS)
			break;
		if (next[best]->size > 0) {
			uint8_t *copy = malloc(next[best]->size);

			memcpy(copy, next[best]->data, next[best]->size);
			pack(&k, best, next[best]->ts, copy, next[best]->size);
			free(copy);
		}
		tracecmd_free_record(next[best]);
		next[best] = tracecmd_read_data(in, best);
	}
	for (cpu = 0; cpu < nr_cpus; cpu++)
		if (next[cpu])
			tracecmd_free_record(next[cpu]);
	free(next);
	packer_flush(&k, false);
	pin_flush(&k);
	tracecmd_close(in);
	return 0;
}

/* The id in EVENTSDIR/SYS/NAME/format, or -1. */
static int format_id(const char *dir, const char *sys, const char *name)
{
	char path[4096], line[256];
	int id = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s/format", dir, sys, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ID: %d", &id) == 1)
			break;
	fclose(f);
	return id;
}

/* Rewrite the event ids of a raw sub-buffer in place; true when it holds a stack record. */
static bool remap_page(uint8_t *page)
{
	unsigned int off = 0, commit = get32(page + 8) & TD_PAGE_COMMIT_MASK, type, len, to;
	uint8_t *d = page + TD_PAGE_HDR_SIZE, *body;
	bool stack = false;

	if (commit > PG - TD_PAGE_HDR_SIZE)
		commit = PG - TD_PAGE_HDR_SIZE;
	while (off + 8 <= commit) {
		type = get32(d + off) & 31;
		if (type == TD_RB_TYPE_PADDING && !(get32(d + off) >> 5))
			break;
		if (type == TD_RB_TYPE_TIME_EXTEND || type == TD_RB_TYPE_TIME_STAMP) {
			off += 8;
			continue;
		}
		if (type == TD_RB_TYPE_PADDING) {
			off += 4 + get32(d + off + 4);
			continue;
		}
		if (type == 0) {
			len = get32(d + off + 4);
			body = d + off + 8;
			off += 4 + len;
		} else {
			body = d + off + 4;
			off += 4 + 4 * type;
		}
		if (body + 2 > d + commit)
			break;
		to = map_id(get16(body));
		if (to) {
			put16(body, (uint16_t)to);
			stack |= to == ID_UNWIND_STACK;
		}
	}
	return stack;
}

static int from_raw(const char *events, int nr, char **files)
{
	static uint8_t pages[FUZZ_NR_CPUS][PG];
	unsigned int i, seeds = 0, taken = 0;
	char name[512];
	FILE *f[FUZZ_NR_CPUS] = { 0 };
	int c;

	for (i = 0; i < NR_MAP; i++)
		idmap[i].from = format_id(events, idmap[i].sys, idmap[i].name);
	if (nr > FUZZ_NR_CPUS)
		nr = FUZZ_NR_CPUS;
	for (c = 0; c < nr; c++) {
		f[c] = fopen(files[c], "r");
		if (!f[c]) {
			perror(files[c]);
			return -1;
		}
	}
	/* Page i of each file together: the seed's CPUs in the files' order. */
	while (seeds < MAX_SEEDS) {
		bool any = false, stack = false;

		memset(pages, 0, sizeof(pages));
		for (c = 0; c < nr; c++) {
			if (fread(pages[c], 1, PG, f[c]) == PG) {
				any = true;
				stack |= remap_page(pages[c]);
			}
		}
		if (!any)
			break;
		if (stack || !taken) {
			snprintf(name, sizeof(name), "real-raw-%s-%u", base(files[0]), seeds++);
			write_file(page_dir, name, pages, (size_t)nr * PG);
			taken++;
		}
	}
	for (c = 0; c < nr; c++)
		fclose(f[c]);
	return 0;
}

int main(int argc, char **argv)
{
	int i, ret = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: fuzz_seed synth PAGEDIR PLUGINDIR\n"
				"       fuzz_seed dat PAGEDIR PLUGINDIR FILE.dat...\n"
				"       fuzz_seed raw PAGEDIR PLUGINDIR EVENTSDIR cpu0.raw...\n");
		return 2;
	}
	page_dir = argv[2];
	plugin_dir = argv[3];
	if (!strcmp(argv[1], "synth")) {
		synth_pages();
		synth_plugin();
	} else if (!strcmp(argv[1], "dat")) {
		for (i = 4; i < argc; i++)
			ret |= from_dat(argv[i]);
	} else if (!strcmp(argv[1], "raw") && argc > 5) {
		ret = from_raw(argv[4], argc - 5, argv + 5);
	} else {
		fprintf(stderr, "fuzz_seed: unknown mode %s\n", argv[1]);
		return 2;
	}
	printf("fuzz_seed: %u files written\n", nr_written);
	return ret ? 1 : 0;
}
