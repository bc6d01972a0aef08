// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the libtraceevent plugin (plugins/plugin_user_unwind.c).
 * The real artifact, build/plugins/plugin_user_unwind.so, is loaded with
 * dlopen and its loader called on teps built from the kernel's format texts;
 * records are crafted by hand and printed with tep_print_event(), as
 * trace-cmd report and KernelShark print them. Each record ends where an
 * inaccessible page begins, so a read past it faults even in libtraceevent
 * (ASan watches only instrumented code).
 */
#include <dlfcn.h>
#include <endian.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event-parse.h>
#include <trace-seq.h>

#include <trace-defer/filetab.h>
#include <trace-defer/pagegen.h>

#include "fx-offset.h"

#define ID_COOKIE	1001
#define ID_STACK	1002
#define ID_FILE		1003
#define ID_SWITCH	372
#define ID_USTACK	13

#define COMMON_FIELDS \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* The frozen kernel interface (brief, "Kernel interface"). */
static const char fmt_cookie[] =
	"name: user_unwind_cookie\nID: 1001\nformat:\n" COMMON_FIELDS
	"\tfield:u64 cookie;\toffset:8;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"cookie=%llx\", REC->cookie\n";

static const char fmt_stack[] =
	"name: user_unwind_stack\nID: 1002\nformat:\n" COMMON_FIELDS
	"\tfield:u64 cookie;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc unsigned long[] stack;\toffset:16;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"cookie=%llx stack=%s\", REC->cookie, "
	"__print_array(__get_dynamic_array(stack), __get_dynamic_array_len(stack) / 8, 8)\n";

/* The same events of a kernel that records file identity. */
static const char fmt_stack_files[] =
	"name: user_unwind_stack\nID: 1002\nformat:\n" COMMON_FIELDS
	"\tfield:u64 cookie;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc unsigned long[] stack;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc unsigned long[] file_bases;\toffset:20;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc u32[] file_ids;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc u8[] frame_files;\toffset:28;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"cookie=%llx\", REC->cookie\n";

/* The series' current layout: the cut count, the flags and the tgid come first. */
static const char fmt_stack_full[] =
	"name: user_unwind_stack\nID: 1002\nformat:\n" COMMON_FIELDS
	"\tfield:u64 cookie;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:u16 dropped;\toffset:16;\tsize:2;\tsigned:0;\n"
	"\tfield:u16 flags;\toffset:18;\tsize:2;\tsigned:0;\n"
	"\tfield:int tgid;\toffset:20;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc unsigned long[] stack;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc unsigned long[] file_bases;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc u32[] file_ids;\toffset:32;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc u8[] frame_files;\toffset:36;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"cookie=0x%llx dropped=%u flags=0x%x tgid=%d\", REC->cookie, "
	"REC->dropped, REC->flags, REC->tgid\n";

static const char fmt_file[] =
	"name: user_unwind_file\nID: 1003\nformat:\n" COMMON_FIELDS
	"\tfield:u32 id;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:u32 build_id_size;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:u8 build_id[20];\toffset:16;\tsize:20;\tsigned:0;\n"
	"\tfield:__data_loc char[] path;\toffset:36;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"id=%u path=%s\", REC->id, __get_str(path)\n";

/* Formats the plugin must survive: fields missing, or a __rel_loc array. */
static const char fmt_cookie_nocookie[] =
	"name: user_unwind_cookie\nID: 1001\nformat:\n" COMMON_FIELDS
	"\tfield:u64 other;\toffset:8;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"other=%llx\", REC->other\n";

static const char fmt_stack_nostack[] =
	"name: user_unwind_stack\nID: 1002\nformat:\n" COMMON_FIELDS
	"\tfield:u64 cookie;\toffset:8;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"cookie=%llx\", REC->cookie\n";

static const char fmt_stack_rel[] =
	"name: user_unwind_stack\nID: 1002\nformat:\n" COMMON_FIELDS
	"\tfield:u64 cookie;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:__rel_loc unsigned long[] stack;\toffset:16;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"cookie=%llx\", REC->cookie\n";

/* Other events, whose printing the plugin must leave alone (host 6.18). */
static const char fmt_switch[] =
	"name: sched_switch\nID: 372\nformat:\n" COMMON_FIELDS
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> "
	"next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, "
	"REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | "
	"0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? "
	"__print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | "
	"0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), "
	"\"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, "
	"{ 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, "
	"{ 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & "
	"(((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | "
	"0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, "
	"REC->next_prio\n";

static const char fmt_user_stack[] =
	"name: user_stack\nID: 13\nformat:\n" COMMON_FIELDS
	"\tfield:unsigned int tgid;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n\n"
	"print fmt: \"\\t=> %ps\\n\\t=> %ps\\n\", (void *)REC->caller[0], "
	"(void *)REC->caller[1]\n";

static const char *const good_formats[] = { fmt_cookie, fmt_stack, fmt_switch,
					    fmt_user_stack, NULL };
static const char *const file_formats[] = { fmt_cookie, fmt_stack_files, fmt_file, fmt_switch,
					    NULL };

typedef int (*loader_fn)(struct tep_handle *tep);
typedef void (*unloader_fn)(struct tep_handle *tep);

static void *plugin_handle;
static char plugin_path[PATH_MAX];
static loader_fn plugin_load;
static unloader_fn plugin_unload;

/* Two pages: records are placed at the end of the first, the second is PROT_NONE. */
static uint8_t *guard_area;
static long page_size;

static char my_comm[32];

/* ---- helpers ---- */

static void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static struct tep_handle *new_tep(const char *const *formats, bool with_plugin)
{
	struct tep_handle *tep = tep_alloc();
	int i;

	assert_non_null(tep);
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, 4096);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	for (i = 0; formats[i]; i++) {
		const char *sys = strstr(formats[i], "sched_switch") ? "sched" : "ftrace";

		assert_int_equal(tep_parse_event(tep, formats[i], strlen(formats[i]), sys),
				 TEP_ERRNO__SUCCESS);
	}
	assert_int_equal(tep_register_comm(tep, my_comm, getpid()), 0);
	assert_int_equal(tep_register_comm(tep, "fp_chain", 4242), 0);
	if (with_plugin)
		assert_int_equal(plugin_load(tep), 0);
	return tep;
}

static void free_tep(struct tep_handle *tep, bool with_plugin)
{
	if (with_plugin)
		plugin_unload(tep);
	tep_free(tep);
}

/* The records' time (the trace clock counts from boot); 0: now. */
static uint64_t record_ts;

static uint64_t boot_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_BOOTTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* A copy of @len bytes of @data whose last byte is the last readable one. */
static struct tep_record guarded(const void *data, size_t len)
{
	struct tep_record rec = { .ts = record_ts ? record_ts : boot_ns(), .cpu = 0 };
	uint8_t *p = guard_area + page_size - len;

	assert_true(len <= (size_t)page_size);
	memcpy(p, data, len);
	rec.data = p;
	rec.size = (int)len;
	rec.record_size = (int)len;
	return rec;
}

/* Print @rec's Info column (what KernelShark shows) into @out. */
static void any_info(struct tep_handle *tep, const void *data, size_t len, char *out,
		     size_t size)
{
	struct tep_record rec = guarded(data, len);
	struct trace_seq s;

	trace_seq_init(&s);
	tep_print_event(tep, &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	assert_non_null(s.buffer);
	snprintf(out, size, "%s", s.buffer);
	trace_seq_destroy(&s);
}

/* The same for our events, which must print as one line of printable text. */
static void info(struct tep_handle *tep, const void *data, size_t len, char *out, size_t size)
{
	const char *p;

	any_info(tep, data, len, out, size);
	/* KernelShark's Info column shows the first line only. */
	for (p = out; *p; p++)
		assert_true(*p >= 0x20 && *p < 0x7f);
}

static size_t cookie_rec(uint8_t *buf, int pid, uint64_t cookie)
{
	memset(buf, 0, 16);
	put16(buf, ID_COOKIE);
	put32(buf + 4, (uint32_t)pid);
	put64(buf + 8, cookie);
	return 16;
}

/* A stack record with @nr IPs, data_loc (len << 16 | 24). */
static size_t stack_rec(uint8_t *buf, int pid, uint64_t cookie, const uint64_t *ips,
			unsigned int nr)
{
	unsigned int i;

	memset(buf, 0, 24);
	put16(buf, ID_STACK);
	put32(buf + 4, (uint32_t)pid);
	put64(buf + 8, cookie);
	put32(buf + 16, (nr * 8) << 16 | 24);
	for (i = 0; i < nr; i++)
		put64(buf + 24 + 8 * i, ips[i]);
	return 24 + 8 * nr;
}

static size_t switch_rec(uint8_t *buf, const char *prev, int prev_pid, long state,
			 const char *next, int next_pid)
{
	memset(buf, 0, 64);
	put16(buf, ID_SWITCH);
	put32(buf + 4, (uint32_t)prev_pid);
	strncpy((char *)buf + 8, prev, 15);
	put32(buf + 24, (uint32_t)prev_pid);
	put32(buf + 28, 120);
	put64(buf + 32, (uint64_t)state);
	strncpy((char *)buf + 40, next, 15);
	put32(buf + 56, (uint32_t)next_pid);
	put32(buf + 60, 120);
	return 64;
}

/* Functions of this binary the symbolizer must name (bodies long enough for +3). */
static volatile int spin = 3;

__attribute__((noinline, used)) static int uu_test_leaf(void)
{
	int i, s = 0;

	for (i = 0; i < spin; i++)
		s += i * spin;
	return s;
}

__attribute__((noinline, used)) static int uu_test_mid(void)
{
	int i, s = 0;

	for (i = 0; i < spin; i++)
		s += uu_test_leaf() ^ i;
	return s;
}

/* ---- file identity ---- */

static char fxdir[PATH_MAX];
static const uint8_t bid_a[20] = { 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
				   0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11 };

static void test_file_record_printed(void **state)
{
	struct tep_handle *tep = new_tep(file_formats, true);
	char out[1024];
	uint8_t buf[256];
	unsigned int n;

	n = td_rec_unwind_file(buf, sizeof(buf), ID_FILE, 4242, 3, bid_a, 20, "/usr/bin/fp_chain");
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "id=3 path=/usr/bin/fp_chain "
				 "build_id=1111111111111111111111111111111111111111");
	n = td_rec_unwind_file(buf, sizeof(buf), ID_FILE, 4242, 4, NULL, 0, "/a\nb (deleted)");
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "id=4 path=/a?b (deleted) build_id=none");
	/* The same id for another file: said so, and the id is not used. */
	n = td_rec_unwind_file(buf, sizeof(buf), ID_FILE, 4242, 3, bid_a, 20, "/other");
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "id=3 path=/other build_id=1111111111111111111111111111111111111111"
				 " [id reused: not used]");

	/* Lies: no reads outside the record, a marker instead. */
	n = td_rec_unwind_file(buf, sizeof(buf), ID_FILE, 4242, 5, bid_a, 20, "/x");
	put32(buf + 12, 21);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "[bad record]");
	n = td_rec_unwind_file(buf, sizeof(buf), ID_FILE, 4242, 5, bid_a, 20, "/x");
	put32(buf + 36, (200u << 16) | 40);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "[bad record]");
	info(tep, buf, 30, out, sizeof(out));
	assert_string_equal(out, "[bad record]");
	free_tep(tep, true);
}

/*
 * fx_fid_a never ran and pid 4242 does not exist: the frames are named from
 * the file record alone; an id with no record is unknown, not guessed.
 */
static void test_stack_named_from_files(void **state)
{
	static const uint8_t ff[] = { 0, 0, 1, TD_FF_VDSO, TD_FF_ANON };
	struct tep_handle *tep = new_tep(file_formats, true);
	uint64_t alpha, beta, ips[5], bases[2] = { 0x555555550000, 0x7f0000000000 };
	uint32_t ids[2] = { 3, 9 };
	char path[PATH_MAX], out[2048], want[2048], raw[2048];
	uint8_t buf[512], fbuf[512];
	unsigned int n, fn;

	assert_true(snprintf(path, sizeof(path), "%s/fx_fid_a", fxdir) < (int)sizeof(path));
	alpha = fx_func_offset(path, "fx_alpha");
	beta = fx_func_offset(path, "fx_beta");
	ips[0] = bases[0] + alpha + 1;
	ips[1] = bases[0] + beta + 3;
	ips[2] = bases[1] + 0x1a0;
	ips[3] = 0x7ffff7fc1000;
	ips[4] = 0x7f00dead0000;
	n = td_rec_unwind_stack(buf, sizeof(buf), ID_STACK, 4242, 0x500000002ULL, ips, 5, bases,
				ids, 2, ff);
	assert_true(n > 0);

	/* Before its file record (a reader that started late): unknown. */
	info(tep, buf, n, out, sizeof(out));
	assert_non_null(strstr(out, "(unknown file id 3+0x"));

	fn = td_rec_unwind_file(fbuf, sizeof(fbuf), ID_FILE, 4242, 3, bid_a, 20, path);
	info(tep, fbuf, fn, out, sizeof(out));
	info(tep, buf, n, out, sizeof(out));
	snprintf(want, sizeof(want),
		 "cookie=0x500000002 cpu=1 seq=5 frames=5 0x%llx fx_alpha+0x1 <- "
		 "0x%llx fx_beta+0x3 <- 0x%llx (unknown file id 9+0x1a0) <- 0x%llx [vdso] <- "
		 "0x%llx", (unsigned long long)ips[0], (unsigned long long)ips[1],
		 (unsigned long long)ips[2], (unsigned long long)ips[3],
		 (unsigned long long)ips[4]);
	assert_string_equal(out, want);

	/* Without symbols: file and offset, from the record, nothing opened. */
	assert_int_equal(tep_plugin_add_option("user_unwind:sym", "0"), 0);
	info(tep, buf, n, raw, sizeof(raw));
	assert_int_equal(tep_plugin_add_option("user_unwind:sym", "1"), 0);
	snprintf(want, sizeof(want), "0x%llx (fx_fid_a+0x%llx) <- 0x%llx (fx_fid_a+0x%llx) <- ",
		 (unsigned long long)ips[0], (unsigned long long)alpha + 1,
		 (unsigned long long)ips[1], (unsigned long long)beta + 3);
	assert_non_null(strstr(raw, want));

	/* A frame index past the files: that frame unrecorded, and said so. */
	buf[n - 5 + 1] = 7;
	info(tep, buf, n, out, sizeof(out));
	snprintf(want, sizeof(want), "fx_alpha+0x1 <- 0x%llx <- 0x%llx (unknown",
		 (unsigned long long)ips[1], (unsigned long long)ips[2]);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, " [bad file info]"));
	/* frame_files' length not the frame count: every frame unrecorded. */
	put32(buf + 28, (4u << 16) | (n - 5));
	info(tep, buf, n, out, sizeof(out));
	assert_null(strstr(out, "fx_alpha"));
	assert_non_null(strstr(out, " [bad file info]"));
	free_tep(tep, true);
}

/*
 * What the kernel's own text says of a stack, the plugin says too: the
 * outermost frames cut for the record to fit (dropped=N), and a stack of
 * the program execve() loaded, not of the events before it (exec).
 */
static void test_stack_cut_and_exec(void **state)
{
	static const char *const formats[] = { fmt_cookie, fmt_stack_full, fmt_file, NULL };
	static const uint8_t ff[] = { TD_FF_ANON, TD_FF_ANON };
	static const uint64_t ips[] = { 0x7f0000001000, 0x7f0000001100 };
	struct tep_handle *tep = new_tep(formats, true);
	struct td_rec_ustack us = {
		.cookie = 0x500000002ULL, .ips = ips, .nr = 2, .frame_files = ff,
		.tgid_layout = true, .dropped = 37, .flags = TD_USTACK_EXEC, .tgid = 4242,
	};
	uint8_t buf[512];
	char out[2048];
	unsigned int n;

	(void)state;
	n = td_rec_ustack(buf, sizeof(buf), ID_STACK, 4242, &us);
	assert_true(n > 0);
	info(tep, buf, n, out, sizeof(out));
	assert_non_null(strstr(out, " frames=2 dropped=37 exec 0x7f0000001000"));
	us.dropped = 0;
	us.flags = 0;
	n = td_rec_ustack(buf, sizeof(buf), ID_STACK, 4242, &us);
	info(tep, buf, n, out, sizeof(out));
	assert_non_null(strstr(out, " frames=2 0x7f0000001000"));
	assert_null(strstr(out, "dropped"));
	assert_null(strstr(out, "exec"));
	free_tep(tep, true);
}

/* Reverse the @n bytes at @p. */
static void swap_bytes(uint8_t *p, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n / 2; i++) {
		uint8_t t = p[i];

		p[i] = p[n - 1 - i];
		p[n - 1 - i] = t;
	}
}

/*
 * @rec, a little-endian record of @event, as a big-endian machine writes
 * it: every number, each element of a dynamic array, and the __data_loc
 * words themselves in the other byte order.
 */
static void to_big_endian(struct tep_event *event, uint8_t *rec)
{
	struct tep_format_field *f;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		f = pass ? event->format.fields : event->format.common_fields;
		for (; f; f = f->next) {
			uint32_t loc, i, esize;

			if (!(f->flags & TEP_FIELD_IS_DYNAMIC)) {
				if (!(f->flags & TEP_FIELD_IS_ARRAY))
					swap_bytes(rec + f->offset, (unsigned int)f->size);
				continue;
			}
			memcpy(&loc, rec + f->offset, 4);
			loc = le32toh(loc);
			esize = strstr(f->type, "long") ? 8 : strstr(f->type, "u32") ? 4 : 1;
			for (i = 0; i + esize <= loc >> 16; i += esize)
				swap_bytes(rec + (loc & 0xffff) + i, esize);
			swap_bytes(rec + f->offset, 4);
		}
	}
}

/*
 * A trace.dat from a big-endian machine (s390x, ppc64) read here: the
 * cookie, the IPs, the file records and the stacks' file identity all in
 * the file's byte order, so each line reads as its little-endian twin.
 */
static void test_big_endian_file(void **state)
{
	static const uint8_t ff[] = { 0, 1, TD_FF_VDSO };
	uint64_t ips[3], bases[2] = { 0x555555550000, 0x7f0000000000 };
	struct tep_handle *le = new_tep(file_formats, true);
	struct tep_handle *be = new_tep(file_formats, true);
	uint8_t srec[512], frec[512], crec[64];
	char path[PATH_MAX], want[2048], out[2048];
	uint32_t ids[2] = { 3, 9 };
	unsigned int sn, fn, cn;

	(void)state;
	tep_set_file_bigendian(be, TEP_BIG_ENDIAN);
	assert_true(snprintf(path, sizeof(path), "%s/fx_fid_a", fxdir) < (int)sizeof(path));
	ips[0] = bases[0] + fx_func_offset(path, "fx_beta") + 2;
	ips[1] = bases[1] + 0x1a0;
	ips[2] = 0x7ffff7fc1000;
	sn = td_rec_unwind_stack(srec, sizeof(srec), ID_STACK, 4242, 0x500000002ULL, ips, 3,
				 bases, ids, 2, ff);
	fn = td_rec_unwind_file(frec, sizeof(frec), ID_FILE, 4242, 3, bid_a, 20, path);
	cn = cookie_rec(crec, 4242, 0x500000002ULL);
	assert_true(sn > 0 && fn > 0);

	info(le, frec, fn, want, sizeof(want));
	to_big_endian(tep_find_event(le, ID_FILE), frec);
	info(be, frec, fn, out, sizeof(out));
	assert_string_equal(out, want);

	info(le, srec, sn, want, sizeof(want));
	assert_non_null(strstr(want, "fx_beta+0x2 <- "));
	assert_non_null(strstr(want, "(unknown file id 9+0x1a0) <- "));
	assert_null(strstr(want, "[bad"));
	to_big_endian(tep_find_event(le, ID_STACK), srec);
	info(be, srec, sn, out, sizeof(out));
	assert_string_equal(out, want);

	info(le, crec, cn, want, sizeof(want));
	to_big_endian(tep_find_event(le, ID_COOKIE), crec);
	info(be, crec, cn, out, sizeof(out));
	assert_string_equal(out, want);
	free_tep(be, true);
	free_tep(le, true);
}

/* ---- group setup ---- */

static int group_setup(void **state)
{
	char exe[PATH_MAX], *slash;
	ssize_t n;
	FILE *f;

	/* $(BUILD)/tests/test_plugin -> $(BUILD)/plugins/plugin_user_unwind.so */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	if (snprintf(plugin_path, sizeof(plugin_path), "%s/../plugins/plugin_user_unwind.so",
		     exe) >= (int)sizeof(plugin_path))
		return -1;
	plugin_handle = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
	if (!plugin_handle) {
		fprintf(stderr, "test_plugin: %s\n", dlerror());
		return -1;
	}
	plugin_load = (loader_fn)dlsym(plugin_handle, "tep_plugin_loader");
	plugin_unload = (unloader_fn)dlsym(plugin_handle, "tep_plugin_unloader");
	if (!plugin_load || !plugin_unload)
		return -1;

	page_size = sysconf(_SC_PAGESIZE);
	guard_area = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard_area == MAP_FAILED || mprotect(guard_area + page_size, page_size, PROT_NONE))
		return -1;

	f = fopen("/proc/self/comm", "r");
	if (!f || !fgets(my_comm, sizeof(my_comm), f))
		return -1;
	fclose(f);
	my_comm[strcspn(my_comm, "\n")] = '\0';
	unsetenv("TRACE_DEFER_PLUGIN_SYMS");
	/* $(BUILD)/tests -> $(BUILD)/fixtures (tests/unit/rules.mk) */
	if (snprintf(fxdir, sizeof(fxdir), "%s/../fixtures", exe) >= (int)sizeof(fxdir))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	if (guard_area && guard_area != MAP_FAILED)
		munmap(guard_area, 2 * page_size);
	if (plugin_handle)
		dlclose(plugin_handle);
	return 0;
}

/* ---- tests ---- */

static void test_plugin_exports_only_entry_points(void **state)
{
	/* Library symbols stay private to the plugin (plugins/plugin.map). */
	assert_null(dlsym(plugin_handle, "td_sym_new"));
	assert_null(dlsym(plugin_handle, "td_sym_user"));
}

static void test_cookie_decoded(void **state)
{
	struct tep_handle *plain = new_tep(good_formats, false);
	struct tep_handle *tep = new_tep(good_formats, true);
	char out[512];
	uint8_t buf[64];
	size_t n;

	n = cookie_rec(buf, 4242, 0x0000000700000002ULL);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x700000002 cpu=1 seq=7");
	/* Without the plugin the print fmt is used: the plugin is what changed it. */
	info(plain, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=700000002");

	n = cookie_rec(buf, 4242, 0xfffffffd00000040ULL);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0xfffffffd00000040 cpu=63 seq=4294967293");

	/* The kernel never writes a 0 CPU part: say so rather than print cpu=-1. */
	n = cookie_rec(buf, 4242, 0x0000000900000000ULL);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x900000000 [bad cookie]");

	n = cookie_rec(buf, 4242, 0);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x0 [bad cookie]");

	/*
	 * From tests/fuzz (fuzz_plugin): a CPU part of 0x80000000 made
	 * td_cookie_cpu() overflow an int (UBSan in make unit-asan).
	 */
	n = cookie_rec(buf, 4242, 0xffff3ff780000000ULL);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0xffff3ff780000000 cpu=2147483647 seq=4294918135");

	free_tep(tep, true);
	free_tep(plain, false);
}

static void test_stack_raw_in_order(void **state)
{
	static const uint64_t ips[] = { 0x401136, 0x4012cb, 0x401300 };
	struct tep_handle *tep = new_tep(good_formats, true);
	char out[512];
	uint8_t buf[256];
	size_t n;

	/* pid 4242 "fp_chain" is not this machine's: no names, raw addresses. */
	n = stack_rec(buf, 4242, 0x300000001ULL, ips, 3);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 frames=3 "
				 "0x401136 <- 0x4012cb <- 0x401300");

	/* A zero IP is printed as recorded and not looked up. */
	{
		static const uint64_t z[] = { 0x401000, 0, 0x402000 };

		n = stack_rec(buf, 4242, 0x300000001ULL, z, 3);
		info(tep, buf, n, out, sizeof(out));
		assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 frames=3 "
					 "0x401000 <- 0x0 <- 0x402000");
	}

	/* Zero entries: the unwind found nothing; not malformed. */
	n = stack_rec(buf, 4242, 0x300000001ULL, NULL, 0);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 frames=0");

	/* Kernel thread or idle (pid 0): never looked up. */
	n = stack_rec(buf, 0, 0x300000001ULL, ips, 1);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 frames=1 0x401136");

	free_tep(tep, true);
}

/*
 * A record from before this process started: its tid then was another
 * task's (of the same name, even), so /proc names none of its frames.
 */
static void test_stack_older_than_task(void **state)
{
	struct tep_handle *tep = new_tep(good_formats, true);
	uint64_t ips[2] = { (uintptr_t)uu_test_leaf + 1, (uintptr_t)uu_test_mid + 3 };
	char out[1024], want[256];
	uint8_t buf[256];
	size_t n;

	(void)state;
	n = stack_rec(buf, getpid(), 0x500000002ULL, ips, 2);
	record_ts = 1;
	info(tep, buf, n, out, sizeof(out));
	record_ts = 0;
	snprintf(want, sizeof(want), "cookie=0x500000002 cpu=1 seq=5 frames=2 0x%llx <- 0x%llx",
		 (unsigned long long)ips[0], (unsigned long long)ips[1]);
	assert_string_equal(out, want);
	/* The same record seen now: named. */
	info(tep, buf, n, out, sizeof(out));
	assert_non_null(strstr(out, "uu_test_leaf+0x1"));
	free_tep(tep, true);
}

static void test_stack_symbolized(void **state)
{
	struct tep_handle *tep = new_tep(good_formats, true);
	char out[1024], want[1024], file[] = "/tmp/uu-test-XXXXXX";
	uint8_t buf[256], *anon, *fmap;
	uint64_t ips[5];
	size_t n;
	int fd;

	/* An anonymous mapping, and a file mapping of a file that is not ELF. */
	anon = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(anon != MAP_FAILED);
	fd = mkstemp(file);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 2 * page_size), 0);
	fmap = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE, fd, page_size);
	assert_true(fmap != MAP_FAILED);
	close(fd);

	ips[0] = (uintptr_t)uu_test_leaf + 1;	/* where the task was */
	ips[1] = (uintptr_t)uu_test_mid + 3;	/* a return address */
	ips[2] = (uintptr_t)anon + 0x10;	/* mapped, but no file */
	ips[3] = (uintptr_t)fmap + 0x20;	/* a file without symbols */
	ips[4] = 0x10;				/* not mapped */
	n = stack_rec(buf, getpid(), 0x500000002ULL, ips, 5);
	info(tep, buf, n, out, sizeof(out));
	snprintf(want, sizeof(want),
		 "cookie=0x500000002 cpu=1 seq=5 frames=5 0x%llx uu_test_leaf+0x1 <- "
		 "0x%llx uu_test_mid+0x3 <- 0x%llx ([anon]+0x10) <- 0x%llx (%s+0x%llx) <- 0x10",
		 (unsigned long long)ips[0], (unsigned long long)ips[1],
		 (unsigned long long)ips[2], (unsigned long long)ips[3], file + 5,
		 (unsigned long long)page_size + 0x20);
	assert_string_equal(out, want);

	munmap(fmap, page_size);
	unlink(file);
	munmap(anon, page_size);
	free_tep(tep, true);
}

static void test_stack_not_named_for_another_task(void **state)
{
	static const char *const formats[] = { fmt_cookie, fmt_stack, NULL };
	struct tep_handle *tep = tep_alloc();
	char out[512], want[512];
	uint8_t buf[256];
	uint64_t ip = (uintptr_t)uu_test_leaf + 1;
	size_t n;
	int i;

	/* Our pid, but the trace says another program had it: pid reuse or exec. */
	assert_non_null(tep);
	tep_set_long_size(tep, 8);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	for (i = 0; formats[i]; i++)
		assert_int_equal(tep_parse_event(tep, formats[i], strlen(formats[i]), "ftrace"),
				 TEP_ERRNO__SUCCESS);
	assert_int_equal(tep_register_comm(tep, "not-this-one", getpid()), 0);
	assert_int_equal(plugin_load(tep), 0);
	n = stack_rec(buf, getpid(), 0x500000002ULL, &ip, 1);
	info(tep, buf, n, out, sizeof(out));
	snprintf(want, sizeof(want), "cookie=0x500000002 cpu=1 seq=5 frames=1 0x%llx",
		 (unsigned long long)ip);
	assert_string_equal(out, want);

	/* A task the trace has no comm for is not named either. */
	n = stack_rec(buf, getpid() + 1, 0x500000002ULL, &ip, 1);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, want);
	free_tep(tep, true);
}

static void test_symbols_off_by_env_and_option(void **state)
{
	struct tep_handle *tep;
	char out[512], want[512];
	uint8_t buf[256];
	uint64_t ip = (uintptr_t)uu_test_leaf + 1;
	struct trace_seq s;
	size_t n;

	n = stack_rec(buf, getpid(), 0x500000002ULL, &ip, 1);
	snprintf(want, sizeof(want), "cookie=0x500000002 cpu=1 seq=5 frames=1 0x%llx",
		 (unsigned long long)ip);

	/* The environment is read when the plugin is loaded. */
	setenv("TRACE_DEFER_PLUGIN_SYMS", "0", 1);
	tep = new_tep(good_formats, true);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, want);
	free_tep(tep, true);
	unsetenv("TRACE_DEFER_PLUGIN_SYMS");

	tep = new_tep(good_formats, true);
	info(tep, buf, n, out, sizeof(out));
	assert_string_not_equal(out, want);
	assert_non_null(strstr(out, "uu_test_leaf+0x1"));

	/* The option is registered under user_unwind:sym (trace-cmd -O). */
	trace_seq_init(&s);
	tep_plugin_print_options(&s);
	trace_seq_terminate(&s);
	assert_non_null(strstr(s.buffer, "plugin:\tuser_unwind\n"));
	assert_non_null(strstr(s.buffer, "option:\tsym\n"));
	trace_seq_destroy(&s);

	assert_int_equal(tep_plugin_add_option("user_unwind:sym", "0"), 0);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, want);
	assert_int_equal(tep_plugin_add_option("user_unwind:sym", "1"), 0);
	info(tep, buf, n, out, sizeof(out));
	assert_non_null(strstr(out, "uu_test_leaf+0x1"));
	free_tep(tep, true);
}

static void test_malformed_stacks(void **state)
{
	static const uint64_t ips[] = { 0x401136, 0x4012cb, 0x401300 };
	struct tep_handle *tep = new_tep(good_formats, true);
	char out[512];
	uint8_t buf[256];
	size_t n;

	/* data_loc offset far beyond the record */
	n = stack_rec(buf, 4242, 0x300000001ULL, ips, 3);
	put32(buf + 16, 24 << 16 | 200);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 [bad stack]");

	/* length runs past the end: 3 entries claimed, 2 present */
	n = stack_rec(buf, 4242, 0x300000001ULL, ips, 3);
	info(tep, buf, n - 8, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 [bad stack]");

	/* offset + length wrapping 16 bits is still just outside */
	put32(buf + 16, 0xffffu << 16 | 0xffff);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 [bad stack]");

	/* pointing back into the fixed fields */
	put32(buf + 16, 16 << 16 | 0);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 [bad stack]");

	/* length not whole entries: the whole ones are printed, then the marker */
	n = stack_rec(buf, 4242, 0x300000001ULL, ips, 3);
	put32(buf + 16, 20 << 16 | 24);
	info(tep, buf, 24 + 20, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 frames=2 "
				 "0x401136 <- 0x4012cb [bad stack]");
	put32(buf + 16, 7 << 16 | 24);
	info(tep, buf, 24 + 7, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 frames=0 [bad stack]");

	/* truncated records: the data_loc cut, the cookie cut, the pid cut */
	n = stack_rec(buf, 4242, 0x300000001ULL, ips, 3);
	info(tep, buf, 18, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 [bad stack]");
	info(tep, buf, 16, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 [bad stack]");
	info(tep, buf, 12, out, sizeof(out));
	assert_string_equal(out, "[bad record]");
	n = cookie_rec(buf, 4242, 0x300000001ULL);
	info(tep, buf, 15, out, sizeof(out));
	assert_string_equal(out, "[bad record]");
	info(tep, buf, 8, out, sizeof(out));
	assert_string_equal(out, "[bad record]");

	/* Stack records of another task with junk: many, all bounded. */
	{
		unsigned int i;

		for (i = 0; i < 256; i++) {
			memset(buf, (int)i, sizeof(buf));
			put16(buf, ID_STACK);
			info(tep, buf, 24 + (i % 64), out, sizeof(out));
		}
	}
	free_tep(tep, true);
}

static void test_formats_without_fields(void **state)
{
	static const char *const missing[] = { fmt_cookie_nocookie, fmt_stack_nostack, NULL };
	static const char *const rel[] = { fmt_cookie, fmt_stack_rel, NULL };
	static const uint64_t ips[] = { 0x401136, 0x4012cb };
	struct tep_handle *tep = new_tep(missing, true);
	char out[512];
	uint8_t buf[256];
	size_t n;

	n = cookie_rec(buf, 4242, 0x300000001ULL);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "[bad record]");
	n = stack_rec(buf, 4242, 0x300000001ULL, ips, 2);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 [bad stack]");
	free_tep(tep, true);

	/* __rel_loc: the offset counts from the end of the field (20), not from 0. */
	tep = new_tep(rel, true);
	n = stack_rec(buf, 4242, 0x300000001ULL, ips, 2);
	put32(buf + 16, 16 << 16 | 4);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 frames=2 0x401136 <- 0x4012cb");
	put32(buf + 16, 16 << 16 | 8);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x300000001 cpu=0 seq=3 [bad stack]");
	free_tep(tep, true);
}

static void test_other_events_unchanged(void **state)
{
	static const struct {
		const char *prev, *next;
		int prev_pid, next_pid;
		long state;
	} sw[] = {
		{ "bash", "fp_chain", 100, 4242, 1 },
		{ "fp_chain", "swapper/0", 4242, 0, 0 },
		{ "kworker/1:0", "rcu_preempt", 23, 15, 0x80 },
		{ "a", "b", 7, 8, 0x102 },
	};
	struct tep_handle *plain = new_tep(good_formats, false);
	struct tep_handle *tep = new_tep(good_formats, true);
	char a[1024], b[1024];
	struct trace_seq s1, s2;
	uint8_t buf[128];
	unsigned int i;
	size_t n;

	for (i = 0; i < sizeof(sw) / sizeof(sw[0]); i++) {
		struct tep_record rec;

		n = switch_rec(buf, sw[i].prev, sw[i].prev_pid, sw[i].state, sw[i].next,
			       sw[i].next_pid);
		any_info(plain, buf, n, a, sizeof(a));
		any_info(tep, buf, n, b, sizeof(b));
		assert_string_equal(a, b);
		assert_non_null(strstr(a, "==> next_comm="));

		/* The whole line, as trace-cmd report builds it. */
		rec = guarded(buf, n);
		trace_seq_init(&s1);
		trace_seq_init(&s2);
		tep_print_event(plain, &s1, &rec, "%16s-%-5d %s: %s", TEP_PRINT_COMM,
				TEP_PRINT_PID, TEP_PRINT_NAME, TEP_PRINT_INFO);
		tep_print_event(tep, &s2, &rec, "%16s-%-5d %s: %s", TEP_PRINT_COMM,
				TEP_PRINT_PID, TEP_PRINT_NAME, TEP_PRINT_INFO);
		trace_seq_terminate(&s1);
		trace_seq_terminate(&s2);
		assert_string_equal(s1.buffer, s2.buffer);
		trace_seq_destroy(&s1);
		trace_seq_destroy(&s2);
	}

	/* ftrace:user_stack (the fallback), same system as ours: unchanged too. */
	memset(buf, 0, 80);
	put16(buf, ID_USTACK);
	put32(buf + 4, 4242);
	put32(buf + 8, 4242);
	put64(buf + 16, 0x401136);
	put64(buf + 24, 0x4012cb);
	any_info(plain, buf, 80, a, sizeof(a));
	any_info(tep, buf, 80, b, sizeof(b));
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "401136"));

	/* After unloading, our events print as before the plugin. */
	n = cookie_rec(buf, 4242, 0x700000002ULL);
	plugin_unload(tep);
	info(tep, buf, n, b, sizeof(b));
	assert_string_equal(b, "cookie=700000002");
	free_tep(tep, false);
	free_tep(plain, false);
}

static void test_loaded_by_libtraceevent(void **state)
{
	static const char *const formats[] = { fmt_cookie, fmt_stack, NULL };
	struct tep_plugin_list *list;
	struct tep_handle *tep = tep_alloc();
	char dir[PATH_MAX], *slash, out[512];
	const char *home = getenv("HOME");
	char *saved_home = home ? strdup(home) : NULL;
	uint8_t buf[64];
	struct trace_seq s;
	size_t n;
	int i;

	assert_non_null(tep);
	tep_set_long_size(tep, 8);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	for (i = 0; formats[i]; i++)
		assert_int_equal(tep_parse_event(tep, formats[i], strlen(formats[i]), "ftrace"),
				 TEP_ERRNO__SUCCESS);

	/* Only our directory: no system plugins, no ~/.local ones. */
	snprintf(dir, sizeof(dir), "%s", plugin_path);
	slash = strrchr(dir, '/');
	assert_non_null(slash);
	*slash = '\0';
	setenv("TRACEEVENT_PLUGIN_DIR", dir, 1);
	setenv("HOME", "/nonexistent", 1);
	tep_set_flag(tep, TEP_DISABLE_SYS_PLUGINS);
	list = tep_load_plugins(tep);
	unsetenv("TRACEEVENT_PLUGIN_DIR");
	if (saved_home)
		setenv("HOME", saved_home, 1);
	else
		unsetenv("HOME");
	free(saved_home);
	assert_non_null(list);

	trace_seq_init(&s);
	tep_print_plugins(&s, "", "\n", list);
	trace_seq_terminate(&s);
	assert_non_null(strstr(s.buffer, "/plugin_user_unwind.so\n"));
	trace_seq_destroy(&s);

	n = cookie_rec(buf, 4242, 0x700000002ULL);
	info(tep, buf, n, out, sizeof(out));
	assert_string_equal(out, "cookie=0x700000002 cpu=1 seq=7");
	tep_unload_plugins(list, tep);
	tep_free(tep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plugin_exports_only_entry_points),
		cmocka_unit_test(test_cookie_decoded),
		cmocka_unit_test(test_stack_raw_in_order),
		cmocka_unit_test(test_stack_symbolized),
		cmocka_unit_test(test_stack_older_than_task),
		cmocka_unit_test(test_stack_not_named_for_another_task),
		cmocka_unit_test(test_symbols_off_by_env_and_option),
		cmocka_unit_test(test_malformed_stacks),
		cmocka_unit_test(test_formats_without_fields),
		cmocka_unit_test(test_other_events_unchanged),
		cmocka_unit_test(test_loaded_by_libtraceevent),
		cmocka_unit_test(test_file_record_printed),
		cmocka_unit_test(test_stack_named_from_files),
		cmocka_unit_test(test_stack_cut_and_exec),
		cmocka_unit_test(test_big_endian_file),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
