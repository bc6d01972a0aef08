/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Walk raw ring-buffer sub-buffers (trace_pipe_raw pages) with
 * libtraceevent's kbuffer: records by type id, and the bytes the ring
 * buffer spent on them (each page's commit: headers, time extends and
 * padding included). For the benchmark readers, which decode nothing.
 */
#ifndef TD_BENCH_RBWALK_H
#define TD_BENCH_RBWALK_H

#include <stdint.h>

struct rbwalk;

/* Called for every record; @data points at its common_type. */
typedef void (*rbwalk_fn)(unsigned int type, const void *data, int size, void *arg);

struct rbwalk *rbwalk_new(void);
void rbwalk_free(struct rbwalk *w);

/* Walk one page; returns the number of records, -1 for a page kbuffer refuses. */
int rbwalk_page(struct rbwalk *w, void *page, int size, rbwalk_fn fn, void *arg);

/* Totals so far. */
uint64_t rbwalk_records(const struct rbwalk *w);
uint64_t rbwalk_commit_bytes(const struct rbwalk *w);
uint64_t rbwalk_pages(const struct rbwalk *w);

/* The id of SYSTEM/NAME in the top tracefs (events/SYSTEM/NAME/format), or -1. */
int rbwalk_event_id(const char *system, const char *name);
/* Offset of field @field ("...[] stack;" or "... cookie;") in the format; -1 if absent. */
int rbwalk_field_offset(const char *system, const char *name, const char *field);

#endif /* TD_BENCH_RBWALK_H */
