// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: raw ring-buffer sub-buffers through the daemon's
 * pipeline. A parser with the formats of a kernel with the series and a
 * file table attached reads the pages (layout in fuzz-common.h), hands on
 * to the stitcher, whose emit callback names user frames from the file
 * table as the daemon does (td_sym_ufile(), no symbolizer: nothing is
 * opened) and writes every event with the JSON and folded writers; the
 * folded stacks are drawn as a flame graph at the end. Everything is
 * built and freed per input. Each page is also walked by the parser's
 * sub-buffer walk and by libtraceevent's kbuffer, which it replaced: the
 * same records, timestamps and sizes, or the target aborts.
 */
#include <endian.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trace-defer/filetab.h>
#include <trace-defer/output.h>
#include <trace-defer/parse.h>
#include <trace-defer/ringbuf.h>
#include <trace-defer/stitch.h>
#include <trace-defer/symbolize.h>

#include <kbuffer.h>

#include "fuzz-common.h"
#include "../../lib/pagewalk.h"

/* Inputs past this many pages are cut (libFuzzer's -max_len keeps them shorter). */
#define MAX_PAGES	16

struct run {
	struct td_filetab *ft;
	struct td_folded *fo;
	struct td_frame *frames;
	unsigned int cap;
	uint64_t emitted;
};

/* Small bounds: cheap to set up per input, and eviction is reached. */
static const struct td_stitch_config stitch_cfg = {
	.max_pending_events = 256,
	.max_stacks = 64,
	.max_wait_ns = 2000000000ULL,
	.stack_keep_ns = 2000000000ULL,
};

static FILE *devnull;
static struct td_json_writer *interned;	/* a tiny table: epochs all the time */
static struct td_json_writer *full;	/* must write what td_json_format() writes */
static bool verbose;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The parser's walk of a page against the reader it replaced: kbuffer,
 * on the sound part the walk found (kbuffer trusts its input), must give
 * the same records with the same timestamps and sizes. Aborts if not.
 */
static void same_as_kbuffer(const uint8_t *page)
{
	static uint8_t copy[FUZZ_PAGE_SIZE];
	static struct kbuffer *kb;
	unsigned long long kts;
	uint64_t word, commit, ts;
	const uint8_t *d;
	struct td_pagewalk w;
	unsigned int len;
	void *kd;

	if (!kb)
		kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	if (!kb)
		abort();
	memcpy(&word, page + 8, 8);
	commit = le64toh(word) & TD_PAGE_COMMIT_MASK;
	if (commit > FUZZ_PAGE_SIZE - TD_PAGE_HDR_SIZE)
		commit = FUZZ_PAGE_SIZE - TD_PAGE_HDR_SIZE;
	memcpy(&ts, page, 8);
	td_pagewalk_start(&w, page + TD_PAGE_HDR_SIZE, (unsigned int)commit, le64toh(ts));
	while (td_pagewalk_next(&w, &ts, &d, &len))
		;
	memcpy(copy, page, FUZZ_PAGE_SIZE);
	word = htole64(w.off);
	memcpy(copy + 8, &word, 8);
	kbuffer_load_subbuffer(kb, copy);
	memcpy(&ts, page, 8);
	td_pagewalk_start(&w, page + TD_PAGE_HDR_SIZE, (unsigned int)commit, le64toh(ts));
	for (kd = kbuffer_read_event(kb, &kts); kd; kd = kbuffer_next_event(kb, &kts)) {
		if (!td_pagewalk_next(&w, &ts, &d, &len) || ts != kts ||
		    d - page != (uint8_t *)kd - copy || len != (unsigned int)kbuffer_event_size(kb))
			abort();
	}
	if (td_pagewalk_next(&w, &ts, &d, &len))
		abort();
}
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "w");
	interned = td_json_writer_new(TD_JSON_INTERNED, 4);
	full = td_json_writer_new(TD_JSON_FULL, 0);
	if (!devnull || !interned || !full)
		abort();
	/* FUZZ_VERBOSE=1: what each input gave (to check seeds). */
	verbose = getenv("FUZZ_VERBOSE");
	return 0;
}

static int fake_tgid(int tid, void *arg)
{
	return tid > 0 ? tid - tid % 4 + 1 : 0;
}

static const struct td_ips *user_ips(const struct td_event *ev, const struct td_ustack *us,
				     enum td_status status)
{
	if (status == TD_INPLACE)
		return &ev->inplace_stack;
	if (status == TD_STITCHED || status == TD_UNWIND_FAILED)
		return us ? &us->ips : NULL;
	return NULL;
}

/*
 * A writer keeps what it worked out (frames, each format's fields) from
 * line to line; td_json_format() keeps nothing. Both write layout full:
 * the same text, or abort.
 */
static void same_as_unkept(const struct td_resolved *res, const char *json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		abort();
	ret = td_json_writer_write(full, f, res);
	if (fclose(f))
		abort();
	if (!ret && (len != strlen(json) + 1 || memcmp(buf, json, len - 1) || buf[len - 1] != '\n'))
		abort();
	free(buf);
}

/* The daemon's resolver, minus /proc and ELF files. */
static void emit(const struct td_event *ev, const struct td_ustack *us, enum td_status status,
		 void *arg)
{
	const struct td_ips *uips = user_ips(ev, us, status);
	unsigned int nk = ev->kstack.nr, nu = uips ? uips->nr : 0, i;
	struct td_resolved res = { 0 };
	struct run *r = arg;
	struct td_frame *n;
	char *json = NULL;

	r->emitted++;
	if (nk + nu > r->cap) {
		n = realloc(r->frames, (nk + nu) * sizeof(*n));
		if (!n)
			return;
		r->frames = n;
		r->cap = nk + nu;
	}
	for (i = 0; i < nk; i++) {
		memset(&r->frames[i], 0, sizeof(r->frames[i]));
		r->frames[i].addr = ev->kstack.ips[i];
	}
	for (i = 0; i < nu; i++) {
		struct td_frame *f = &r->frames[nk + i];

		if (status != TD_INPLACE && us && us->files) {
			td_sym_ufile(NULL, r->ft, &us->files[i], uips->ips[i], i > 0, f);
			continue;
		}
		memset(f, 0, sizeof(*f));
		f->addr = uips->ips[i];
	}
	res.ev = ev;
	res.status = status;
	res.cookie = ev->has_cookie ? ev->cookie : 0;
	res.event_name = ev->tep_event ? ev->tep_event->name : "unknown";
	res.kframes = r->frames;
	res.nr_kframes = nk;
	res.uframes = r->frames ? r->frames + nk : NULL;
	res.nr_uframes = nu;
	if (!td_json_format(&res, &json)) {
		same_as_unkept(&res, json);
		free(json);
	}
	td_json_writer_write(interned, devnull, &res);
	td_folded_add(r->fo, &res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t pages[FUZZ_NR_CPUS][FUZZ_PAGE_SIZE];
	struct run r = { 0 };
	struct tep_handle *tep;
	struct td_stitcher *st;
	struct td_parser *p;
	uint64_t ts0, last[FUZZ_NR_CPUS] = { 0 }, now;
	size_t nr_pages, i, n;
	int cpu;

	if (size < 8)
		return -1;
	/* A new tep per input: what the writers worked out of the last one is stale. */
	td_json_writer_reset(interned);
	td_json_writer_reset(full);
	memcpy(&ts0, data, 8);
	ts0 = le64toh(ts0);
	tep = fuzz_tep(fuzz_page_layout(ts0));
	r.ft = td_filetab_new(64);
	r.fo = td_folded_new();
	st = td_stitch_new(&stitch_cfg, emit, &r);
	p = tep ? td_parser_new(tep, st, FUZZ_NR_CPUS) : NULL;
	if (!tep || !r.ft || !r.fo || !st || !p)
		abort();
	td_parser_set_filetab(p, r.ft);
	td_parser_set_tgid_fn(p, fake_tgid, NULL);
	td_parser_set_hold_ns(p, 1000 * 1000);

	nr_pages = (size + FUZZ_PAGE_SIZE - 1) / FUZZ_PAGE_SIZE;
	if (nr_pages > MAX_PAGES)
		nr_pages = MAX_PAGES;
	for (i = 0; i < nr_pages; i++) {
		struct td_parser_stats ps;
		uint8_t *page = pages[i % FUZZ_NR_CPUS];

		n = size - i * FUZZ_PAGE_SIZE;
		if (n > FUZZ_PAGE_SIZE)
			n = FUZZ_PAGE_SIZE;
		memset(page, 0, FUZZ_PAGE_SIZE);
		memcpy(page, data + i * FUZZ_PAGE_SIZE, n);
		if (!i) {
			uint64_t t = htole64(ts0 & ~FUZZ_LAYOUT_BITS);

			memcpy(page, &t, 8);
		}
		cpu = (int)(i % FUZZ_NR_CPUS);
		same_as_kbuffer(page);
		if (!(ts0 & FUZZ_CUT_BATCHES)) {
			td_parser_page(p, cpu, page, FUZZ_PAGE_SIZE);
		} else if (cpu == FUZZ_NR_CPUS - 1 || i == nr_pages - 1) {
			struct td_page_ref refs[FUZZ_NR_CPUS];
			uint64_t cut;

			/* A round: these pages, cut at the last one's time; the buffers reused. */
			for (int c = 0; c <= cpu; c++)
				refs[c] = (struct td_page_ref){ c, pages[c], FUZZ_PAGE_SIZE };
			memcpy(&cut, page, 8);
			td_parser_pages_until(p, refs, (unsigned int)cpu + 1, le64toh(cut));
		}
		td_parser_get_stats(p, &ps);
		last[cpu] = ps.last_ts;
		/* As the daemon: every CPU read up to the earliest clock. */
		if (cpu == FUZZ_NR_CPUS - 1) {
			now = last[0];
			for (cpu = 1; cpu < FUZZ_NR_CPUS; cpu++)
				if (last[cpu] < now)
					now = last[cpu];
			td_parser_advance(p, now);
			td_stitch_advance(st, now);
		}
	}
	td_parser_flush(p);
	td_stitch_flush(st);
	td_folded_write(r.fo, devnull);
	td_flamegraph_write(r.fo, devnull, NULL);
	if (verbose) {
		struct td_parser_stats ps;
		struct td_stitch_stats ss;
		struct td_filetab_stats fs;

		td_parser_get_stats(p, &ps);
		td_stitch_get_stats(st, &ss);
		td_filetab_get_stats(r.ft, &fs);
		fprintf(stderr,
			"pages %" PRIu64 " (bad %" PRIu64 ", missed %" PRIu64 ") records %" PRIu64
			" (bad %" PRIu64 ", unknown %" PRIu64 ") events %" PRIu64 " cookies %" PRIu64
			" stacks %" PRIu64 " files %" PRIu64 " (conflicts %" PRIu64
			") bad_file_info %" PRIu64 " stitched %" PRIu64 " lost %" PRIu64
			" inplace %" PRIu64 " emitted %" PRIu64 "\n",
			ps.pages, ps.bad_pages, ps.missed_pages, ps.records, ps.bad_records,
			ps.unknown, ps.events, ps.cookies, ps.stacks, fs.files, fs.conflicts,
			ps.bad_file_info, ss.emitted[TD_STITCHED], ss.emitted[TD_USER_LOST],
			ss.emitted[TD_INPLACE], r.emitted);
	}

	td_parser_free(p);
	td_stitch_free(st);
	td_folded_free(r.fo);
	td_filetab_free(r.ft);
	free(r.frames);
	tep_free(tep);
	return 0;
}
