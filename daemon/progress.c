// SPDX-License-Identifier: GPL-2.0
/*
 * Progress lines on standard error (see progress.h).
 */
#include <inttypes.h>

#include "counters.h"
#include "progress.h"

void td_progress_init(struct td_progress *p, FILE *out, bool tty, uint64_t every_ns)
{
	*p = (struct td_progress){ .out = out, .tty = tty, .every_ns = every_ns };
	p->start_ns = td_now_mono_ns();
	p->next_ns = p->start_ns + every_ns;
}

void td_progress_span(struct td_progress *p, uint64_t first_ts, uint64_t last_ts,
		      uint64_t records)
{
	p->first_ts = first_ts;
	p->last_ts = last_ts;
	p->records = records;
}

bool td_progress_clock_due(struct td_progress *p)
{
	uint64_t now = td_now_mono_ns();

	if (now < p->next_ns)
		return false;
	p->next_ns = now + p->every_ns;
	return true;
}

void td_progress_show(struct td_progress *p, uint64_t ts, uint64_t records, uint64_t events)
{
	double secs = (td_now_mono_ns() - p->start_ns) / 1e9;

	fprintf(p->out, "%strace-defer: report: ", p->tty ? "\r" : "");
	if (p->records)
		fprintf(p->out, "%.0f%%, ", 100.0 * (records < p->records ? records : p->records) /
			p->records);
	if (p->last_ts > p->first_ts && ts >= p->first_ts && ts <= p->last_ts)
		fprintf(p->out, "%.1f of %.1f s of trace, ", (ts - p->first_ts) / 1e9,
			(p->last_ts - p->first_ts) / 1e9);
	fprintf(p->out, "%" PRIu64 " records, %" PRIu64 " events, %.0f records/s%s",
		records, events, secs > 0 ? records / secs : 0.0, p->tty ? "\033[K" : "\n");
	fflush(p->out);
	p->shown = true;
}

void td_progress_done(struct td_progress *p)
{
	if (p->shown && p->tty) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
	}
	p->shown = false;
}
