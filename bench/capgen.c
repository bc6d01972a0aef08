// SPDX-License-Identifier: GPL-2.0
/*
 * Synthesized deferred-stack capture (see capgen.h).
 *
 * Time advances globally, one event at a time, round robin over the CPUs.
 * What must be written later (the deferred stack of an entry, the second
 * event of a shared entry) goes into the target CPU's min-heap by
 * timestamp and is written when that CPU's clock passes it, so every CPU's
 * records stay in time order whatever was scheduled from elsewhere.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trace-defer/pagegen.h>

#include "capgen.h"

#define SWITCH_SIZE	64	/* sched_switch record on x86_64 (checked by the caller) */
#define REC_BUF		(64 + 9 * (CAPGEN_MAX_UFRAMES + CAPGEN_MAX_KFRAMES) + \
			 12 * CAPGEN_MAX_FILES + CAPGEN_MAX_PATH)
/* The kernel writes a file record again when its id is used this long after. */
#define FILE_REFRESH_NS	1000000000ULL

enum item_kind {
	IT_STACK,		/* user_unwind_stack */
	IT_EVENT2,		/* 2nd event of an entry: switch + kernel_stack + cookie */
	IT_LATE,		/* the same, preempted after its stack was unwound */
};

struct item {
	uint64_t ts;
	uint64_t cookie;
	int tid;
	uint16_t nr_rec;	/* recursion frames of the stack; UINT16_MAX: no frames */
	uint8_t kind;
	uint8_t kst;		/* kernel stack template */
};

struct heap {
	struct item *v;
	size_t n, cap;
};

struct cpu_state {
	struct td_pagegen pg;
	uint8_t page[TD_PAGE_SIZE];
	bool open;
	uint64_t last_ts;
	uint32_t cookie_seq;
	struct heap heap;
	uint64_t file_at[CAPGEN_MAX_FILES];	/* last file record here; 0: none yet */
};

struct gen {
	const struct capgen_cfg *cfg;
	capgen_sink_fn sink;
	void *arg;
	struct capgen_stats *st;
	struct cpu_state *cpus;
	uint64_t *busy_until;	/* per task: the end of its kernel entry */
	uint64_t rng;
	uint8_t rec[REC_BUF];
};

void capgen_defaults(struct capgen_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nr_cpus = 2;
	cfg->nr_events = 1000000;
	cfg->seed = 0x5eed;
	cfg->task_comm = "task";
	cfg->max_rec = 16;
	cfg->idle_permille = 300;
	cfg->shared_permille = 200;
	cfg->lost_permille = 10;
	cfg->failed_permille = 5;
	cfg->remote_permille = 500;
	cfg->late_permille = 25;
	cfg->gap_min_ns = CAPGEN_GAP_MIN_NS;
	cfg->gap_max_ns = CAPGEN_GAP_MAX_NS;
	cfg->delay_min_ns = 2000;
	cfg->delay_max_ns = 100000;
	cfg->late_min_ns = 1000;
	cfg->late_max_ns = 5000000;
}

/* xorshift64*: cheap, and the same capture for the same seed. */
static uint64_t rnd(struct gen *g)
{
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 0x2545F4914F6CDD1DULL;
}

static unsigned int rnd_range(struct gen *g, unsigned int lo, unsigned int hi)
{
	return hi > lo ? lo + (unsigned int)(rnd(g) % (hi - lo + 1)) : lo;
}

static bool chance(struct gen *g, unsigned int permille)
{
	return rnd(g) % 1000 < permille;
}

/* ---- heaps ---- */

static int heap_push(struct heap *h, const struct item *it)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 256;
		struct item *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	for (i = h->n++; i > 0; i = (i - 1) / 2) {
		size_t parent = (i - 1) / 2;

		if (h->v[parent].ts <= it->ts)
			break;
		h->v[i] = h->v[parent];
	}
	h->v[i] = *it;
	return 0;
}

static void heap_pop(struct heap *h, struct item *out)
{
	struct item last;
	size_t i = 0;

	*out = h->v[0];
	last = h->v[--h->n];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1].ts < h->v[c].ts)
			c++;
		if (last.ts <= h->v[c].ts)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
}

/* ---- pages ---- */

static int page_out(struct gen *g, int cpu, bool fill)
{
	struct cpu_state *c = &g->cpus[cpu];
	unsigned int size;

	if (!c->open)
		return 0;
	size = td_pagegen_finish(&c->pg, fill, 0);
	c->open = false;
	g->st->pages++;
	return g->sink(cpu, c->page, size, g->arg);
}

static int put_rec(struct gen *g, int cpu, uint64_t ts, unsigned int len)
{
	struct cpu_state *c = &g->cpus[cpu];
	int ret;

	if (ts < c->last_ts)
		ts = c->last_ts;
	c->last_ts = ts;
	if (!c->open) {
		td_pagegen_start(&c->pg, c->page, TD_PAGE_SIZE, ts);
		c->open = true;
	}
	ret = td_pagegen_add(&c->pg, ts, g->rec, len);
	if (ret == -ENOSPC) {
		/* As the kernel does: pad the rest, go on with a new page. */
		ret = page_out(g, cpu, true);
		if (ret)
			return ret;
		td_pagegen_start(&c->pg, c->page, TD_PAGE_SIZE, ts);
		c->open = true;
		ret = td_pagegen_add(&c->pg, ts, g->rec, len);
	}
	if (ret)
		return ret;
	g->st->records++;
	g->st->record_bytes += td_pagegen_event_size(len);
	if (!g->st->first_ts || ts < g->st->first_ts)
		g->st->first_ts = ts;
	if (ts > g->st->last_ts)
		g->st->last_ts = ts;
	return 0;
}

/* ---- records (x86_64 layouts of the formats) ---- */

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static void comm(uint8_t *dst, const char *name)
{
	memset(dst, 0, 16);
	memcpy(dst, name, strnlen(name, 15));
}

static int put_switch(struct gen *g, int cpu, uint64_t ts, int prev, const char *prev_comm,
		      long prev_state, int next, const char *next_comm)
{
	uint8_t *r = g->rec;

	memset(r, 0, SWITCH_SIZE);
	td_rec_common(r, g->cfg->id_switch, prev);
	comm(r + 8, prev_comm);
	put32(r + 24, (uint32_t)prev);
	put32(r + 28, 120);
	put64(r + 32, (uint64_t)prev_state);
	comm(r + 40, next_comm);
	put32(r + 56, (uint32_t)next);
	put32(r + 60, 120);
	g->st->events++;
	return put_rec(g, cpu, ts, SWITCH_SIZE);
}

static int put_kstack(struct gen *g, int cpu, uint64_t ts, int pid, const struct capgen_kstack *k)
{
	uint8_t *r = g->rec;
	unsigned int i;

	memset(r, 0, 16);
	td_rec_common(r, g->cfg->id_kstack, pid);
	put32(r + 8, k->nr);
	for (i = 0; i < k->nr; i++)
		put64(r + 16 + 8 * i, k->ips[i]);
	return put_rec(g, cpu, ts, 16 + 8 * k->nr);
}

static int put_cookie(struct gen *g, int cpu, uint64_t ts, int pid, uint64_t cookie)
{
	td_rec_common(g->rec, g->cfg->id_cookie, pid);
	put64(g->rec + 8, cookie);
	return put_rec(g, cpu, ts, 16);
}

/*
 * The series' current layout, each frame with its file; before it, on
 * this CPU, the file records the kernel would write first. Returns the
 * stack record's length, 0 when it cannot be built, or a negative errno.
 */
static int stack_rec_files(struct gen *g, int cpu, const uint64_t *ips, const uint8_t *ff,
			   unsigned int nr, const struct item *it)
{
	const struct capgen_cfg *cfg = g->cfg;
	struct cpu_state *c = &g->cpus[cpu];
	uint64_t bases[CAPGEN_MAX_FILES];
	uint32_t ids[CAPGEN_MAX_FILES];
	bool used[CAPGEN_MAX_FILES] = { false };
	struct td_rec_ustack us = {
		.cookie = it->cookie, .ips = ips, .nr = nr, .bases = bases, .ids = ids,
		.nr_files = nr ? cfg->nr_files : 0, .frame_files = ff, .tgid_layout = true,
		.tgid = it->tid,
	};
	unsigned int i, len;
	int ret;

	for (i = 0; i < nr; i++)
		used[ff[i]] = true;
	for (i = 0; i < cfg->nr_files; i++) {
		const struct capgen_file *f = &cfg->files[i];

		bases[i] = f->base;
		ids[i] = f->id;
		if (!used[i] || (c->file_at[i] && it->ts - c->file_at[i] < FILE_REFRESH_NS))
			continue;
		len = td_rec_unwind_file(g->rec, sizeof(g->rec), cfg->id_file, it->tid, f->id,
					 f->build_id, f->build_id_len, f->path);
		if (!len)
			return -EINVAL;
		ret = put_rec(g, cpu, it->ts, len);
		if (ret)
			return ret;
		c->file_at[i] = it->ts ? it->ts : 1;
		g->st->file_records++;
	}
	return (int)td_rec_ustack(g->rec, sizeof(g->rec), cfg->id_unwind, it->tid, &us);
}

static int put_stack(struct gen *g, int cpu, const struct item *it)
{
	const struct capgen_cfg *cfg = g->cfg;
	uint64_t ips[CAPGEN_MAX_UFRAMES];
	uint8_t ff[CAPGEN_MAX_UFRAMES];
	unsigned int nr = 0, i;
	int len;

	if (it->nr_rec != UINT16_MAX) {
		ff[nr] = cfg->leaf_file;
		ips[nr++] = cfg->leaf_ip;
		for (i = 0; i < it->nr_rec; i++) {
			ff[nr] = cfg->rec_file;
			ips[nr++] = cfg->rec_ip;
		}
		for (i = 0; i < cfg->nr_outer; i++) {
			ff[nr] = cfg->outer_files[i];
			ips[nr++] = cfg->outer_ips[i];
		}
	} else {
		g->st->failed++;
	}
	len = stack_rec_files(g, cpu, ips, ff, nr, it);
	if (len <= 0)
		return len ? len : -EINVAL;
	g->st->stacks++;
	g->st->user_frames += nr;
	return put_rec(g, cpu, it->ts, (unsigned int)len);
}

/* ---- the trace ---- */

static int task_switch(struct gen *g, int cpu, uint64_t ts, int tid, uint64_t cookie,
		       unsigned int kst, long prev_state)
{
	char idle[16];
	int ret;

	snprintf(idle, sizeof(idle), "swapper/%d", cpu);
	ret = put_switch(g, cpu, ts, tid, g->cfg->task_comm, prev_state, 0, idle);
	if (!ret)
		ret = put_kstack(g, cpu, ts + 150, tid, &g->cfg->task_kstacks[kst]);
	if (!ret)
		ret = put_cookie(g, cpu, ts + 250, tid, cookie);
	g->st->task_events++;
	return ret;
}

static int write_item(struct gen *g, int cpu, const struct item *it)
{
	if (it->kind == IT_STACK)
		return put_stack(g, cpu, it);
	if (it->kind == IT_LATE) {
		g->st->late_events++;
		return task_switch(g, cpu, it->ts, it->tid, it->cookie, it->kst, 0);
	}
	g->st->shared_events++;
	return task_switch(g, cpu, it->ts, it->tid, it->cookie, it->kst, 1);
}

/* Write what is due on @cpu at @ts. */
static int due(struct gen *g, int cpu, uint64_t ts)
{
	struct heap *h = &g->cpus[cpu].heap;
	struct item it;
	int ret;

	while (h->n && h->v[0].ts <= ts) {
		heap_pop(h, &it);
		ret = write_item(g, cpu, &it);
		if (ret)
			return ret;
	}
	return 0;
}

static int idle_event(struct gen *g, int cpu, uint64_t ts)
{
	const struct capgen_cfg *cfg = g->cfg;
	int next = cfg->tids[rnd(g) % cfg->nr_tids];
	char idle[16];
	int ret;

	snprintf(idle, sizeof(idle), "swapper/%d", cpu);
	ret = put_switch(g, cpu, ts, 0, idle, 0, next, cfg->task_comm);
	if (!ret)
		ret = put_kstack(g, cpu, ts + 150, 0, cfg->idle_kstack);
	g->st->idle_events++;
	return ret;
}

/* A task blocks: new kernel entry, its cookie, and what follows from it. */
static int task_event(struct gen *g, int cpu, uint64_t ts)
{
	const struct capgen_cfg *cfg = g->cfg;
	struct cpu_state *c = &g->cpus[cpu];
	unsigned int kst = rnd(g) % cfg->nr_task_kstacks;
	int t = (int)(rnd(g) % cfg->nr_tids), tid, n, scpu, ret;
	uint64_t cookie, last = ts;
	unsigned int nev = 1;
	struct item it;

	/* A task is in one kernel entry at a time: the next one starts after. */
	for (n = 0; n < cfg->nr_tids && g->busy_until[t] > ts; n++)
		t = (t + 1) % cfg->nr_tids;
	if (n == cfg->nr_tids)
		return idle_event(g, cpu, ts);
	tid = cfg->tids[t];
	cookie = ((uint64_t)(2 * c->cookie_seq++ + 1) << 32) | (uint32_t)(cpu + 1);
	ret = task_switch(g, cpu, ts, tid, cookie, kst, 1);
	if (ret)
		return ret;
	if (chance(g, cfg->shared_permille)) {
		/* Woken and switched out again in the same kernel entry. */
		it = (struct item){ .ts = ts + rnd_range(g, 1000, 20000), .cookie = cookie,
				    .tid = tid, .kind = IT_EVENT2, .kst = kst };
		last = it.ts;
		nev++;
		ret = heap_push(&c->heap, &it);
		if (ret)
			return ret;
	}
	g->busy_until[t] = last + 250;
	if (chance(g, cfg->lost_permille)) {
		g->st->lost++;
		g->st->lost_events += nev;
		return 0;
	}
	scpu = chance(g, cfg->remote_permille) ? (cpu + 1) % cfg->nr_cpus : cpu;
	it = (struct item){
		.ts = last + rnd_range(g, cfg->delay_min_ns, cfg->delay_max_ns),
		.cookie = cookie, .tid = tid, .kind = IT_STACK,
		.nr_rec = chance(g, cfg->failed_permille) ? UINT16_MAX :
			  (uint16_t)rnd_range(g, 0, cfg->max_rec),
	};
	g->busy_until[t] = it.ts;
	ret = heap_push(&g->cpus[scpu].heap, &it);
	if (ret)
		return ret;
	if (it.nr_rec == UINT16_MAX)
		g->st->failed_events += nev;
	if (!chance(g, cfg->late_permille))
		return 0;
	/* Preempted on its way back to user space, after the unwind. */
	it.ts += rnd_range(g, cfg->late_min_ns, cfg->late_max_ns);
	it.kind = IT_LATE;
	it.kst = kst;
	g->busy_until[t] = it.ts + 250;
	if (it.nr_rec == UINT16_MAX)
		g->st->failed_events++;
	return heap_push(&g->cpus[scpu].heap, &it);
}

/* splitmix64: what a held stack looks like follows from its cookie alone. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static void held_item(const struct capgen_cfg *cfg, uint64_t cookie, struct item *it, int *cpu)
{
	uint64_t h = mix(cookie);

	*it = (struct item){ .cookie = cookie, .kind = IT_STACK,
			     .tid = cfg->tids[h % cfg->nr_tids],
			     .nr_rec = (uint16_t)((h >> 16) % (cfg->max_rec + 1)) };
	*cpu = (int)((h >> 32) % cfg->nr_cpus);
}

/*
 * Memory benchmark: every event of a task, its cookie, and no stack until
 * all events are written; the stacks are then rebuilt from the cookies
 * (nothing is kept meanwhile, so the generator adds no memory of its own).
 */
static int held_event(struct gen *g, int cpu, uint64_t ts)
{
	struct cpu_state *c = &g->cpus[cpu];
	uint64_t cookie = ((uint64_t)(2 * c->cookie_seq++ + 1) << 32) | (uint32_t)(cpu + 1);
	struct item it;
	int scpu;

	held_item(g->cfg, cookie, &it, &scpu);
	return task_switch(g, cpu, ts, it.tid, cookie, rnd(g) % g->cfg->nr_task_kstacks, 1);
}

static int held_stacks(struct gen *g, uint64_t ts)
{
	struct item it;
	int cpu, scpu, ret;

	for (cpu = 0; cpu < g->cfg->nr_cpus; cpu++) {
		for (uint32_t seq = 0; seq < g->cpus[cpu].cookie_seq; seq++) {
			uint64_t cookie = ((uint64_t)(2 * seq + 1) << 32) | (uint32_t)(cpu + 1);

			held_item(g->cfg, cookie, &it, &scpu);
			it.ts = ts;
			ret = put_stack(g, scpu, &it);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int check(const struct capgen_cfg *cfg)
{
	unsigned int i;

	if (cfg->nr_cpus < 1 || cfg->nr_cpus > CAPGEN_MAX_CPUS || cfg->nr_tids < 1 ||
	    cfg->nr_task_kstacks < 1 || cfg->nr_task_kstacks > 255 || !cfg->idle_kstack ||
	    cfg->max_rec + cfg->nr_outer + 1 > CAPGEN_MAX_UFRAMES ||
	    cfg->nr_files < 1 || cfg->nr_files > CAPGEN_MAX_FILES ||
	    cfg->leaf_file >= cfg->nr_files || cfg->rec_file >= cfg->nr_files)
		return -EINVAL;
	for (i = 0; i < cfg->nr_outer; i++)
		if (cfg->outer_files[i] >= cfg->nr_files)
			return -EINVAL;
	for (i = 0; i < cfg->nr_files; i++)
		if (!cfg->files[i].id || cfg->files[i].build_id_len > 20 ||
		    strlen(cfg->files[i].path) >= CAPGEN_MAX_PATH)
			return -EINVAL;
	for (i = 0; i < (unsigned int)cfg->nr_task_kstacks; i++)
		if (cfg->task_kstacks[i].nr > CAPGEN_MAX_KFRAMES)
			return -EINVAL;
	return cfg->idle_kstack->nr > CAPGEN_MAX_KFRAMES ? -EINVAL : 0;
}

int capgen_run(const struct capgen_cfg *cfg, capgen_sink_fn sink, void *arg,
	       struct capgen_stats *stats)
{
	struct gen *g;
	uint64_t t = 1000000000ULL;
	int cpu, ret;

	memset(stats, 0, sizeof(*stats));
	ret = check(cfg);
	if (ret)
		return ret;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->cpus = calloc(cfg->nr_cpus, sizeof(*g->cpus));
	g->busy_until = calloc(cfg->nr_tids, sizeof(*g->busy_until));
	if (!g->cpus || !g->busy_until) {
		ret = -ENOMEM;
		goto out;
	}
	g->cfg = cfg;
	g->sink = sink;
	g->arg = arg;
	g->st = stats;
	g->rng = cfg->seed ? cfg->seed : 1;	/* xorshift: never 0 */

	for (uint64_t i = 0; stats->events < cfg->nr_events; i++) {
		cpu = (int)(i % cfg->nr_cpus);
		t += rnd_range(g, cfg->gap_min_ns, cfg->gap_max_ns);
		ret = due(g, cpu, t);
		if (ret)
			goto out;
		if (cfg->hold_stacks)
			ret = held_event(g, cpu, t);
		else if (chance(g, cfg->idle_permille))
			ret = idle_event(g, cpu, t);
		else
			ret = task_event(g, cpu, t);
		if (ret)
			goto out;
	}
	/* What is still scheduled, then the held stacks, then the last pages. */
	for (cpu = 0; cpu < cfg->nr_cpus; cpu++) {
		ret = due(g, cpu, UINT64_MAX);
		if (ret)
			goto out;
	}
	if (cfg->hold_stacks) {
		/* Past the reader's hold time: the last events are no longer held. */
		ret = held_stacks(g, t + 20000000);
		if (ret)
			goto out;
	}
	for (cpu = 0; cpu < cfg->nr_cpus; cpu++) {
		ret = page_out(g, cpu, false);
		if (ret)
			goto out;
	}
out:
	if (g->cpus)
		for (cpu = 0; cpu < cfg->nr_cpus; cpu++)
			free(g->cpus[cpu].heap.v);
	free(g->cpus);
	free(g->busy_until);
	free(g);
	return ret;
}
