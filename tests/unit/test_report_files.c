// SPDX-License-Identifier: GPL-2.0
/*
 * `trace-defer report` of a trace.dat whose stack records carry file
 * identity, end to end: sub-buffers are synthesized (lib/pagegen.c) with
 * the formats of parse-fixtures.h, made into a trace.dat by
 * `trace-cmd restore` (tracefs not needed), and the report's JSON is read
 * back. The traced "process" (pid 4242, fx_fid_a) never ran, and the file
 * record that names its file lies later in time, on another CPU.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <trace-defer/filetab.h>
#include <trace-defer/pagegen.h>

#include "fx-offset.h"

#include "parse-records.h"

static char build_dir[PATH_MAX], work[PATH_MAX];

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

static const char header_event[] =
	"# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void write_format(const char *sys, const char *name, const char *text)
{
	char dir[PATH_MAX * 2], cmd[PATH_MAX * 2 + 16];

	snprintf(dir, sizeof(dir), "%s/fmt/events/%s/%s", work, sys, name);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	write_file(dir, "format", text, strlen(text));
}

static void add(struct td_pagegen *pg, uint64_t ts, const void *rec, unsigned int len)
{
	assert_true(len > 0);
	assert_int_equal(td_pagegen_add(pg, ts, rec, len), 0);
}

/* WORK/trace.dat from WORK/cpu0.raw and cpu1.raw; @kallsyms: NULL, or a file in WORK. */
static void restore(const char *kallsyms)
{
	char cmd[PATH_MAX * 3];

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && rm -f head.dat trace.dat && trace-cmd restore -c -t fmt%s%s -o head.dat "
		 ">restore.log 2>&1 && trace-cmd restore -i head.dat -o trace.dat cpu0.raw "
		 "cpu1.raw >>restore.log 2>&1", work, kallsyms ? " -k " : "",
		 kallsyms ? kallsyms : "");
	assert_int_equal(system(cmd), 0);
}

/*
 * cpu0: sched_switch, cookie, the stack (frames in file ids 3 and 9), another
 * sched_switch; cpu1, later: the file record of id 3 naming @file. Id 9 is
 * never described.
 */
static void make_trace_k(const char *file, uint64_t base, const uint64_t *ips,
			 const uint64_t *kips, int nk, const char *kallsyms)
{
	static const uint8_t bid[20] = { 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
					 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
					 0x11, 0x11 };
	static const uint8_t ff[] = { 0, 0, 1 };
	uint64_t bases[2] = { base, 0x7f0000000000ULL }, ck = (3ULL << 32) | 1;
	uint32_t ids[2] = { 3, 9 };
	uint8_t page[TD_PAGE_SIZE], r[512];
	struct td_pagegen pg;

	td_pagegen_start(&pg, page, sizeof(page), 1000);
	memset(r, 0, 64);
	td_rec_common(r, ID_SCHED_SWITCH, 4242);
	memcpy(r + 8, "fx_fid_a", 8);
	memcpy(r + 40, "swapper", 7);
	add(&pg, 1000, r, 64);
	if (nk)
		add(&pg, 1000, r, rec_kstack(r, 4242, kips, nk));
	td_rec_common(r, ID_UNWIND_COOKIE, 4242);
	memcpy(r + 8, &ck, 8);
	add(&pg, 1001, r, 16);
	add(&pg, 1002, r, td_rec_unwind_stack(r, sizeof(r), ID_UNWIND_STACK, 4242, ck, ips, 3,
					      bases, ids, 2, ff));
	/* The next event ends the first one: it is written now, before cpu1 is read. */
	memset(r, 0, 64);
	td_rec_common(r, ID_SCHED_SWITCH, 0);
	memcpy(r + 8, "swapper", 7);
	add(&pg, 2000, r, 64);
	td_pagegen_finish(&pg, false, 0);
	write_file(work, "cpu0.raw", page, sizeof(page));

	td_pagegen_start(&pg, page, sizeof(page), 5000000);
	add(&pg, 5000000, r, td_rec_unwind_file(r, sizeof(r), ID_UNWIND_FILE, 4242, 3, bid, 20,
						file));
	td_pagegen_finish(&pg, false, 0);
	write_file(work, "cpu1.raw", page, sizeof(page));

	restore(kallsyms);
}

static void make_trace(const char *file, uint64_t base, const uint64_t *ips)
{
	make_trace_k(file, base, ips, NULL, 0, NULL);
}

/* What trace-defer report WORK/trace.dat @args prints, in @out; it exits 0. */
static void run_report(const char *args, char *out, size_t size)
{
	char cmd[PATH_MAX * 3];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s/trace-defer' report '%s/trace.dat' %s", build_dir, work,
		 args);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
}

/* The report's JSON line (layout full: the frames in the line), in @out. */
static void report_json(char *out, size_t size)
{
	run_report("--json --json-layout=full -q", out, size);
}

static void test_report_names_from_file_identity(void **state)
{
	char fx[PATH_MAX * 2], other[PATH_MAX * 2], json[8192], want[4 * PATH_MAX * 2 + 1024];
	uint64_t base = 0x555555554000ULL, alpha, beta, ips[3];

	snprintf(fx, sizeof(fx), "%s/fixtures/fx_fid_a", build_dir);
	snprintf(other, sizeof(other), "%s/fixtures/fx_fid_b", build_dir);
	alpha = fx_func_offset(fx, "fx_alpha");
	beta = fx_func_offset(fx, "fx_beta");
	ips[0] = base + alpha + 1;
	ips[1] = base + beta + 3;
	ips[2] = 0x7f0000001000ULL;

	make_trace(fx, base, ips);
	report_json(json, sizeof(json));
	snprintf(want, sizeof(want),
		 "\"status\":\"stitched\",\"kernel_stack\":[],\"user_stack\":["
		 "{\"addr\":\"0x%llx\",\"sym\":\"fx_alpha\",\"off\":1,\"obj\":\"%s\","
		 "\"file_off\":\"0x%llx\",\"build_id\":\"1111111111111111111111111111111111111111\","
		 "\"file_id\":3},"
		 "{\"addr\":\"0x%llx\",\"sym\":\"fx_beta\",\"off\":3,\"obj\":\"%s\","
		 "\"file_off\":\"0x%llx\",\"build_id\":\"1111111111111111111111111111111111111111\","
		 "\"file_id\":3},"
		 "{\"addr\":\"0x7f0000001000\",\"sym\":null,\"off\":null,\"obj\":null,"
		 "\"file_off\":\"0x1000\",\"build_id\":null,\"file_id\":9}]}",
		 (unsigned long long)ips[0], fx, (unsigned long long)alpha + 1,
		 (unsigned long long)ips[1], fx, (unsigned long long)beta + 3);
	if (!strstr(json, want))
		fail_msg("report:\n%s\nwanted:\n%s", json, want);

	/* The path holds another build: file, offset and build-id, no name. */
	make_trace(other, base, ips);
	report_json(json, sizeof(json));
	assert_null(strstr(json, "\"sym\":\"fx_"));
	snprintf(want, sizeof(want), "\"sym\":null,\"off\":null,\"obj\":\"%s\",\"file_off\":\"0x%llx\","
		 "\"build_id\":\"1111111111111111111111111111111111111111\",\"file_id\":3}",
		 other, (unsigned long long)alpha + 1);
	if (!strstr(json, want))
		fail_msg("report:\n%s\nwanted:\n%s", json, want);
}

/*
 * Kernel frames are named from the trace.dat's kallsyms, each with its
 * object as the live daemon writes it: "[kernel]" for the kernel image's
 * functions, "[module]" for a module's.
 */
static void test_report_kernel_modules(void **state)
{
	static const char kallsyms[] =
		"ffffffff81000000 T core_fn\n"
		"ffffffff81000100 T core_next\n"
		"ffffffffc0001000 t mod_fn\t[zzmod]\n"
		"ffffffffc0001100 t mod_next\t[zzmod]\n"
		"ffffffffc0002000 t other_fn\t[yymod]\n"
		"ffffffffc0002100 t other_end\t[yymod]\n";
	const uint64_t kips[3] = { 0xffffffff81000010ULL, 0xffffffffc0001020ULL,
				   0xffffffffc0002008ULL };
	uint64_t ips[3] = { 0x555555554100ULL, 0x555555554200ULL, 0x7f0000001000ULL };
	const char *want = "\"kernel_stack\":["
		"{\"addr\":\"0xffffffff81000010\",\"sym\":\"core_fn\",\"off\":16,"
		"\"obj\":\"[kernel]\"},"
		"{\"addr\":\"0xffffffffc0001020\",\"sym\":\"mod_fn\",\"off\":32,"
		"\"obj\":\"[zzmod]\"},"
		"{\"addr\":\"0xffffffffc0002008\",\"sym\":\"other_fn\",\"off\":8,"
		"\"obj\":\"[yymod]\"}]";
	char fx[PATH_MAX * 2], json[8192];

	(void)state;
	snprintf(fx, sizeof(fx), "%s/fixtures/fx_fid_a", build_dir);
	write_file(work, "kallsyms", kallsyms, strlen(kallsyms));
	make_trace_k(fx, 0x555555554000ULL, ips, kips, 3, "kallsyms");
	report_json(json, sizeof(json));
	if (!strstr(json, want))
		fail_msg("report:\n%s\nwanted:\n%s", json, want);
}

/*
 * A trace.dat with kernel stacks and no user stack record (as trace-cmd
 * record -T makes): every event no_user, and the report says why. One
 * with user stacks says nothing of it.
 */
static void test_report_no_user_stacks(void **state)
{
	const uint64_t kips[2] = { 0xffffffff81000010ULL, 0xffffffff81000110ULL };
	uint64_t ips[3] = { 0x555555554100ULL, 0x555555554200ULL, 0x7f0000001000ULL };
	const char *says = "holds no user stack records: every event is no_user";
	uint8_t page[TD_PAGE_SIZE], r[256];
	char fx[PATH_MAX * 2], err[4096];
	struct td_pagegen pg;

	(void)state;
	td_pagegen_start(&pg, page, sizeof(page), 1000);
	for (int i = 0; i < 3; i++) {
		add(&pg, 1000 + 10 * i, r, rec_switch(r, "worker", 4242, "swapper", 0));
		add(&pg, 1000 + 10 * i, r, rec_kstack(r, 4242, kips, 2));
	}
	td_pagegen_finish(&pg, false, 0);
	write_file(work, "cpu0.raw", page, sizeof(page));
	td_pagegen_start(&pg, page, sizeof(page), 1000);
	td_pagegen_finish(&pg, false, 0);
	write_file(work, "cpu1.raw", page, sizeof(page));
	restore(NULL);
	run_report("--json 2>&1 >/dev/null", err, sizeof(err));
	if (!strstr(err, says))
		fail_msg("report said:\n%s\nwanted: %s", err, says);

	snprintf(fx, sizeof(fx), "%s/fixtures/fx_fid_a", build_dir);
	make_trace(fx, 0x555555554000ULL, ips);
	run_report("--json 2>&1 >/dev/null", err, sizeof(err));
	if (strstr(err, "no user stack records"))
		fail_msg("report of a trace with user stacks said:\n%s", err);
}

static int group_setup(void **state)
{
	char exe[PATH_MAX], cmd[PATH_MAX * 2];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	/* $(BUILD)/tests/test_report_files -> $(BUILD) */
	if (!realpath(dirname(dirname(exe)), build_dir))
		return -1;
	snprintf(work, sizeof(work), "/tmp/td-report-files-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/fmt/events'", work);
	if (system(cmd))
		return -1;
	write_file(work, "fmt/events/header_page", header_page, strlen(header_page));
	write_file(work, "fmt/events/header_event", header_event, strlen(header_event));
	write_format("ftrace", "kernel_stack", fmt_kernel_stack);
	write_format("ftrace", "user_unwind_cookie", fmt_unwind_cookie);
	write_format("ftrace", "user_unwind_stack", fmt_unwind_stack_files);
	write_format("ftrace", "user_unwind_file", fmt_unwind_file);
	write_format("sched", "sched_switch", fmt_sched_switch);
	/* libtracefs wants an "enable" file in a system of plain events. */
	write_file(work, "fmt/events/sched/enable", "", 0);
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_names_from_file_identity),
		cmocka_unit_test(test_report_kernel_modules),
		cmocka_unit_test(test_report_no_user_stacks),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
