// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the pipeline (lib/pipeline.c, lib/sinks.c): pages in,
 * resolved events out to every sink in order; a stack on another CPU
 * stitched to its event; sink errors counted and the first one kept, a
 * sink whose reader went away (-EPIPE) dropped and the pipeline marked
 * broken; the short stages (parse, stitch) reaching no sink; the report
 * hooks deciding which tasks /proc may be asked about and naming kernel
 * frames; live input naming this process and its own function from
 * /proc; the library's folded and JSON sinks; profile sinks given kernel
 * stacks without the tracer's own frames; bad configurations; stacks
 * named once and handed out again by id, a stack with a frame no maps
 * covered named every time, and no_memo naming every frame again; events
 * without their record's copy when no sink reads fields; pages fed as the
 * daemon feeds them and records fed as the report does giving every event
 * the same, right status (late events, lost stacks, stacks on the other CPU);
 * sched_process_exec traced only to name tasks reaching no sink.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <event-parse.h>

#include <trace-defer/pagegen.h>
#include <trace-defer/pipeline.h>
#include <trace-defer/pprof.h>
#include "fx-offset.h"
#include "../../lib/monotime.h"

#include "parse-records.h"

#define TID		4242
#define KADDR		0xffffffff81000010ULL
#define NR_KIPS		3

static const uint64_t kips[NR_KIPS] = { KADDR, KADDR + 0x100, KADDR + 0x200 };
static const uint64_t uips[] = { 0x401000, 0x401100, 0x401200, 0x401300 };

/* What a sink saw. */
struct seen {
	int calls;
	int ret;		/* what write returns */
	enum td_status status;
	int tid, pid;
	char event[64];
	unsigned int nk, nu;
	uint64_t u0;
	char ksym[64], usym[64];
	uint64_t kid, uid;	/* kstack_id, ustack_id */
	int order;		/* call number across sinks, from 1 */
	int raw_size;		/* of the event's record copy; -1: none */
	char comm[TD_COMM_LEN];
	char next_comm[TD_COMM_LEN];	/* read from the record copy */
};

static int order;

static int seen_write(void *priv, const struct td_resolved *r)
{
	struct seen *s = priv;

	s->calls++;
	s->order = ++order;
	s->status = r->status;
	s->tid = r->ev->tid;
	s->pid = r->ev->pid;
	snprintf(s->event, sizeof(s->event), "%s", r->event_name);
	s->nk = r->nr_kframes;
	s->nu = r->nr_uframes;
	s->u0 = r->nr_uframes ? r->uframes[0].addr : 0;
	snprintf(s->ksym, sizeof(s->ksym), "%s",
		 r->nr_kframes && r->kframes[0].symbol ? r->kframes[0].symbol : "");
	snprintf(s->usym, sizeof(s->usym), "%s",
		 r->nr_uframes && r->uframes[0].symbol ? r->uframes[0].symbol : "");
	s->kid = r->kstack_id;
	s->uid = r->ustack_id;
	s->raw_size = r->ev->raw ? r->ev->raw_size : -1;
	memcpy(s->comm, r->ev->comm, TD_COMM_LEN);
	s->next_comm[0] = '\0';
	if (r->ev->raw) {
		struct tep_format_field *f = tep_find_field(r->ev->tep_event, "next_comm");

		if (f && f->offset + TD_COMM_LEN <= r->ev->raw_size)
			snprintf(s->next_comm, sizeof(s->next_comm), "%.*s", TD_COMM_LEN - 1,
				 (const char *)r->ev->raw + f->offset);
	}
	return s->ret;
}

static const struct td_sink_ops seen_ops = { .name = "seen", .write = seen_write };
/* The same, saying that it reads no fields (as the profile sinks). */
static const struct td_sink_ops seen_nofields_ops = {
	.name = "seen-nofields", .write = seen_write, .no_fields = true,
};

/* The formats of a kernel with the series, its user_unwind_stack being @stack_fmt. */
static struct tep_handle *make_tep_of(const char *stack_fmt)
{
	const char *const fmts[] = {
		fmt_kernel_stack, fmt_user_stack, fmt_unwind_cookie, stack_fmt, fmt_sched_switch,
	};
	struct tep_handle *tep = tep_alloc();

	assert_non_null(tep);
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, TD_PAGE_SIZE);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		assert_int_equal(tep_parse_event(tep, fmts[i], strlen(fmts[i]),
						 i == 4 ? "sched" : "ftrace"), TEP_ERRNO__SUCCESS);
	return tep;
}

static struct tep_handle *make_tep(void)
{
	return make_tep_of(fmt_unwind_stack);
}

/*
 * One switch of @tid with its kernel stack and cookie on CPU 0 and its
 * deferred user stack (@ips) on CPU 1, fed as two pages.
 */
static void feed(struct td_pipeline *pl, int tid, const uint64_t *ips, unsigned int nr)
{
	static uint8_t page[TD_PAGE_SIZE];
	uint8_t rec[256];
	struct td_pagegen pg;
	uint64_t cookie = 0x100000001ULL;

	td_pagegen_start(&pg, page, sizeof(page), 1000);
	assert_int_equal(td_pagegen_add(&pg, 1000, rec,
					rec_switch(rec, "worker", tid, "swapper/0", 0)), 0);
	assert_int_equal(td_pagegen_add(&pg, 1001, rec, rec_kstack(rec, tid, kips, NR_KIPS)), 0);
	assert_int_equal(td_pagegen_add(&pg, 1002, rec, rec_cookie(rec, tid, cookie)), 0);
	td_pagegen_finish(&pg, false, 0);
	assert_true(td_pipeline_page(pl, 0, page, sizeof(page)) >= 3);

	td_pagegen_start(&pg, page, sizeof(page), 2000);
	assert_int_equal(td_pagegen_add(&pg, 2000, rec, rec_unwind(rec, tid, cookie, ips, nr)), 0);
	td_pagegen_finish(&pg, false, 0);
	assert_true(td_pipeline_page(pl, 1, page, sizeof(page)) >= 1);
	td_pipeline_flush(pl);
}

static struct td_pipeline *make(struct tep_handle *tep, enum td_pipeline_stage stage)
{
	struct td_pipeline_config cfg = { .nr_cpus = 2, .stage = stage };
	struct td_pipeline *pl = td_pipeline_new(tep, &cfg);

	assert_non_null(pl);
	return pl;
}

static void test_stitched_to_every_sink(void **state)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline *pl = make(tep, TD_PIPE_ALL);
	struct seen a = { 0 }, b = { 0 };
	struct td_pipeline_stats st;

	(void)state;
	order = 0;
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &a), 0);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &b), 0);
	feed(pl, TID, uips, 4);
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 1);
	assert_int_equal(a.order, 1);	/* in the order added */
	assert_int_equal(b.order, 2);
	assert_int_equal(a.status, TD_STITCHED);
	assert_int_equal(a.tid, TID);
	assert_string_equal(a.event, "sched:sched_switch");
	assert_int_equal(a.nk, NR_KIPS);
	assert_int_equal(a.nu, 4);
	assert_int_equal(a.u0, uips[0]);
	assert_string_equal(a.ksym, "");	/* symbolize off */
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.parse.events, 1);
	assert_int_equal(st.parse.stacks, 1);
	assert_int_equal(st.stitch.emitted[TD_STITCHED], 1);
	assert_int_equal(st.emitted, 1);
	assert_int_equal(st.resolved, 1);
	assert_int_equal(st.kframes, NR_KIPS);
	assert_int_equal(st.uframes, 4);
	assert_int_equal(st.kframes_named, 0);
	assert_false(st.has_sym);
	assert_int_equal(st.sink_errors, 0);
	assert_int_equal(td_pipeline_error(pl, NULL), 0);
	assert_false(td_pipeline_broken(pl));
	td_pipeline_free(pl);
	tep_free(tep);
}

/*
 * Events keep their record only for a sink that reads fields: with none
 * (profiles only) what the sinks use is all there without it, and one
 * sink that reads fields is enough to keep it for all.
 */
static void test_fields_kept_when_read(void **state)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline *pl = make(tep, TD_PIPE_ALL);
	struct seen a = { 0 }, b = { 0 };

	(void)state;
	assert_int_equal(td_pipeline_add_sink(pl, &seen_nofields_ops, &a), 0);
	feed(pl, TID, uips, 4);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.raw_size, -1);
	assert_string_equal(a.comm, "worker");
	assert_string_equal(a.event, "sched:sched_switch");
	assert_int_equal(a.status, TD_STITCHED);
	assert_int_equal(a.nk, NR_KIPS);
	assert_int_equal(a.nu, 4);
	td_pipeline_free(pl);

	pl = make(tep, TD_PIPE_ALL);
	memset(&a, 0, sizeof(a));
	assert_int_equal(td_pipeline_add_sink(pl, &seen_nofields_ops, &a), 0);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &b), 0);
	feed(pl, TID, uips, 4);
	assert_int_equal(b.calls, 1);
	assert_true(b.raw_size > 0);
	assert_string_equal(b.next_comm, "swapper/0");
	assert_int_equal(a.raw_size, b.raw_size);
	assert_string_equal(a.comm, "worker");
	td_pipeline_free(pl);
	tep_free(tep);
}

static void test_sink_errors(void **state)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline *pl = make(tep, TD_PIPE_ALL);
	struct seen full = { .ret = -ENOSPC }, gone = { .ret = -EPIPE }, ok = { 0 };
	struct td_pipeline_stats st;
	const char *name = NULL;

	(void)state;
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &full), 0);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &gone), 0);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &ok), 0);
	feed(pl, TID, uips, 2);
	feed(pl, TID + 1, uips, 2);
	/* A failing sink is still called; one whose reader went away is not. */
	assert_int_equal(full.calls, 2);
	assert_int_equal(gone.calls, 1);
	assert_int_equal(ok.calls, 2);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.sink_errors, 2);	/* -EPIPE is not an error */
	assert_true(st.broken);
	assert_true(td_pipeline_broken(pl));
	assert_int_equal(td_pipeline_error(pl, &name), -ENOSPC);
	assert_string_equal(name, "seen");
	td_pipeline_free(pl);
	tep_free(tep);
}

static void test_short_stages(void **state)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline_stats st;
	struct td_pipeline *pl;
	struct seen s = { 0 };

	(void)state;
	pl = make(tep, TD_PIPE_PARSE);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	feed(pl, TID, uips, 4);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.parse.events, 1);
	assert_int_equal(st.parse.stacks, 1);
	assert_int_equal(st.emitted, 0);
	assert_int_equal(st.stitch.emitted[TD_STITCHED], 0);
	assert_int_equal(s.calls, 0);
	td_pipeline_free(pl);

	pl = make(tep, TD_PIPE_STITCH);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	feed(pl, TID, uips, 4);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.emitted, 1);
	assert_int_equal(st.stitch.emitted[TD_STITCHED], 1);
	assert_int_equal(st.resolved, 0);
	assert_int_equal(s.calls, 0);
	td_pipeline_free(pl);
	tep_free(tep);
}

struct hooks_seen {
	int live_calls, ksym_calls;
	int ksym_return;	/* bit i: kips[i] was asked as a return address */
	bool live;
};

static bool task_live(int tid, const char *comm, uint64_t ts, void *arg)
{
	struct hooks_seen *h = arg;

	/* The event's time, for telling a task from a later one with its tid. */
	assert_true(ts > 0);

	h->live_calls++;
	assert_string_equal(comm, "worker");
	return h->live;
}

static int kernel_sym(uint64_t addr, bool return_addr, struct td_frame *out, void *arg)
{
	struct hooks_seen *h = arg;

	h->ksym_calls++;
	for (unsigned int i = 0; i < NR_KIPS; i++)
		if (addr == kips[i] && return_addr)
			h->ksym_return |= 1 << i;
	out->addr = addr;
	out->symbol = addr == KADDR ? "from_the_file" : NULL;
	return out->symbol ? 0 : -ENOENT;
}

/* A trace of another time: /proc is asked only about tasks the hook allows. */
static void test_report_hooks(void **state)
{
	struct tep_handle *tep = make_tep();
	struct hooks_seen h = { .live = false };
	struct td_pipeline_config cfg = {
		.nr_cpus = 2, .symbolize = true,
		.hooks = { .kernel_sym = kernel_sym, .task_live = task_live, .arg = &h },
	};
	struct td_pipeline_stats st;
	struct td_pipeline *pl;
	struct seen s = { 0 };

	(void)state;
	/* Our own tid: live, /proc would name our process. */
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	feed(pl, getpid(), uips, 2);
	assert_int_equal(h.live_calls, 1);
	assert_int_equal(h.ksym_calls, NR_KIPS);
	/* Where the stack was taken, then return addresses. */
	assert_int_equal(h.ksym_return, (1 << NR_KIPS) - 2);
	assert_string_equal(s.ksym, "from_the_file");
	assert_int_equal(s.pid, 0);	/* the hook said no: not read from /proc */
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.no_pid, 1);
	assert_int_equal(st.kframes_named, 1);
	assert_true(st.has_sym);
	assert_int_equal(st.sym.kernel_lookups, 0);	/* kallsyms never read */
	/* Its user frames left raw, and counted so (report says why). */
	assert_int_equal(st.uframes, 2);
	assert_int_equal(st.uframes_gone, 2);
	td_pipeline_free(pl);

	h.live = true;
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	feed(pl, getpid(), uips, 2);
	assert_int_equal(s.pid, getpid());
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.uframes, 2);
	assert_int_equal(st.uframes_gone, 0);
	td_pipeline_free(pl);
	tep_free(tep);
}

/*
 * A switch of thread @tid at @ts, its cookie, and its deferred stack
 * record, which says the process (@tgid).
 */
static void add_switch_stacked(struct td_pagegen *pg, uint64_t ts, int tid, int tgid,
			       uint64_t cookie)
{
	uint8_t rec[256];

	assert_int_equal(td_pagegen_add(pg, ts, rec,
					rec_switch(rec, "worker", tid, "swapper/0", 0)), 0);
	assert_int_equal(td_pagegen_add(pg, ts + 1, rec, rec_cookie(rec, tid, cookie)), 0);
	assert_int_equal(td_pagegen_add(pg, ts + 2, rec,
					rec_unwind_tgid(rec, tid, cookie, uips, 2, 0, 0, tgid)), 0);
}

/* The kernel names of kips[]: ftrace's probe, the iterator, then the traced code. */
static int tracer_sym(uint64_t addr, bool return_addr, struct td_frame *out, void *arg)
{
	static const char *const names[NR_KIPS] = {
		"trace_event_raw_event_sched_switch", "__traceiter_sched_switch", "__schedule",
	};

	(void)return_addr;
	(void)arg;
	out->addr = addr;
	out->object = "[kernel]";
	for (unsigned int i = 0; i < NR_KIPS; i++)
		if (addr == kips[i])
			out->symbol = names[i];
	return out->symbol ? 0 : -ENOENT;
}

static const struct td_sink_ops seen_profile_ops = {
	.name = "seen-profile", .write = seen_write, .no_fields = true, .no_tracer_frames = true,
};

/*
 * Profile sinks get kernel stacks from the traced code on, the tracer's own
 * innermost frames left out, under the stack's one id; the others every
 * frame. Named once (the second event's stack comes from the memo), or
 * every time (no_memo).
 */
static void test_profiles_without_tracer_frames(void **state)
{
	struct tep_handle *tep = make_tep();

	(void)state;
	for (int memo = 1; memo >= 0; memo--) {
		struct td_pipeline_config cfg = {
			.nr_cpus = 2, .symbolize = true, .no_memo = !memo,
			.hooks = { .kernel_sym = tracer_sym },
		};
		struct td_pipeline *pl = td_pipeline_new(tep, &cfg);
		struct td_folded *fo = td_folded_new();
		struct seen all = { 0 }, prof = { 0 };
		char *buf = NULL;
		size_t len = 0;
		FILE *f;

		assert_non_null(pl);
		assert_non_null(fo);
		assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &all), 0);
		assert_int_equal(td_pipeline_add_sink(pl, &seen_profile_ops, &prof), 0);
		assert_int_equal(td_pipeline_add_sink(pl, &td_folded_sink_ops, fo), 0);
		feed(pl, TID, uips, 2);
		feed(pl, TID, uips, 2);
		assert_int_equal(all.calls, 2);
		assert_int_equal(prof.calls, 2);
		assert_int_equal(all.nk, NR_KIPS);
		assert_string_equal(all.ksym, "trace_event_raw_event_sched_switch");
		assert_int_equal(prof.nk, 1);
		assert_string_equal(prof.ksym, "__schedule");
		assert_int_equal(prof.kid, all.kid);
		if (memo)
			assert_int_not_equal(all.kid, 0);
		f = open_memstream(&buf, &len);
		assert_non_null(f);
		assert_int_equal(td_folded_write(fo, f), 0);
		fclose(f);
		assert_null(strstr(buf, "trace"));
		assert_non_null(strstr(buf, ";__schedule 2\n"));
		free(buf);
		td_folded_free(fo);
		td_pipeline_free(pl);
	}
	tep_free(tep);
}

/*
 * A trace of another time whose stack records say the tgid: the process is
 * known though /proc may not be asked (the hook says the tid is another
 * task's now), and the thread is filed under it.
 */
static void test_report_pid_from_stack(void **state)
{
	static uint8_t page[TD_PAGE_SIZE];
	struct tep_handle *tep = make_tep_of(fmt_unwind_stack_tgid);
	struct hooks_seen h = { .live = false };
	struct td_pipeline_config cfg = {
		.nr_cpus = 2, .symbolize = true,
		.hooks = { .kernel_sym = kernel_sym, .task_live = task_live, .arg = &h },
	};
	uint64_t cookie = 0x100000001ULL;
	struct td_pipeline_stats st;
	struct td_pipeline *pl;
	struct td_pagegen pg;
	struct seen s = { 0 };

	(void)state;
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	td_pagegen_start(&pg, page, sizeof(page), 1000);
	add_switch_stacked(&pg, 1000, 4243, 4242, cookie);
	td_pagegen_finish(&pg, false, 0);
	assert_int_equal(td_pipeline_page(pl, 0, page, sizeof(page)), 3);
	td_pipeline_flush(pl);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, TD_STITCHED);
	assert_int_equal(s.tid, 4243);
	assert_int_equal(s.pid, 4242);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.no_pid, 0);
	td_pipeline_free(pl);
	tep_free(tep);
}

/*
 * exec_names_only: sched_process_exec names its task and goes no further,
 * also when it met a deferred stack; it is in no count of events.
 */
static void exec_names_run(bool names_only, struct seen *seen, struct td_pipeline_stats *st)
{
	const char *const fmts[] = { fmt_sched_exec, fmt_sys_enter };
	const char *const systems[] = { "sched", "raw_syscalls" };
	struct td_pipeline_config cfg = { .nr_cpus = 2, .exec_names_only = names_only };
	struct tep_handle *tep = make_tep();
	static uint8_t page[TD_PAGE_SIZE];
	uint64_t cookie = 0x300000001ULL;
	struct td_pipeline *pl;
	struct td_pagegen pg;
	uint8_t rec[256];

	for (size_t i = 0; i < 2; i++)
		assert_int_equal(tep_parse_event(tep, fmts[i], strlen(fmts[i]), systems[i]),
				 TEP_ERRNO__SUCCESS);
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_exec_names_only(pl), names_only);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, seen), 0);
	td_pagegen_start(&pg, page, sizeof(page), 1000);
	assert_int_equal(td_pagegen_add(&pg, 1000, rec, rec_exec(rec, TID, "/usr/bin/cc", 0)), 0);
	assert_int_equal(td_pagegen_add(&pg, 1001, rec, rec_cookie(rec, TID, cookie)), 0);
	assert_int_equal(td_pagegen_add(&pg, 1100, rec, rec_sys_enter(rec, TID, 0)), 0);
	td_pagegen_finish(&pg, false, 0);
	assert_int_equal(td_pipeline_page(pl, 0, page, sizeof(page)), 3);
	td_pagegen_start(&pg, page, sizeof(page), 2000);
	assert_int_equal(td_pagegen_add(&pg, 2000, rec, rec_unwind(rec, TID, cookie, uips, 2)), 0);
	td_pagegen_finish(&pg, false, 0);
	assert_int_equal(td_pipeline_page(pl, 1, page, sizeof(page)), 1);
	td_pipeline_flush(pl);
	td_pipeline_get_stats(pl, st);
	td_pipeline_free(pl);
	tep_free(tep);
}

static void test_exec_names_only(void **state)
{
	struct td_pipeline_stats st;
	struct seen seen = { 0 };

	(void)state;
	exec_names_run(true, &seen, &st);
	assert_int_equal(seen.calls, 1);
	assert_string_equal(seen.event, "raw_syscalls:sys_enter");
	assert_string_equal(seen.comm, "cc");
	assert_int_equal(st.parse.events, 1);
	assert_int_equal(st.parse.naming_events, 1);
	assert_int_equal(st.emitted, 1);
	assert_int_equal(st.stitch.emitted[TD_STITCHED], 0);
	assert_int_equal(st.stitch.emitted[TD_NO_USER], 1);
	assert_int_equal(st.stitch.orphan_stacks, 0);

	/* Asked for (not names only): an event as any other, stitched. */
	memset(&seen, 0, sizeof(seen));
	exec_names_run(false, &seen, &st);
	assert_int_equal(seen.calls, 2);
	assert_int_equal(st.parse.events, 2);
	assert_int_equal(st.parse.naming_events, 0);
	assert_int_equal(st.stitch.emitted[TD_STITCHED], 1);

	/* Formats without sched_process_exec: asked for, not in effect. */
	{
		struct td_pipeline_config cfg = { .nr_cpus = 1, .exec_names_only = true };
		struct tep_handle *tep = make_tep();
		struct td_pipeline *pl = td_pipeline_new(tep, &cfg);

		assert_non_null(pl);
		assert_false(td_pipeline_exec_names_only(pl));
		td_pipeline_free(pl);
		tep_free(tep);
	}
}

/*
 * -p: only events of the processes asked for reach the sinks; another
 * process's, and one whose process nothing says, are counted and dropped.
 * The pipeline keeps its own copy of the list.
 */
static void test_pids_filter(void **state)
{
	static uint8_t page[TD_PAGE_SIZE];
	struct tep_handle *tep = make_tep_of(fmt_unwind_stack_tgid);
	struct hooks_seen h = { .live = false };
	int pids[] = { 4242 };
	struct td_pipeline_config cfg = {
		.nr_cpus = 2, .symbolize = true,
		.hooks = { .kernel_sym = kernel_sym, .task_live = task_live, .arg = &h },
		.pids = pids, .nr_pids = 1,
	};
	uint64_t c1 = 0x100000001ULL, c2 = 0x200000001ULL;
	struct td_pipeline_stats st;
	struct td_pipeline *pl;
	struct td_pagegen pg;
	struct seen s = { 0 };
	uint8_t rec[256];

	(void)state;
	cfg.pids = NULL;
	errno = 0;
	assert_null(td_pipeline_new(tep, &cfg));
	assert_int_equal(errno, EINVAL);
	cfg.pids = pids;
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	pids[0] = 5000;		/* the caller's array: not what filters */
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	td_pagegen_start(&pg, page, sizeof(page), 1000);
	/* Process 5000's thread, then ours (4242), then one nothing names. */
	add_switch_stacked(&pg, 1000, 5001, 5000, c2);
	add_switch_stacked(&pg, 1010, 4243, 4242, c1);
	assert_int_equal(td_pagegen_add(&pg, 1020, rec,
					rec_switch(rec, "worker", 6001, "swapper/0", 0)), 0);
	td_pagegen_finish(&pg, false, 0);
	assert_int_equal(td_pipeline_page(pl, 0, page, sizeof(page)), 7);
	td_pipeline_flush(pl);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.tid, 4243);
	assert_int_equal(s.pid, 4242);
	assert_int_equal(s.status, TD_STITCHED);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.emitted, 3);
	assert_int_equal(st.other_pids, 2);
	assert_int_equal(st.resolved, 1);
	/* Dropped before naming: only the kept event's user frames were. */
	assert_int_equal(st.uframes, 2);
	td_pipeline_free(pl);
	tep_free(tep);
}

/* Not static, not inlined: named from this program's symbol table. */
__attribute__((noinline)) uint64_t test_pipeline_marker(void);
__attribute__((noinline)) uint64_t test_pipeline_marker(void)
{
	return (uint64_t)(uintptr_t)__builtin_return_address(0);
}

/*
 * No sink (what `trace-defer record` runs alone): the events are counted
 * as emitted, and no frame is made for nobody.
 */
static void test_no_sink_names_nothing(void **state)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline_config cfg = { .nr_cpus = 2, .symbolize = true, .live = true };
	uint64_t ips[2] = { (uint64_t)(uintptr_t)test_pipeline_marker + 1 };
	struct td_pipeline_stats st;
	struct td_pipeline *pl;

	(void)state;
	ips[1] = test_pipeline_marker();
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	feed(pl, getpid(), ips, 2);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.emitted, 1);
	assert_int_equal(st.stacks_named, 0);
	assert_int_equal(st.kframes, 0);
	assert_int_equal(st.uframes, 0);
	td_pipeline_free(pl);
	tep_free(tep);
}

/* Live input: this process is traced; its pid and frames come from /proc. */
static void test_live_names_this_process(void **state)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline_config cfg = { .nr_cpus = 2, .symbolize = true, .live = true };
	uint64_t ips[2] = { (uint64_t)(uintptr_t)test_pipeline_marker + 1 };
	struct td_pipeline *pl;
	struct seen s = { 0 };

	(void)state;
	ips[1] = test_pipeline_marker();
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	feed(pl, getpid(), ips, 2);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.pid, getpid());
	assert_string_equal(s.usym, "test_pipeline_marker");
	td_pipeline_free(pl);
	tep_free(tep);
}

/*
 * Past cfg.sym_max_bytes, housekeeping starts the symbolizer again: the
 * stacks named before are dropped (new ids), the same frames come out
 * named the same, and a profile still counts both events in one sample.
 * Not again within a minute, unless four times past the bound. A bound
 * not reached changes nothing. What one event of this process makes the
 * symbolizer hold (@held) is the same every time: the bounds are
 * fractions of it.
 */
static void sym_restart(uint64_t bound, uint64_t *held)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline_config cfg = { .nr_cpus = 2, .symbolize = true, .live = true,
					  .sym_max_bytes = bound };
	uint64_t ips[2] = { (uint64_t)(uintptr_t)test_pipeline_marker + 1 };
	bool restarts = bound && bound < *held;
	struct td_pipeline_stats st;
	struct td_pprof_stats ps;
	struct td_pipeline *pl;
	struct td_pprof *pp;
	struct seen s = { 0 };
	uint64_t kid, uid;
	char ksym[64];

	ips[1] = test_pipeline_marker();
	pl = td_pipeline_new(tep, &cfg);
	pp = td_pprof_new(0);
	assert_non_null(pl);
	assert_non_null(pp);
	td_pipeline_set_now(pl, 1ULL * 1000000000);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	assert_int_equal(td_pipeline_add_sink(pl, &td_pprof_sink_ops, pp), 0);
	feed(pl, getpid(), ips, 2);
	assert_string_equal(s.usym, "test_pipeline_marker");
	kid = s.kid;
	uid = s.uid;
	snprintf(ksym, sizeof(ksym), "%s", s.ksym);
	td_pipeline_get_stats(pl, &st);
	if (!*held)
		*held = st.sym.held_bytes;
	assert_true(st.sym.held_bytes > 0);
	assert_int_equal(st.sym.held_bytes, *held);

	assert_int_equal(td_pipeline_housekeeping(pl), restarts ? TD_HK_SYM_RESTARTED : 0);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.sym.restarts, restarts);
	/* After a restart, only the kept maps' paths. */
	if (restarts) {
		assert_int_equal(st.sym.held_bytes, st.sym.string_bytes);
		assert_true(st.sym.held_bytes < *held);
	} else {
		assert_int_equal(st.sym.held_bytes, *held);
	}
	feed(pl, getpid(), ips, 2);
	assert_string_equal(s.usym, "test_pipeline_marker");
	assert_string_equal(s.ksym, ksym);
	assert_true(restarts ? s.kid != kid && s.uid != uid : s.kid == kid && s.uid == uid);
	td_pprof_stats(pp, &ps);
	assert_int_equal(ps.events, 2);
	assert_int_equal(ps.samples, 1);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.sym.held_bytes, *held);

	/* Past the bound again 4 s later: at once only if four times past it. */
	td_pipeline_set_now(pl, 5ULL * 1000000000);
	assert_int_equal(td_pipeline_housekeeping(pl),
			 restarts && *held / 4 >= bound ? TD_HK_SYM_RESTARTED : 0);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.sym.restarts, restarts ? 1 + (*held / 4 >= bound) : 0);
	/* A minute later: again. */
	feed(pl, getpid(), ips, 2);
	td_pipeline_set_now(pl, 66ULL * 1000000000);
	assert_int_equal(td_pipeline_housekeeping(pl), restarts ? TD_HK_SYM_RESTARTED : 0);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.sym.restarts, restarts ? 2 + (*held / 4 >= bound) : 0);
	td_pipeline_free(pl);
	td_pprof_free(pp);
	tep_free(tep);
}

static void test_live_sym_restart(void **state)
{
	uint64_t held = 0;

	(void)state;
	sym_restart(0, &held);
	sym_restart(held, &held);		/* reached, not passed */
	sym_restart(held / 2, &held);		/* twice the bound: the minute waited for */
	sym_restart(held / 8, &held);		/* eight times: not */
}

/*
 * A restart keeps the processes' maps and their paths. When they alone
 * pass the bound, a restart would free nothing: none comes, however long
 * the wait, until the symbolizer holds past the bound more than it kept.
 */
static void test_live_sym_restart_kept(void **state)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline_config cfg = { .nr_cpus = 2, .symbolize = true, .live = true,
					  .sym_max_bytes = 1 };
	uint64_t ips[2] = { (uint64_t)(uintptr_t)test_pipeline_marker + 1 };
	struct td_pipeline_stats st;
	struct td_pipeline *pl;
	struct seen s = { 0 };
	uint64_t kept;

	(void)state;
	ips[1] = test_pipeline_marker();
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	td_pipeline_set_now(pl, 1ULL * 1000000000);
	feed(pl, getpid(), ips, 2);
	assert_string_equal(s.usym, "test_pipeline_marker");
	assert_int_equal(td_pipeline_housekeeping(pl), TD_HK_SYM_RESTARTED);
	td_pipeline_get_stats(pl, &st);
	kept = st.sym.held_bytes;
	/* The maps' paths: past the 1-byte bound, and all a restart keeps. */
	assert_true(kept > cfg.sym_max_bytes);
	for (uint64_t t = 66; t < 66 + 10 * 60; t += 60) {
		td_pipeline_set_now(pl, t * 1000000000);
		assert_int_equal(td_pipeline_housekeeping(pl), 0);
	}
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.sym.restarts, 1);
	assert_int_equal(st.sym.held_bytes, kept);
	/* The file's symbols read again: those a restart frees. */
	feed(pl, getpid(), ips, 2);
	assert_string_equal(s.usym, "test_pipeline_marker");
	td_pipeline_get_stats(pl, &st);
	assert_true(st.sym.held_bytes > kept);
	assert_int_equal(td_pipeline_housekeeping(pl), TD_HK_SYM_RESTARTED);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.sym.restarts, 2);
	td_pipeline_free(pl);
	tep_free(tep);
}

/*
 * A failed assertion leaves a test at once: the perf map it wrote as this
 * process's must not stay in /tmp.
 */
static int remove_own_perf_map(void **state)
{
	char path[64];

	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	unlink(path);
	return 0;
}

/*
 * A recording that names nothing still copies the JITs' perf maps, and
 * holds their names: cfg.sym_max_bytes bounds that symbolizer too.
 */
static void test_live_copy_only_restart(void **state)
{
	char save[] = "/tmp/td-test-saved-XXXXXX", path[64], copy[96];
	struct td_pipeline_config cfg = { .nr_cpus = 2, .live = true, .sym_max_bytes = 1 };
	struct tep_handle *tep = make_tep();
	uint64_t ips[1] = { 0x1000 };
	struct td_pipeline_stats st;
	struct td_pipeline *pl;
	struct seen s = { 0 };
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(save));
	cfg.perf_maps_save = save;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	snprintf(copy, sizeof(copy), "%s/perf-%d.map", save, getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 100; i++)
		fprintf(f, "%x 10 copied_fn_%d\n", 0x10000 + 0x10 * i, i);
	fclose(f);
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	td_pipeline_set_now(pl, 1ULL * 1000000000);
	feed(pl, getpid(), ips, 1);
	td_pipeline_get_stats(pl, &st);
	assert_true(st.sym.held_bytes > 100 * 10);
	assert_int_equal(st.sym.jit_maps_saved, 1);
	assert_int_equal(td_pipeline_housekeeping(pl), TD_HK_SYM_RESTARTED);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.sym.restarts, 1);
	assert_int_equal(st.sym.held_bytes, 0);
	assert_int_equal(st.sym.jit_maps_saved, 1);
	td_pipeline_free(pl);
	tep_free(tep);
	unlink(path);
	unlink(copy);
	assert_int_equal(rmdir(save), 0);
}

/*
 * Live, kallsyms is read again once a minute: a symbol that appeared
 * meanwhile (a module loaded) names the kernel stacks from then on, the
 * ones named before dropped; not before the minute is up.
 */
static void test_live_kallsyms_reload(void **state)
{
	char path[] = "/tmp/td-test-kallsyms-XXXXXX";
	struct td_pipeline_config cfg = { .nr_cpus = 2, .symbolize = true, .live = true,
					  .kallsyms = path };
	struct tep_handle *tep = make_tep();
	uint64_t ips[1] = { test_pipeline_marker() };
	struct td_pipeline_stats st;
	struct td_pipeline *pl;
	struct seen s = { 0 };
	uint64_t kid;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("ffffffff81000000 T kfn_old\n", f);
	fclose(f);
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	td_pipeline_set_now(pl, td_mono_ns());
	feed(pl, getpid(), ips, 1);
	assert_string_equal(s.ksym, "kfn_old");
	kid = s.kid;

	f = fopen(path, "a");
	assert_non_null(f);
	fputs("ffffffff81000008 T kfn_new\n", f);
	fclose(f);
	/* Read again only once a minute. */
	assert_int_equal(td_pipeline_housekeeping(pl), 0);
	feed(pl, getpid(), ips, 1);
	assert_string_equal(s.ksym, "kfn_old");
	assert_int_equal(s.kid, kid);

	td_pipeline_set_now(pl, td_mono_ns() + 61ULL * 1000000000);
	assert_int_equal(td_pipeline_housekeeping(pl), TD_HK_KSYMS_RELOADED);
	feed(pl, getpid(), ips, 1);
	assert_string_equal(s.ksym, "kfn_new");
	assert_int_not_equal(s.kid, kid);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.sym.kernel_reloads, 1);
	td_pipeline_free(pl);
	tep_free(tep);
	unlink(path);
}

/*
 * One switch of this process with a deferred stack of the one frame @ip,
 * which the stack record says is in anonymous memory (file identity).
 */
static void feed_anon(struct td_pipeline *pl, uint64_t ip, unsigned int i)
{
	static const uint8_t ff[] = { TD_FF_ANON };
	static const uint64_t bases[] = { 0x400000 };
	static const uint32_t ids[] = { 7 };
	static uint8_t page[TD_PAGE_SIZE];
	int pid = getpid();
	struct td_rec_ustack us = {
		.cookie = 0x100000001ULL + i, .ips = &ip, .nr = 1, .bases = bases,
		.ids = ids, .nr_files = 1, .frame_files = ff, .tgid_layout = true, .tgid = pid,
	};
	uint64_t t = 1000 + 1000 * i;
	struct td_pagegen pg;
	uint8_t rec[512];

	td_pagegen_start(&pg, page, sizeof(page), t);
	assert_int_equal(td_pagegen_add(&pg, t, rec, rec_switch(rec, "jit", pid, "swapper/0", 0)),
			 0);
	assert_int_equal(td_pagegen_add(&pg, t + 1, rec, rec_cookie(rec, pid, us.cookie)), 0);
	td_pagegen_finish(&pg, false, 0);
	assert_true(td_pipeline_page(pl, 0, page, sizeof(page)) >= 2);
	td_pagegen_start(&pg, page, sizeof(page), t + 2);
	assert_int_equal(td_pagegen_add(&pg, t + 2, rec,
					td_rec_ustack(rec, sizeof(rec), ID_UNWIND_STACK, pid, &us)),
			 0);
	td_pagegen_finish(&pg, false, 0);
	assert_int_equal(td_pipeline_page(pl, 1, page, sizeof(page)), 1);
	td_pipeline_flush(pl);
}

/*
 * Live, a frame of JIT code seen before its perf map line was written (a
 * map dumped only when asked): raw at first, also for a while after the
 * line came (the named stack is kept), named once housekeeping has read
 * the map again. Named from the maps (@files false) or from the stack
 * record's file identity. The map is this process's own, as a JIT writes
 * it.
 */
static void jit_line_late(bool files)
{
	struct tep_handle *tep = files ? make_tep_of(fmt_unwind_stack_full) : make_tep();
	struct td_pipeline_config cfg = { .nr_cpus = 2, .symbolize = true, .live = true };
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	uint64_t ips[1] = { (uintptr_t)code + 0x10 };
	struct td_pipeline *pl;
	struct seen s = { 0 };
	char path[64];
	FILE *f;

	assert_true(code != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%" PRIx64 " 40 late_jit_fn", (uint64_t)(uintptr_t)code);
	fclose(f);
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	for (unsigned int i = 0; i < 3; i++) {
		if (i == 1) {
			f = fopen(path, "a");
			assert_non_null(f);
			fputs("\n", f);
			fclose(f);
		}
		if (i == 2)
			td_pipeline_housekeeping(pl);
		if (files)
			feed_anon(pl, ips[0], i);
		else
			feed(pl, getpid(), ips, 1);
		assert_int_equal(s.calls, i + 1);
		assert_int_equal(s.nu, 1);
		assert_string_equal(s.usym, i < 2 ? "" : "late_jit_fn");
	}
	td_pipeline_free(pl);
	tep_free(tep);
	unlink(path);
	munmap(code, page);
}

static void test_live_jit_line_late(void **state)
{
	(void)state;
	jit_line_late(false);
	jit_line_late(true);
}

/*
 * Live input whose stack records carry file identity: the maps of a new
 * process are read at its first event only until a stack record shows
 * the files (they name the frames; the maps would be read for nothing).
 */
static void test_live_files_no_maps(void **state)
{
	static const uint8_t ff[] = { 0, 0 };
	static const uint64_t bases[] = { 0x400000 };
	static const uint32_t ids[] = { 7 };
	static uint8_t page[TD_PAGE_SIZE];
	struct tep_handle *tep = make_tep_of(fmt_unwind_stack_files);
	struct td_pipeline_config cfg = { .nr_cpus = 2, .symbolize = true, .live = true };
	int tids[2] = { getpid(), getppid() };
	struct td_pipeline_stats st;
	struct td_pipeline *pl;
	struct td_pagegen pg;
	struct seen s = { 0 };
	uint8_t rec[512];

	(void)state;
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	for (int i = 0; i < 2; i++) {
		uint64_t cookie = 0x100000001ULL + i, t = 1000 + 1000 * i;

		/* The event, complete (the idle task's switch follows), then its stack. */
		td_pagegen_start(&pg, page, sizeof(page), t);
		assert_int_equal(td_pagegen_add(&pg, t, rec,
						rec_switch(rec, "worker", tids[i], "swapper/0", 0)), 0);
		assert_int_equal(td_pagegen_add(&pg, t + 1, rec, rec_cookie(rec, tids[i], cookie)),
				 0);
		assert_int_equal(td_pagegen_add(&pg, t + 2, rec,
						rec_switch(rec, "swapper/0", 0, "worker", tids[i])),
				 0);
		td_pagegen_finish(&pg, false, 0);
		assert_int_equal(td_pipeline_page(pl, 0, page, sizeof(page)), 3);
		td_pagegen_start(&pg, page, sizeof(page), t + 3);
		assert_int_equal(td_pagegen_add(&pg, t + 3, rec,
						td_rec_unwind_stack(rec, sizeof(rec), 22, tids[i],
								    cookie, uips, 2, bases, ids,
								    1, ff)), 0);
		td_pagegen_finish(&pg, false, 0);
		assert_int_equal(td_pipeline_page(pl, 1, page, sizeof(page)), 1);
		td_pipeline_flush(pl);
		td_pipeline_get_stats(pl, &st);
		assert_true(st.has_sym);
		/* Ours read at its first event; our parent's, after the files: not. */
		assert_int_equal(st.sym.maps_reads, 1);
	}
	assert_int_equal(s.calls, 4);	/* and the idle task's two switches */
	td_pipeline_free(pl);
	tep_free(tep);
}

/*
 * The same stacks again: named once (the kernel hook is not asked again),
 * the same frames and ids every time. A user stack with a frame no maps
 * covered is named again every time (the miss may be a new mapping the
 * maps will show later). no_memo: every frame named every time, no ids.
 */
/*
 * A stack is dropped once its task has left the kernel entry (a stack of its
 * next entry came) and every event older than that has reached the
 * stitcher, not before: an event the parser still holds (it waits for the
 * records that follow it on its CPU) has not, however far the CPUs were
 * read.
 */
static void test_settle_after_held(void **state)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline *pl = make(tep, TD_PIPE_ALL);
	const uint64_t ms = 1000000, t0 = 100 * ms, cookie = 0x100000001ULL;
	static uint8_t page[TD_PAGE_SIZE];
	struct td_pipeline_stats st;
	struct seen s = { 0 };
	struct td_pagegen pg;
	uint8_t rec[256];

	(void)state;
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	/* The event, its kernel stack and cookie, last on CPU 0: held. */
	td_pagegen_start(&pg, page, sizeof(page), t0);
	assert_int_equal(td_pagegen_add(&pg, t0, rec,
					rec_switch(rec, "worker", TID, "swapper/0", 0)), 0);
	assert_int_equal(td_pagegen_add(&pg, t0 + 1, rec, rec_kstack(rec, TID, kips, NR_KIPS)), 0);
	assert_int_equal(td_pagegen_add(&pg, t0 + 2, rec, rec_cookie(rec, TID, cookie)), 0);
	td_pagegen_finish(&pg, false, 0);
	assert_true(td_pipeline_page(pl, 0, page, sizeof(page)) >= 3);
	/* Its stack, 1 ms later on CPU 1. */
	td_pagegen_start(&pg, page, sizeof(page), t0 + ms);
	assert_int_equal(td_pagegen_add(&pg, t0 + ms, rec, rec_unwind(rec, TID, cookie, uips, 4)),
			 0);
	td_pagegen_finish(&pg, false, 0);
	assert_true(td_pipeline_page(pl, 1, page, sizeof(page)) >= 1);

	/* Read 5 ms past the stack: the event is still held (10 ms), the stack stays. */
	td_pipeline_advance(pl, t0 + 6 * ms);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(s.calls, 0);
	assert_int_equal(st.stitch.pending_stacks, 1);
	assert_int_equal(st.stitch.settled_stacks, 0);
	/*
	 * Past the hold: the event goes on and finds its stack, which stays
	 * (the task may still be preempted on its way out, same cookie)...
	 */
	td_pipeline_advance(pl, t0 + 11 * ms);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, TD_STITCHED);
	assert_int_equal(s.u0, uips[0]);
	assert_int_equal(st.stitch.late_events, 1);
	assert_int_equal(st.stitch.pending_stacks, 1);
	assert_int_equal(st.stitch.settled_stacks, 0);
	/* ...until the stack of the task's next entry has been read past. */
	td_pagegen_start(&pg, page, sizeof(page), t0 + 12 * ms);
	assert_int_equal(td_pagegen_add(&pg, t0 + 12 * ms, rec,
					rec_unwind(rec, TID, cookie + 0x100000000ULL, uips, 4)), 0);
	td_pagegen_finish(&pg, false, 0);
	assert_true(td_pipeline_page(pl, 1, page, sizeof(page)) >= 1);
	td_pipeline_advance(pl, t0 + 12 * ms);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.stitch.pending_stacks, 2);
	td_pipeline_advance(pl, t0 + 14 * ms);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.stitch.pending_stacks, 1);
	assert_int_equal(st.stitch.settled_stacks, 1);
	td_pipeline_free(pl);
	tep_free(tep);
}

/*
 * Live and file input give the same result: the same records fed as the
 * daemon feeds them (each CPU's pages in turn, several at a time, trace
 * time moved to the older of the CPUs' last pages) and as `trace-defer
 * report` does (one record at a time in time order across CPUs) give every
 * event the same status and stack, and the status it was made for. The
 * trace has what a loaded machine has: stacks on the other CPU, stacks that
 * never come, and events after their stack (the task preempted on its way
 * back to user space) up to 20 ms later, far past the settle margin.
 */
#define AGREE_TASKS	16
#define AGREE_ENTRIES	3000
#define AGREE_MAX_RECS	(AGREE_ENTRIES * 8)
#define AGREE_PAGES	512	/* per CPU */

struct agree_rec {
	uint64_t ts;
	int cpu;
	uint16_t len;
	uint8_t data[96];
};

struct agree_event {
	uint64_t ts;
	int tid;
	enum td_status want, got[2];
	uint64_t want_u0, u0[2];
};

struct agree {
	struct agree_rec *recs;
	size_t nr_recs;
	struct agree_event *evs;
	size_t nr_evs;
	int pass;		/* 0: pages, 1: records */
	size_t unmatched;
	size_t late, lost;	/* events made to come after their stack, to be lost */
};

static uint64_t agree_rnd(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545F4914F6CDD1DULL;
}

static void agree_add(struct agree *a, uint64_t ts, int cpu, const uint8_t *rec, unsigned int len)
{
	struct agree_rec *r = &a->recs[a->nr_recs++];

	assert_true(a->nr_recs <= AGREE_MAX_RECS && len <= sizeof(r->data));
	r->ts = ts;
	r->cpu = cpu;
	r->len = (uint16_t)len;
	memcpy(r->data, rec, len);
}

/* An event of @tid at @ts on @cpu: switch, kernel stack, cookie. */
static void agree_event(struct agree *a, uint64_t ts, int cpu, int tid, uint64_t cookie,
			enum td_status want, uint64_t want_u0)
{
	struct agree_event *e = &a->evs[a->nr_evs++];
	uint8_t rec[96];

	agree_add(a, ts, cpu, rec, rec_switch(rec, "worker", tid, "swapper/0", 0));
	agree_add(a, ts + 1, cpu, rec, rec_kstack(rec, tid, kips, NR_KIPS));
	agree_add(a, ts + 2, cpu, rec, rec_cookie(rec, tid, cookie));
	*e = (struct agree_event){ .ts = ts, .tid = tid, .want = want, .want_u0 = want_u0 };
}

static int agree_cmp(const void *x, const void *y)
{
	const struct agree_rec *a = x, *b = y;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->cpu - b->cpu;
}

static void agree_make(struct agree *a)
{
	uint64_t busy[AGREE_TASKS] = { 0 }, x = 0x5eed, t = 1000000000ULL;
	unsigned int seq[2] = { 0, 0 };
	uint8_t rec[96];

	for (int n = 0; n < AGREE_ENTRIES; n++) {
		int cpu = n % 2, k = (int)(agree_rnd(&x) % AGREE_TASKS), tid, scpu;
		uint64_t cookie, ips[2], ts_s, last;
		bool lost, late;

		t += 100000 + agree_rnd(&x) % 200000;
		/* A task is in one kernel entry at a time. */
		for (int i = 0; i < AGREE_TASKS && busy[k] > t; i++)
			k = (k + 1) % AGREE_TASKS;
		if (busy[k] > t)
			continue;
		tid = 5000 + k;
		cookie = ((uint64_t)(2 * seq[cpu]++ + 1) << 32) | (uint32_t)(cpu + 1);
		ips[0] = 0x400000 + 0x10 * (uint64_t)n;
		ips[1] = 0x500000;
		lost = agree_rnd(&x) % 100 < 5;
		late = !lost && agree_rnd(&x) % 100 < 15;
		agree_event(a, t, cpu, tid, cookie, lost ? TD_USER_LOST : TD_STITCHED,
			    lost ? 0 : ips[0]);
		last = t + 2;
		if (agree_rnd(&x) % 100 < 20) {
			/* Woken and switched out again before going back. */
			last = t + 1000 + agree_rnd(&x) % 5000;
			agree_event(a, last, cpu, tid, cookie, lost ? TD_USER_LOST : TD_STITCHED,
				    lost ? 0 : ips[0]);
		}
		busy[k] = last + 10;
		if (lost)
			continue;
		scpu = agree_rnd(&x) % 2 ? cpu : !cpu;
		ts_s = last + 2000 + agree_rnd(&x) % 100000;
		agree_add(a, ts_s, scpu, rec, rec_unwind(rec, tid, cookie, ips, 2));
		busy[k] = ts_s + 10;
		if (late) {
			/* Preempted on its way out: 1 to 20 ms after the stack. */
			uint64_t tl = ts_s + 1000000 + agree_rnd(&x) % 19000000;

			agree_event(a, tl, scpu, tid, cookie, TD_STITCHED, ips[0]);
			busy[k] = tl + 10;
			a->late++;
		}
	}
	qsort(a->recs, a->nr_recs, sizeof(*a->recs), agree_cmp);
}

static int agree_write(void *priv, const struct td_resolved *r)
{
	struct agree *a = priv;

	for (size_t i = 0; i < a->nr_evs; i++) {
		struct agree_event *e = &a->evs[i];

		if (e->ts == r->ev->ts && e->tid == r->ev->tid) {
			e->got[a->pass] = r->status;
			e->u0[a->pass] = r->nr_uframes ? r->uframes[0].addr : 0;
			return 0;
		}
	}
	a->unmatched++;
	return 0;
}

static const struct td_sink_ops agree_ops = { .name = "agree", .write = agree_write };

/* The daemon's way: per CPU, up to @batch pages of it in turn. */
static void agree_feed_pages(struct td_pipeline *pl, const struct agree *a, int batch)
{
	static uint8_t pages[2][AGREE_PAGES][TD_PAGE_SIZE];
	int nr_pages[2] = { 0, 0 }, next[2] = { 0, 0 };
	static uint64_t page_end[2][AGREE_PAGES];
	struct td_pagegen pg[2];
	bool open[2] = { false, false };

	for (size_t i = 0; i < a->nr_recs; i++) {
		const struct agree_rec *r = &a->recs[i];
		int c = r->cpu;

		if (open[c] && td_pagegen_room(&pg[c]) < td_pagegen_event_size(r->len)) {
			td_pagegen_finish(&pg[c], false, 0);
			open[c] = false;
		}
		if (!open[c]) {
			assert_true(nr_pages[c] < AGREE_PAGES);
			td_pagegen_start(&pg[c], pages[c][nr_pages[c]++], TD_PAGE_SIZE, r->ts);
			open[c] = true;
		}
		assert_int_equal(td_pagegen_add(&pg[c], r->ts, r->data, r->len), 0);
		page_end[c][nr_pages[c] - 1] = r->ts;
	}
	for (int c = 0; c < 2; c++)
		if (open[c])
			td_pagegen_finish(&pg[c], false, 0);
	while (next[0] < nr_pages[0] || next[1] < nr_pages[1]) {
		uint64_t now = UINT64_MAX;

		for (int c = 0; c < 2; c++) {
			for (int k = 0; k < batch && next[c] < nr_pages[c]; k++, next[c]++)
				assert_true(td_pipeline_page(pl, c, pages[c][next[c]],
							     TD_PAGE_SIZE) >= 0);
			/* Everything this CPU wrote up to its last page's end is in. */
			if (next[c] < nr_pages[c] && page_end[c][next[c] - 1] < now)
				now = page_end[c][next[c] - 1];
		}
		if (now != UINT64_MAX)
			td_pipeline_advance(pl, now);
	}
	td_pipeline_flush(pl);
}

/* The report's way: one record at a time, in time order, advanced as it goes. */
static void agree_feed_records(struct td_pipeline *pl, const struct agree *a)
{
	for (size_t i = 0; i < a->nr_recs; i++) {
		const struct agree_rec *r = &a->recs[i];
		struct tep_record rec = { .ts = r->ts, .size = r->len, .record_size = r->len,
					  .data = (void *)r->data, .cpu = r->cpu };

		assert_int_equal(td_pipeline_record(pl, r->cpu, &rec), 0);
		td_pipeline_advance(pl, r->ts);
	}
	td_pipeline_flush(pl);
}

static void test_feeds_agree(void **state)
{
	struct tep_handle *tep = make_tep();
	struct agree a = { 0 };

	(void)state;
	a.recs = calloc(AGREE_MAX_RECS, sizeof(*a.recs));
	a.evs = calloc(AGREE_ENTRIES * 3, sizeof(*a.evs));
	assert_non_null(a.recs);
	assert_non_null(a.evs);
	agree_make(&a);
	for (a.pass = 0; a.pass < 2; a.pass++) {
		struct td_pipeline *pl = make(tep, TD_PIPE_ALL);

		assert_int_equal(td_pipeline_add_sink(pl, &agree_ops, &a), 0);
		if (a.pass == 0)
			agree_feed_pages(pl, &a, 4);
		else
			agree_feed_records(pl, &a);
		td_pipeline_free(pl);
	}
	assert_int_equal(a.unmatched, 0);
	for (size_t i = 0; i < a.nr_evs; i++) {
		const struct agree_event *e = &a.evs[i];

		if (e->got[0] != e->want || e->got[1] != e->want || e->u0[0] != e->want_u0 ||
		    e->u0[1] != e->want_u0)
			fail_msg("event %zu (tid %d, ts %" PRIu64 "): want %d 0x%" PRIx64
				 ", pages %d 0x%" PRIx64 ", records %d 0x%" PRIx64, i, e->tid,
				 e->ts, e->want, e->want_u0, e->got[0], e->u0[0], e->got[1],
				 e->u0[1]);
		a.lost += e->want == TD_USER_LOST;
	}
	/* The trace has what it is for. */
	print_message("%zu events, %zu after their stack by 1-20 ms, %zu lost\n", a.nr_evs,
		      a.late, a.lost);
	assert_true(a.nr_evs > 2000);
	assert_true(a.late > 100);
	assert_true(a.lost > 50);
	free(a.recs);
	free(a.evs);
	tep_free(tep);
}

static void test_named_once(void **state)
{
	struct tep_handle *tep = make_tep();
	struct hooks_seen h = { .live = true };
	struct td_pipeline_config cfg = {
		.nr_cpus = 2, .symbolize = true, .live = true,
		.hooks = { .kernel_sym = kernel_sym, .arg = &h },
	};
	uint64_t ips[2] = { (uint64_t)(uintptr_t)test_pipeline_marker + 1 };
	uint64_t unmapped[2] = { ips[0], 0x10 };
	struct td_pipeline_stats st;
	struct td_pipeline *pl;
	struct seen s = { 0 };
	uint64_t kid, uid;

	(void)state;
	ips[1] = test_pipeline_marker();
	unmapped[1] = 0x10;
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	feed(pl, getpid(), ips, 2);
	kid = s.kid;
	uid = s.uid;
	assert_int_not_equal(kid, 0);
	assert_int_not_equal(uid, 0);
	assert_int_not_equal(kid, uid);
	for (int i = 0; i < 2; i++) {
		memset(s.usym, 0, sizeof(s.usym));
		memset(s.ksym, 0, sizeof(s.ksym));
		feed(pl, getpid(), ips, 2);
		assert_int_equal(s.kid, kid);
		assert_int_equal(s.uid, uid);
		assert_string_equal(s.usym, "test_pipeline_marker");
		assert_string_equal(s.ksym, "from_the_file");
	}
	assert_int_equal(s.calls, 3);
	assert_int_equal(h.ksym_calls, NR_KIPS);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.stacks_named, 2);
	assert_int_equal(st.stacks_reused, 4);
	/* Counted per event as before: what was named, each time it is used. */
	assert_int_equal(st.kframes, 3 * NR_KIPS);
	assert_int_equal(st.kframes_named, 3);
	assert_int_equal(st.uframes_named, 6);

	for (int i = 0; i < 2; i++) {
		memset(s.usym, 0, sizeof(s.usym));
		feed(pl, getpid(), unmapped, 2);
		assert_string_equal(s.usym, "test_pipeline_marker");
		/* Not kept: handed out without an id, named again. */
		assert_int_equal(s.uid, 0);
		assert_int_equal(s.kid, kid);
	}
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.stacks_named, 4);
	assert_int_equal(st.stacks_reused, 6);
	td_pipeline_free(pl);

	cfg.no_memo = true;
	h.ksym_calls = 0;
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	for (int i = 0; i < 2; i++) {
		feed(pl, getpid(), ips, 2);
		assert_int_equal(s.kid, 0);
		assert_int_equal(s.uid, 0);
		assert_string_equal(s.usym, "test_pipeline_marker");
		assert_string_equal(s.ksym, "from_the_file");
	}
	assert_int_equal(h.ksym_calls, 2 * NR_KIPS);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.stacks_named, 4);
	assert_int_equal(st.stacks_reused, 0);
	assert_int_equal(st.uframes_named, 4);
	td_pipeline_free(pl);
	tep_free(tep);
}


/* What a sink saw of each user stack: its id and first frame's object. */
#define SEEN_MAX	12

struct ustack_seen {
	int calls;
	uint64_t uid[SEEN_MAX];
	int pid[SEEN_MAX];
	char object[SEEN_MAX][PATH_MAX];
	bool named[SEEN_MAX];		/* frame 0 has a symbol */
};

static int ustack_seen_write(void *priv, const struct td_resolved *r)
{
	struct ustack_seen *u = priv;

	if (!r->nr_uframes || u->calls >= SEEN_MAX)
		return 0;
	u->uid[u->calls] = r->ustack_id;
	u->pid[u->calls] = r->ev->pid;
	snprintf(u->object[u->calls], sizeof(u->object[0]), "%s",
		 r->uframes[0].object ? r->uframes[0].object : "");
	u->named[u->calls] = r->uframes[0].symbol != NULL;
	u->calls++;
	return 0;
}

static const struct td_sink_ops ustack_seen_ops = { .name = "ustack", .write = ustack_seen_write };

/* A fixture never run, named from file identity alone (tests/unit/rules.mk). */
static void fixture_path(char *path, const char *name)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	assert_true(snprintf(path, PATH_MAX, "%s/../fixtures/%s", exe, name) < PATH_MAX);
	assert_int_equal(access(path, R_OK), 0);
}

/*
 * The same stack record bytes in three processes (a forked server's
 * workers share their layout) share one decoded stack. Frames that come
 * out the same for every process (a file id no record described yet, or a
 * file found at its path) are named once, with one id for all; frames
 * with a recorded file found nowhere are named per process (its root may
 * have it), found again for it, never handed to another. A file record
 * that comes later names the frames again, for every process.
 */
static void test_shared_user_stacks(void **state)
{
	static const uint8_t ff[] = { 0, 0 };
	static const uint64_t bases[] = { 0x400000 };
	static const uint8_t bid_a[20] = { [0 ... 19] = 0x11 };	/* fx_fid_a's */
	static const uint32_t nowhere[] = { 7 }, found[] = { 8 };
	static uint8_t page[TD_PAGE_SIZE];
	struct tep_handle *tep = make_tep_of(fmt_unwind_stack_full);
	struct td_pipeline_config cfg = { .nr_cpus = 2, .symbolize = true };
	struct ustack_seen u = { 0 };
	struct td_pipeline_stats st;
	char fx[PATH_MAX];
	struct td_pipeline *pl;
	struct td_pagegen pg;
	uint64_t ips[2];
	uint8_t rec[512];
	int i;

	(void)state;
	fixture_path(fx, "fx_fid_a");
	ips[0] = bases[0] + fx_func_offset(fx, "fx_alpha") + 1;
	ips[1] = bases[0] + fx_func_offset(fx, "fx_beta") + 3;
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &ustack_seen_ops, &u), 0);
	assert_int_equal(td_filetab_add(td_pipeline_filetab(pl), 8, bid_a, sizeof(bid_a), fx,
					strlen(fx)), 0);
	for (i = 0; i < SEEN_MAX; i++) {
		int pid = 100 + i % 3;
		struct td_rec_ustack us = {
			.cookie = 0x100000001ULL + i, .ips = ips, .nr = 2, .bases = bases,
			.ids = i < 9 ? nowhere : found, .nr_files = 1, .frame_files = ff,
			.tgid_layout = true, .tgid = pid,
		};
		uint64_t t = 1000 + 1000 * i;

		if (i == 3)	/* file 7 described from now on: a path found nowhere */
			assert_int_equal(td_filetab_add(td_pipeline_filetab(pl), 7, NULL, 0,
							"/opt/worker", 11), 0);
		td_pagegen_start(&pg, page, sizeof(page), t);
		assert_int_equal(td_pagegen_add(&pg, t, rec,
						rec_switch(rec, "worker", pid, "swapper/0", 0)),
				 0);
		assert_int_equal(td_pagegen_add(&pg, t + 1, rec, rec_cookie(rec, pid, us.cookie)),
				 0);
		td_pagegen_finish(&pg, false, 0);
		assert_true(td_pipeline_page(pl, 0, page, sizeof(page)) >= 2);
		td_pagegen_start(&pg, page, sizeof(page), t + 2);
		assert_int_equal(td_pagegen_add(&pg, t + 2, rec,
						td_rec_ustack(rec, sizeof(rec), ID_UNWIND_STACK, pid,
							      &us)), 0);
		td_pagegen_finish(&pg, false, 0);
		assert_int_equal(td_pipeline_page(pl, 1, page, sizeof(page)), 1);
		td_pipeline_flush(pl);
	}
	assert_int_equal(u.calls, SEEN_MAX);
	for (i = 0; i < SEEN_MAX; i++) {
		assert_int_equal(u.pid[i], 100 + i % 3);
		assert_int_not_equal(u.uid[i], 0);
		/* File 7 unknown, then known by its path; file 8 found and named. */
		assert_string_equal(u.object[i], i < 3 ? "" : i < 9 ? "/opt/worker" : fx);
		assert_int_equal(u.named[i], i >= 9);
	}
	/* An unknown file id: the same frames for every process, one id. */
	assert_int_equal(u.uid[1], u.uid[0]);
	assert_int_equal(u.uid[2], u.uid[0]);
	/* A file found nowhere: each process's own stack, found again for it. */
	assert_int_equal(u.uid[6], u.uid[3]);
	assert_int_equal(u.uid[7], u.uid[4]);
	assert_int_equal(u.uid[8], u.uid[5]);
	assert_int_not_equal(u.uid[3], u.uid[4]);
	assert_int_not_equal(u.uid[4], u.uid[5]);
	assert_int_not_equal(u.uid[3], u.uid[5]);
	assert_int_not_equal(u.uid[3], u.uid[0]);
	/* A file found at its path: one stack for every process. */
	assert_int_equal(u.uid[10], u.uid[9]);
	assert_int_equal(u.uid[11], u.uid[9]);
	assert_int_not_equal(u.uid[9], u.uid[3]);
	td_pipeline_get_stats(pl, &st);
	/* Named: once for all, once per process after the record, once for all. */
	assert_int_equal(st.stacks_named, 1 + 3 + 1);
	assert_int_equal(st.stacks_reused, 2 + 3 + 2);
	td_pipeline_free(pl);
	tep_free(tep);
}

/*
 * A recording read later (perf_maps_saved, every process gone): the same
 * stack bytes in anonymous memory in five processes, as a forked JIT's
 * workers have them. Each is named from its own process's saved map, and
 * none is handed the stack named (or left unnamed) for another: a process
 * without a map keeps its frame raw, and does not hide the next one's.
 */
static void test_jit_saved_maps_per_process(void **state)
{
	static const uint8_t ff[] = { TD_FF_ANON, TD_FF_ANON };
	static const uint64_t bases[] = { 0x400000 };
	static const uint32_t ids[] = { 7 };
	static const uint64_t ips[] = { 0x7f0000001010, 0x7f0000002008 };
	static const char *const want[] = { NULL, "b_fn", NULL, "c_fn", "b_fn" };
	static const int pids[] = { 100, 101, 102, 103, 101 };
	static uint8_t page[TD_PAGE_SIZE];
	char dir[] = "/tmp/td-maps-XXXXXX", path[PATH_MAX + 32];
	struct tep_handle *tep = make_tep_of(fmt_unwind_stack_full);
	struct hooks_seen h = { .live = false };
	struct td_pipeline_config cfg = {
		.nr_cpus = 2, .symbolize = true,
		.hooks = { .kernel_sym = kernel_sym, .task_live = task_live, .arg = &h },
		.perf_maps_saved = dir,
	};
	struct ustack_seen u = { 0 };
	struct td_pipeline *pl;
	struct td_pagegen pg;
	uint8_t rec[512];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-101.map", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("7f0000001000 40 b_fn\n7f0000002000 40 b_caller\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/perf-103.map", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("7f0000001000 40 c_fn\n", f);
	fclose(f);
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &ustack_seen_ops, &u), 0);
	for (unsigned int i = 0; i < 5; i++) {
		struct td_rec_ustack us = {
			.cookie = 0x100000001ULL + i, .ips = ips, .nr = 2, .bases = bases,
			.ids = ids, .nr_files = 1, .frame_files = ff,
			.tgid_layout = true, .tgid = pids[i],
		};
		uint64_t t = 1000 + 1000 * i;

		td_pagegen_start(&pg, page, sizeof(page), t);
		assert_int_equal(td_pagegen_add(&pg, t, rec,
						rec_switch(rec, "worker", pids[i], "swapper/0", 0)),
				 0);
		assert_int_equal(td_pagegen_add(&pg, t + 1, rec,
						rec_cookie(rec, pids[i], us.cookie)), 0);
		td_pagegen_finish(&pg, false, 0);
		assert_true(td_pipeline_page(pl, 0, page, sizeof(page)) >= 2);
		td_pagegen_start(&pg, page, sizeof(page), t + 2);
		assert_int_equal(td_pagegen_add(&pg, t + 2, rec,
						td_rec_ustack(rec, sizeof(rec), ID_UNWIND_STACK,
							      pids[i], &us)), 0);
		td_pagegen_finish(&pg, false, 0);
		assert_int_equal(td_pipeline_page(pl, 1, page, sizeof(page)), 1);
		td_pipeline_flush(pl);
	}
	assert_int_equal(u.calls, 5);
	for (unsigned int i = 0; i < 5; i++) {
		assert_int_equal(u.pid[i], pids[i]);
		assert_int_equal(u.named[i], want[i] != NULL);
		snprintf(path, sizeof(path), "%s/perf-%d.map", dir, pids[i]);
		assert_string_equal(u.object[i], want[i] ? path : "");
	}
	/* One stack per process, the same one again for the same process. */
	assert_int_equal(u.uid[4], u.uid[1]);
	for (unsigned int i = 0; i < 4; i++)
		for (unsigned int j = i + 1; j < 4; j++)
			assert_int_not_equal(u.uid[i], u.uid[j]);
	td_pipeline_free(pl);
	tep_free(tep);
	snprintf(path, sizeof(path), "%s/perf-101.map", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/perf-103.map", dir);
	unlink(path);
	rmdir(dir);
}

/* The library's sinks: the folded table, pprof and a JSON writer on a stream. */
/*
 * A busy kernel stack among a stream of user stacks seen once each (the
 * processes of a busy server coming and going, each its own layout): the
 * memo reaches its bound again and again and drops what was not used
 * lately; the kernel stack, found from its block's slot by every event,
 * is named once and keeps its id through every sweep.
 */
#define SWEEP_UFRAMES	28	/* what feed()'s record holds */

static void test_busy_stack_outlives_sweeps(void **state)
{
	struct tep_handle *tep = make_tep();
	struct hooks_seen h = { .live = false };	/* no maps: user frames raw, kept */
	struct td_pipeline_config cfg = {
		.nr_cpus = 2, .symbolize = true,
		.hooks = { .task_live = task_live, .kernel_sym = kernel_sym, .arg = &h },
	};
	/* Three times the memo's bound of frames (lib/stackmemo.h: 65,536). */
	unsigned int n = 3 * 65536 / SWEEP_UFRAMES;
	uint64_t ips[SWEEP_UFRAMES], kid = 0;
	struct td_pipeline_stats st;
	struct td_pipeline *pl;
	struct seen s = { 0 };

	(void)state;
	pl = td_pipeline_new(tep, &cfg);
	assert_non_null(pl);
	assert_int_equal(td_pipeline_add_sink(pl, &seen_ops, &s), 0);
	for (unsigned int i = 0; i < n; i++) {
		for (unsigned int j = 0; j < SWEEP_UFRAMES; j++)
			ips[j] = 0x400000 + ((uint64_t)i << 12) + 16 * j;
		feed(pl, TID, ips, SWEEP_UFRAMES);
		if (!i)
			kid = s.kid;
		assert_int_not_equal(s.uid, 0);
		assert_int_equal(s.kid, kid);
	}
	assert_int_not_equal(kid, 0);
	assert_int_equal(s.calls, n);
	assert_int_equal(h.ksym_calls, NR_KIPS);
	td_pipeline_get_stats(pl, &st);
	assert_true(st.stack_sweeps >= 2);
	assert_true(st.stacks_swept > n / 2);
	assert_int_equal(st.stack_resets, 0);
	assert_int_equal(st.stacks_named, n + 1);
	td_pipeline_free(pl);
	tep_free(tep);
}

static void test_library_sinks(void **state)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline *pl = make(tep, TD_PIPE_ALL);
	struct td_folded *fo = td_folded_new();
	struct td_pprof *pp = td_pprof_new(0);
	struct td_pprof_stats ps;
	struct td_json_sink js = { .jw = td_json_writer_new(TD_JSON_FULL, 0) };
	char *buf = NULL;
	size_t len = 0;

	(void)state;
	js.f = open_memstream(&buf, &len);
	assert_non_null(fo);
	assert_non_null(pp);
	assert_non_null(js.jw);
	assert_non_null(js.f);
	assert_int_equal(td_pipeline_add_sink(pl, &td_folded_sink_ops, fo), 0);
	assert_int_equal(td_pipeline_add_sink(pl, &td_json_sink_ops, &js), 0);
	assert_int_equal(td_pipeline_add_sink(pl, &td_pprof_sink_ops, pp), 0);
	feed(pl, TID, uips, 4);
	feed(pl, TID, uips, 4);
	feed(pl, TID + 1, uips, 3);
	td_pprof_stats(pp, &ps);
	assert_int_equal(ps.events, 3);
	assert_int_equal(ps.samples, 2);	/* two distinct stacks */
	assert_int_equal(td_folded_nr_samples(fo), 3);
	assert_int_equal(td_folded_nr_stacks(fo), 2);
	assert_int_equal(js.written, 3);
	fclose(js.f);
	assert_non_null(strstr(buf, "\"status\":\"stitched\""));
	assert_non_null(strchr(strchr(strchr(buf, '\n') + 1, '\n') + 1, '\n'));	/* 3 lines */
	free(buf);
	td_json_writer_free(js.jw);
	td_pprof_free(pp);
	td_folded_free(fo);
	td_pipeline_free(pl);
	tep_free(tep);
}

/*
 * Many kinds of events (the daemon takes up to 256 -e): each is named
 * after itself in every sink, and pprof keeps a sample per event kind.
 */
#define MANY_EVENTS	40

struct names_seen {
	int calls;
	int wrong;
};

static int names_write(void *priv, const struct td_resolved *r)
{
	struct names_seen *n = priv;
	char want[32];

	snprintf(want, sizeof(want), "test:ev%d", (int)(r->ev->ts - 1000));
	n->wrong += strcmp(r->event_name, want) != 0;
	n->calls++;
	return 0;
}

static const struct td_sink_ops names_ops = { .name = "names", .write = names_write };

static void test_many_event_kinds(void **state)
{
	struct tep_handle *tep = tep_alloc();
	struct td_pipeline_config cfg = { .nr_cpus = 1, .stage = TD_PIPE_ALL };
	struct names_seen n = { 0 };
	struct td_pprof_stats ps;
	struct td_pipeline *pl;
	struct td_pprof *pp;
	char fmt[512];

	(void)state;
	assert_non_null(tep);
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, TD_PAGE_SIZE);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	for (int i = 0; i < MANY_EVENTS; i++) {
		snprintf(fmt, sizeof(fmt),
			 "name: ev%d\nID: %d\nformat:\n"
			 "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
			 "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
			 "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
			 "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
			 "\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n\n"
			 "print fmt: \"x=%%d\", REC->x\n", i, 900 + i);
		assert_int_equal(tep_parse_event(tep, fmt, strlen(fmt), "test"),
				 TEP_ERRNO__SUCCESS);
	}
	pl = td_pipeline_new(tep, &cfg);
	pp = td_pprof_new(0);
	assert_non_null(pl);
	assert_non_null(pp);
	assert_int_equal(td_pipeline_add_sink(pl, &names_ops, &n), 0);
	assert_int_equal(td_pipeline_add_sink(pl, &td_pprof_sink_ops, pp), 0);
	/* Twice over: the names stay right once every kind was seen. */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < MANY_EVENTS; i++) {
			uint8_t rec[16] = { 0 };
			struct tep_record r = { .ts = 1000 + i, .data = rec, .size = sizeof(rec) };

			td_rec_common(rec, 900 + i, TID);
			assert_int_equal(td_pipeline_record(pl, 0, &r), 0);
		}
		td_pipeline_flush(pl);
	}
	assert_int_equal(n.calls, 2 * MANY_EVENTS);
	assert_int_equal(n.wrong, 0);
	td_pprof_stats(pp, &ps);
	assert_int_equal(ps.events, 2 * MANY_EVENTS);
	assert_int_equal(ps.samples, MANY_EVENTS);	/* one per kind of event */
	td_pprof_free(pp);
	td_pipeline_free(pl);
	tep_free(tep);
}

/* A JSON sink whose writes fail counts them and keeps the error, not as written. */
static void test_json_sink_full(void **state)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline *pl = make(tep, TD_PIPE_ALL);
	struct td_json_sink js = { .jw = td_json_writer_new(TD_JSON_INTERNED, 0) };
	struct td_pipeline_stats st;

	(void)state;
	js.f = fopen("/dev/full", "we");
	assert_non_null(js.f);
	assert_non_null(js.jw);
	setvbuf(js.f, NULL, _IONBF, 0);	/* every line written at once: ENOSPC */
	assert_int_equal(td_pipeline_add_sink(pl, &td_json_sink_ops, &js), 0);
	feed(pl, TID, uips, 4);
	feed(pl, TID + 1, uips, 3);
	assert_int_equal(js.written, 0);
	assert_int_equal(js.failed, 2);
	assert_int_equal(js.error, -ENOSPC);
	td_pipeline_get_stats(pl, &st);
	assert_int_equal(st.sink_errors, 2);
	fclose(js.f);
	td_json_writer_free(js.jw);
	td_pipeline_free(pl);
	tep_free(tep);
}

static void test_bad_config(void **state)
{
	struct tep_handle *tep = make_tep();
	struct td_pipeline_config cfg = { .nr_cpus = 0 };

	(void)state;
	errno = 0;
	assert_null(td_pipeline_new(tep, &cfg));
	assert_int_equal(errno, EINVAL);
	cfg.nr_cpus = 2;
	assert_null(td_pipeline_new(NULL, &cfg));
	assert_int_equal(errno, EINVAL);
	cfg.stage = 42;
	assert_null(td_pipeline_new(tep, &cfg));
	assert_int_equal(errno, EINVAL);
	cfg.stage = TD_PIPE_ALL;
	tep_set_long_size(tep, 4);
	assert_null(td_pipeline_new(tep, &cfg));
	assert_int_equal(errno, ENOTSUP);
	tep_free(tep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stitched_to_every_sink),
		cmocka_unit_test(test_fields_kept_when_read),
		cmocka_unit_test(test_sink_errors),
		cmocka_unit_test(test_short_stages),
		cmocka_unit_test(test_report_hooks),
		cmocka_unit_test(test_report_pid_from_stack),
		cmocka_unit_test(test_pids_filter),
		cmocka_unit_test(test_exec_names_only),
		cmocka_unit_test(test_live_names_this_process),
		cmocka_unit_test(test_no_sink_names_nothing),
		cmocka_unit_test(test_live_sym_restart),
		cmocka_unit_test(test_live_sym_restart_kept),
		cmocka_unit_test(test_live_kallsyms_reload),
		cmocka_unit_test_teardown(test_live_copy_only_restart, remove_own_perf_map),
		cmocka_unit_test_teardown(test_live_jit_line_late, remove_own_perf_map),
		cmocka_unit_test(test_live_files_no_maps),
		cmocka_unit_test(test_library_sinks),
		cmocka_unit_test(test_profiles_without_tracer_frames),
		cmocka_unit_test(test_many_event_kinds),
		cmocka_unit_test(test_json_sink_full),
		cmocka_unit_test(test_named_once),
		cmocka_unit_test(test_busy_stack_outlives_sweeps),
		cmocka_unit_test(test_shared_user_stacks),
		cmocka_unit_test(test_jit_saved_maps_per_process),
		cmocka_unit_test(test_settle_after_held),
		cmocka_unit_test(test_feeds_agree),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
