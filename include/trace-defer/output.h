/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output writers. They consume a td_resolved: an event with its status and
 * its symbolized frames; they never look anything up themselves.
 *
 * JSON lines, documented in doc/trace-defer-json.7.md: layout "full", one
 * object per event with its stacks (schema version TD_JSON_SCHEMA_VERSION),
 * or layout "interned" (TD_JSON_INTERNED_VERSION), where each distinct
 * stack is written once as a "stack" line with an id and event lines refer
 * to it, or layout "compact" (TD_JSON_COMPACT_VERSION), interned stacks
 * and event formats, event lines as arrays of values. Folded stacks: one line per
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

#define TD_JSON_SCHEMA_VERSION 1	/* layout full */
#define TD_JSON_INTERNED_VERSION 2	/* layout interned */
#define TD_JSON_COMPACT_VERSION 3	/* layout compact */

enum td_json_layout {
	TD_JSON_FULL = 0,	/* every event line holds its stacks (version 1) */
	TD_JSON_INTERNED,	/* stacks as "stack" lines, events refer to them by id */
	/*
	 * Version 3: interned stacks, and event formats too: a "header" line
	 * names an event line's columns, a "format" line names an event's
	 * fields once, and event lines are arrays of values.
	 */
	TD_JSON_COMPACT,
};

/* Interned stacks a writer keeps at most by default, then a new epoch. */
#define TD_JSON_MAX_STACKS	8192
/* ... and at most so many bytes of them (frames or text), whatever the count. */
#define TD_JSON_STACK_BYTES	(16u << 20)

struct td_resolved {
	const struct td_event *ev;
	enum td_status status;
	uint64_t cookie;		/* 0 when none */
	/*
	 * "system:name"; from a pipeline, one string per kind of event, the
	 * same pointer for its every event while the pipeline lives: a sink
	 * may key on the pointer (pprof does).
	 */
	const char *event_name;
	const struct td_frame *kframes;	/* innermost first */
	unsigned int nr_kframes;
	const struct td_frame *uframes;	/* innermost first */
	unsigned int nr_uframes;
	/*
	 * Added later: non-zero ids of the kernel and the user frames as a
	 * td_pipeline named them, never reused in the process: two events with
	 * the same id have the same frames (the same addresses, and the same
	 * string pointers from the same symbolizer), so a sink may cache what it
	 * made of them by id. 0 (no frames, or not kept): no such promise.
	 */
	uint64_t kstack_id, ustack_id;
};

/*
 * A JSON lines writer for one output file: its layout, the caches that make
 * writing fast, and (layout interned) the table of the stacks already
 * written to the file, at most @max_stacks of them (0:
 * TD_JSON_MAX_STACKS) and TD_JSON_STACK_BYTES. When the table is full it
 * is emptied (a new epoch, counted): stacks seen again are written again
 * under new ids. Ids start at 1 and are never reused by one writer, not
 * even across td_json_writer_reset(). One thread at a time per writer.
 * NULL when out of memory or @layout is unknown.
 *
 * A writer works out how to write the fields of an event format (a
 * struct tep_event) on the first event of it and keeps that, keyed on the
 * format's address: the formats of the events it is given must stay as
 * they are while it lives. Should a tep handle be freed before the writer,
 * call td_json_writer_reset() before writing events of another.
 */
struct td_json_writer;

struct td_json_stats {
	uint64_t events;	/* event lines written */
	uint64_t stacks;	/* stack lines written (interned) */
	uint64_t epochs;	/* times the stack table was full and emptied */
	uint64_t resets;	/* td_json_writer_reset() calls */
	uint64_t table_stacks;	/* stacks in the table now */
	uint64_t table_bytes;	/* bytes of their keys */
	/* Added later: event lines whose fields' text was found written before. */
	uint64_t fields_cached;
};

struct td_json_writer *td_json_writer_new(enum td_json_layout layout, unsigned int max_stacks);
void td_json_writer_free(struct td_json_writer *jw);

/*
 * Write the lines of one event: layout full, its object and a newline;
 * layout interned, a "stack" line first when its stacks are new to the
 * file, then the event line. All of it is built in memory and handed to
 * @f with one fwrite(). Returns 0 or a negative errno (write error,
 * -ENOMEM); a stack whose line could not be written is not remembered.
 */
int td_json_writer_write(struct td_json_writer *jw, FILE *f, const struct td_resolved *r);

/*
 * The output is a new file (reopened after a rotation): forget every stack
 * and format, so that the new file defines each id it uses (layout compact:
 * after its header line). Ids go on from where they were. Also forgets how
 * the fields of each format are written (see above).
 */
void td_json_writer_reset(struct td_json_writer *jw);

void td_json_writer_stats(const struct td_json_writer *jw, struct td_json_stats *st);

/*
 * Layout full without a writer of one's own: write one JSON object and a
 * newline. Event fields are decoded from
 * ev->raw with ev->tep_event (common_* fields left out). Keeps no state
 * between calls (no cache: a sink that writes many events owns a
 * td_json_writer). Returns 0 or a negative errno (write error).
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
 * user frame by "object+0xFILEOFFSET" (object's base name), by "[vdso]"
 * when the stack record says it is in the vDSO (at no offset), or
 * "[unknown]" when it is in no known file either (its process was gone
 * before its maps were read, JIT code, anonymous memory: under ASLR such
 * an address means nothing outside its process, and every short-lived
 * process would add new ones), and a kernel frame by "0xADDR". The pprof
 * writer names frames the same way. In names, ';' becomes ':', blanks become '_', other
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
/*
 * Added later. Once the stacks take @bytes (td_folded_mem(); 0: no bound,
 * the default), a stack not counted yet is counted in one line
 * "[memory_bound]" instead (td_folded_over() samples so far): a whole
 * run's stacks on a machine of ever new programs stay within the bound,
 * every event still counted. Stacks seen before count as before.
 */
void td_folded_set_max_mem(struct td_folded *fo, uint64_t bytes);
uint64_t td_folded_mem(const struct td_folded *fo);
uint64_t td_folded_over(const struct td_folded *fo);

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
