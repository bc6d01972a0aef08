/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output writers. They consume a td_resolved: an event with its status and
 * its symbolized frames; they never look anything up themselves.
 *
 * JSON lines: one object per event, schema version TD_JSON_SCHEMA_VERSION,
 * documented in doc/trace-defer-json.7.md. Folded stacks: one line per
 * distinct stack "comm;user outermost..;user innermost;kernel outermost..;
 * kernel innermost COUNT", the input of flame graph tools. Flame graph: a
 * self-contained SVG drawn from a td_folded.
 */
#ifndef TRACE_DEFER_OUTPUT_H
#define TRACE_DEFER_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include <trace-defer/symbolize.h>
#include <trace-defer/types.h>

#define TD_JSON_SCHEMA_VERSION 1

struct td_resolved {
	const struct td_event *ev;
	enum td_status status;
	uint64_t cookie;		/* 0 when none */
	const char *event_name;		/* "system:name" */
	const struct td_frame *kframes;	/* innermost first */
	unsigned int nr_kframes;
	const struct td_frame *uframes;	/* innermost first */
	unsigned int nr_uframes;
};

/*
 * Write one JSON object and a newline. Event fields are decoded from
 * ev->raw with ev->tep_event (common_* fields left out). Returns 0 or a
 * negative errno (write error).
 */
int td_json_write(FILE *f, const struct td_resolved *r);

/*
 * The same object as td_json_write() writes, as a string without the
 * newline, in *@out (malloc'ed, the caller frees it). For writers that
 * batch output themselves. Returns 0 or -ENOMEM.
 */
int td_json_format(const struct td_resolved *r, char **out);

/*
 * Length of the valid UTF-8 sequence at @s (at most @n bytes), or 0 when
 * the bytes there are not valid UTF-8 (overlong, surrogate, truncated...).
 */
size_t td_utf8_seq_len(const unsigned char *s, size_t n);

/*
 * Folded stacks. A frame is named by its symbol; when that is unknown, a
 * user frame by "object+0xFILEOFFSET" (object's base name) and any other
 * frame by "0xADDR". In names, ';' becomes ':', blanks become '_', other
 * control characters and invalid UTF-8 become '?'. An empty comm is
 * "[unknown]". An event with status user_lost or unwind_failed and no user
 * frames gets one pseudo frame "[user_lost]" or "[unwind_failed]" where its
 * user stack would be, so the flame graph shows what is missing; no_user
 * events (kernel threads) have kernel frames only.
 */
struct td_folded;

struct td_folded *td_folded_new(void);
void td_folded_free(struct td_folded *fo);
/* Count one event's stack. Returns 0 or -ENOMEM. */
int td_folded_add(struct td_folded *fo, const struct td_resolved *r);
/* Count @count samples of an already folded stack (no ' ' or '\n' in it). */
int td_folded_add_line(struct td_folded *fo, const char *stack, uint64_t count);
/* Write all stacks, sorted, one per line. Returns 0 or negative errno. */
int td_folded_write(const struct td_folded *fo, FILE *f);
/* Number of distinct stacks, and of samples over all of them. */
size_t td_folded_nr_stacks(const struct td_folded *fo);
uint64_t td_folded_nr_samples(const struct td_folded *fo);
/*
 * Call @fn for every stack in sorted (strcmp) order; stops at and returns
 * the first non-zero value @fn returns. Returns 0 or -ENOMEM.
 */
int td_folded_foreach(const struct td_folded *fo,
		      int (*fn)(const char *stack, uint64_t count, void *arg), void *arg);

struct td_flamegraph_opts {
	const char *title;		/* default "Flame Graph" */
	unsigned int width;		/* pixels, default 1200 */
	unsigned int frame_height;	/* pixels, default 16 */
	double min_width;		/* pixels: narrower frames are left out, default 0.1 */
};

/*
 * Write a flame graph of @fo as one self-contained SVG (no script, no
 * external reference): the root "all" at the bottom, callers below callees,
 * width proportional to the sample count, a <title> tooltip per frame
 * ("name (N samples, P%)"), colors from a hash of the name so a function
 * has the same color everywhere. @opts may be NULL. Returns 0 or a
 * negative errno.
 */
int td_flamegraph_write(const struct td_folded *fo, FILE *f,
			const struct td_flamegraph_opts *opts);

#endif /* TRACE_DEFER_OUTPUT_H */
