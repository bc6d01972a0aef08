/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Progress of long work (`trace-defer report` of a large trace.dat) on
 * standard error: the share of the records read, where in the trace's time
 * span, events written, and the rate. On a terminal one line rewritten in place,
 * else a line per update (for logs).
 */
#ifndef TD_DAEMON_PROGRESS_H
#define TD_DAEMON_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct td_progress {
	FILE *out;
	bool tty;		/* rewrite one line: \r, cleared at the end */
	uint64_t every_ns;	/* 0: off */
	uint64_t start_ns, next_ns;
	uint64_t first_ts, last_ts;	/* the trace's span, trace clock */
	uint64_t records;		/* in all; 0: unknown */
	uint64_t checks;
	bool shown;
};

/* Off when @every_ns is 0. @tty: @out is a terminal. */
void td_progress_init(struct td_progress *p, FILE *out, bool tty, uint64_t every_ns);

/* The trace's time span and its number of records. */
void td_progress_span(struct td_progress *p, uint64_t first_ts, uint64_t last_ts,
		      uint64_t records);

bool td_progress_clock_due(struct td_progress *p);

/* Cheap, per record: is a line due? Then td_progress_show() it. */
static inline bool td_progress_due(struct td_progress *p)
{
	/* The clock only every few thousand records. */
	return p->every_ns && !(++p->checks % 4096) && td_progress_clock_due(p);
}

/* Where the reading is: at record timestamp @ts, after @records records and @events events. */
void td_progress_show(struct td_progress *p, uint64_t ts, uint64_t records, uint64_t events);

/* The work is over: a terminal's line is cleared. */
void td_progress_done(struct td_progress *p);

#endif /* TD_DAEMON_PROGRESS_H */
