// SPDX-License-Identifier: GPL-2.0
/*
 * Counter bookkeeping and reports.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "counters.h"

int td_counters_init(struct td_counters *c, int nr_cpus)
{
	memset(c, 0, sizeof(*c));
	c->cpu = calloc(nr_cpus > 0 ? nr_cpus : 1, sizeof(*c->cpu));
	if (!c->cpu)
		return -1;
	c->nr_cpus = nr_cpus;
	c->start_ns = td_now_mono_ns();
	c->busy_start_ns = td_cpu_time_ns();
	return 0;
}

void td_counters_free(struct td_counters *c)
{
	free(c->cpu);
	c->cpu = NULL;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + ts->tv_nsec;
}

uint64_t td_now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_ns(&ts);
}

uint64_t td_now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts_ns(&ts);
}

uint64_t td_cpu_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts_ns(&ts);
}

static uint64_t total_lost(const struct td_report *r)
{
	return r->pl.stitch.emitted[TD_USER_LOST] + r->pl.stitch.emitted[TD_UNWIND_FAILED];
}

/*
 * "key=value" pairs, one group per line, so scripts can pick values out
 * (grep -o 'overruns=[0-9]*') and people can still read them.
 */
void td_counters_print(FILE *f, const struct td_report *r, const char *title)
{
	const struct td_counters *c = r->c;
	const struct td_parser_stats *ps = &r->pl.parse;
	const struct td_stitch_stats *ss = &r->pl.stitch;
	double secs = (td_now_mono_ns() - c->start_ns) / 1e9;
	double cpu = (td_cpu_time_ns() - c->busy_start_ns) / 1e9;
	uint64_t overrun = 0, dropped = 0;

	for (int i = 0; i < c->nr_cpus; i++) {
		overrun += c->cpu[i].overrun;
		dropped += c->cpu[i].dropped;
	}
	fprintf(f, "trace-defer: %s after %.1f s: cpu=%.2fs (%.1f%%)\n", title, secs, cpu,
		secs > 0 ? 100.0 * cpu / secs : 0.0);
	fprintf(f, "trace-defer:   read: records=%" PRIu64 " events=%" PRIu64 " cookies=%" PRIu64
		" stacks=%" PRIu64 " bytes=%" PRIu64 " malformed=%" PRIu64 " events/s=%.0f\n",
		ps->records, ps->events, ps->cookies, ps->stacks, ps->bytes,
		ps->bad_records, secs > 0 ? ps->events / secs : 0.0);
	fprintf(f, "trace-defer:   emitted: stitched=%" PRIu64 " inplace=%" PRIu64
		" no_user=%" PRIu64 " user_lost=%" PRIu64 " unwind_failed=%" PRIu64
		" other_processes=%" PRIu64 " written=%" PRIu64 " write_errors=%" PRIu64 "\n",
		ss->emitted[TD_STITCHED], ss->emitted[TD_INPLACE], ss->emitted[TD_NO_USER],
		ss->emitted[TD_USER_LOST], ss->emitted[TD_UNWIND_FAILED], r->pl.other_pids,
		r->written, r->pl.sink_errors + r->dropped);
	fprintf(f, "trace-defer:   lost: without_stack=%" PRIu64 " evicted_events=%" PRIu64
		" evicted_stacks=%" PRIu64 " orphan_stacks=%" PRIu64 " overruns=%" PRIu64
		" dropped=%" PRIu64 " no_frames=%" PRIu64 "\n",
		total_lost(r), ss->evicted_events, ss->evicted_stacks, ss->orphan_stacks,
		overrun, dropped, r->pl.no_frames);
	fprintf(f, "trace-defer:   parser: pages=%" PRIu64 " missed_pages=%" PRIu64
		" orphan_records=%" PRIu64 " interleaved=%" PRIu64 " unknown_records=%" PRIu64
		" stacks_cut=%" PRIu64 " exec_stacks=%" PRIu64 " naming_events=%" PRIu64 "\n",
		ps->pages, ps->missed_pages, ps->orphans, ps->interleaved, ps->unknown,
		ps->stacks_cut, ss->exec_stacks, ps->naming_events);
	fprintf(f, "trace-defer:   files: records=%" PRIu64 " known=%" PRIu64 " full=%" PRIu64
		" evicted=%" PRIu64 " conflicts=%" PRIu64 " bad_file_info=%" PRIu64
		" frames_named=%" PRIu64 " frames_unknown_id=%" PRIu64
		" build_id_mismatch=%" PRIu64 "\n",
		ps->file_records, r->pl.files.files, r->pl.files.full, r->pl.files.evicted,
		r->pl.files.conflicts, ps->bad_file_info, r->pl.fileid_named, r->pl.fileid_unknown, r->pl.sym.files_mismatch);
	fprintf(f, "trace-defer:   names: stacks_named=%" PRIu64 " stacks_reused=%" PRIu64
		" memo_sweeps=%" PRIu64 " memo_swept=%" PRIu64 " memo_resets=%" PRIu64
		" maps_reads=%" PRIu64 " maps_unread=%" PRIu64 " processes_gone=%" PRIu64
		" jit_named=%" PRIu64 " jit_maps_saved=%" PRIu64 " jit_map_save_errors=%" PRIu64
		" jit_maps_stale=%" PRIu64 " jit_maps_watched=%" PRIu64 " jit_watch_dropped=%" PRIu64
		" jit_watch_missed=%" PRIu64
		" exec_maps_dropped=%" PRIu64 " maps_from_parent=%" PRIu64 "\n",
		r->pl.stacks_named, r->pl.stacks_reused, r->pl.stack_sweeps, r->pl.stacks_swept,
		r->pl.stack_resets, r->pl.sym.maps_reads, r->pl.sym.maps_read_errors,
		r->pl.sym.maps_gone, r->pl.sym.jit_named, r->pl.sym.jit_maps_saved,
		r->pl.sym.jit_map_save_errors, r->pl.sym.jit_maps_stale, r->pl.sym.jit_maps_watched,
		r->pl.sym.jit_watch_dropped, r->pl.sym.jit_watch_missed, r->pl.exec_forgets,
		r->pl.sym.maps_forked);
	/* What the symbolizer holds: files, tables and names grow to symbols_max_mb. */
	fprintf(f, "trace-defer:   held: processes=%" PRIu64 " objects=%" PRIu64
		" symtabs=%" PRIu64 " strings=%" PRIu64 " string_bytes=%" PRIu64
		" bytes=%" PRIu64 " restarts=%" PRIu64 " kallsyms_reloads=%" PRIu64 "\n",
		r->pl.sym.processes, r->pl.sym.objects, r->pl.sym.symtabs, r->pl.sym.strings,
		r->pl.sym.string_bytes, r->pl.sym.held_bytes, r->pl.sym.restarts,
		r->pl.sym.kernel_reloads);
	/* Of the waiting events: kept whole, and the bodies the packed ones share. */
	fprintf(f, "trace-defer:   pending: events=%zu stacks=%zu whole=%zu packed_bodies=%zu"
		" packed_bytes=%zu\n", ss->pending_events, ss->pending_stacks, ss->whole_events,
		ss->packed_bodies, ss->packed_bytes);
	fprintf(f, "trace-defer:   stitch: late_events=%" PRIu64 " settled_stacks=%" PRIu64
		" duplicate_stacks=%" PRIu64 " stale_records=%" PRIu64 " superseded=%" PRIu64 "\n",
		ss->late_events, ss->settled_stacks, ss->duplicate_stacks, ss->stale_records,
		ss->superseded);
	if (r->has_json)
		fprintf(f, "trace-defer:   json: stack_lines=%" PRIu64 " epochs=%" PRIu64
			" reopened=%" PRIu64 " table_stacks=%" PRIu64 " fields_cached=%" PRIu64 "\n",
			r->js.stacks, r->js.epochs, r->js.resets, r->js.table_stacks,
			r->js.fields_cached);
	if (r->has_profiles)
		fprintf(f, "trace-defer:   profiles: intervals=%" PRIu64 " removed=%" PRIu64
			" bytes=%" PRIu64 " last_bytes=%" PRIu64 " kept=%" PRIu64
			" kept_bytes=%" PRIu64 " errors=%" PRIu64 " early_cuts=%" PRIu64
			" dir_made_again=%" PRIu64 " folded_missed=%" PRIu64 "\n",
			r->prof.written, r->prof.removed, r->prof.bytes, r->prof.last_bytes,
			r->prof.kept, r->prof.kept_bytes, r->prof.errors, r->prof.early,
			r->prof.dir_made_again, r->prof.folded_missed);
	for (int i = 0; i < c->nr_cpus; i++) {
		const struct td_cpu_counters *cc = &c->cpu[i];

		if (!cc->reads && !cc->overrun && !cc->dropped)
			continue;
		fprintf(f, "trace-defer:   cpu%d: reads=%" PRIu64 " bytes=%" PRIu64 " overrun=%"
			PRIu64 " dropped=%" PRIu64 "\n", i, cc->reads, cc->bytes, cc->overrun,
			cc->dropped);
	}
	fflush(f);
}

void td_counters_status(char *buf, size_t len, const struct td_report *r)
{
	const struct td_parser_stats *ps = &r->pl.parse;
	const struct td_stitch_stats *ss = &r->pl.stitch;
	uint64_t overrun = 0;

	for (int i = 0; i < r->c->nr_cpus; i++)
		overrun += r->c->cpu[i].overrun + r->c->cpu[i].dropped;
	snprintf(buf, len, "events %" PRIu64 ", stitched %" PRIu64 ", inplace %" PRIu64
		 ", lost %" PRIu64 ", overruns %" PRIu64 ", pending %zu, frames named from files %"
		 PRIu64 ", unknown file ids %" PRIu64 ", build-id mismatches %" PRIu64,
		 ps->events, ss->emitted[TD_STITCHED], ss->emitted[TD_INPLACE],
		 total_lost(r), overrun, ss->pending_events, r->pl.fileid_named,
		 r->pl.fileid_unknown, r->pl.sym.files_mismatch);
}
