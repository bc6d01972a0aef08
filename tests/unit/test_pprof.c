// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pprof profiles (lib/pprof.c). Every profile is read back
 * the way a reader would: gunzipped with zlib and unpacked with protobuf-c
 * from the same profile.proto, then checked field by field: aggregation,
 * frame order, names of unknown frames, labels, mappings, status markers,
 * the frame cache, UTF-8 sanitizing and interval resets.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include <trace-defer/pprof.h>

#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const struct td_frame kfr[] = {
	{ .addr = 0xffffffff81000100ULL, .symbol = "__schedule", .object = "[kernel]" },
	{ .addr = 0xffffffff81000200ULL, .symbol = "schedule", .object = "[kernel]" },
	{ .addr = 0xffffffff81000400ULL },	/* nothing known */
};

static const struct td_frame ufr[] = {
	{ .addr = 0x401000, .symbol = "c", .object = "/bin/fp_chain", .file_offset = 0x1000,
	  .build_id = "abcd" },
	{ .addr = 0x401100, .symbol = "b", .object = "/bin/fp_chain", .file_offset = 0x1100,
	  .build_id = "abcd" },
	{ .addr = 0x7f0000027234ULL, .object = "/usr/lib/x86_64-linux-gnu/libc.so.6",
	  .file_offset = 0x27234 },
};

static struct td_event *event(const char *comm, int tid, int pid)
{
	struct td_event *ev = td_event_new();

	assert_non_null(ev);
	strncpy(ev->comm, comm, TD_COMM_LEN);
	ev->tid = tid;
	ev->pid = pid;
	return ev;
}

static struct td_resolved resolved(const struct td_event *ev, const char *name,
				   enum td_status st, unsigned int nk, unsigned int nu)
{
	struct td_resolved r = {
		.ev = ev, .status = st, .event_name = name,
		.kframes = kfr, .nr_kframes = nk, .uframes = ufr, .nr_uframes = nu,
	};

	return r;
}

/* Write @pp, gunzip and unpack it. */
static Profile *read_back(struct td_pprof *pp, uint64_t end_ns)
{
	char *buf = NULL;
	size_t len = 0, bytes, cap = 1 << 20;
	FILE *f = open_memstream(&buf, &len);
	unsigned char *raw = malloc(cap);
	z_stream zs = { 0 };
	Profile *p;

	assert_non_null(f);
	assert_non_null(raw);
	assert_int_equal(td_pprof_write(pp, f, end_ns, &bytes), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(bytes, len);
	assert_true(len > 18);
	assert_int_equal((unsigned char)buf[0], 0x1f);	/* gzip magic */
	assert_int_equal((unsigned char)buf[1], 0x8b);

	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (unsigned char *)buf;
	zs.avail_in = len;
	zs.next_out = raw;
	zs.avail_out = cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	p = perftools__profiles__profile__unpack(NULL, zs.total_out, raw);
	assert_non_null(p);
	inflateEnd(&zs);
	free(raw);
	free(buf);
	return p;
}

static const char *str(const Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static const Perftools__Profiles__Location *loc(const Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	fail_msg("no location %lu", (unsigned long)id);
	return NULL;
}

static const Perftools__Profiles__Function *func(const Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	fail_msg("no function %lu", (unsigned long)id);
	return NULL;
}

static const Perftools__Profiles__Mapping *mapping(const Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id == id)
			return p->mapping[i];
	return NULL;
}

/* The function name of location @i of sample @s. */
static const char *frame(const Profile *p, const Perftools__Profiles__Sample *s, size_t i)
{
	const Perftools__Profiles__Location *l;

	assert_true(i < s->n_location_id);
	l = loc(p, s->location_id[i]);
	assert_int_equal(l->n_line, 1);
	return str(p, func(p, l->line[0]->function_id)->name);
}

static const char *label_str(const Profile *p, const Perftools__Profiles__Sample *s,
			     const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(str(p, s->label[i]->key), key))
			return str(p, s->label[i]->str);
	return NULL;
}

static int64_t label_num(const Profile *p, const Perftools__Profiles__Sample *s,
			 const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(str(p, s->label[i]->key), key))
			return s->label[i]->num;
	return -1;
}

/* The sample with @n locations and comm @comm, or NULL. */
static const Perftools__Profiles__Sample *find(const Profile *p, size_t n, const char *comm)
{
	size_t i;

	for (i = 0; i < p->n_sample; i++) {
		const char *c = label_str(p, p->sample[i], "comm");

		if (p->sample[i]->n_location_id == n && c && !strcmp(c, comm))
			return p->sample[i];
	}
	return NULL;
}

static void test_aggregate_and_order(void **state)
{
	struct td_pprof *pp = td_pprof_new(1000);
	struct td_event *a = event("fp_chain", 101, 100), *b = event("other", 7, 0);
	struct td_resolved r;
	struct td_pprof_stats st;
	const Perftools__Profiles__Sample *s;
	const Perftools__Profiles__Mapping *m;
	Profile *p;
	int i;

	assert_non_null(pp);
	r = resolved(a, "sched:sched_switch", TD_STITCHED, 3, 3);
	for (i = 0; i < 5; i++)
		assert_int_equal(td_pprof_add(pp, &r), 0);
	r = resolved(b, "sched:sched_switch", TD_STITCHED, 2, 2);
	assert_int_equal(td_pprof_add(pp, &r), 0);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.events, 6);
	assert_int_equal(st.samples, 2);

	p = read_back(pp, 4000);
	assert_string_equal(str(p, 0), "");
	assert_int_equal(p->n_sample_type, 1);
	assert_string_equal(str(p, p->sample_type[0]->type), "events");
	assert_string_equal(str(p, p->sample_type[0]->unit), "count");
	assert_int_equal(p->time_nanos, 1000);
	assert_int_equal(p->duration_nanos, 3000);
	assert_int_equal(p->n_sample, 2);

	s = find(p, 6, "fp_chain");
	assert_non_null(s);
	assert_int_equal(s->n_value, 1);
	assert_int_equal(s->value[0], 5);
	/* kernel innermost first, then user innermost first */
	assert_string_equal(frame(p, s, 0), "__schedule");
	assert_string_equal(frame(p, s, 1), "schedule");
	assert_string_equal(frame(p, s, 2), "0xffffffff81000400");
	assert_string_equal(frame(p, s, 3), "c");
	assert_string_equal(frame(p, s, 4), "b");
	assert_string_equal(frame(p, s, 5), "libc.so.6+0x27234");
	assert_string_equal(label_str(p, s, "event"), "sched:sched_switch");
	assert_int_equal(label_num(p, s, "pid"), 100);

	/*
	 * The main binary (pprof's "File:") is the first mapping: the
	 * program's, under libc's outermost frame, not the kernel's, met
	 * first in the stacks.
	 */
	assert_true(p->n_mapping >= 3);
	assert_string_equal(str(p, p->mapping[0]->filename), "/bin/fp_chain");

	/* a user frame: its offset in the object, a mapping with the build-id */
	assert_int_equal(loc(p, s->location_id[3])->address, 0x1000);
	m = mapping(p, loc(p, s->location_id[3])->mapping_id);
	assert_non_null(m);
	assert_string_equal(str(p, m->filename), "/bin/fp_chain");
	assert_string_equal(str(p, m->build_id), "abcd");
	assert_true(m->has_functions);
	/* no source file is known: pprof would read the object as one (-list) */
	assert_string_equal(str(p, func(p, loc(p, s->location_id[3])->line[0]->function_id)
				    ->filename), "");
	/* a frame with no object: its address, no mapping */
	assert_int_equal(loc(p, s->location_id[2])->address, 0xffffffff81000400ULL);
	assert_int_equal(loc(p, s->location_id[2])->mapping_id, 0);

	s = find(p, 4, "other");
	assert_non_null(s);
	assert_int_equal(s->value[0], 1);
	assert_int_equal(label_num(p, s, "pid"), 7);	/* no process id: the thread's */
	/* shared frames share locations */
	assert_int_equal(s->location_id[0], find(p, 6, "fp_chain")->location_id[0]);

	perftools__profiles__profile__free_unpacked(p, NULL);
	td_event_free(a);
	td_event_free(b);
	td_pprof_free(pp);
}

static void test_status_markers(void **state)
{
	struct td_pprof *pp = td_pprof_new(0);
	struct td_event *a = event("lost", 1, 1), *b = event("failed", 2, 2),
			*c = event("kthread", 3, 3);
	struct td_resolved r;
	const Perftools__Profiles__Sample *s;
	Profile *p;

	r = resolved(a, "x:y", TD_USER_LOST, 2, 0);
	assert_int_equal(td_pprof_add(pp, &r), 0);
	r = resolved(b, "x:y", TD_UNWIND_FAILED, 2, 0);
	assert_int_equal(td_pprof_add(pp, &r), 0);
	r = resolved(c, "x:y", TD_NO_USER, 2, 0);
	assert_int_equal(td_pprof_add(pp, &r), 0);
	p = read_back(pp, 0);
	s = find(p, 3, "lost");
	assert_non_null(s);
	assert_string_equal(frame(p, s, 2), "[user_lost]");
	assert_int_equal(loc(p, s->location_id[2])->mapping_id, 0);
	s = find(p, 3, "failed");
	assert_non_null(s);
	assert_string_equal(frame(p, s, 2), "[unwind_failed]");
	assert_non_null(find(p, 2, "kthread"));
	perftools__profiles__profile__free_unpacked(p, NULL);
	td_event_free(a);
	td_event_free(b);
	td_event_free(c);
	td_pprof_free(pp);
}

/*
 * User frames in no known file and with no name (a process gone before
 * its maps were read): one "[unknown]" location whatever the address, so
 * two processes with other ASLR addresses add no location, function or
 * string; a user frame in a known file keeps its offset, and an unnamed
 * kernel frame its address.
 */
static void test_unknown_user_frames(void **state)
{
	const struct td_frame gone_a[] = {
		{ .addr = 0x5600000011a0ULL, .strings_id = 9 },
		{ .addr = 0x7f12000027234ULL, .strings_id = 9 },
	};
	const struct td_frame gone_b[] = {
		{ .addr = 0x5611000011a0ULL, .strings_id = 9 },
		{ .addr = 0x7f45000027234ULL, .strings_id = 9 },
	};
	struct td_pprof *pp = td_pprof_new(0);
	struct td_event *a = event("true", 300, 300), *b = event("true", 301, 301);
	struct td_resolved r = resolved(a, "x:y", TD_STITCHED, 3, 0);
	struct td_pprof_stats one, two;
	const Perftools__Profiles__Sample *s;
	Profile *p;
	size_t i;

	r.uframes = gone_a;
	r.nr_uframes = 2;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	td_pprof_stats(pp, &one);
	r.ev = b;
	r.uframes = gone_b;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	td_pprof_stats(pp, &two);
	assert_int_equal(two.locations, one.locations);
	assert_int_equal(two.functions, one.functions);
	assert_int_equal(two.strings, one.strings);

	p = read_back(pp, 0);
	assert_int_equal(p->n_sample, 2);	/* the pid label still tells them apart */
	for (i = 0; i < p->n_sample; i++) {
		s = p->sample[i];
		assert_int_equal(s->n_location_id, 5);
		assert_string_equal(frame(p, s, 2), "0xffffffff81000400");
		assert_string_equal(frame(p, s, 3), "[unknown]");
		assert_string_equal(frame(p, s, 4), "[unknown]");
		assert_int_equal(loc(p, s->location_id[3])->mapping_id, 0);
		assert_int_equal(s->location_id[3], p->sample[0]->location_id[3]);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	td_event_free(a);
	td_event_free(b);
	td_pprof_free(pp);
}

/*
 * A frame the kernel recorded as in the vDSO says no offset in it: named
 * "[vdso]" (not "[vdso]+0x0"), at address 0, one location for the vDSO
 * frames of every process (their addresses differ under ASLR and say
 * nothing more).
 */
static void test_vdso_frames(void **state)
{
	const struct td_frame uf[] = {
		{ .addr = 0x7ffd12345678ULL, .object = "[vdso]", .file_kind = TD_FILE_VDSO,
		  .strings_id = 9 },
		{ .addr = 0x4011a0, .symbol = "main", .object = "/bin/x", .file_kind = TD_FILE_IN,
		  .file_offset = 0x11a0, .strings_id = 9 },
	};
	struct td_pprof *pp = td_pprof_new(0);
	struct td_event *a = event("x", 300, 300);
	struct td_resolved r = resolved(a, "x:y", TD_STITCHED, 3, 0);
	const Perftools__Profiles__Sample *s;
	Profile *p;

	(void)state;
	r.uframes = uf;
	r.nr_uframes = 2;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	p = read_back(pp, 0);
	assert_int_equal(p->n_sample, 1);
	s = p->sample[0];
	assert_int_equal(s->n_location_id, 5);
	assert_string_equal(frame(p, s, 3), "[vdso]");
	assert_string_equal(frame(p, s, 4), "main");
	assert_int_equal(loc(p, s->location_id[3])->address, 0);
	perftools__profiles__profile__free_unpacked(p, NULL);
	td_event_free(a);
	td_pprof_free(pp);
}

/* Frames from a symbolizer (strings_id set) take the cache: the same profile. */
static void test_cache_same_result(void **state)
{
	struct td_frame k2[3], u2[3];
	struct td_pprof *pp = td_pprof_new(0);
	struct td_event *a = event("fp_chain", 5, 5);
	struct td_resolved r = resolved(a, "x:y", TD_STITCHED, 3, 3);
	struct td_pprof_stats st;
	const Perftools__Profiles__Sample *s;
	Profile *p;
	int i;

	memcpy(k2, kfr, sizeof(k2));
	memcpy(u2, ufr, sizeof(u2));
	for (i = 0; i < 3; i++)
		k2[i].strings_id = u2[i].strings_id = 42;
	for (i = 0; i < 3; i++)
		assert_int_equal(td_pprof_add(pp, &r), 0);
	r.kframes = k2;
	r.uframes = u2;
	for (i = 0; i < 4; i++)
		assert_int_equal(td_pprof_add(pp, &r), 0);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.samples, 1);
	assert_int_equal(st.events, 7);
	p = read_back(pp, 0);
	s = find(p, 6, "fp_chain");
	assert_non_null(s);
	assert_int_equal(s->value[0], 7);
	assert_string_equal(frame(p, s, 5), "libc.so.6+0x27234");
	perftools__profiles__profile__free_unpacked(p, NULL);
	td_event_free(a);
	td_pprof_free(pp);
}

/*
 * The fast path keys events on addresses and string pointers: the same
 * addresses with another name, comm, pid or event are other samples.
 */
static void test_raw_key_tells_apart(void **state)
{
	struct td_frame k2[3], u2[3], u3[3];
	struct td_pprof *pp = td_pprof_new(0);
	struct td_event *a = event("one", 5, 5), *b = event("two", 5, 5), *c = event("one", 6, 6);
	struct td_resolved r = resolved(a, "x:y", TD_STITCHED, 3, 3);
	struct td_pprof_stats st;
	Profile *p;
	int i;

	memcpy(k2, kfr, sizeof(k2));
	memcpy(u2, ufr, sizeof(u2));
	for (i = 0; i < 3; i++)
		k2[i].strings_id = u2[i].strings_id = 7;
	memcpy(u3, u2, sizeof(u3));
	u3[0].symbol = "other_c";		/* same address, another name */
	r.kframes = k2;
	r.uframes = u2;
	for (i = 0; i < 2; i++)
		assert_int_equal(td_pprof_add(pp, &r), 0);	/* the second: fast path */
	r.uframes = u3;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	r.uframes = u2;
	r.ev = b;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	r.ev = c;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	r.ev = a;
	r.event_name = "x:z";
	assert_int_equal(td_pprof_add(pp, &r), 0);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.events, 6);
	assert_int_equal(st.samples, 5);
	p = read_back(pp, 0);
	assert_int_equal(find(p, 6, "one")->n_location_id, 6);
	for (i = 0; i < (int)p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		if (!strcmp(frame(p, s, 3), "other_c"))
			assert_int_equal(s->value[0], 1);
		else if (!strcmp(label_str(p, s, "comm"), "one") && label_num(p, s, "pid") == 5 &&
			 !strcmp(label_str(p, s, "event"), "x:y"))
			assert_int_equal(s->value[0], 2);
		else
			assert_int_equal(s->value[0], 1);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	td_event_free(a);
	td_event_free(b);
	td_event_free(c);
	td_pprof_free(pp);
}

/*
 * Stacks the pipeline gave ids to are keyed on the ids: the same ids are
 * the same sample without a look at the frames, other ids for the same
 * frames still land in that sample, and so does an event without ids.
 */
static void test_id_key(void **state)
{
	struct td_pprof *pp = td_pprof_new(0);
	struct td_event *a = event("one", 5, 5), *b = event("two", 5, 5);
	struct td_resolved r = resolved(a, "x:y", TD_STITCHED, 3, 3);
	struct td_pprof_stats st;
	Profile *p;
	int i;

	r.kstack_id = 11;
	r.ustack_id = 12;
	for (i = 0; i < 3; i++)
		assert_int_equal(td_pprof_add(pp, &r), 0);
	r.ev = b;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.samples, 2);
	r.ev = a;
	r.kstack_id = 13;
	r.ustack_id = 14;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	r.ustack_id = 0;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.events, 6);
	p = read_back(pp, 0);
	assert_int_equal(find(p, 6, "one")->value[0], 5);
	assert_int_equal(find(p, 6, "two")->value[0], 1);
	assert_string_equal(frame(p, find(p, 6, "one"), 3), "c");
	perftools__profiles__profile__free_unpacked(p, NULL);
	td_event_free(a);
	td_event_free(b);
	td_pprof_free(pp);
}

/*
 * A stack seen before in another process (a short-lived process's stacks,
 * ids the pipeline gave them before) keeps its locations: each process's
 * sample has the frames of its own stack ids, never another stack's of
 * the same kernel part and shape.
 */
static void test_stack_ids_new_process(void **state)
{
	static const struct td_frame other[] = {
		{ .addr = 0x402000, .symbol = "x", .object = "/bin/other", .file_offset = 0x2000 },
		{ .addr = 0x402100, .symbol = "y", .object = "/bin/other", .file_offset = 0x2100 },
		{ .addr = 0x402200, .symbol = "z", .object = "/bin/other", .file_offset = 0x2200 },
	};
	struct td_pprof *pp = td_pprof_new(0);
	struct td_event *ev[3] = { event("p5", 5, 5), event("p6", 6, 6), event("p7", 7, 7) };
	struct td_resolved r;
	struct td_pprof_stats st;
	const Perftools__Profiles__Sample *s;
	Profile *p;
	size_t i;
	int k;

	for (k = 0; k < 3; k++) {
		/* Stack A (ids 21, 22) then stack B: the same kernel part, other user frames. */
		r = resolved(ev[k], "x:y", TD_STITCHED, 3, 3);
		r.kstack_id = 21;
		r.ustack_id = 22;
		assert_int_equal(td_pprof_add(pp, &r), 0);
		r.uframes = other;
		r.ustack_id = 23;
		assert_int_equal(td_pprof_add(pp, &r), 0);
	}
	td_pprof_stats(pp, &st);
	assert_int_equal(st.samples, 6);
	assert_int_equal(st.events, 6);
	p = read_back(pp, 0);
	for (i = 0; i < p->n_sample; i++) {
		s = p->sample[i];
		assert_int_equal(s->n_location_id, 6);
		assert_string_equal(frame(p, s, 0), "__schedule");
		assert_string_equal(frame(p, s, 2), "0xffffffff81000400");
	}
	for (k = 0; k < 3; k++) {
		unsigned int a = 0, b = 0;

		for (i = 0; i < p->n_sample; i++) {
			s = p->sample[i];
			if (label_num(p, s, "pid") != ev[k]->pid)
				continue;
			assert_string_equal(label_str(p, s, "comm"), ev[k]->comm);
			if (!strcmp(frame(p, s, 3), "c")) {
				assert_string_equal(frame(p, s, 4), "b");
				a++;
			} else {
				assert_string_equal(frame(p, s, 3), "x");
				assert_string_equal(frame(p, s, 5), "z");
				b++;
			}
		}
		assert_int_equal(a, 1);
		assert_int_equal(b, 1);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	for (k = 0; k < 3; k++)
		td_event_free(ev[k]);
	td_pprof_free(pp);
}

/* One event of each of the first @n processes of @ev, each its own user stack. */
static void add_processes(struct td_pprof *pp, struct td_event **ev, int n)
{
	struct td_resolved r;

	for (int k = 0; k < n; k++) {
		r = resolved(ev[k], "x:y", TD_STITCHED, 3, 3);
		r.kstack_id = 21;
		r.ustack_id = 100 + k;
		assert_int_equal(td_pprof_add(pp, &r), 0);
	}
}

/*
 * A bound on the tables (a whole run's profile on a machine of ever new
 * processes): once reached, events of samples known still count there,
 * every other counts in one [memory_bound] sample, and the tables stop
 * growing; all events are counted. A reset starts again.
 */
static void test_memory_bound(void **state)
{
	struct td_pprof *pp = td_pprof_new(0);
	struct td_event *ev[64];
	struct td_pprof_stats st;
	uint64_t mem, samples;
	Profile *p;
	size_t i, bound = 0;
	int k;

	(void)state;
	assert_non_null(pp);
	for (k = 0; k < 64; k++)
		ev[k] = event("short", 1000 + k, 1000 + k);
	/* The bound: what the tables hold after eight processes. */
	add_processes(pp, ev, 8);
	td_pprof_stats(pp, &st);
	td_pprof_set_max_mem(pp, st.mem_bytes);
	mem = st.mem_bytes;
	samples = st.samples;
	add_processes(pp, ev, 64);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.events, 8 + 64);
	assert_int_equal(st.over_events, 56);
	assert_int_equal(st.samples, samples + 1);	/* the bound's own */
	assert_true(st.mem_bytes <= mem + 4096);
	p = read_back(pp, 0);
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		if (s->n_location_id == 1 && !strcmp(frame(p, s, 0), "[memory_bound]")) {
			assert_int_equal(s->value[0], 56);
			bound++;
		} else {
			assert_int_equal(s->value[0], 2);	/* the first eight, twice each */
		}
	}
	assert_int_equal(bound, 1);
	perftools__profiles__profile__free_unpacked(p, NULL);
	td_pprof_reset(pp, 0);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.over_events, 0);
	for (k = 0; k < 64; k++)
		td_event_free(ev[k]);
	td_pprof_free(pp);
}

/*
 * Churn, three quarters of the bound reached: the events of processes new
 * since count in one sample of their stacks, comm and event, with no pid
 * label, and the tables stop growing there, far from full; the processes
 * that had their own samples keep them. No event is left out. Without the
 * folding every process of the 400 adds a sample, and the tables fill.
 */
static void test_memory_fold(void **state)
{
	enum { NR = 400 };
	struct td_pprof *pp = td_pprof_new(0);
	struct td_event *ev[NR];
	struct td_pprof_stats st;
	uint64_t bound, own = 0, folded = 0, nfolded = 0, grown;
	Profile *p;
	size_t i;
	int k;

	(void)state;
	assert_non_null(pp);
	for (k = 0; k < NR; k++)
		ev[k] = event("make", 2000 + k, 2000 + k);
	add_processes(pp, ev, 8);
	td_pprof_stats(pp, &st);
	bound = 2 * st.mem_bytes;
	td_pprof_set_max_mem(pp, bound);
	add_processes(pp, ev, NR / 2);
	td_pprof_stats(pp, &st);
	grown = st.mem_bytes;
	assert_true(st.folded_events > 0);
	add_processes(pp, ev, NR);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.events, 8 + NR / 2 + NR);
	assert_int_equal(st.over_events, 0);
	assert_true(st.mem_bytes <= bound);
	/* Another 200 processes: no byte more (one sample, no stack ids kept). */
	assert_int_equal(st.mem_bytes, grown);
	/* A busy process met now: its events find the folded sample, no byte more. */
	for (k = 0; k < 1000; k++) {
		struct td_resolved r = resolved(ev[NR - 1], "x:y", TD_STITCHED, 3, 3);

		r.kstack_id = 21;
		r.ustack_id = 100 + NR + 1;
		assert_int_equal(td_pprof_add(pp, &r), 0);
	}
	td_pprof_stats(pp, &st);
	assert_int_equal(st.events, 8 + NR / 2 + NR + 1000);
	assert_int_equal(st.mem_bytes, grown);
	p = read_back(pp, 0);
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		assert_string_equal(label_str(p, s, "comm"), "make");
		assert_string_equal(frame(p, s, 0), "__schedule");
		if (label_num(p, s, "pid") < 0) {
			assert_int_equal(s->n_label, 2);
			folded += s->value[0];
			nfolded++;
		} else {
			own += s->value[0];
		}
	}
	assert_int_equal(nfolded, 1);
	assert_int_equal(folded, st.folded_events);
	assert_int_equal(own + folded, st.events);
	perftools__profiles__profile__free_unpacked(p, NULL);
	td_pprof_reset(pp, 0);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.folded_events, 0);
	for (k = 0; k < NR; k++)
		td_event_free(ev[k]);
	td_pprof_free(pp);
}

/*
 * The kernel and the user part of a stack are remembered apart, each by
 * its own id: a kernel part known from one stack serves a new user part, a
 * user part known from one stack serves another kernel part, and a kernel
 * and a user part that happen to carry the same number stay apart.
 */
static void test_part_ids(void **state)
{
	static const struct td_frame kother[] = {
		{ .addr = 0xffffffff81000800ULL, .symbol = "do_exit", .object = "[kernel]" },
		{ .addr = 0xffffffff81000900ULL, .symbol = "do_group_exit", .object = "[kernel]" },
	};
	static const struct td_frame uother[] = {
		{ .addr = 0x402000, .symbol = "x", .object = "/bin/other", .file_offset = 0x2000 },
		{ .addr = 0x402100, .symbol = "y", .object = "/bin/other", .file_offset = 0x2100 },
	};
	static const struct {
		const struct td_frame *k, *u;
		unsigned int nk, nu;
		uint64_t kid, uid;
		const char *want[4];
	} ev[] = {
		{ kfr, ufr, 2, 2, 31, 32, { "__schedule", "schedule", "c", "b" } },
		{ kfr, uother, 2, 2, 31, 33, { "__schedule", "schedule", "x", "y" } },
		{ kother, ufr, 2, 2, 34, 32, { "do_exit", "do_group_exit", "c", "b" } },
		/* A kernel part numbered like a user part seen before. */
		{ kother, uother, 2, 2, 32, 33, { "do_exit", "do_group_exit", "x", "y" } },
		/* And a user part numbered like a kernel part seen before. */
		{ kfr, uother, 2, 2, 31, 34, { "__schedule", "schedule", "x", "y" } },
	};
	struct td_pprof *pp = td_pprof_new(0);
	const Perftools__Profiles__Sample *s;
	struct td_event *e[ARRAY_SIZE(ev)];
	char comm[TD_COMM_LEN];
	struct td_resolved r;
	Profile *p;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(ev); i++) {
		snprintf(comm, sizeof(comm), "p%zu", i);
		e[i] = event(comm, 100 + i, 100 + i);
		r = (struct td_resolved){
			.ev = e[i], .status = TD_STITCHED, .event_name = "x:y",
			.kframes = ev[i].k, .nr_kframes = ev[i].nk, .kstack_id = ev[i].kid,
			.uframes = ev[i].u, .nr_uframes = ev[i].nu, .ustack_id = ev[i].uid,
		};
		assert_int_equal(td_pprof_add(pp, &r), 0);
	}
	p = read_back(pp, 0);
	assert_int_equal(p->n_sample, ARRAY_SIZE(ev));
	for (i = 0; i < ARRAY_SIZE(ev); i++) {
		s = find(p, 4, e[i]->comm);
		assert_non_null(s);
		assert_int_equal(s->n_location_id, 4);
		for (j = 0; j < 4; j++)
			assert_string_equal(frame(p, s, j), ev[i].want[j]);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	for (i = 0; i < ARRAY_SIZE(ev); i++)
		td_event_free(e[i]);
	td_pprof_free(pp);
}

static void test_sanitize_and_reset(void **state)
{
	struct td_pprof *pp = td_pprof_new(10);
	struct td_event *a = event("bad\xff\x01x", 9, 9), *b = event("", 8, 8);
	struct td_resolved r = resolved(a, "x:y", TD_STITCHED, 1, 0);
	struct td_pprof_stats st;
	uint64_t fresh, grown;
	Profile *p;
	int i;

	td_pprof_stats(pp, &st);
	fresh = st.mem_bytes;
	assert_true(fresh > 0);
	assert_int_equal(td_pprof_add(pp, &r), 0);
	r.ev = b;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	p = read_back(pp, 20);
	assert_non_null(find(p, 1, "bad??x"));
	assert_non_null(find(p, 1, "[unknown]"));
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* Many processes' samples: the tables grow, and a reset gives it back. */
	for (i = 0; i < 2000; i++) {
		a->pid = a->tid = 1000 + i;
		r.ev = a;
		assert_int_equal(td_pprof_add(pp, &r), 0);
	}
	r.ev = b;
	td_pprof_stats(pp, &st);
	grown = st.mem_bytes;
	assert_true(grown > fresh + 2000 * 32);
	td_pprof_reset(pp, 500);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.events, 0);
	assert_int_equal(st.samples, 0);
	/* What a new interval starts with, not what the last one grew to. */
	assert_true(st.mem_bytes < grown / 4);
	p = read_back(pp, 800);
	assert_int_equal(p->n_sample, 0);
	assert_int_equal(p->time_nanos, 500);
	assert_int_equal(p->duration_nanos, 300);
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* and it counts again after the reset */
	assert_int_equal(td_pprof_add(pp, &r), 0);
	p = read_back(pp, 900);
	assert_int_equal(p->n_sample, 1);
	assert_string_equal(frame(p, p->sample[0], 0), "__schedule");
	perftools__profiles__profile__free_unpacked(p, NULL);
	td_event_free(a);
	td_event_free(b);
	td_pprof_free(pp);
}

/* A write error reaches the caller. */
static void test_write_error(void **state)
{
	struct td_pprof *pp = td_pprof_new(0);
	struct td_event *a = event("x", 1, 1);
	struct td_resolved r = resolved(a, "x:y", TD_STITCHED, 3, 3);
	FILE *f = fopen("/dev/full", "w");

	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(td_pprof_add(pp, &r), 0);
	assert_int_equal(td_pprof_write(pp, f, 1, NULL), -ENOSPC);
	fclose(f);
	td_event_free(a);
	td_pprof_free(pp);
}

/*
 * The tables full, an event whose sample is there still counts there when
 * it comes with frames named anew: other stack ids, another strings_id,
 * other string pointers with the same text (a symbolizer started again).
 * Only a sample not there goes to [memory_bound].
 */
static void test_memory_bound_renamed(void **state)
{
	struct td_pprof *pp = td_pprof_new(0);
	struct td_event *ev = event("worker", 7, 7);
	struct td_frame k2[ARRAY_SIZE(kfr)], u2[ARRAY_SIZE(ufr)];
	char names[ARRAY_SIZE(kfr) + ARRAY_SIZE(ufr)][3][64];
	struct td_pprof_stats st;
	struct td_resolved r;
	unsigned int i;

	(void)state;
	assert_non_null(pp);
	/* Copies of every string: the same text at other addresses. */
	for (i = 0; i < ARRAY_SIZE(kfr) + ARRAY_SIZE(ufr); i++) {
		const struct td_frame *f = i < ARRAY_SIZE(kfr) ? &kfr[i] : &ufr[i - ARRAY_SIZE(kfr)];
		struct td_frame *c = i < ARRAY_SIZE(kfr) ? &k2[i] : &u2[i - ARRAY_SIZE(kfr)];

		*c = *f;
		c->strings_id = 2;
		if (f->symbol)
			c->symbol = strcpy(names[i][0], f->symbol);
		if (f->object)
			c->object = strcpy(names[i][1], f->object);
		if (f->build_id)
			c->build_id = strcpy(names[i][2], f->build_id);
	}
	r = resolved(ev, "x:y", TD_STITCHED, 3, 3);
	r.kstack_id = 1;
	r.ustack_id = 2;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	td_pprof_stats(pp, &st);
	td_pprof_set_max_mem(pp, st.mem_bytes);

	r.kframes = k2;
	r.uframes = u2;
	r.kstack_id = 3;
	r.ustack_id = 4;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	assert_int_equal(td_pprof_add(pp, &r), 0);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.events, 3);
	assert_int_equal(st.samples, 1);
	assert_int_equal(st.over_events, 0);
	/* Another process: a sample not there. */
	ev->pid = ev->tid = 8;
	assert_int_equal(td_pprof_add(pp, &r), 0);
	td_pprof_stats(pp, &st);
	assert_int_equal(st.events, 4);
	assert_int_equal(st.over_events, 1);
	td_event_free(ev);
	td_pprof_free(pp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aggregate_and_order),
		cmocka_unit_test(test_status_markers),
		cmocka_unit_test(test_unknown_user_frames),
		cmocka_unit_test(test_vdso_frames),
		cmocka_unit_test(test_cache_same_result),
		cmocka_unit_test(test_raw_key_tells_apart),
		cmocka_unit_test(test_id_key),
		cmocka_unit_test(test_stack_ids_new_process),
		cmocka_unit_test(test_memory_bound),
		cmocka_unit_test(test_memory_fold),
		cmocka_unit_test(test_memory_bound_renamed),
		cmocka_unit_test(test_part_ids),
		cmocka_unit_test(test_sanitize_and_reset),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
