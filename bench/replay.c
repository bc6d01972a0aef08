// SPDX-License-Identifier: GPL-2.0
/*
 * replay: how fast trace-defer's library turns ring-buffer pages into
 * stitched, symbolized JSON, stage by stage, on a synthesized capture
 * (capgen.c) whose addresses belong to real running processes and to the
 * running kernel. Also measures memory with a million pending events.
 *
 *   replay --formats DIR --prog FP_CHAIN [--events N] [--repeat R]
 *          [--procs N] [--raw-dir DIR] [--json FILE] [--no-memo]
 *          [--gap-ns MIN,MAX] [--seed N] [--batch N]
 *   replay --formats DIR --prog FP_CHAIN --memory [--events N]
 *
 * DIR is a tracefs-like directory (events/header_page, events/SYS/NAME/
 * format) with sched_switch, kernel_stack, user_unwind_cookie and
 * user_unwind_stack. Stages, each a fresh td_pipeline (the daemon's, set
 * up as the daemon sets it up) over the same pages, fed as the daemon
 * feeds them (per-CPU pages in time order, advanced every 64 pages):
 *   parse    pages -> td_events/td_ustacks, freed on arrival (TD_PIPE_PARSE)
 *   stitch   + the stitcher, events counted (TD_PIPE_STITCH)
 *   symbol   + resolving: process ids, kernel and user frames named, no sink
 *   json     + its JSON output to --json (default /dev/null), layout full
 *   json_interned  the same in layout interned (stacks once, by id)
 *   pprof    symbol + a pprof profile of every event (no JSON), written
 *            once at the end (its bytes reported, its time not counted)
 * --no-memo: every frame of every event named again (the pipeline's
 * no_memo), to measure what keeping named stacks saves. --gap-ns: trace
 * time between two events (default CAPGEN_GAP_MIN_NS,CAPGEN_GAP_MAX_NS).
 * --seed: another capture of the same kind (the tests run several).
 * --batch N: pages fed as the live daemon's rounds feed them, N per CPU
 * a round through td_pipeline_pages_until() (merged by record time, the
 * records past the round's cut kept for the next), not page by page.
 * The capture's JSON says how many events per second of trace time.
 * Prints one JSON object on stdout. --raw-dir writes cpuN.raw (the pages
 * as trace_pipe_raw would give them) for trace-cmd restore.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <json-c/json.h>
#include <tracefs.h>

#include <trace-defer/output.h>
#include <trace-defer/pagegen.h>
#include <trace-defer/parse.h>
#include <trace-defer/pipeline.h>
#include <trace-defer/pprof.h>
#include "addrs.h"
#include "capgen.h"
#include "tasks.h"

#define REPLAY_CPUS		2
#define FEED_BATCH	64	/* pages between two advances, as the daemon's read budget */
#define JSON_BUF	(1 << 16)

enum stage {
	ST_PARSE, ST_STITCH, ST_SYMBOL, ST_JSON, ST_JSON_INTERNED, ST_PPROF, ST_JSON_COMPACT,
	NR_STAGES
};

static const char *const stage_names[NR_STAGES] = {
	"parse", "stitch", "symbol", "json", "json_interned", "pprof", "json_compact",
};

static const enum td_json_layout json_layout[NR_STAGES] = {
	[ST_JSON] = TD_JSON_FULL,
	[ST_JSON_INTERNED] = TD_JSON_INTERNED,
	[ST_JSON_COMPACT] = TD_JSON_COMPACT,
};

static bool has_json(enum stage s)
{
	return s == ST_JSON || s == ST_JSON_INTERNED || s == ST_JSON_COMPACT;
}

struct cpu_pages {
	uint8_t *buf;
	size_t n, cap;		/* pages */
};

struct capture {
	struct cpu_pages cpu[REPLAY_CPUS];
};

struct opts {
	const char *formats, *prog, *raw_dir, *json;
	uint64_t events;
	int repeat, procs;
	bool memory;
	bool no_memo;		/* name every frame of every event (A/B of the stack memo) */
	unsigned int stages;	/* bit mask of the stages to run */
	unsigned int gap_min_ns, gap_max_ns;	/* trace time between events */
	uint64_t seed;		/* 0: the generator's own */
	unsigned int batch;	/* pages per CPU per round (the daemon's way); 0: one by one */
};

/* One pipeline run. */
struct run {
	enum stage stage;
	struct td_pipeline *pl;
	struct td_json_sink js;		/* json stages: the writer and its file */
	char *json_buf;
	struct out_count *oc;		/* bytes of JSON written */
	struct td_pprof *pprof;		/* pprof stage */
	/* memory mode */
	size_t max_pending;
	long rss_at_max_kb;
	size_t bodies_at_max, body_bytes_at_max;	/* packed bodies then */
	size_t max_kept_stacks;		/* the most stacks kept at once, at any time */
	uint64_t page_ts[REPLAY_CPUS];
	unsigned long pages;
	/* --batch: the copies into the round's buffer, not the pipeline's work */
	uint8_t *stage_buf;
	uint64_t copy_wall_ns, copy_cpu_ns;
};

/* ---- helpers ---- */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A "Vm...:" line of /proc/self/status, in KiB. */
static long vm_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			v = strtol(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* ---- pipeline set-up ---- */

/* The JSON output: a file that counts what goes through it. */
struct out_count {
	int fd;
	uint64_t bytes;
};

static ssize_t out_count_write(void *cookie, const char *buf, size_t size)
{
	struct out_count *oc = cookie;
	size_t done = 0;

	while (done < size) {
		ssize_t n = write(oc->fd, buf + done, size - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -1;
		}
		done += n;
	}
	oc->bytes += size;
	return size;
}

static int out_count_close(void *cookie)
{
	struct out_count *oc = cookie;

	return close(oc->fd);
}

static FILE *out_count_open(const char *path, struct out_count **ocp)
{
	static const cookie_io_functions_t fns = {
		.write = out_count_write, .close = out_count_close,
	};
	struct out_count *oc = calloc(1, sizeof(*oc));
	FILE *f;

	*ocp = oc;
	if (!oc)
		return NULL;
	oc->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (oc->fd < 0)
		return NULL;
	f = fopencookie(oc, "w", fns);
	if (!f)
		close(oc->fd);
	return f;
}

static void run_free(struct run *r)
{
	if (!r)
		return;
	td_pipeline_free(r->pl);
	if (r->js.f)
		fclose(r->js.f);
	free(r->oc);
	td_json_writer_free(r->js.jw);
	td_pprof_free(r->pprof);
	free(r->stage_buf);
	free(r->json_buf);
	free(r);
}

static const enum td_pipeline_stage pipe_stage[NR_STAGES] = {
	[ST_PARSE] = TD_PIPE_PARSE,
	[ST_STITCH] = TD_PIPE_STITCH,
};

/* The symbol stage's: frames are made only for a sink. */
static int null_write(void *priv, const struct td_resolved *res)
{
	(void)priv;
	(void)res;
	return 0;
}

static const struct td_sink_ops null_sink_ops = {
	.name = "null", .write = null_write, .no_fields = true,
};

/* @held: the capture holds every stack back on purpose (memory mode). */
static struct run *run_new(struct tep_handle *tep, enum stage stage, const char *json,
			   bool no_memo, bool held)
{
	struct run *r = calloc(1, sizeof(*r));
	/* As the daemon: live, kallsyms loaded before tracing starts. */
	struct td_pipeline_config pc = {
		.nr_cpus = REPLAY_CPUS,
		.stage = pipe_stage[stage],
		.symbolize = stage >= ST_SYMBOL,
		.load_kallsyms = true,
		.live = true,
		.no_memo = no_memo,
		/* A task's stacks come before its next entry, except in memory mode. */
		.stitch = { .keep_superseded = held },
	};

	if (!r)
		return NULL;
	r->stage = stage;
	r->pl = td_pipeline_new(tep, &pc);
	if (!r->pl)
		goto fail;
	if (stage == ST_SYMBOL && td_pipeline_add_sink(r->pl, &null_sink_ops, NULL))
		goto fail;
	if (stage == ST_PPROF) {
		r->pprof = td_pprof_new(0);
		if (!r->pprof || td_pipeline_add_sink(r->pl, &td_pprof_sink_ops, r->pprof))
			goto fail;
	}
	if (has_json(stage)) {
		r->js.f = out_count_open(json, &r->oc);
		r->json_buf = malloc(JSON_BUF);
		r->js.jw = td_json_writer_new(json_layout[stage], 0);
		if (!r->js.f || !r->json_buf || !r->js.jw ||
		    td_pipeline_add_sink(r->pl, &td_json_sink_ops, &r->js))
			goto fail;
		setvbuf(r->js.f, r->json_buf, _IOFBF, JSON_BUF);
	}
	return r;
fail:
	run_free(r);
	return NULL;
}

/*
 * The pipeline's calls, each in a function of its own that is never
 * inlined, cloned or renamed: make bench's instruction counts collect
 * exactly these (callgrind --toggle-collect by name), while the library,
 * built with LTO, may be inlined into them.
 */
#ifdef __clang__
#define NOT_INLINED	__attribute__((noinline))
#else
#define NOT_INLINED	__attribute__((noipa))
#endif

static NOT_INLINED int replay_page(struct run *r, int cpu, void *page, int size)
{
	return td_pipeline_page(r->pl, cpu, page, size);
}

static NOT_INLINED int replay_pages(struct run *r, const struct td_page_ref *pages,
				    unsigned int n, uint64_t cut)
{
	return td_pipeline_pages_until(r->pl, pages, n, cut);
}

static NOT_INLINED void replay_advance(struct run *r, uint64_t trace_ns)
{
	td_pipeline_advance(r->pl, trace_ns);
}

static NOT_INLINED void replay_flush(struct run *r)
{
	td_pipeline_flush(r->pl);
}

static void flush(struct run *r)
{
	replay_flush(r);
	if (r->js.f)
		fflush(r->js.f);
}

/* ---- feeding pages as the daemon reads them ---- */

static uint64_t page_ts(const uint8_t *page)
{
	uint64_t ts;

	memcpy(&ts, page, sizeof(ts));
	return ts;
}

/*
 * The CPU whose next unread page is the oldest (the first such on a tie),
 * and that page's time in *@ts; -1 (and UINT64_MAX) when all are read.
 */
static int oldest_unread(const struct capture *c, const size_t *next, uint64_t *ts)
{
	int best = -1;

	*ts = UINT64_MAX;
	for (int cpu = 0; cpu < REPLAY_CPUS; cpu++) {
		uint64_t t;

		if (next[cpu] >= c->cpu[cpu].n)
			continue;
		t = page_ts(c->cpu[cpu].buf + next[cpu] * TD_PAGE_SIZE);
		if (t < *ts) {
			*ts = t;
			best = cpu;
		}
	}
	return best;
}

/* Everything older than the earliest unread page has been read. */
static void advance(struct run *r, const struct capture *c, const size_t *next)
{
	uint64_t now;

	if (oldest_unread(c, next, &now) < 0 || !now)
		return;
	replay_advance(r, now - 1);
}

static void feed(struct run *r, const struct capture *c)
{
	size_t next[REPLAY_CPUS] = { 0 }, fed = 0;
	uint64_t ts;
	int best;

	while ((best = oldest_unread(c, next, &ts)) >= 0) {
		replay_page(r, best, c->cpu[best].buf + next[best] * TD_PAGE_SIZE, TD_PAGE_SIZE);
		next[best]++;
		if (++fed % FEED_BATCH == 0)
			advance(r, c, next);
	}
	flush(r);
}

/*
 * As the daemon's rounds feed them: the next @batch pages a CPU in time
 * order (a round reads every CPU up to about the same time, as the daemon
 * does when it keeps up), grouped by CPU as one CPU is read after the
 * other, and handed on as one batch that the pipeline merges by record
 * time. Records at or after the cut (the earliest page not read yet, of
 * any CPU: every CPU has been read up to there) wait for the next round,
 * as records written while the daemon read do.
 */
static void feed_batched(struct run *r, const struct capture *c, unsigned int batch)
{
	struct td_page_ref refs[REPLAY_CPUS * 128];
	size_t next[REPLAY_CPUS] = { 0 }, from[REPLAY_CPUS];

	if (!r->stage_buf)
		r->stage_buf = malloc((size_t)REPLAY_CPUS * batch * TD_PAGE_SIZE);
	if (!r->stage_buf) {
		fprintf(stderr, "replay: no memory for the round's buffer\n");
		exit(1);
	}
	for (;;) {
		uint64_t cut, w0, c0;
		unsigned int n = 0;
		int best;

		memcpy(from, next, sizeof(from));
		for (unsigned int i = 0; i < batch * REPLAY_CPUS; i++) {
			best = oldest_unread(c, next, &cut);
			if (best < 0)
				break;
			next[best]++;
		}
		/*
		 * Copied into the round's buffer, as the daemon's reads copy
		 * them out of the ring buffer (kernel time, which the drain
		 * loop spends too): the pipeline reads them warm, not from the
		 * capture, long written and cold. The copies are not counted.
		 */
		w0 = now_ns(CLOCK_MONOTONIC);
		c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
		for (int cpu = 0; cpu < REPLAY_CPUS; cpu++)
			for (size_t i = from[cpu]; i < next[cpu]; i++) {
				uint8_t *copy = r->stage_buf + (size_t)n * TD_PAGE_SIZE;

				memcpy(copy, c->cpu[cpu].buf + i * TD_PAGE_SIZE, TD_PAGE_SIZE);
				refs[n++] = (struct td_page_ref){ cpu, copy, TD_PAGE_SIZE };
			}
		r->copy_wall_ns += now_ns(CLOCK_MONOTONIC) - w0;
		r->copy_cpu_ns += now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
		if (!n)
			break;
		/* UINT64_MAX when every page is read: no cut. */
		oldest_unread(c, next, &cut);
		replay_pages(r, refs, n, cut);
		if (cut != UINT64_MAX && cut)
			replay_advance(r, cut - 1);
	}
	flush(r);
}

static void feed_as(const struct opts *o, struct run *r, const struct capture *c)
{
	if (o->batch)
		feed_batched(r, c, o->batch);
	else
		feed(r, c);
}

/* ---- the capture ---- */

static int store_page(int cpu, const void *page, unsigned int size, void *arg)
{
	struct capture *c = arg;
	struct cpu_pages *cp = &c->cpu[cpu];

	if (size != TD_PAGE_SIZE)
		return -EINVAL;
	if (cp->n == cp->cap) {
		size_t cap = cp->cap ? 2 * cp->cap : 4096;
		uint8_t *buf = realloc(cp->buf, cap * TD_PAGE_SIZE);

		if (!buf)
			return -ENOMEM;
		cp->buf = buf;
		cp->cap = cap;
	}
	memcpy(cp->buf + cp->n * TD_PAGE_SIZE, page, TD_PAGE_SIZE);
	cp->n++;
	return 0;
}

/*
 * Memory mode: pages go straight into the pipeline, nothing is kept. Trace
 * time advances as in the daemon: to the oldest of the CPUs' latest pages.
 */
static int feed_page(int cpu, const void *page, unsigned int size, void *arg)
{
	struct run *r = arg;
	struct td_pipeline_stats st;
	uint64_t now = UINT64_MAX;

	replay_page(r, cpu, (void *)page, (int)size);
	r->page_ts[cpu] = page_ts(page);
	if (++r->pages % FEED_BATCH)
		return 0;
	for (int c = 0; c < REPLAY_CPUS; c++)
		if (r->page_ts[c] < now)
			now = r->page_ts[c];
	if (now)
		replay_advance(r, now - 1);
	td_pipeline_get_stats(r->pl, &st);
	if (st.stitch.pending_events > r->max_pending) {
		r->max_pending = st.stitch.pending_events;
		r->rss_at_max_kb = vm_kb("VmRSS:");
		r->bodies_at_max = st.stitch.packed_bodies;
		r->body_bytes_at_max = st.stitch.packed_bytes;
	}
	if (st.stitch.pending_stacks > r->max_kept_stacks)
		r->max_kept_stacks = st.stitch.pending_stacks;
	return 0;
}

struct user_addrs {
	uint64_t leaf, rec, outer[8];
	uint8_t outer_file[8];
	unsigned int nr_outer;
	/* File identity: the program (0) and the C library (1). */
	struct capgen_file files[2];
	unsigned int nr_files;
	char paths[2][CAPGEN_MAX_PATH];
};

/* File @i of @ua: @path, loaded at @base in the tasks, and its build-id. */
static void user_file(struct user_addrs *ua, unsigned int i, const char *path, uint64_t base)
{
	struct capgen_file *f = &ua->files[i];

	snprintf(ua->paths[i], sizeof(ua->paths[i]), "%s", path);
	f->id = i + 1;
	f->base = base;
	f->path = ua->paths[i];
	elf_build_id(path, f->build_id, sizeof(f->build_id), &f->build_id_len);
	if (ua->nr_files < i + 1)
		ua->nr_files = i + 1;
}

/*
 * fp_chain's frames (c, rec, b, a, main, _start; the program is not
 * position independent, so its symbols are its addresses) and main's
 * callers in the C library of task @pid, each with its file.
 */
static int find_user_addrs(const char *prog, int pid, struct user_addrs *ua)
{
	static const char *const outer[] = { "b", "a", "main" };
	const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	char libc[CAPGEN_MAX_PATH], exe[CAPGEN_MAX_PATH];
	uint64_t bias, addr;

	memset(ua, 0, sizeof(*ua));
	if (elf_func_addr(prog, "c", 0, &ua->leaf) || elf_func_addr(prog, "rec", 0, &ua->rec))
		return -ENOENT;
	if (maps_bias(pid, name, &bias, exe, sizeof(exe)))
		return -ENOENT;
	user_file(ua, 0, exe, bias);
	for (unsigned int i = 0; i < 3; i++)
		if (!elf_func_addr(prog, outer[i], 0, &addr))
			ua->outer[ua->nr_outer++] = addr;
	/* main's callers in libc: the frame below __libc_start_main, then it. */
	if (!maps_bias(pid, "/libc.so", &bias, libc, sizeof(libc)) &&
	    !elf_func_addr(libc, "__libc_start_main", bias, &addr)) {
		user_file(ua, 1, libc, bias);
		ua->outer_file[ua->nr_outer] = 1;
		ua->outer[ua->nr_outer++] = addr - 0x90;
		ua->outer_file[ua->nr_outer] = 1;
		ua->outer[ua->nr_outer++] = addr;
	}
	if (!elf_func_addr(prog, "_start", 0, &addr))
		ua->outer[ua->nr_outer++] = addr;
	return 0;
}

/* Kernel stacks of 6.x: blocking in read, futex, nanosleep, poll; and idle. */
static const char *const ks_read[] = {
	"__schedule", "schedule", "pipe_read", "vfs_read", "ksys_read", "__x64_sys_read",
	"x64_sys_call", "do_syscall_64", "entry_SYSCALL_64_after_hwframe", NULL,
};

static const char *const ks_futex[] = {
	"__schedule", "schedule", "futex_wait_queue", "__futex_wait", "futex_wait", "do_futex",
	"__x64_sys_futex", "x64_sys_call", "do_syscall_64", "entry_SYSCALL_64_after_hwframe",
	NULL,
};

static const char *const ks_sleep[] = {
	"__schedule", "schedule", "do_nanosleep", "hrtimer_nanosleep", "__x64_sys_nanosleep",
	"x64_sys_call", "do_syscall_64", "entry_SYSCALL_64_after_hwframe", NULL,
};

static const char *const ks_poll[] = {
	"__schedule", "schedule", "schedule_hrtimeout_range_clock", "schedule_hrtimeout_range",
	"do_epoll_wait", "__x64_sys_epoll_wait", "x64_sys_call", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe", NULL,
};

static const char *const ks_idle[] = {
	"__schedule", "schedule_idle", "do_idle", "cpu_startup_entry", "start_secondary",
	"common_startup_64", NULL,
};

static int kernel_stacks(struct capgen_kstack *task, int *nr_task, struct capgen_kstack *idle,
			 bool *real)
{
	const char *const *tpl[] = { ks_read, ks_futex, ks_sleep, ks_poll };
	struct ksyms *ks = ksyms_load("/proc/kallsyms");

	*nr_task = 0;
	*real = ks != NULL;
	if (!ks) {
		/* Hidden kallsyms: made-up addresses, left unnamed by the symbolizer. */
		for (int t = 0; t < 4; t++) {
			task[t].nr = 9;
			for (unsigned int i = 0; i < 9; i++)
				task[t].ips[i] = 0xffffffff81000000ULL + 0x1000 * (t * 16 + i) +
						 0x5b;
		}
		*nr_task = 4;
		idle->nr = 6;
		for (unsigned int i = 0; i < 6; i++)
			idle->ips[i] = 0xffffffff81100000ULL + 0x1000 * i + 0x5b;
		return 0;
	}
	for (int t = 0; t < 4; t++)
		if (ksyms_stack(ks, tpl[t], &task[*nr_task]) >= 4)
			(*nr_task)++;
	ksyms_stack(ks, ks_idle, idle);
	ksyms_free(ks);
	return *nr_task && idle->nr ? 0 : -ENOENT;
}

struct field_at {
	const char *name;
	int offset, size;
};

/* Are @n fields of @e where the generator writes them? */
static bool fields_at(struct tep_event *e, const struct field_at *fa, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct tep_format_field *f = tep_find_field(e, fa[i].name);

		if (!f || f->offset != fa[i].offset || f->size != fa[i].size) {
			fprintf(stderr, "replay: %s field %s is not where expected\n", e->name,
				fa[i].name);
			return false;
		}
	}
	return true;
}

static int check_formats(struct tep_handle *tep, struct capgen_cfg *cfg)
{
	static const struct field_at sw[] = {
		{ "prev_comm", 8, 16 }, { "prev_pid", 24, 4 }, { "prev_prio", 28, 4 },
		{ "prev_state", 32, 8 }, { "next_comm", 40, 16 }, { "next_pid", 56, 4 },
		{ "next_prio", 60, 4 },
	};
	/* The series' current layouts (bench/formats/). */
	static const struct field_at ustack[] = {
		{ "cookie", 8, 8 }, { "dropped", 16, 2 }, { "flags", 18, 2 }, { "tgid", 20, 4 },
		{ "stack", 24, 4 }, { "file_bases", 28, 4 }, { "file_ids", 32, 4 },
		{ "frame_files", 36, 4 },
	};
	static const struct field_at ufile[] = {
		{ "id", 8, 4 }, { "build_id_size", 12, 4 }, { "build_id", 16, 20 }, { "path", 36, 4 },
	};
	struct tep_event *fe = tep_find_event_by_name(tep, "ftrace", "user_unwind_file");
	struct tep_event *s = tep_find_event_by_name(tep, "sched", "sched_switch");
	struct tep_event *k = tep_find_event_by_name(tep, "ftrace", "kernel_stack");
	struct tep_event *c = tep_find_event_by_name(tep, "ftrace", "user_unwind_cookie");
	struct tep_event *u = tep_find_event_by_name(tep, "ftrace", "user_unwind_stack");

	if (!s || !k || !c || !u) {
		fprintf(stderr,
			"replay: the formats lack sched_switch, kernel_stack or user_unwind_*\n");
		return -1;
	}
	/* The generator writes the x86_64 layouts: refuse any other. */
	if (!fe) {
		fprintf(stderr, "replay: the formats lack ftrace/user_unwind_file "
			"(bench/formats.sh writes it)\n");
		return -1;
	}
	if (!fields_at(s, sw, sizeof(sw) / sizeof(sw[0])) ||
	    !fields_at(u, ustack, sizeof(ustack) / sizeof(ustack[0])) ||
	    !fields_at(fe, ufile, sizeof(ufile) / sizeof(ufile[0])))
		return -1;
	cfg->id_file = fe->id;
	cfg->id_switch = s->id;
	cfg->id_kstack = k->id;
	cfg->id_cookie = c->id;
	cfg->id_unwind = u->id;
	return 0;
}

static int write_raw(const struct capture *c, const char *dir)
{
	char path[4096];

	for (int cpu = 0; cpu < REPLAY_CPUS; cpu++) {
		size_t len = c->cpu[cpu].n * TD_PAGE_SIZE, done = 0;
		int fd;

		snprintf(path, sizeof(path), "%s/cpu%d.raw", dir, cpu);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		while (done < len) {
			ssize_t n = write(fd, c->cpu[cpu].buf + done, len - done);

			if (n < 0) {
				if (errno == EINTR)
					continue;
				close(fd);
				return -errno;
			}
			done += n;
		}
		if (close(fd))
			return -errno;
	}
	return 0;
}

/* ---- results ---- */

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_dbl(json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, json_object_new_double(v));
}

static json_object *capture_json(const struct capgen_stats *cs)
{
	json_object *o = json_object_new_object();

	add_u64(o, "events", cs->events);
	add_u64(o, "task_events", cs->task_events);
	add_u64(o, "idle_events", cs->idle_events);
	add_u64(o, "shared_cookie_events", cs->shared_events);
	add_u64(o, "late_events", cs->late_events);
	add_u64(o, "events_without_stack", cs->lost_events);
	add_u64(o, "events_empty_stack", cs->failed_events);
	add_u64(o, "stacks", cs->stacks);
	add_u64(o, "stacks_never_written", cs->lost);
	add_u64(o, "stacks_empty", cs->failed);
	add_dbl(o, "user_frames_per_stack", cs->stacks ? (double)cs->user_frames / cs->stacks : 0);
	add_u64(o, "file_records", cs->file_records);
	add_u64(o, "records", cs->records);
	add_u64(o, "record_bytes", cs->record_bytes);
	add_u64(o, "pages", cs->pages);
	add_dbl(o, "trace_seconds", (cs->last_ts - cs->first_ts) / 1e9);
	add_dbl(o, "events_per_trace_second", cs->last_ts > cs->first_ts ?
		cs->events / ((cs->last_ts - cs->first_ts) / 1e9) : 0);
	return o;
}

static json_object *run_json(const struct run *r, uint64_t events, uint64_t wall, uint64_t cpu)
{
	json_object *o = json_object_new_object();
	struct td_pipeline_stats st;

	td_pipeline_get_stats(r->pl, &st);
	add_u64(o, "events", events);
	add_dbl(o, "seconds", wall / 1e9);
	add_dbl(o, "cpu_seconds", cpu / 1e9);
	add_dbl(o, "events_per_s", wall ? events * 1e9 / wall : 0);
	add_dbl(o, "ns_per_event", events ? (double)wall / events : 0);
	if (r->stage >= ST_STITCH) {
		for (int s = 0; s < TD_NR_STATUS; s++)
			add_u64(o, td_status_name(s), st.stitch.emitted[s]);
		add_u64(o, "superseded", st.stitch.superseded);
	}
	if (r->stage >= ST_SYMBOL) {
		add_u64(o, "kernel_frames", st.kframes);
		add_dbl(o, "kernel_frames_named",
			st.kframes ? (double)st.kframes_named / st.kframes : 0);
		add_u64(o, "user_frames", st.uframes);
		add_dbl(o, "user_frames_named",
			st.uframes ? (double)st.uframes_named / st.uframes : 0);
		/* Named from the records' file identity, not /proc. */
		add_u64(o, "user_frames_by_file_id", st.fileid_named);
	}
	if (r->stage == ST_PPROF) {
		struct td_pprof_stats ps;
		FILE *f = fopen("/dev/null", "w");
		size_t bytes = 0;
		uint64_t w0 = now_ns(CLOCK_MONOTONIC);

		if (!f || td_pprof_write(r->pprof, f, 1, &bytes))
			add_u64(o, "pprof_errors", 1);
		if (f)
			fclose(f);
		add_dbl(o, "pprof_write_seconds", (now_ns(CLOCK_MONOTONIC) - w0) / 1e9);
		td_pprof_stats(r->pprof, &ps);
		add_u64(o, "pprof_bytes", bytes);
		add_u64(o, "pprof_samples", ps.samples);
		add_u64(o, "pprof_events", ps.events);
		add_u64(o, "pprof_locations", ps.locations);
		add_u64(o, "pprof_mem_bytes", ps.mem_bytes);
	}
	if (has_json(r->stage)) {
		struct td_json_stats js;

		add_u64(o, "json_errors", st.sink_errors);
		add_u64(o, "json_bytes", r->oc->bytes);
		add_dbl(o, "json_bytes_per_event", events ? (double)r->oc->bytes / events : 0);
		td_json_writer_stats(r->js.jw, &js);
		add_u64(o, "json_stack_lines", js.stacks);
		add_u64(o, "json_epochs", js.epochs);
		/* How much the fields' text cache did: it depends on the capture. */
		add_u64(o, "json_fields_cached", js.fields_cached);
	}
	return o;
}

/*
 * A stage that stitches gives every event the status the capture made it
 * for: a figure measured on a wrong result is no figure.
 */
static int check_statuses(const struct td_pipeline_stats *st, const struct capgen_stats *cs,
			  const char *stage)
{
	const uint64_t *e = st->stitch.emitted;
	uint64_t with_cookie = cs->task_events;	/* shared and late ones included */

	if (!st->stitch.events)		/* parse only */
		return 0;
	if (e[TD_USER_LOST] == cs->lost_events && e[TD_UNWIND_FAILED] == cs->failed_events &&
	    e[TD_NO_USER] == cs->idle_events &&
	    e[TD_STITCHED] == with_cookie - cs->lost_events - cs->failed_events)
		return 0;
	fprintf(stderr, "replay: stage %s: stitched=%" PRIu64 " user_lost=%" PRIu64
		" unwind_failed=%" PRIu64 " no_user=%" PRIu64 ", the capture made %" PRIu64
		", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "\n", stage, e[TD_STITCHED],
		e[TD_USER_LOST], e[TD_UNWIND_FAILED], e[TD_NO_USER],
		with_cookie - cs->lost_events - cs->failed_events, cs->lost_events,
		cs->failed_events, cs->idle_events);
	return -EPROTO;
}

static int speed(const struct opts *o, struct tep_handle *tep, struct capgen_cfg *cfg,
		 json_object *out)
{
	struct capture cap = { 0 };
	struct capgen_stats cs;
	json_object *stages = json_object_new_object();
	uint64_t gen0 = now_ns(CLOCK_MONOTONIC);
	int ret;

	ret = capgen_run(cfg, store_page, &cap, &cs);
	if (ret) {
		fprintf(stderr, "replay: generating the capture: %s\n", strerror(-ret));
		goto out;
	}
	add_dbl(out, "generate_seconds", (now_ns(CLOCK_MONOTONIC) - gen0) / 1e9);
	if (o->raw_dir) {
		ret = write_raw(&cap, o->raw_dir);
		if (ret) {
			fprintf(stderr, "replay: writing %s: %s\n", o->raw_dir, strerror(-ret));
			goto out;
		}
	}
	json_object_object_add(out, "stages", stages);
	for (int s = 0; s < NR_STAGES; s++) {
		json_object *best = NULL;
		uint64_t best_wall = UINT64_MAX;

		if (!(o->stages & (1U << s)))
			continue;
		for (int rep = 0; rep < o->repeat; rep++) {
			struct run *r = run_new(tep, s, o->json ? o->json : "/dev/null", o->no_memo,
						false);
			struct td_pipeline_stats st;
			const struct td_parser_stats *ps = &st.parse;
			const struct td_sym_stats *ys = &st.sym;
			uint64_t w0, c0, wall, cpu;

			if (!r) {
				fprintf(stderr, "replay: cannot set up stage %s\n", stage_names[s]);
				ret = -ENOMEM;
				goto out;
			}
			w0 = now_ns(CLOCK_MONOTONIC);
			c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
			feed_as(o, r, &cap);
			wall = now_ns(CLOCK_MONOTONIC) - w0 - r->copy_wall_ns;
			cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0 - r->copy_cpu_ns;
			td_pipeline_get_stats(r->pl, &st);
			ret = check_statuses(&st, &cs, stage_names[s]);
			if (ret) {
				run_free(r);
				json_object_put(best);
				goto out;
			}
			/* Best of the repeats: the machine's other work only ever slows a run. */
			if (wall < best_wall) {
				if (best)
					json_object_put(best);
				best = run_json(r, ps->events, wall, cpu);
				add_u64(best, "records", ps->records);
				add_u64(best, "bad_records", ps->bad_records + ps->bad_pages);
				add_u64(best, "orphan_records", ps->orphans);
				add_u64(best, "unknown_records", ps->unknown);
				add_u64(best, "cookies", ps->cookies);
				add_u64(best, "stacks", ps->stacks);
				if (st.has_sym) {
					add_u64(best, "sym_user_lookups", ys->user_lookups);
					add_u64(best, "sym_user_unmapped", ys->user_unmapped);
					add_u64(best, "sym_user_no_symbol", ys->user_no_symbol);
					add_u64(best, "sym_kernel_unknown", ys->kernel_unknown);
					add_u64(best, "sym_maps_reads", ys->maps_reads);
					add_u64(best, "stacks_named", st.stacks_named);
					add_u64(best, "stacks_reused", st.stacks_reused);
				}
				best_wall = wall;
			}
			run_free(r);
		}
		add_u64(best, "repeats", o->repeat);
		json_object_object_add(stages, stage_names[s], best);
	}
	json_object_object_add(out, "capture", capture_json(&cs));
out:
	for (int cpu = 0; cpu < REPLAY_CPUS; cpu++)
		free(cap.cpu[cpu].buf);
	return ret;
}

static int memory(const struct opts *o, struct tep_handle *tep, struct capgen_cfg *cfg,
		  json_object *out)
{
	struct td_stitch_config sc;
	struct td_pipeline_stats st;
	struct capgen_stats cs;
	struct run *r;
	long base_rss;
	int ret;

	cfg->hold_stacks = true;
	cfg->idle_permille = cfg->shared_permille = 0;
	cfg->lost_permille = cfg->failed_permille = cfg->late_permille = 0;
	/* Every event pending at once: all of them within max_wait_ns (2 s). */
	cfg->gap_min_ns = 200;
	cfg->gap_max_ns = 600;
	r = run_new(tep, ST_JSON, "/dev/null", o->no_memo, true);
	if (!r)
		return -ENOMEM;
	base_rss = vm_kb("VmRSS:");
	ret = capgen_run(cfg, feed_page, r, &cs);
	flush(r);
	if (ret) {
		fprintf(stderr, "replay: memory run: %s\n", strerror(-ret));
		goto out;
	}
	td_stitch_config_default(&sc);
	td_pipeline_get_stats(r->pl, &st);
	add_u64(out, "max_pending_events_bound", sc.max_pending_events);
	add_u64(out, "max_stacks_bound", sc.max_stacks);
	add_u64(out, "events", cs.events);
	add_u64(out, "max_pending_events", r->max_pending);
	add_u64(out, "evicted_events", st.stitch.evicted_events);
	add_u64(out, "stitched", st.stitch.emitted[TD_STITCHED]);
	add_u64(out, "user_lost", st.stitch.emitted[TD_USER_LOST]);
	add_dbl(out, "rss_before_mib", base_rss / 1024.0);
	add_dbl(out, "rss_at_max_pending_mib", r->rss_at_max_kb / 1024.0);
	add_dbl(out, "vm_hwm_mib", vm_kb("VmHWM:") / 1024.0);
	add_u64(out, "packed_bodies_at_max", r->bodies_at_max);
	add_u64(out, "max_kept_stacks", r->max_kept_stacks);
	add_u64(out, "packed_body_bytes_at_max", r->body_bytes_at_max);
	add_dbl(out, "bytes_per_pending_event",
		r->max_pending ? (r->rss_at_max_kb - base_rss) * 1024.0 / r->max_pending : 0);
out:
	run_free(r);
	return ret;
}

/* "parse,json" -> a mask; 0 for an unknown name. */
static unsigned int parse_stages(const char *list)
{
	char buf[128], *save = NULL, *tok;
	unsigned int mask = 0;
	int s;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (s = 0; s < NR_STAGES; s++)
			if (!strcmp(tok, stage_names[s]))
				break;
		if (s == NR_STAGES)
			return 0;
		mask |= 1U << s;
	}
	return mask;
}

static const char usage_text[] =
	"usage: replay --formats DIR --prog FP_CHAIN [--events N] [--repeat R]\n"
	"              [--procs N] [--raw-dir DIR] [--json FILE] [--memory] [--no-memo]\n"
	"              [--gap-ns MIN,MAX] [--seed N] [--batch N]\n"
	"              [--stages parse,stitch,symbol,json,json_interned,pprof,json_compact]\n";

static int usage(void)
{
	fputs(usage_text, stderr);
	return 2;
}

static int help(void)
{
	printf("%s\n"
	       "Synthesizes a capture of N events with deferred user stacks of\n"
	       "running FP_CHAIN processes, then times each stage of the library's\n"
	       "pipeline on its pages (best of R rounds) and prints one JSON object.\n"
	       "bench/run.sh runs it for `make bench`; bench/ab.sh compares two builds.\n"
	       "\n"
	       "  --formats DIR   event formats saved by bench/formats.sh\n"
	       "  --prog PATH     the fp_chain binary whose symbols the stacks name\n"
	       "  --events N      events in the capture (default 3000000)\n"
	       "  --repeat R      rounds per stage, the best counted (default 3)\n"
	       "  --procs N       processes in the capture (default 8)\n"
	       "  --raw-dir DIR   also write the pages as cpuN.raw (trace-cmd restore)\n"
	       "  --json FILE     the json stages' output (default /dev/null)\n"
	       "  --memory        bytes per pending event instead of speed\n"
	       "  --no-memo       no stack memo in the symbolizer\n"
	       "  --gap-ns MIN,MAX  trace time between two events\n"
	       "  --seed N        the generator's seed\n"
	       "  --batch N       feed N pages a CPU per round (in time order), merged by\n"
	       "                  time as the daemon's rounds are (1-128; default: page by page)\n"
	       "  --stages LIST   the stages to run (default all)\n"
	       "Exit: 0, 1 on a failed run, 2 on bad arguments.\n", usage_text);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "formats", required_argument, NULL, 'f' },
		{ "prog", required_argument, NULL, 'p' },
		{ "events", required_argument, NULL, 'n' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "procs", required_argument, NULL, 'P' },
		{ "raw-dir", required_argument, NULL, 'd' },
		{ "json", required_argument, NULL, 'j' },
		{ "memory", no_argument, NULL, 'm' },
		{ "no-memo", no_argument, NULL, 'M' },
		{ "stages", required_argument, NULL, 's' },
		{ "gap-ns", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 'S' },
		{ "batch", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .events = 3000000, .repeat = 3, .procs = 8,
			  .stages = (1U << NR_STAGES) - 1,
			  .gap_min_ns = CAPGEN_GAP_MIN_NS, .gap_max_ns = CAPGEN_GAP_MAX_NS };
	struct capgen_kstack task_ks[4], idle_ks;
	struct tep_handle *tep = NULL;
	struct bench_tasks tasks = { 0 };
	struct user_addrs ua;
	struct capgen_cfg cfg;
	json_object *out = NULL;
	bool real_kernel;
	int c, nr_task_ks, ret = 1;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o.formats = optarg;
			break;
		case 'p':
			o.prog = optarg;
			break;
		case 'n':
			o.events = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			o.repeat = atoi(optarg);
			break;
		case 'P':
			o.procs = atoi(optarg);
			break;
		case 'd':
			o.raw_dir = optarg;
			break;
		case 'j':
			o.json = optarg;
			break;
		case 'm':
			o.memory = true;
			break;
		case 'M':
			o.no_memo = true;
			break;
		case 's':
			o.stages = parse_stages(optarg);
			if (!o.stages)
				return usage();
			break;
		case 'g':
			if (sscanf(optarg, "%u,%u", &o.gap_min_ns, &o.gap_max_ns) != 2 ||
			    !o.gap_min_ns || o.gap_min_ns > o.gap_max_ns)
				return usage();
			break;
		case 'S':
			o.seed = strtoull(optarg, NULL, 0);
			break;
		case 'B':
			o.batch = (unsigned int)strtoul(optarg, NULL, 0);
			if (!o.batch || o.batch > 128)
				return usage();
			break;
		case 'h':
			return help();
		default:
			return usage();
		}
	}
	if (!o.formats || !o.prog || o.repeat < 1 || !o.events)
		return usage();
	if (o.procs < 1 || o.procs > BENCH_TASKS_MAX) {
		fprintf(stderr, "replay: --procs: 1 to %d\n", BENCH_TASKS_MAX);
		return 2;
	}
	/* As the daemon should: no network lookups of debug files. */
	unsetenv("DEBUGINFOD_URLS");

	tep = td_local_events(o.formats, NULL);
	if (!tep) {
		fprintf(stderr, "replay: cannot read the formats in %s\n", o.formats);
		goto out;
	}
	capgen_defaults(&cfg);
	cfg.nr_cpus = REPLAY_CPUS;
	cfg.nr_events = o.events;
	cfg.gap_min_ns = o.gap_min_ns;
	cfg.gap_max_ns = o.gap_max_ns;
	if (o.seed)
		cfg.seed = o.seed;
	if (check_formats(tep, &cfg))
		goto out;
	if (kernel_stacks(task_ks, &nr_task_ks, &idle_ks, &real_kernel)) {
		fprintf(stderr, "replay: no usable kernel stack in /proc/kallsyms\n");
		goto out;
	}
	ret = tasks_start(&tasks, o.prog, o.procs);
	if (ret) {
		fprintf(stderr, "replay: cannot start %s: %s\n", o.prog, strerror(-ret));
		ret = 1;
		goto out;
	}
	ret = 1;
	if (find_user_addrs(o.prog, tasks.pids[0], &ua)) {
		fprintf(stderr, "replay: no symbols c, rec in %s\n", o.prog);
		goto out;
	}
	cfg.tids = tasks.pids;
	cfg.nr_tids = tasks.nr;
	cfg.task_comm = "fp_chain";
	cfg.task_kstacks = task_ks;
	cfg.nr_task_kstacks = nr_task_ks;
	cfg.idle_kstack = &idle_ks;
	cfg.leaf_ip = ua.leaf;
	cfg.rec_ip = ua.rec;
	cfg.outer_ips = ua.outer;
	cfg.nr_outer = ua.nr_outer;
	cfg.files = ua.files;
	cfg.nr_files = ua.nr_files;
	cfg.outer_files = ua.outer_file;

	out = json_object_new_object();
	if (o.memory) {
		ret = memory(&o, tep, &cfg, out) ? 1 : 0;
	} else {
		ret = speed(&o, tep, &cfg, out) ? 1 : 0;
		if (!ret) {
			json_object *cj = NULL;

			/* Now that the user layout is known, describe the capture fully. */
			json_object_object_get_ex(out, "capture", &cj);
			add_u64(cj, "processes", tasks.nr);
			add_u64(cj, "outer_user_frames", ua.nr_outer);
			json_object_object_add(cj, "kernel_addresses_real",
					       json_object_new_boolean(real_kernel));
		}
	}
	if (!ret)
		printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
out:
	json_object_put(out);
	tasks_stop(&tasks);
	tep_free(tep);
	return ret;
}
