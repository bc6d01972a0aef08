// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the JSON lines writer (lib/json_out.c). Every line written
 * is parsed back with json-c and checked key by key against schema version
 * 1 (doc/trace-defer-json.7.md): the set of keys, their types, and their
 * values. Event fields are decoded through a real tep handle built from
 * kernel format files (sched_switch and sched_process_exec as found on a
 * 6.18 host, user_unwind_stack as the kernel series defines it).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <traceevent/event-parse.h>

#include <trace-defer/output.h>

/* Kernel ABI descriptions (tracefs events/.../format). */
static const char sched_switch_fmt[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%ld ==> "
	"next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, "
	"REC->prev_prio, REC->prev_state, REC->next_comm, REC->next_pid, REC->next_prio\n";

static const char sched_exec_fmt[] =
	"name: sched_process_exec\n"
	"ID: 365\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, "
	"REC->old_pid\n";

static const char unwind_stack_fmt[] =
	"name: user_unwind_stack\n"
	"ID: 2001\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:u64 cookie;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc unsigned long[] stack;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"cookie=%llx stack=%s\", REC->cookie, "
	"__print_array(__get_dynamic_array(stack), __get_dynamic_array_len(stack) / 8, 8)\n";

/* Small signed types, a fixed number array, and a __rel_loc string. */
static const char mixed_fmt[] =
	"name: mixed\n"
	"ID: 3001\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:s8 small;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield:short half;\toffset:10;\tsize:2;\tsigned:1;\n"
	"\tfield:unsigned int vals[3];\toffset:12;\tsize:12;\tsigned:0;\n"
	"\tfield:u64 big;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:__rel_loc char[] rname;\toffset:32;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"small=%d half=%d big=%llu rname=%s\", REC->small, REC->half, REC->big, "
	"__get_rel_str(rname)\n";

struct ctx {
	struct tep_handle *tep;
	struct tep_event *sw, *exec, *ustack, *mixed;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	c->tep = tep_alloc();
	if (!c->tep)
		return -1;
	tep_set_long_size(c->tep, 8);
	if (tep_parse_event(c->tep, sched_switch_fmt, strlen(sched_switch_fmt), "sched") ||
	    tep_parse_event(c->tep, sched_exec_fmt, strlen(sched_exec_fmt), "sched") ||
	    tep_parse_event(c->tep, unwind_stack_fmt, strlen(unwind_stack_fmt), "ftrace") ||
	    tep_parse_event(c->tep, mixed_fmt, strlen(mixed_fmt), "test"))
		return -1;
	c->sw = tep_find_event_by_name(c->tep, "sched", "sched_switch");
	c->exec = tep_find_event_by_name(c->tep, "sched", "sched_process_exec");
	c->ustack = tep_find_event_by_name(c->tep, "ftrace", "user_unwind_stack");
	c->mixed = tep_find_event_by_name(c->tep, "test", "mixed");
	if (!c->sw || !c->exec || !c->ustack || !c->mixed)
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	tep_free(c->tep);
	free(c);
	return 0;
}

/* ---- writing and reading back ---- */

/*
 * Everything @jw writes for @r (NULL: td_json_write(), layout full without
 * a writer of one's own), as text (caller frees).
 */
static char *writer_lines(struct td_json_writer *jw, const struct td_resolved *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(jw ? td_json_writer_write(jw, f, r) : td_json_write(f, r), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	return buf;
}

/* Write @r with td_json_write() and return the text (caller frees). */
static char *write_one(const struct td_resolved *r)
{
	return writer_lines(NULL, r);
}

/* One line, newline-terminated, no other newline: parse it. */
static struct json_object *parse_line(const char *text)
{
	size_t len = strlen(text);
	struct json_tokener *tok;
	struct json_object *obj;

	assert_true(len > 1);
	assert_int_equal(text[len - 1], '\n');
	assert_null(memchr(text, '\n', len - 1));
	tok = json_tokener_new();
	assert_non_null(tok);
	obj = json_tokener_parse_ex(tok, text, (int)len - 1);
	assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
	/* The whole line is that one object. */
	assert_int_equal(json_tokener_get_parse_end(tok), len - 1);
	json_tokener_free(tok);
	assert_non_null(obj);
	return obj;
}

/* ---- the schema, version 1 ---- */

#define T_INT	(1u << json_type_int)
#define T_STR	(1u << json_type_string)
#define T_NULL	(1u << json_type_null)
#define T_OBJ	(1u << json_type_object)
#define T_ARR	(1u << json_type_array)

struct key_spec {
	const char *key;
	unsigned int types;
};

static const struct key_spec record_schema[] = {
	{ "v", T_INT },
	{ "ts", T_INT },
	{ "cpu", T_INT },
	{ "pid", T_INT },
	{ "tid", T_INT },
	{ "comm", T_STR },
	{ "event", T_STR },
	{ "fields", T_OBJ },
	{ "cookie", T_STR | T_NULL },
	{ "status", T_STR },
	{ "kernel_stack", T_ARR },
	{ "user_stack", T_ARR },
	{ NULL, 0 },
};

static const struct key_spec kframe_schema[] = {
	{ "addr", T_STR },
	{ "sym", T_STR | T_NULL },
	{ "off", T_INT | T_NULL },
	{ "obj", T_STR | T_NULL },
	{ NULL, 0 },
};

static const struct key_spec uframe_schema[] = {
	{ "addr", T_STR },
	{ "sym", T_STR | T_NULL },
	{ "off", T_INT | T_NULL },
	{ "obj", T_STR | T_NULL },
	{ "file_off", T_STR | T_NULL },
	{ "build_id", T_STR | T_NULL },
	{ "file_id", T_INT | T_NULL },
	{ NULL, 0 },
};

static unsigned int type_bit(struct json_object *v)
{
	return 1u << json_object_get_type(v);	/* NULL is json_type_null */
}

/* @obj has exactly the keys of @spec, each of an allowed type. */
static void check_keys(struct json_object *obj, const struct key_spec *spec)
{
	size_t n = 0;

	assert_true(json_object_is_type(obj, json_type_object));
	for (; spec[n].key; n++) {
		struct json_object *v;

		if (!json_object_object_get_ex(obj, spec[n].key, &v))
			fail_msg("key \"%s\" missing", spec[n].key);
		if (!(type_bit(v) & spec[n].types))
			fail_msg("key \"%s\" has type %s", spec[n].key,
				 json_type_to_name(json_object_get_type(v)));
	}
	assert_int_equal(json_object_object_length(obj), n);
}

static void check_hex(struct json_object *v, uint64_t want)
{
	const char *s = json_object_get_string(v);
	char *end;

	assert_true(json_object_is_type(v, json_type_string));
	assert_true(!strncmp(s, "0x", 2));
	assert_true(s[2] != '\0');
	assert_int_equal(strtoull(s + 2, &end, 16), want);
	assert_int_equal(*end, '\0');
	/* Lower case, no leading zeros: one spelling per value. */
	for (s += 2; *s; s++)
		assert_true((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'));
}

static void check_frame(struct json_object *o, const struct td_frame *fr, bool user)
{
	struct json_object *v;

	check_keys(o, user ? uframe_schema : kframe_schema);
	json_object_object_get_ex(o, "addr", &v);
	check_hex(v, fr->addr);
	json_object_object_get_ex(o, "sym", &v);
	if (fr->symbol)
		assert_string_equal(json_object_get_string(v), fr->symbol);
	else
		assert_null(v);
	json_object_object_get_ex(o, "off", &v);
	if (fr->symbol)
		assert_int_equal(json_object_get_uint64(v), fr->sym_offset);
	else
		assert_null(v);
	json_object_object_get_ex(o, "obj", &v);
	if (fr->object)
		assert_string_equal(json_object_get_string(v), fr->object);
	else
		assert_null(v);
	if (!user)
		return;
	json_object_object_get_ex(o, "file_off", &v);
	if ((fr->object && fr->file_kind != TD_FILE_VDSO) || fr->file_kind == TD_FILE_IN)
		check_hex(v, fr->file_offset);
	else
		assert_null(v);
	json_object_object_get_ex(o, "build_id", &v);
	if (fr->build_id)
		assert_string_equal(json_object_get_string(v), fr->build_id);
	else
		assert_null(v);
	json_object_object_get_ex(o, "file_id", &v);
	if (fr->file_kind == TD_FILE_IN)
		assert_int_equal(json_object_get_uint64(v), fr->file_id);
	else
		assert_null(v);
}

static const char *const valid_status[] = {
	"stitched", "user_lost", "unwind_failed", "no_user", "inplace", NULL,
};

/* The record against the schema and against what was written. */
static void check_record(struct json_object *o, const struct td_resolved *r)
{
	const struct td_event *ev = r->ev;
	struct json_object *v;
	const char *st;
	size_t i;
	bool known = false;

	check_keys(o, record_schema);
	json_object_object_get_ex(o, "v", &v);
	assert_int_equal(json_object_get_int(v), 1);
	json_object_object_get_ex(o, "ts", &v);
	assert_int_equal(json_object_get_uint64(v), ev->ts);
	json_object_object_get_ex(o, "cpu", &v);
	assert_int_equal(json_object_get_int(v), ev->cpu);
	json_object_object_get_ex(o, "pid", &v);
	assert_int_equal(json_object_get_int(v), ev->pid);
	json_object_object_get_ex(o, "tid", &v);
	assert_int_equal(json_object_get_int(v), ev->tid);
	json_object_object_get_ex(o, "cookie", &v);
	if (r->cookie)
		check_hex(v, r->cookie);
	else
		assert_null(v);
	json_object_object_get_ex(o, "status", &v);
	st = json_object_get_string(v);
	for (i = 0; valid_status[i]; i++)
		known |= !strcmp(st, valid_status[i]);
	assert_true(known);
	assert_string_equal(st, td_status_name(r->status));
	json_object_object_get_ex(o, "event", &v);
	assert_non_null(strchr(json_object_get_string(v), ':'));
	json_object_object_get_ex(o, "fields", &v);
	json_object_object_foreach(v, key, val) {
		(void)val;
		assert_true(strncmp(key, "common_", 7));
	}

	json_object_object_get_ex(o, "kernel_stack", &v);
	assert_int_equal(json_object_array_length(v), r->nr_kframes);
	for (i = 0; i < r->nr_kframes; i++)
		check_frame(json_object_array_get_idx(v, i), &r->kframes[i], false);
	json_object_object_get_ex(o, "user_stack", &v);
	assert_int_equal(json_object_array_length(v), r->nr_uframes);
	for (i = 0; i < r->nr_uframes; i++)
		check_frame(json_object_array_get_idx(v, i), &r->uframes[i], true);
}

/* ---- records ---- */

static void put16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void common(unsigned char *raw, int id, int pid)
{
	put16(raw, (uint16_t)id);
	raw[2] = 1;
	raw[3] = 2;
	put32(raw + 4, (uint32_t)pid);
}

static struct td_event *switch_event(struct ctx *c)
{
	struct td_event *ev = td_event_new();
	unsigned char *raw = calloc(1, 64);

	assert_non_null(ev);
	assert_non_null(raw);
	common(raw, 372, 4242);
	memcpy(raw + 8, "fp_chain", 8);
	put32(raw + 24, 4242);
	put32(raw + 28, (uint32_t)-20);		/* negative: sign must survive */
	put64(raw + 32, 1);
	memcpy(raw + 40, "swapper/1", 9);
	put32(raw + 56, 0);
	put32(raw + 60, 120);
	ev->raw = raw;
	ev->raw_size = 64;
	ev->tep_event = c->sw;
	ev->ts = 123456789012345ULL;
	ev->cpu = 1;
	ev->pid = 4240;
	ev->tid = 4242;
	strcpy(ev->comm, "fp_chain");
	ev->has_cookie = true;
	ev->cookie = 0x0000000700000002ULL;
	return ev;
}

static const struct td_frame kframes[] = {
	{ .addr = 0xffffffff81a0b0c0ULL, .symbol = "__schedule", .sym_offset = 0x2c0,
	  .object = "[kernel]" },
	{ .addr = 0xffffffff81a0c100ULL, .symbol = "schedule", .sym_offset = 0x40 },
	{ .addr = 0xffffffffc0200010ULL, .symbol = "ext4_sync_file", .sym_offset = 0x10,
	  .object = "[ext4]" },
	{ .addr = 0xffffffffc0001234ULL },	/* unknown: raw address only */
};

static const struct td_frame uframes[] = {
	{ .addr = 0x5555555551a9ULL, .symbol = "c", .sym_offset = 0x10,
	  .object = "/work/main/build/progs/fp_chain", .file_offset = 0x11a9,
	  .build_id = "0123456789abcdef0123456789abcdef01234567" },
	{ .addr = 0x5555555551d0ULL, .symbol = "b", .sym_offset = 0x1b,
	  .object = "/work/main/build/progs/fp_chain", .file_offset = 0x11d0 },
	{ .addr = 0x7ffff7dd1234ULL, .object = "/usr/lib/x86_64-linux-gnu/libc.so.6",
	  .file_offset = 0x27234 },
	{ .addr = 0x1000 },
};

static void test_stitched_record(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	struct td_resolved r = {
		.ev = ev, .status = TD_STITCHED, .cookie = ev->cookie,
		.event_name = "sched:sched_switch",
		.kframes = kframes, .nr_kframes = 4, .uframes = uframes, .nr_uframes = 4,
	};
	struct json_object *o, *f, *v;
	char *text = write_one(&r);

	/* No escaped slashes: paths stay readable and greppable. */
	assert_null(strstr(text, "\\/"));
	assert_non_null(strstr(text, "\"/usr/lib/x86_64-linux-gnu/libc.so.6\""));
	o = parse_line(text);
	check_record(o, &r);

	json_object_object_get_ex(o, "comm", &v);
	assert_string_equal(json_object_get_string(v), "fp_chain");
	json_object_object_get_ex(o, "event", &v);
	assert_string_equal(json_object_get_string(v), "sched:sched_switch");
	json_object_object_get_ex(o, "cookie", &v);
	assert_string_equal(json_object_get_string(v), "0x700000002");

	json_object_object_get_ex(o, "fields", &f);
	assert_int_equal(json_object_object_length(f), 7);
	json_object_object_get_ex(f, "prev_comm", &v);
	assert_true(json_object_is_type(v, json_type_string));
	assert_string_equal(json_object_get_string(v), "fp_chain");
	json_object_object_get_ex(f, "next_comm", &v);
	assert_string_equal(json_object_get_string(v), "swapper/1");
	json_object_object_get_ex(f, "prev_pid", &v);
	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_int64(v), 4242);
	json_object_object_get_ex(f, "prev_prio", &v);
	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_int64(v), -20);
	json_object_object_get_ex(f, "prev_state", &v);
	assert_int_equal(json_object_get_int64(v), 1);
	json_object_object_get_ex(f, "next_pid", &v);
	assert_int_equal(json_object_get_int64(v), 0);
	json_object_object_get_ex(f, "next_prio", &v);
	assert_int_equal(json_object_get_int64(v), 120);

	/* Kernel addresses above INT64_MAX come back exact. */
	json_object_object_get_ex(o, "kernel_stack", &v);
	v = json_object_array_get_idx(v, 0);
	json_object_object_get_ex(v, "addr", &v);
	assert_string_equal(json_object_get_string(v), "0xffffffff81a0b0c0");

	json_object_put(o);
	free(text);
	td_event_free(ev);
}

/* Every status, with and without cookie, with empty stacks. */
static void test_statuses(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	enum td_status s;

	for (s = 0; s < TD_NR_STATUS; s++) {
		struct td_resolved r = {
			.ev = ev, .status = s, .cookie = s == TD_NO_USER ? 0 : ev->cookie,
			.kframes = kframes, .nr_kframes = s == TD_INPLACE ? 0 : 2,
			.uframes = uframes,
			.nr_uframes = s == TD_STITCHED || s == TD_INPLACE ? 2 : 0,
		};
		struct json_object *o, *v;
		char *text = write_one(&r);

		o = parse_line(text);
		check_record(o, &r);
		/* No event_name given: "system:name" from the format. */
		json_object_object_get_ex(o, "event", &v);
		assert_string_equal(json_object_get_string(v), "sched:sched_switch");
		json_object_put(o);
		free(text);
	}
	td_event_free(ev);
}

static void test_dynamic_fields(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = td_event_new();
	const uint64_t ips[3] = { 0x401136, 0x7ffff7dd1234ULL, 0xfffffffffffff000ULL };
	const char *fname = "/usr/bin/true";
	unsigned char *raw = calloc(1, 128);
	struct json_object *o, *f, *v;
	struct td_resolved r = { .ev = ev, .status = TD_NO_USER };
	char *text;
	size_t i;

	/* sched_process_exec: __data_loc char[] filename. */
	assert_non_null(ev);
	assert_non_null(raw);
	common(raw, 365, 77);
	put32(raw + 8, (uint32_t)(((strlen(fname) + 1) << 16) | 20));
	put32(raw + 12, 77);
	put32(raw + 16, 76);
	memcpy(raw + 20, fname, strlen(fname) + 1);
	ev->raw = raw;
	ev->raw_size = 20 + (int)strlen(fname) + 1;
	ev->tep_event = c->exec;
	ev->tid = ev->pid = 77;
	text = write_one(&r);
	o = parse_line(text);
	check_record(o, &r);
	json_object_object_get_ex(o, "fields", &f);
	assert_int_equal(json_object_object_length(f), 3);
	json_object_object_get_ex(f, "filename", &v);
	assert_true(json_object_is_type(v, json_type_string));
	assert_string_equal(json_object_get_string(v), fname);
	json_object_object_get_ex(f, "old_pid", &v);
	assert_int_equal(json_object_get_int(v), 76);
	json_object_put(o);
	free(text);

	/* user_unwind_stack: __data_loc unsigned long[] -> array of numbers. */
	memset(raw, 0, 128);
	common(raw, 2001, 77);
	put64(raw + 8, 0x300000001ULL);
	put32(raw + 16, (uint32_t)((sizeof(ips) << 16) | 24));
	memcpy(raw + 24, ips, sizeof(ips));
	ev->raw_size = 24 + (int)sizeof(ips);
	ev->tep_event = c->ustack;
	text = write_one(&r);
	o = parse_line(text);
	check_record(o, &r);
	json_object_object_get_ex(o, "event", &v);
	assert_string_equal(json_object_get_string(v), "ftrace:user_unwind_stack");
	json_object_object_get_ex(o, "fields", &f);
	json_object_object_get_ex(f, "cookie", &v);
	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_uint64(v), 0x300000001ULL);
	json_object_object_get_ex(f, "stack", &v);
	assert_true(json_object_is_type(v, json_type_array));
	assert_int_equal(json_object_array_length(v), 3);
	for (i = 0; i < 3; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);

		assert_true(json_object_is_type(e, json_type_int));
		assert_int_equal(json_object_get_uint64(e), ips[i]);
	}
	json_object_put(o);
	free(text);

	/* Zero entries: an empty array, not null. */
	put32(raw + 16, 24);
	ev->raw_size = 24;
	text = write_one(&r);
	o = parse_line(text);
	json_object_object_get_ex(o, "fields", &f);
	json_object_object_get_ex(f, "stack", &v);
	assert_true(json_object_is_type(v, json_type_array));
	assert_int_equal(json_object_array_length(v), 0);
	json_object_put(o);
	free(text);

	/* A data_loc pointing past the record: null, not a read out of bounds. */
	put32(raw + 16, (uint32_t)((64u << 16) | 24));
	text = write_one(&r);
	o = parse_line(text);
	check_record(o, &r);
	json_object_object_get_ex(o, "fields", &f);
	assert_true(json_object_object_get_ex(f, "stack", &v));
	assert_null(v);
	json_object_object_get_ex(f, "cookie", &v);
	assert_int_equal(json_object_get_uint64(v), 0x300000001ULL);
	json_object_put(o);
	free(text);

	/* A data_loc into the fixed part (the cookie's bytes): null as well. */
	put32(raw + 16, (uint32_t)((8u << 16) | 8));
	text = write_one(&r);
	o = parse_line(text);
	json_object_object_get_ex(o, "fields", &f);
	assert_true(json_object_object_get_ex(f, "stack", &v));
	assert_null(v);
	json_object_put(o);
	free(text);
	td_event_free(ev);
}

/* A record of the "mixed" format: signed, arrays, a u64, a __rel_loc string. */
static struct td_event *mixed_event(struct ctx *c)
{
	struct td_event *ev = td_event_new();
	unsigned char *raw = calloc(1, 64);

	assert_non_null(ev);
	assert_non_null(raw);
	common(raw, 3001, 5);
	raw[8] = 0xfe;				/* s8 -2 */
	put16(raw + 10, 0x8000);		/* short -32768 */
	put32(raw + 12, 1);
	put32(raw + 16, 0xffffffffu);
	put32(raw + 20, 3);
	put64(raw + 24, 0xfedcba9876543210ULL);
	/* __rel_loc: offset counted from the end of the field (36). */
	put32(raw + 32, (5u << 16) | 4);
	memcpy(raw + 40, "abcd", 5);
	ev->raw = raw;
	ev->raw_size = 45;
	ev->tep_event = c->mixed;
	return ev;
}

static void test_mixed_fields(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = mixed_event(c);
	struct td_resolved r = { .ev = ev, .status = TD_NO_USER };
	struct json_object *o, *f, *v;
	char *text;

	text = write_one(&r);
	o = parse_line(text);
	check_record(o, &r);
	json_object_object_get_ex(o, "fields", &f);
	json_object_object_get_ex(f, "small", &v);
	assert_int_equal(json_object_get_int64(v), -2);
	json_object_object_get_ex(f, "half", &v);
	assert_int_equal(json_object_get_int64(v), -32768);
	json_object_object_get_ex(f, "vals", &v);
	assert_true(json_object_is_type(v, json_type_array));
	assert_int_equal(json_object_array_length(v), 3);
	assert_int_equal(json_object_get_int64(json_object_array_get_idx(v, 1)), 0xffffffffLL);
	assert_int_equal(json_object_get_int64(json_object_array_get_idx(v, 2)), 3);
	json_object_object_get_ex(f, "big", &v);
	assert_int_equal(json_object_get_uint64(v), 0xfedcba9876543210ULL);
	json_object_object_get_ex(f, "rname", &v);
	assert_string_equal(json_object_get_string(v), "abcd");
	json_object_put(o);
	free(text);

	/* Truncated record: fields past the end are null, the rest decoded. */
	ev->raw_size = 20;
	text = write_one(&r);
	o = parse_line(text);
	check_record(o, &r);
	json_object_object_get_ex(o, "fields", &f);
	assert_int_equal(json_object_object_length(f), 5);
	json_object_object_get_ex(f, "half", &v);
	assert_int_equal(json_object_get_int64(v), -32768);
	assert_true(json_object_object_get_ex(f, "vals", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(f, "big", &v));
	assert_null(v);
	json_object_put(o);
	free(text);
	td_event_free(ev);
}

/* Hostile strings: quotes, control characters, invalid UTF-8. */
static void test_strings(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	/* Special bytes before, on and after 8-byte boundaries. */
	static const struct td_frame odd[] = {
		{ .addr = 0x10, .symbol = "operator\"new\"\n\t(x)\\", .object = "/tmp/a b/c\"d" },
		{ .addr = 0x20, .symbol = "a_long_plain_prefix_of_32_bytes_\"quoted\"",
		  .object = "/usr/lib/x86_64-linux-gnu/caf\xc3\xa9/libx.so",
		  .build_id = "0123456789abcdef\x7f" "0123456789\x1f" },
	};
	struct td_resolved r = {
		.ev = ev, .status = TD_STITCHED, .cookie = 1, .event_name = "sched:sched_switch",
		.uframes = odd, .nr_uframes = 2,
	};
	struct json_object *o, *v;
	char *text;

	memcpy(ev->comm, "a\xff\xc3(b\xe2\x82\xac\x01xyzwvutsr", TD_COMM_LEN);	/* not terminated */
	memcpy((char *)ev->raw + 8, "bad\xc0\xafutf8", 10);		/* overlong '/' */
	text = write_one(&r);
	o = parse_line(text);
	check_record(o, &r);
	json_object_object_get_ex(o, "comm", &v);
	/* Invalid bytes become U+FFFD; valid UTF-8 and controls survive escaped. */
	assert_string_equal(json_object_get_string(v),
			    "a\xef\xbf\xbd\xef\xbf\xbd(b\xe2\x82\xac\x01xyzwvut");
	json_object_object_get_ex(o, "fields", &v);
	json_object_object_get_ex(v, "prev_comm", &v);
	assert_string_equal(json_object_get_string(v), "bad\xef\xbf\xbd\xef\xbf\xbdutf8");
	json_object_put(o);
	free(text);
	td_event_free(ev);
}

/* No format at all: an empty "fields" object, the given event name. */
static void test_no_format(void **state)
{
	struct td_event *ev = td_event_new();
	struct td_resolved r = { .ev = ev, .status = TD_INPLACE, .event_name = "foo:bar",
				 .uframes = uframes, .nr_uframes = 4 };
	struct json_object *o, *v;
	char *text, *fmt = NULL;

	assert_non_null(ev);
	ev->tid = 3;
	text = write_one(&r);
	o = parse_line(text);
	check_record(o, &r);
	json_object_object_get_ex(o, "fields", &v);
	assert_int_equal(json_object_object_length(v), 0);
	json_object_object_get_ex(o, "comm", &v);
	assert_string_equal(json_object_get_string(v), "");
	/* td_json_format() gives the same text without the newline. */
	assert_int_equal(td_json_format(&r, &fmt), 0);
	assert_int_equal(strlen(fmt) + 1, strlen(text));
	assert_memory_equal(fmt, text, strlen(fmt));
	free(fmt);
	json_object_put(o);
	free(text);
	td_event_free(ev);
}

static void test_write_error(void **state)
{
	struct td_event *ev = td_event_new();
	struct td_resolved r = { .ev = ev, .status = TD_NO_USER, .event_name = "a:b" };
	FILE *f = fopen("/dev/null", "r");
	int ret;

	assert_non_null(ev);
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	ret = td_json_write(f, &r);
	assert_true(ret < 0);
	fclose(f);
	td_event_free(ev);
}

static void test_utf8(void **state)
{
	const struct {
		const char *s;
		size_t n, want;
	} cases[] = {
		{ "a", 1, 1 },
		{ "\xc3\xa9", 2, 2 },
		{ "\xe2\x82\xac", 3, 3 },
		{ "\xf0\x9f\x98\x80", 4, 4 },
		{ "\xc3", 1, 0 },		/* truncated */
		{ "\xc0\xaf", 2, 0 },		/* overlong */
		{ "\xe0\x80\xaf", 3, 0 },	/* overlong */
		{ "\xed\xa0\x80", 3, 0 },	/* surrogate */
		{ "\xf4\x90\x80\x80", 4, 0 },	/* > U+10FFFF */
		{ "\x80", 1, 0 },		/* lone continuation */
		{ "\xe2\x28\xa1", 3, 0 },	/* bad continuation */
		{ "", 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(td_utf8_seq_len((const unsigned char *)cases[i].s, cases[i].n),
				 cases[i].want);
}

/* The line for @r with every frame's strings_id set to @id. */
static char *write_with_id(const struct td_resolved *r, uint64_t id)
{
	struct td_frame kf[8], uf[8];
	struct td_resolved c = *r;
	unsigned int i;

	assert_true(r->nr_kframes <= 8 && r->nr_uframes <= 8);
	for (i = 0; i < r->nr_kframes; i++) {
		kf[i] = r->kframes[i];
		kf[i].strings_id = id;
	}
	for (i = 0; i < r->nr_uframes; i++) {
		uf[i] = r->uframes[i];
		uf[i].strings_id = id;
	}
	c.kframes = kf;
	c.uframes = uf;
	return write_one(&c);
}

/* Decimal numbers at every length, 1 to 20 digits, as printf writes them. */
static void test_decimal(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	struct td_frame f = { .addr = 0x1000, .symbol = "f" };
	struct td_resolved r = {
		.ev = ev, .status = TD_NO_USER, .event_name = "sched:sched_switch",
		.kframes = &f, .nr_kframes = 1,
	};
	uint64_t p10 = 1;
	char want[48], *text;

	(void)state;
	for (int digits = 1; digits <= 20; digits++) {
		const uint64_t vals[] = { p10 - 1, p10, p10 + 1, p10 * 9 / 7 };

		for (unsigned int i = 0; i < 4; i++) {
			f.sym_offset = vals[i];
			text = write_one(&r);
			snprintf(want, sizeof(want), "\"off\":%" PRIu64 ",", vals[i]);
			if (!strstr(text, want))
				fail_msg("%s not in %s", want, text);
			free(text);
		}
		if (digits < 20)
			p10 *= 10;
	}
	f.sym_offset = UINT64_MAX;
	text = write_one(&r);
	assert_non_null(strstr(text, "\"off\":18446744073709551615,"));
	free(text);
	td_event_free(ev);
}

/*
 * Frames a symbolizer vouches for (strings_id) are cached by the writer: a
 * cached frame must be written exactly as an uncached one, and anything
 * that differs (address, offsets, strings, kernel or user) must not hit.
 */
static void test_frame_cache(void **state)
{
	static const uint64_t addrs[] = {
		0, 0x1, 0xf, 0x10, 0xff, 0x100, 0xfff, 0x1000, 0xabcde, 0x123456789ULL,
		0x7fffffffffffULL, 0xffffffff81a0b0c0ULL, UINT64_MAX,
	};
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	struct td_resolved r = {
		.ev = ev, .status = TD_STITCHED, .cookie = ev->cookie,
		.event_name = "sched:sched_switch",
		.kframes = kframes, .nr_kframes = 4, .uframes = uframes, .nr_uframes = 4,
	};
	char *plain = write_one(&r), *cold, *hot, *text;
	struct td_frame kf, uf, lf, mod[4];
	char name[8] = "alpha", want[64], longsym[400];
	unsigned int i;

	/* Cold cache, warm cache, another symbolizer's id: all the same text. */
	cold = write_with_id(&r, 77);
	hot = write_with_id(&r, 77);
	assert_string_equal(cold, plain);
	assert_string_equal(hot, plain);
	free(hot);
	hot = write_with_id(&r, 78);
	assert_string_equal(hot, plain);
	free(hot);
	free(cold);
	free(plain);

	/* A cached stack with one frame changed deep inside: written anew. */
	memcpy(mod, uframes, sizeof(mod));
	mod[2].file_offset += 0x10;
	r.uframes = mod;
	plain = write_one(&r);
	assert_non_null(strstr(plain, "\"file_off\":\"0x27244\""));
	cold = write_with_id(&r, 77);
	assert_string_equal(cold, plain);
	free(cold);
	mod[2].file_offset -= 0x10;
	cold = write_with_id(&r, 77);
	assert_null(strstr(cold, "\"file_off\":\"0x27244\""));
	assert_non_null(strstr(cold, "\"file_off\":\"0x27234\""));
	free(cold);
	free(plain);

	/* Addresses of every hex length, cached twice and uncached. */
	r.kframes = &kf;
	r.nr_kframes = 1;
	r.nr_uframes = 0;
	for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		for (int pass = 0; pass < 3; pass++) {
			kf = (struct td_frame){ .addr = addrs[i], .strings_id = pass ? 5 : 0 };
			text = write_one(&r);
			snprintf(want, sizeof(want), "\"kernel_stack\":[{\"addr\":\"0x%" PRIx64 "\",",
				 addrs[i]);
			assert_non_null(strstr(text, want));
			free(text);
		}
	}

	/* Same address and id, another offset or string: the new values. */
	kf = (struct td_frame){ .addr = 0x1000, .symbol = "one", .sym_offset = 1,
				.object = "[kernel]", .strings_id = 5 };
	text = write_one(&r);
	assert_non_null(strstr(text, "{\"addr\":\"0x1000\",\"sym\":\"one\",\"off\":1,"));
	free(text);
	kf.sym_offset = 2;
	text = write_one(&r);
	assert_non_null(strstr(text, "\"sym\":\"one\",\"off\":2,"));
	free(text);
	kf.symbol = "two";
	text = write_one(&r);
	assert_non_null(strstr(text, "\"sym\":\"two\",\"off\":2,"));
	free(text);
	kf.object = NULL;
	text = write_one(&r);
	assert_non_null(strstr(text, "\"off\":2,\"obj\":null}"));
	free(text);

	/* The same frame as a user frame has two more keys. */
	uf = kf;
	uf.file_offset = 0x40;
	uf.object = "/bin/x";
	kf.object = "/bin/x";
	r.uframes = &uf;
	r.nr_uframes = 1;
	text = write_one(&r);
	assert_non_null(strstr(text, "\"kernel_stack\":[{\"addr\":\"0x1000\",\"sym\":\"two\","
				     "\"off\":2,\"obj\":\"/bin/x\"}]"));
	assert_non_null(strstr(text, "\"user_stack\":[{\"addr\":\"0x1000\",\"sym\":\"two\","
				     "\"off\":2,\"obj\":\"/bin/x\",\"file_off\":\"0x40\","
				     "\"build_id\":null,\"file_id\":null}]"));
	free(text);
	uf.file_offset = 0x41;
	uf.build_id = "ab";
	text = write_one(&r);
	assert_non_null(strstr(text, "\"file_off\":\"0x41\",\"build_id\":\"ab\",\"file_id\":null}]"));
	free(text);

	/* File identity: a known file, an id never described, a recorded vDSO frame. */
	uf.file_kind = TD_FILE_IN;
	uf.file_id = 7;
	text = write_one(&r);
	assert_non_null(strstr(text, "\"obj\":\"/bin/x\",\"file_off\":\"0x41\","
				     "\"build_id\":\"ab\",\"file_id\":7}]"));
	free(text);
	uf.object = NULL;
	uf.symbol = NULL;
	uf.build_id = NULL;
	text = write_one(&r);
	assert_non_null(strstr(text, "\"sym\":null,\"off\":null,\"obj\":null,\"file_off\":\"0x41\","
				     "\"build_id\":null,\"file_id\":7}]"));
	free(text);
	uf.file_kind = TD_FILE_VDSO;
	uf.file_id = 0;
	uf.object = "[vdso]";
	text = write_one(&r);
	assert_non_null(strstr(text, "\"obj\":\"[vdso]\",\"file_off\":null,"
				     "\"build_id\":null,\"file_id\":null}]"));
	free(text);

	/* No strings_id: strings may change in place, never cached. */
	r.nr_uframes = 0;
	kf = (struct td_frame){ .addr = 0x2000, .symbol = name };
	text = write_one(&r);
	assert_non_null(strstr(text, "\"sym\":\"alpha\""));
	free(text);
	memcpy(name, "gamma", 5);
	text = write_one(&r);
	assert_non_null(strstr(text, "\"sym\":\"gamma\""));
	free(text);

	/* Escapes wherever they are, whatever the length (words, tails). */
	{
		static const char *const names[] = {
			"a\"bcdefghijklmnopq", "abcdefgh\\ijklmnop", "abcdefghijklmno\"",
			"ab\"", "a\"", "\"", "abcdefg\\", "abcdefghi\x01", "abcdefghijklmnopq",
		};
		static const char *const want_sym[] = {
			"\"sym\":\"a\\\"bcdefghijklmnopq\"", "\"sym\":\"abcdefgh\\\\ijklmnop\"",
			"\"sym\":\"abcdefghijklmno\\\"\"", "\"sym\":\"ab\\\"\"",
			"\"sym\":\"a\\\"\"", "\"sym\":\"\\\"\"", "\"sym\":\"abcdefg\\\\\"",
			"\"sym\":\"abcdefghi\\u0001\"", "\"sym\":\"abcdefghijklmnopq\"",
		};

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			kf = (struct td_frame){ .addr = 0x2000, .symbol = names[i] };
			text = write_one(&r);
			if (!strstr(text, want_sym[i]))
				fail_msg("%s not in %s", want_sym[i], text);
			free(text);
		}
	}

	/* A frame too long for the cache is written whole, every time. */
	memset(longsym, 'x', sizeof(longsym) - 1);
	longsym[sizeof(longsym) - 1] = '\0';
	lf = (struct td_frame){ .addr = 0x3000, .symbol = longsym, .strings_id = 5 };
	r.kframes = &lf;
	for (i = 0; i < 2; i++) {
		text = write_one(&r);
		assert_non_null(strstr(text, longsym));
		free(text);
	}
	td_event_free(ev);
}

/* ---- layout interned (schema version 2) ---- */

/* The stacks as layout full writes them: "\"kernel_stack\":[...],\"user_stack\":[...]". */
static char *full_stacks(const struct td_resolved *r)
{
	char *text = write_one(r), *p = strstr(text, ",\"kernel_stack\":"), *s;
	size_t n;

	assert_non_null(p);
	n = strlen(p + 1) - 2;	/* without "}\n" */
	s = strndup(p + 1, n);
	free(text);
	return s;
}

#define MAX_IDS	4096

/*
 * A reader of one file: every line is one JSON object of schema version 2;
 * a stack line defines an id not defined before in the file; an event
 * line refers to an id defined before it. Keeps the text of each stack.
 */
struct reader {
	char *stack[MAX_IDS];	/* by id: "\"kernel_stack\":...,\"user_stack\":[...]" */
	unsigned int nr_stacks, nr_events;
	uint64_t last_ref;	/* id the last event line referred to */
};

static void reader_free(struct reader *rd)
{
	for (unsigned int i = 0; i < MAX_IDS; i++)
		free(rd->stack[i]);
	memset(rd, 0, sizeof(*rd));
}

static const struct key_spec stack_schema[] = {
	{ "v", T_INT },
	{ "type", T_STR },
	{ "id", T_INT },
	{ "kernel_stack", T_ARR },
	{ "user_stack", T_ARR },
	{ NULL, 0 },
};

static const struct key_spec event2_schema[] = {
	{ "v", T_INT },
	{ "type", T_STR },
	{ "ts", T_INT },
	{ "cpu", T_INT },
	{ "pid", T_INT },
	{ "tid", T_INT },
	{ "comm", T_STR },
	{ "event", T_STR },
	{ "fields", T_OBJ },
	{ "cookie", T_STR | T_NULL },
	{ "status", T_STR },
	{ "stack", T_INT },
	{ NULL, 0 },
};

/* Read @text (whole lines) into @rd; returns the number of stack lines. */
static unsigned int reader_feed(struct reader *rd, const char *text)
{
	unsigned int stacks = 0;
	const char *line = text;

	while (*line) {
		const char *nl = strchr(line, '\n');
		char *one, *p;
		struct json_object *o, *v;
		uint64_t id;

		assert_non_null(nl);
		one = strndup(line, nl + 1 - line);
		o = parse_line(one);
		json_object_object_get_ex(o, "v", &v);
		assert_int_equal(json_object_get_int(v), 2);
		json_object_object_get_ex(o, "type", &v);
		if (!strcmp(json_object_get_string(v), "stack")) {
			check_keys(o, stack_schema);
			json_object_object_get_ex(o, "id", &v);
			id = json_object_get_uint64(v);
			assert_true(id > 0 && id < MAX_IDS);
			/* Never defined twice in one file. */
			assert_null(rd->stack[id]);
			p = strstr(one, ",\"kernel_stack\":");
			assert_non_null(p);
			rd->stack[id] = strndup(p + 1, strlen(p + 1) - 2);
			rd->nr_stacks++;
			stacks++;
		} else {
			assert_string_equal(json_object_get_string(v), "event");
			check_keys(o, event2_schema);
			json_object_object_get_ex(o, "stack", &v);
			id = json_object_get_uint64(v);
			assert_true(id > 0 && id < MAX_IDS);
			if (!rd->stack[id])
				fail_msg("stack %" PRIu64 " used before it was defined", id);
			rd->last_ref = id;
			rd->nr_events++;
		}
		json_object_put(o);
		free(one);
		line = nl + 1;
	}
	return stacks;
}

/* Write @r, read it back, and check that its stacks resolve to the full layout's. */
static unsigned int write_check(struct td_json_writer *jw, struct reader *rd,
				const struct td_resolved *r)
{
	char *text = writer_lines(jw, r), *want = full_stacks(r);
	unsigned int stacks = reader_feed(rd, text);

	assert_string_equal(rd->stack[rd->last_ref], want);
	free(want);
	free(text);
	return stacks;
}

/* A copy of @src with every strings_id set to @id (0: none). */
/* A stitched sched_switch with 4 kernel and 4 user frames, and stack ids. */
static struct td_resolved stitched4(struct td_event *ev, struct td_frame *kf,
				    struct td_frame *uf, uint64_t kid, uint64_t uid)
{
	return (struct td_resolved){
		.ev = ev, .status = TD_STITCHED, .cookie = ev->cookie,
		.event_name = "sched:sched_switch",
		.kframes = kf, .nr_kframes = 4, .uframes = uf, .nr_uframes = 4,
		.kstack_id = kid, .ustack_id = uid,
	};
}

static void vouch(struct td_frame *dst, const struct td_frame *src, unsigned int nr, uint64_t id)
{
	for (unsigned int i = 0; i < nr; i++) {
		dst[i] = src[i];
		dst[i].strings_id = id;
	}
}

/* The same stacks twice: one stack line, two events with its id. */
static void test_intern_shared(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	struct td_frame kf[4], uf[4];
	struct td_resolved r = stitched4(ev, kf, uf, 0, 0);
	struct td_json_writer *jw;
	struct reader rd = { 0 };
	struct json_object *o, *v;
	uint64_t id;
	char *text;

	for (uint64_t sid = 0; sid < 2; sid++) {
		jw = td_json_writer_new(TD_JSON_INTERNED, 0);
		assert_non_null(jw);
		vouch(kf, kframes, 4, sid);
		vouch(uf, uframes, 4, sid);
		assert_int_equal(write_check(jw, &rd, &r), 1);
		id = rd.last_ref;
		/* Another event of another task, the same stacks. */
		ev->tid = ev->pid = 99;
		ev->ts++;
		r.status = TD_INPLACE;
		text = writer_lines(jw, &r);
		assert_int_equal(reader_feed(&rd, text), 0);
		assert_int_equal(rd.last_ref, id);
		/* Everything else an event line of version 1 has is there. */
		o = parse_line(text);
		json_object_object_get_ex(o, "tid", &v);
		assert_int_equal(json_object_get_int(v), 99);
		json_object_object_get_ex(o, "status", &v);
		assert_string_equal(json_object_get_string(v), "inplace");
		json_object_object_get_ex(o, "cookie", &v);
		assert_string_equal(json_object_get_string(v), "0x700000002");
		json_object_object_get_ex(o, "fields", &v);
		assert_int_equal(json_object_object_length(v), 7);
		json_object_put(o);
		assert_non_null(strstr(text, "{\"v\":2,\"type\":\"event\",\"ts\":"));
		free(text);
		/* No stacks at all: a stack of its own. */
		r.nr_kframes = r.nr_uframes = 0;
		assert_int_equal(write_check(jw, &rd, &r), 1);
		assert_int_equal(write_check(jw, &rd, &r), 0);
		r.nr_kframes = r.nr_uframes = 4;
		r.status = TD_STITCHED;
		reader_free(&rd);
		td_json_writer_free(jw);
	}
	td_event_free(ev);
}

/*
 * Stacks the pipeline gave ids to are keyed on the ids, vouched for or
 * not: the same ids, one stack line; other ids, another line, even for
 * the same frames (the pipeline named them again: they may differ).
 */
static void test_intern_ids(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	struct td_frame kf[4], uf[4];
	struct td_resolved r = stitched4(ev, kf, uf, 21, 22);
	struct td_json_writer *jw = td_json_writer_new(TD_JSON_INTERNED, 0);
	struct td_json_stats st;
	struct reader rd = { 0 };
	uint64_t first;

	assert_non_null(jw);
	vouch(kf, kframes, 4, 0);	/* not vouched: without ids, keyed on the text */
	vouch(uf, uframes, 4, 0);
	assert_int_equal(write_check(jw, &rd, &r), 1);
	first = rd.last_ref;
	assert_int_equal(write_check(jw, &rd, &r), 0);
	assert_int_equal(rd.last_ref, first);
	r.kstack_id = 23;
	assert_int_equal(write_check(jw, &rd, &r), 1);
	assert_int_not_equal(rd.last_ref, first);
	r.kstack_id = 21;
	assert_int_equal(write_check(jw, &rd, &r), 0);
	assert_int_equal(rd.last_ref, first);
	/* No kernel frames: only the user id counts. */
	r.nr_kframes = 0;
	r.kstack_id = 0;
	assert_int_equal(write_check(jw, &rd, &r), 1);
	assert_int_equal(write_check(jw, &rd, &r), 0);
	td_json_writer_stats(jw, &st);
	assert_int_equal(st.stacks, 3);
	assert_int_equal(st.events, 6);
	reader_free(&rd);
	td_json_writer_free(jw);
	td_event_free(ev);
}

/*
 * Layout full: a stack with a pipeline id is found in the writer's stack
 * cache by the id alone (the pipeline never gives one id other frames);
 * without an id, or under another, by its frames.
 */
static void test_full_stack_ids(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	struct td_frame kf[4], uf[4];
	struct td_resolved r = stitched4(ev, kf, uf, 31, 32);
	struct td_json_writer *jw = td_json_writer_new(TD_JSON_FULL, 0);
	char *a, *b, *d, *e, *plain;

	assert_non_null(jw);
	vouch(kf, kframes, 4, 1);
	vouch(uf, uframes, 4, 1);
	a = writer_lines(jw, &r);
	assert_non_null(strstr(a, "\"__schedule\""));
	plain = writer_lines(NULL, &r);
	assert_string_equal(a, plain);
	free(plain);

	/* Frames other than the id's (never from the pipeline): the id wins. */
	kf[0].symbol = "renamed";
	b = writer_lines(jw, &r);
	assert_string_equal(a, b);
	/* Without an id, or under a new one: rendered from the frames. */
	r.kstack_id = 0;
	d = writer_lines(jw, &r);
	assert_non_null(strstr(d, "\"renamed\""));
	r.kstack_id = 33;
	e = writer_lines(jw, &r);
	assert_string_equal(d, e);
	plain = writer_lines(NULL, &r);
	assert_string_equal(e, plain);
	free(plain);
	free(a);
	free(b);
	free(d);
	free(e);
	td_json_writer_free(jw);
	td_event_free(ev);
}

/*
 * A writer works out each format's fields once (struct fplan in
 * lib/json_out.c): what it writes must be what td_json_write(), which
 * keeps nothing, writes, for every format, line after line, formats
 * interleaved (one plan slot may serve two of them in turn), records cut
 * short included; and after td_json_writer_reset() a format is worked out
 * again (a format changed at the same address: a tep freed, its memory
 * given to another).
 */
static void test_field_plans(void **state)
{
	struct ctx *c = *state;
	struct td_event *sw = switch_event(c), *mx = mixed_event(c);
	struct td_resolved rs = {
		.ev = sw, .status = TD_NO_USER, .event_name = "sched:sched_switch",
	};
	struct td_resolved rm = { .ev = mx, .status = TD_NO_USER, .event_name = "t:mixed" };
	struct tep_format_field *f = tep_find_field(c->sw, "prev_prio");
	struct td_json_writer *jw = td_json_writer_new(TD_JSON_FULL, 0);
	const int sizes[] = { 45, 20, 0, 45 };
	char *a, *plain;

	assert_non_null(f);
	assert_non_null(jw);
	for (unsigned int i = 0; i < 4; i++) {
		mx->raw_size = sizes[i];	/* whole, cut short, empty, whole */
		a = writer_lines(jw, &rs);
		plain = writer_lines(NULL, &rs);
		assert_string_equal(a, plain);
		assert_non_null(strstr(a, "\"prev_prio\":-20,"));
		free(a);
		free(plain);
		a = writer_lines(jw, &rm);
		plain = writer_lines(NULL, &rm);
		assert_string_equal(a, plain);
		assert_non_null(strstr(a, i == 1 ? "\"half\":-32768,\"vals\":null" :
					  i == 2 ? "\"small\":null" : "\"rname\":\"abcd\"}"));
		free(a);
		free(plain);
	}
	memcpy(f->name, "prev_PRIO", 9);	/* same address, same length, another name */
	td_json_writer_reset(jw);
	a = writer_lines(jw, &rs);
	assert_non_null(strstr(a, "\"prev_PRIO\":-20,"));
	assert_null(strstr(a, "\"prev_prio\""));
	memcpy(f->name, "prev_prio", 9);
	free(a);
	td_json_writer_free(jw);
	td_event_free(sw);
	td_event_free(mx);
}

/*
 * The fields' and tasks' text caches: records seen before are written from
 * them, every line exactly as the writer without caches writes it; a format whose
 * records are all different stops using it (lib/json_out.c, XCACHE_WINDOW
 * of 4096 lookups with under one hit in eight).
 */
static void test_fields_cache(void **state)
{
	struct ctx *c = *state;
	struct td_event *sw = switch_event(c);
	struct td_resolved rs = {
		.ev = sw, .status = TD_NO_USER, .event_name = "sched:sched_switch",
	};
	struct td_json_writer *jw = td_json_writer_new(TD_JSON_FULL, 0);
	unsigned char *raw = (unsigned char *)sw->raw;
	struct td_json_stats st;
	uint64_t cached;
	char *a, *plain;
	unsigned int i;

	assert_non_null(jw);
	/*
	 * Five tasks, two states: the same ten field texts again and again;
	 * the line's own task (pid, tid, comm) cached too.
	 */
	for (i = 0; i < 3 * 4096; i++) {
		put32(raw + 24, 100 + i % 5);
		put64(raw + 32, i % 7 < 3);
		/* More tasks than slots: some meet in one, only the key tells them apart. */
		sw->tid = 4242 + i % 600;
		sw->pid = i % 11 < 5 ? 4240 : -1;
		strcpy(sw->comm, i % 4 ? "fp_chain" : "fp\"chain2");
		a = writer_lines(jw, &rs);
		plain = writer_lines(NULL, &rs);
		assert_string_equal(a, plain);
		free(plain);
		free(a);
	}
	td_json_writer_stats(jw, &st);
	assert_true(st.fields_cached >= 3 * 4096 - 10);
	/* The same bytes before the fields (common_pid): another line, same fields. */
	put32(raw + 4, 777);
	a = writer_lines(jw, &rs);
	plain = writer_lines(NULL, &rs);
	assert_string_equal(a, plain);
	free(a);
	free(plain);

	/* Every record new: after a window of misses the format stops looking. */
	for (i = 0; i < 2 * 4096; i++) {
		put32(raw + 24, 10000 + i);
		a = writer_lines(jw, &rs);
		if (i % 97 == 0) {
			plain = writer_lines(NULL, &rs);
			assert_string_equal(a, plain);
			free(plain);
		}
		free(a);
	}
	td_json_writer_stats(jw, &st);
	cached = st.fields_cached;
	put32(raw + 24, 100);
	for (i = 0; i < 3; i++)
		free(writer_lines(jw, &rs));
	td_json_writer_stats(jw, &st);
	assert_int_equal(st.fields_cached, cached);
	/* A reset starts over: cached again. */
	td_json_writer_reset(jw);
	for (i = 0; i < 3; i++)
		free(writer_lines(jw, &rs));
	td_json_writer_stats(jw, &st);
	assert_int_equal(st.fields_cached, cached + 2);
	td_json_writer_free(jw);
	td_event_free(sw);
}

/*
 * The same addresses in two processes can be in other files: their stacks
 * are written apart. Whatever tells two rendered frames apart (file,
 * offset in it, build-id, file id, symbol) gives another id; the pid
 * alone does not (the text is the same).
 */
static void test_intern_files_differ(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	static char path_a[] = "/opt/a/lib.so", path_b[] = "/opt/b/lib.so";
	struct td_frame kf[4], uf[4], base[2] = {
		{ .addr = 0x7f0000001000ULL, .symbol = "f", .sym_offset = 4, .object = path_a,
		  .file_offset = 0x1000, .build_id = "aa", .file_kind = TD_FILE_IN, .file_id = 3 },
		{ .addr = 0x401000, .symbol = "main", .sym_offset = 8, .object = "/bin/x",
		  .file_offset = 0x1000 },
	};
	struct td_resolved r = {
		.ev = ev, .status = TD_STITCHED, .cookie = ev->cookie,
		.event_name = "sched:sched_switch",
		.kframes = kf, .nr_kframes = 2, .uframes = uf, .nr_uframes = 2,
	};

	for (uint64_t sid = 0; sid < 2; sid++) {
		struct td_json_writer *jw = td_json_writer_new(TD_JSON_INTERNED, 0);
		struct reader rd = { 0 };
		uint64_t first;

		assert_non_null(jw);
		vouch(kf, kframes, 2, sid);
		vouch(uf, base, 2, sid);
		assert_int_equal(write_check(jw, &rd, &r), 1);
		first = rd.last_ref;
		/* Another process: same pid-independent text, same id. */
		ev->pid = ev->tid = 1234;
		assert_int_equal(write_check(jw, &rd, &r), 0);
		assert_int_equal(rd.last_ref, first);
		/* The same address in another file. */
		uf[0].object = path_b;
		assert_int_equal(write_check(jw, &rd, &r), 1);
		assert_true(rd.last_ref != first);
		/* Same file name, other file id (another file under that path). */
		uf[0].object = path_a;
		uf[0].file_id = 4;
		assert_int_equal(write_check(jw, &rd, &r), 1);
		/* Other offset in the file, other build-id, other symbol. */
		uf[0].file_id = 3;
		uf[0].file_offset = 0x2000;
		assert_int_equal(write_check(jw, &rd, &r), 1);
		uf[0].file_offset = 0x1000;
		uf[0].build_id = "bb";
		assert_int_equal(write_check(jw, &rd, &r), 1);
		uf[0].build_id = "aa";
		uf[0].symbol = "g";
		assert_int_equal(write_check(jw, &rd, &r), 1);
		uf[0].symbol = "f";
		/* A user frame is not a kernel frame with the same text. */
		r.nr_uframes = 1;
		assert_int_equal(write_check(jw, &rd, &r), 1);
		r.kframes = uf;
		r.nr_kframes = 1;
		r.nr_uframes = 0;
		assert_int_equal(write_check(jw, &rd, &r), 1);
		r.kframes = kf;
		r.nr_kframes = 2;
		r.nr_uframes = 2;
		/* And back to the first: known. */
		assert_int_equal(write_check(jw, &rd, &r), 0);
		assert_int_equal(rd.last_ref, first);
		reader_free(&rd);
		td_json_writer_free(jw);
	}
	td_event_free(ev);
}

/* Unvouched strings may change in place: keyed on the text, never stale. */
static void test_intern_text_key(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	char name[] = "alpha";
	struct td_frame kf = { .addr = 0x2000, .symbol = name };
	struct td_resolved r = { .ev = ev, .status = TD_NO_USER, .kframes = &kf, .nr_kframes = 1 };
	struct td_json_writer *jw = td_json_writer_new(TD_JSON_INTERNED, 0);
	struct reader rd = { 0 };
	uint64_t first;

	assert_non_null(jw);
	assert_int_equal(write_check(jw, &rd, &r), 1);
	first = rd.last_ref;
	memcpy(name, "gamma", 5);
	assert_int_equal(write_check(jw, &rd, &r), 1);
	memcpy(name, "alpha", 5);
	assert_int_equal(write_check(jw, &rd, &r), 0);
	assert_int_equal(rd.last_ref, first);
	reader_free(&rd);
	td_json_writer_free(jw);
	td_event_free(ev);
}

/*
 * A reopened file (td_json_writer_reset()) defines every id it uses
 * again; a full table starts an epoch: stacks written again under new
 * ids, never an id reused. Stacks mixed at random, both kinds of keys.
 */
static void test_intern_reset_epoch(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	struct td_frame kf[4], uf[4];
	struct td_resolved r = {
		.ev = ev, .status = TD_STITCHED, .cookie = ev->cookie,
		.kframes = kf, .uframes = uf,
	};
	struct td_json_writer *jw = td_json_writer_new(TD_JSON_INTERNED, 5);
	struct td_json_stats st;
	struct reader rd = { 0 };
	unsigned int i, stacks = 0, seed = 1;
	uint64_t max_id = 0;

	assert_non_null(jw);
	for (i = 0; i < 600; i++) {
		seed = seed * 1103515245 + 12345;
		/* Eight distinct stack pairs, half of them vouched for. */
		r.nr_kframes = 1 + (seed >> 16) % 4;
		r.nr_uframes = (seed >> 20) % 2 ? 4 : 0;
		vouch(kf, kframes, r.nr_kframes, (seed >> 24) % 2 ? 9 : 0);
		vouch(uf, uframes, r.nr_uframes, 9);
		if (i == 300) {
			/* A new file: its reader knows nothing. */
			td_json_writer_reset(jw);
			reader_free(&rd);
		}
		stacks += write_check(jw, &rd, &r);
		/* Ids only grow. */
		assert_true(rd.last_ref <= max_id + 1);
		if (rd.last_ref > max_id)
			max_id = rd.last_ref;
	}
	td_json_writer_stats(jw, &st);
	assert_int_equal(st.events, 600);
	assert_int_equal(st.stacks, stacks);
	assert_int_equal(st.stacks, max_id);
	assert_int_equal(st.resets, 1);
	/* 16 pairs, at most 5 in the table: epochs happened, and the bound held. */
	assert_true(st.epochs > 10);
	assert_true(st.table_stacks <= 5);
	reader_free(&rd);
	td_json_writer_free(jw);

	/* The default bound: a table that fills starts one epoch. */
	jw = td_json_writer_new(TD_JSON_INTERNED, 0);
	assert_non_null(jw);
	r.nr_kframes = 1;
	r.nr_uframes = 0;
	for (i = 0; i <= TD_JSON_MAX_STACKS; i++) {
		kf[0] = (struct td_frame){ .addr = 0x1000 + i, .strings_id = 3 };
		free(writer_lines(jw, &r));
	}
	td_json_writer_stats(jw, &st);
	assert_int_equal(st.stacks, TD_JSON_MAX_STACKS + 1);
	assert_int_equal(st.epochs, 1);
	assert_int_equal(st.table_stacks, 1);
	td_json_writer_free(jw);
	td_event_free(ev);
}

/* A stack line that could not be written is not remembered: the next file gets it. */
static void test_intern_write_error(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	struct td_frame kf[4];
	struct td_resolved r = { .ev = ev, .status = TD_NO_USER, .kframes = kf, .nr_kframes = 4 };
	struct td_json_writer *jw = td_json_writer_new(TD_JSON_INTERNED, 0);
	FILE *f = fopen("/dev/null", "r");
	struct reader rd = { 0 };

	assert_non_null(jw);
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	vouch(kf, kframes, 4, 5);
	assert_true(td_json_writer_write(jw, f, &r) < 0);
	fclose(f);
	assert_int_equal(write_check(jw, &rd, &r), 1);
	reader_free(&rd);
	td_json_writer_free(jw);
	td_event_free(ev);
}

/* Layout full through a writer of one's own: what td_json_write() writes. */
static void test_writer_full(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	struct td_frame kf[4], uf[4];
	struct td_resolved r = {
		.ev = ev, .status = TD_STITCHED, .cookie = ev->cookie,
		.kframes = kf, .nr_kframes = 4, .uframes = uf, .nr_uframes = 4,
	};
	struct td_json_writer *jw = td_json_writer_new(TD_JSON_FULL, 0);
	char *a, *b;

	assert_non_null(jw);
	assert_null(td_json_writer_new((enum td_json_layout)7, 0));
	for (int i = 0; i < 3; i++) {
		vouch(kf, kframes, 4, i ? 8 : 0);
		vouch(uf, uframes, 4, i ? 8 : 0);
		a = writer_lines(jw, &r);
		b = write_one(&r);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	td_json_writer_free(jw);
	td_event_free(ev);
}

/* ---- layout compact (schema version 3) ---- */

/* What a reader of layout compact keeps: the header, formats and stacks by id. */
struct creader {
	struct json_object *cols;
	struct json_object *formats;	/* "id" -> format line */
	struct json_object *stacks;	/* "id" -> stack line */
	unsigned int headers, format_lines, stack_lines;
};

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	assert_true(json_object_object_get_ex(o, key, &v));
	return v;
}

/* A defined id's line; fails when no line before defined it. */
static struct json_object *defined(struct json_object *table, struct json_object *id)
{
	struct json_object *v = NULL;

	assert_true(json_object_object_get_ex(table, json_object_get_string(id), &v));
	return v;
}

/*
 * Feed the lines of one write; returns the event, as layout full writes
 * it (rebuilt by the rules of trace-defer-json(7)), as a JSON string
 * (caller frees).
 */
static char *creader_feed(struct creader *cr, const char *text)
{
	char *out = NULL;

	while (*text) {
		const char *nl = strchr(text, '\n');
		char *line;
		struct json_object *o;

		assert_non_null(nl);
		line = strndup(text, nl - text + 1);
		assert_non_null(line);
		o = parse_line(line);
		free(line);
		if (json_object_is_type(o, json_type_object)) {
			const char *type = json_object_get_string(get(o, "type"));

			assert_int_equal(json_object_get_int(get(o, "v")), 3);
			if (!strcmp(type, "header")) {
				cr->headers++;
				json_object_put(cr->cols);
				cr->cols = json_object_get(get(o, "columns"));
			} else if (!strcmp(type, "format")) {
				cr->format_lines++;
				json_object_object_add(cr->formats, json_object_get_string(get(o, "id")),
						       json_object_get(o));
			} else {
				assert_string_equal(type, "stack");
				cr->stack_lines++;
				json_object_object_add(cr->stacks, json_object_get_string(get(o, "id")),
						       json_object_get(o));
			}
		} else {
			struct json_object *e = json_object_new_object(), *full, *fmt, *st;
			struct json_object *names, *values, *fields;
			size_t i, n = json_object_array_length(o);

			assert_null(out);	/* one event per write */
			assert_non_null(cr->cols);	/* a header came first */
			assert_int_equal(n, json_object_array_length(cr->cols));
			for (i = 0; i < n; i++)
				json_object_object_add(e, json_object_get_string(
					json_object_array_get_idx(cr->cols, i)),
					json_object_get(json_object_array_get_idx(o, i)));
			fmt = defined(cr->formats, get(e, "format"));
			st = defined(cr->stacks, get(e, "stack"));
			names = get(fmt, "fields");
			values = get(e, "fields");
			assert_int_equal(json_object_array_length(names),
					 json_object_array_length(values));
			fields = json_object_new_object();
			for (i = 0; i < json_object_array_length(names); i++)
				json_object_object_add(fields, json_object_get_string(
					json_object_array_get_idx(names, i)),
					json_object_get(json_object_array_get_idx(values, i)));
			full = json_object_new_object();
			json_object_object_add(full, "v", json_object_new_int(1));
			for (i = 0; i < 5; i++) {
				const char *k = (const char *[]){ "ts", "cpu", "pid", "tid", "comm" }[i];

				json_object_object_add(full, k, json_object_get(get(e, k)));
			}
			json_object_object_add(full, "event", json_object_get(get(fmt, "event")));
			json_object_object_add(full, "fields", fields);
			json_object_object_add(full, "cookie", json_object_get(get(e, "cookie")));
			json_object_object_add(full, "status", json_object_get(get(e, "status")));
			json_object_object_add(full, "kernel_stack",
					       json_object_get(get(st, "kernel_stack")));
			json_object_object_add(full, "user_stack",
					       json_object_get(get(st, "user_stack")));
			out = strdup(json_object_to_json_string_ext(full, JSON_C_TO_STRING_PLAIN));
			json_object_put(full);
			json_object_put(e);
		}
		json_object_put(o);
		text = nl + 1;
	}
	assert_non_null(out);
	return out;
}

/* Layout full's line, the same way to text. */
static char *full_line(const struct td_resolved *r)
{
	char *text = write_one(r), *out;
	struct json_object *o = parse_line(text);

	out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	free(text);
	return out;
}

/*
 * Every event line of layout compact, rebuilt with its header, format and
 * stack lines, is the event layout full writes; a header starts each file
 * and every format and stack is described once per file.
 */
static void test_compact(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c), none = { .ts = 5, .cpu = 0, .tid = 7, .pid = 7 };
	struct td_frame kf[4], uf[4];
	struct td_resolved r = stitched4(ev, kf, uf, 0, 0);
	struct td_resolved r2 = {
		.ev = &none, .status = TD_NO_USER, .event_name = "test:no_format",
		.kframes = kf, .nr_kframes = 2,
	};
	struct td_json_writer *jw = td_json_writer_new(TD_JSON_COMPACT, 0);
	struct creader cr = { .formats = json_object_new_object(),
			      .stacks = json_object_new_object() };
	const struct td_resolved *rs[] = { &r, &r, &r2, &r, &r2 };
	const char *header = "{\"v\":3,\"type\":\"header\",\"columns\":[\"ts\",\"cpu\",\"pid\","
			     "\"tid\",\"comm\",\"format\",\"fields\",\"cookie\",\"status\","
			     "\"stack\"]}\n";
	size_t bytes_compact = 0, bytes_interned = 0;
	struct td_json_writer *ji = td_json_writer_new(TD_JSON_INTERNED, 0);
	char *text, *got, *want;
	size_t i;

	assert_non_null(jw);
	assert_non_null(ji);
	strcpy(none.comm, "kworker/0:1");
	vouch(kf, kframes, 4, 3);
	vouch(uf, uframes, 4, 3);
	for (int file = 0; file < 2; file++) {
		for (i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
			/* the second event of a format: other field values */
			ev->tid = i == 1 ? 4243 : 4242;
			((unsigned char *)ev->raw)[60] = i == 1 ? 99 : 120;
			text = writer_lines(jw, rs[i]);
			if (i == 0)
				assert_true(!strncmp(text, header, strlen(header)));
			bytes_compact += strlen(text);
			got = creader_feed(&cr, text);
			want = full_line(rs[i]);
			assert_string_equal(got, want);
			free(got);
			free(want);
			free(text);
			text = writer_lines(ji, rs[i]);
			bytes_interned += strlen(text);
			free(text);
		}
		/* Two formats, two stacks, one header per file. */
		assert_int_equal(cr.headers, file + 1);
		assert_int_equal(cr.format_lines, 2 * (file + 1));
		assert_int_equal(cr.stack_lines, 2 * (file + 1));
		/* A new file (rotation): everything is described again. */
		td_json_writer_reset(jw);
		td_json_writer_reset(ji);
	}
	/* Field names and event keys are not repeated. */
	assert_true(bytes_compact < bytes_interned);
	json_object_put(cr.cols);
	json_object_put(cr.formats);
	json_object_put(cr.stacks);
	td_json_writer_free(jw);
	td_json_writer_free(ji);
	td_event_free(ev);
}

/* A header that could not be written is written with the next event. */
static void test_compact_write_error(void **state)
{
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	struct td_resolved r = { .ev = ev, .status = TD_NO_USER, .event_name = "sched:sched_switch" };
	struct td_json_writer *jw = td_json_writer_new(TD_JSON_COMPACT, 0);
	FILE *f = fopen("/dev/null", "r");
	char *text;

	assert_non_null(jw);
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	assert_true(td_json_writer_write(jw, f, &r) < 0);
	fclose(f);
	text = writer_lines(jw, &r);
	assert_non_null(strstr(text, "\"type\":\"header\""));
	assert_non_null(strstr(text, "\"type\":\"format\""));
	free(text);
	td_json_writer_free(jw);
	td_event_free(ev);
}

/*
 * A writer keeps task names (comm, 16-byte char fields), statuses and
 * event names as text: every line must still be what td_json_write()
 * writes. Names alike in their first eight bytes, alike up to a NUL and
 * different after it, with no NUL at all, needing escapes, invalid UTF-8,
 * too long as text to be kept, and more of them than the cache holds, in
 * every layout's event lines.
 */
static void test_name_cache(void **state)
{
	static const char *const names[] = {
		"abcdefgh1", "abcdefgh2", "abcdefgh", "ab\0xyz", "ab\0qqq", "ab",
		"0123456789abcdef", "0123456789abcdeX", "a\"b\\c", "\xff\xfe\xc3", "",
		"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f",
		"swapper/0", "fp_chain",
	};
	/* Bytes of each name above, some past a NUL (not 0 for a string without one). */
	static const unsigned int lens[] = { 0, 0, 0, 7, 7, 0, 16, 16, 0, 0, 0, 0, 0, 0 };
	const enum td_json_layout layouts[] = { TD_JSON_FULL, TD_JSON_INTERNED, TD_JSON_COMPACT };
	const char *event_names[] = { "sched:sched_switch", NULL, "other:name" };
	unsigned int nr = sizeof(names) / sizeof(names[0]), round, l;
	struct ctx *c = *state;
	struct td_event *ev = switch_event(c);
	unsigned char *raw = ev->raw;
	struct td_resolved r = { .ev = ev, .cookie = ev->cookie };
	char made[TD_COMM_LEN];

	for (l = 0; l < 3; l++) {
		struct td_json_writer *jw = td_json_writer_new(layouts[l], 0);
		struct creader cr = { .formats = json_object_new_object(),
				      .stacks = json_object_new_object() };

		assert_non_null(jw);
		/* Twice over every name (kept the second time), then 400 more. */
		for (round = 0; round < 2 * nr + 400; round++) {
			unsigned int k = round % nr, n = round % 3 + 3;
			const char *name = names[k], *next = names[(round + 3) % nr];
			size_t len = lens[k] ? lens[k] : strlen(name) + 1;
			char *a, *want, *got, *head, *end;

			if (round >= 2 * nr) {
				snprintf(made, sizeof(made), "task-%u", round * 7919 % 1000);
				name = made;
				len = strlen(made) + 1;
			}
			/* The bytes after a NUL are junk, as in a comm. */
			memset(ev->comm, 'J', TD_COMM_LEN);
			memcpy(ev->comm, name, len);
			memset(raw + 8, 'K', TD_COMM_LEN);	/* prev_comm */
			memcpy(raw + 8, next, strnlen(next, TD_COMM_LEN));
			memset(raw + 40, 0, TD_COMM_LEN);	/* next_comm */
			memcpy(raw + 40, name, len < TD_COMM_LEN ? len : TD_COMM_LEN);
			r.status = (enum td_status)(round % TD_NR_STATUS);
			r.event_name = event_names[round % 3];
			ev->cpu = (int)n;
			a = writer_lines(jw, &r);
			if (layouts[l] == TD_JSON_FULL) {
				want = write_one(&r);
				assert_string_equal(a, want);
			} else if (layouts[l] == TD_JSON_INTERNED) {
				/* The event line up to its stack id is layout full's up to its stacks. */
				want = write_one(&r);
				head = strstr(a, "{\"v\":2,\"type\":\"event\",");
				assert_non_null(head);
				head += strlen("{\"v\":2,\"type\":\"event\",");
				end = strstr(head, ",\"stack\":");
				assert_non_null(end);
				*end = '\0';
				end = strstr(want, ",\"kernel_stack\":");
				assert_non_null(end);
				*end = '\0';
				assert_string_equal(head, want + strlen("{\"v\":1,"));
			} else {
				got = creader_feed(&cr, a);
				want = full_line(&r);
				assert_string_equal(got, want);
				free(got);
			}
			free(want);
			free(a);
		}
		json_object_put(cr.cols);
		json_object_put(cr.formats);
		json_object_put(cr.stacks);
		td_json_writer_free(jw);
	}
	td_event_free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stitched_record),
		cmocka_unit_test(test_statuses),
		cmocka_unit_test(test_dynamic_fields),
		cmocka_unit_test(test_mixed_fields),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_no_format),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_frame_cache),
		cmocka_unit_test(test_intern_shared),
		cmocka_unit_test(test_intern_ids),
		cmocka_unit_test(test_full_stack_ids),
		cmocka_unit_test(test_decimal),
		cmocka_unit_test(test_field_plans),
		cmocka_unit_test(test_fields_cache),
		cmocka_unit_test(test_name_cache),
		cmocka_unit_test(test_intern_files_differ),
		cmocka_unit_test(test_intern_text_key),
		cmocka_unit_test(test_intern_reset_epoch),
		cmocka_unit_test(test_intern_write_error),
		cmocka_unit_test(test_writer_full),
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_compact_write_error),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
