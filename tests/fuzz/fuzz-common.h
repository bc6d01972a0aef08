/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fuzz targets and the seed writer share: the event formats of a
 * kernel with the series (tests/unit/parse-fixtures.h: the format texts
 * tracefs prints, with fixed ids), and the input layout of each target.
 *
 * fuzz_page: one or more sub-buffers of FUZZ_PAGE_SIZE bytes as read from
 * per_cpu/cpuN/trace_pipe_raw (the last one zero padded when short); page
 * i is CPU i % FUZZ_NR_CPUS. Bits 63 and 62 of the first page's time stamp
 * (never set by a kernel) select the user_unwind_stack layout: bit 63 the
 * old one (stack only, no user_unwind_file), bit 62 the series' current
 * one (dropped, flags and tgid before the arrays), neither the first one
 * with file identity. Bit 61: the pages are handed on FUZZ_NR_CPUS at a
 * time, as the daemon's rounds are (td_parser_pages_until()), each cut at
 * the time stamp of its last page, so records wait for the next. These
 * bits are cleared before parsing.
 *
 * fuzz_plugin: a flags byte (FUZZ_PLUGIN_OLD: the old layout;
 * FUZZ_PLUGIN_FULL: the current one; FUZZ_PLUGIN_BIG: the records come
 * from a big-endian machine's trace.dat), then
 * records, each a kind byte (FUZZ_REC_*, modulo their number), a
 * little-endian u16 length and that many bytes of record data (a record
 * cut by the end of the input is kept short). The record's common_type is
 * set to the kind's event id so that every record reaches its handler, and
 * records shorter than the common fields are padded to them with zeros
 * (libtraceevent reads those of any record it is given).
 */
#ifndef TD_FUZZ_COMMON_H
#define TD_FUZZ_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <event-parse.h>

#include "../unit/parse-fixtures.h"

#define FUZZ_PAGE_SIZE		4096
#define FUZZ_NR_CPUS		2
#define FUZZ_OLD_LAYOUT		(1ULL << 63)
#define FUZZ_FULL_LAYOUT	(1ULL << 62)
#define FUZZ_CUT_BATCHES	(1ULL << 61)
#define FUZZ_LAYOUT_BITS	(FUZZ_OLD_LAYOUT | FUZZ_FULL_LAYOUT | FUZZ_CUT_BATCHES)

#define FUZZ_PLUGIN_OLD		0x01
#define FUZZ_PLUGIN_FULL	0x02
#define FUZZ_PLUGIN_BIG		0x04

/* The user_unwind_stack layouts, oldest last: fixtures of parse-fixtures.h. */
enum fuzz_layout {
	FUZZ_LAYOUT_FILES,	/* fmt_unwind_stack_files: file identity */
	FUZZ_LAYOUT_OLD,	/* fmt_unwind_stack: cookie and stack only */
	FUZZ_LAYOUT_FULL,	/* fmt_unwind_stack_full: the series' current one */
	FUZZ_NR_LAYOUTS,
};

static inline enum fuzz_layout fuzz_page_layout(uint64_t ts0)
{
	if (ts0 & FUZZ_OLD_LAYOUT)
		return FUZZ_LAYOUT_OLD;
	return ts0 & FUZZ_FULL_LAYOUT ? FUZZ_LAYOUT_FULL : FUZZ_LAYOUT_FILES;
}

static inline enum fuzz_layout fuzz_plugin_layout(uint8_t flags)
{
	if (flags & FUZZ_PLUGIN_OLD)
		return FUZZ_LAYOUT_OLD;
	return flags & FUZZ_PLUGIN_FULL ? FUZZ_LAYOUT_FULL : FUZZ_LAYOUT_FILES;
}
enum {
	FUZZ_REC_COOKIE,
	FUZZ_REC_STACK,
	FUZZ_REC_FILE,
	FUZZ_NR_REC,
};

static inline bool fuzz_parse_format(struct tep_handle *tep, const char *fmt, const char *sys)
{
	return tep_parse_event(tep, fmt, strlen(fmt), sys) == TEP_ERRNO__SUCCESS;
}

/* A tep of a 64-bit little-endian kernel with the series, its stack records in @layout. */
static inline struct tep_handle *fuzz_tep(enum fuzz_layout layout)
{
	static const char *const stack_fmt[FUZZ_NR_LAYOUTS] = {
		[FUZZ_LAYOUT_FILES] = fmt_unwind_stack_files,
		[FUZZ_LAYOUT_OLD] = fmt_unwind_stack,
		[FUZZ_LAYOUT_FULL] = fmt_unwind_stack_full,
	};
	struct tep_handle *tep = tep_alloc();
	bool old = layout == FUZZ_LAYOUT_OLD;
	bool ok;

	if (!tep)
		return NULL;
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, FUZZ_PAGE_SIZE);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	ok = fuzz_parse_format(tep, fmt_kernel_stack, "ftrace") &&
	     fuzz_parse_format(tep, fmt_user_stack, "ftrace") &&
	     fuzz_parse_format(tep, fmt_unwind_cookie, "ftrace") &&
	     fuzz_parse_format(tep, stack_fmt[layout], "ftrace") &&
	     (old || fuzz_parse_format(tep, fmt_unwind_file, "ftrace")) &&
	     fuzz_parse_format(tep, fmt_sched_switch, "sched") &&
	     fuzz_parse_format(tep, fmt_sched_exec, "sched") &&
	     fuzz_parse_format(tep, fmt_sys_enter, "raw_syscalls");
	if (!ok) {
		tep_free(tep);
		return NULL;
	}
	return tep;
}

#endif /* TD_FUZZ_COMMON_H */
