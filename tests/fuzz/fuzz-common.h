/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fuzz targets and the seed writer share: the event formats of a
 * kernel with the series (tests/unit/parse-fixtures.h: the format texts
 * tracefs prints, with fixed ids), and the input layout of each target.
 *
 * fuzz_page: one or more sub-buffers of FUZZ_PAGE_SIZE bytes as read from
 * per_cpu/cpuN/trace_pipe_raw (the last one zero padded when short); page
 * i is CPU i % FUZZ_NR_CPUS. Bit 63 of the first page's time stamp (never
 * set by a kernel) selects the old user_unwind_stack layout (stack only, no
 * user_unwind_file); it is cleared before parsing.
 *
 * fuzz_plugin: a flags byte (FUZZ_PLUGIN_OLD: the old layout), then
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
#include <string.h>

#include <event-parse.h>

#include "../unit/parse-fixtures.h"

#define FUZZ_PAGE_SIZE		4096
#define FUZZ_NR_CPUS		2
#define FUZZ_OLD_LAYOUT		(1ULL << 63)

#define FUZZ_PLUGIN_OLD		0x01
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

/* A tep of a 64-bit little-endian kernel with the series (@old: before file identity). */
static inline struct tep_handle *fuzz_tep(bool old)
{
	struct tep_handle *tep = tep_alloc();
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
	     fuzz_parse_format(tep, old ? fmt_unwind_stack : fmt_unwind_stack_files, "ftrace") &&
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
