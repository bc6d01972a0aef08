// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the daemon's interval profiles (daemon/profiles.c): the
 * bounded directory they are cut into. The wall clock, which names the
 * intervals, is this file's own (td_now_real_ns() below, linked instead of
 * daemon/counters.o), so that it can be set back the way an NTP step or an
 * RTC-less boot does.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "../../daemon/config.h"
#include "../../daemon/counters.h"
#include "../../daemon/log.h"
#include "../../daemon/profiles.h"
#include "log-capture.h"
#include "profile.pb-c.h"

#define SEC	1000000000ULL
/* 2026-01-01T00:00:00Z */
#define Y2026	(1767225600ULL * SEC)
/* 2001-01-01T00:00:00Z */
#define Y2001	(978307200ULL * SEC)

static uint64_t real_ns = Y2026, mono_ns = SEC;

uint64_t td_now_real_ns(void)
{
	return real_ns;
}

uint64_t td_now_mono_ns(void)
{
	return mono_ns;
}

/*
 * td_folded_add(), the library's, through the linker's --wrap (rules.mk):
 * out of memory while folded_fail is set, as when an allocation fails.
 */
static bool folded_fail;

int __real_td_folded_add(struct td_folded *fo, const struct td_resolved *r);
int __wrap_td_folded_add(struct td_folded *fo, const struct td_resolved *r);

int __wrap_td_folded_add(struct td_folded *fo, const struct td_resolved *r)
{
	return folded_fail ? -ENOMEM : __real_td_folded_add(fo, r);
}

static char dir[64];

static int dir_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/td-profiles-test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	real_ns = Y2026;
	mono_ns = SEC;
	return log_capture_start();
}

static int dir_teardown(void **state)
{
	char cmd[128];

	(void)state;
	log_capture_stop();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

static struct td_config config(unsigned int keep, uint64_t max_kb)
{
	struct td_config c = {
		.profile_dir = dir,
		.profile_interval = 60,
		.profile_keep = keep,
		.profile_max_kb = max_kb,
	};

	return c;
}

static const struct td_frame ufr[] = {
	{ .addr = 0x401000, .symbol = "c", .object = "/bin/fp_chain", .file_offset = 0x1000 },
	{ .addr = 0x401100, .symbol = "main", .object = "/bin/fp_chain", .file_offset = 0x1100 },
};

/* Count @n events of one stack; each td_profiles_add() must return @ret. */
static void add_events_ret(struct td_profiles *p, unsigned int n, int ret)
{
	struct td_event *ev = td_event_new();
	struct td_resolved r = {
		.status = TD_STITCHED, .event_name = "sched:sched_switch",
		.uframes = ufr, .nr_uframes = 2,
	};

	assert_non_null(ev);
	strcpy(ev->comm, "fp_chain");
	ev->tid = ev->pid = 42;
	r.ev = ev;
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(td_profiles_add(p, &r), ret);
	td_event_free(ev);
}

static void add_events(struct td_profiles *p, unsigned int n)
{
	add_events_ret(p, n, 0);
}

/* One interval of events, cut a minute later (wall clock and monotonic alike). */
static void one_interval(struct td_profiles *p)
{
	add_events(p, 3);
	mono_ns += 60 * SEC;
	real_ns += 60 * SEC;
	assert_int_equal(td_profiles_tick(p, mono_ns), 0);
}

/* The names in the directory, sorted, joined by spaces. */
static const char *listing(void)
{
	static char out[4096];
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);

	assert_true(n >= 0);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			strcat(out, out[0] ? " " : "");
			strcat(out, names[i]->d_name);
		}
		free(names[i]);
	}
	free(names);
	return out;
}

static void touch(const char *name, size_t bytes)
{
	char path[128], buf[256] = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	while (bytes) {
		size_t n = bytes < sizeof(buf) ? bytes : sizeof(buf);

		assert_int_equal(write(fd, buf, n), (ssize_t)n);
		bytes -= n;
	}
	close(fd);
}

static bool exists(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !access(path, F_OK);
}

/* keep bounds the intervals; the oldest go first; others' files are left alone. */
static void test_keep_bound(void **state)
{
	struct td_config c = config(3, 0);
	struct td_profiles_stats st;
	struct td_profiles *p;

	(void)state;
	touch("profile-incident.pb.gz", 10);
	p = td_profiles_open(&c, mono_ns);
	assert_non_null(p);
	for (int i = 0; i < 5; i++)
		one_interval(p);
	assert_string_equal(listing(), "profile-20260101T000200.000Z.pb.gz "
			    "profile-20260101T000300.000Z.pb.gz "
			    "profile-20260101T000400.000Z.pb.gz profile-incident.pb.gz");
	assert_int_equal(td_profiles_close(p, &st), 0);
	assert_int_equal(st.written, 5);
	assert_int_equal(st.removed, 2);
	assert_int_equal(st.kept, 3);
}

/*
 * The clock set back while we run (or files named by a clock that was
 * ahead): the intervals just written are the newest whatever their names
 * say, so the stale ones go first, and it is said once.
 */
static void test_clock_back(void **state)
{
	struct td_config c = config(3, 0);
	struct td_profiles_stats st;
	struct td_profiles *p;

	(void)state;
	touch("profile-20260101T000000.000Z.pb.gz", 10);
	touch("profile-20260101T000100.000Z.pb.gz", 10);
	touch("profile-20260101T000200.000Z.pb.gz", 10);
	real_ns = Y2001;
	p = td_profiles_open(&c, mono_ns);
	assert_non_null(p);
	for (int i = 0; i < 4; i++)
		one_interval(p);
	/* the four of this run, less the oldest of them: none of the stale ones */
	assert_string_equal(listing(), "profile-20010101T000100.000Z.pb.gz "
			    "profile-20010101T000200.000Z.pb.gz "
			    "profile-20010101T000300.000Z.pb.gz");
	assert_int_equal(td_profiles_close(p, &st), 0);
	assert_int_equal(st.written, 4);
	assert_int_equal(st.removed, 4);

	/* Back again within the run: the latest written is still kept. */
	real_ns = Y2026 + 3600 * SEC;
	p = td_profiles_open(&c, mono_ns);
	assert_non_null(p);
	one_interval(p);
	log_captured();
	real_ns = Y2001 + 3600 * SEC;
	one_interval(p);
	one_interval(p);
	one_interval(p);
	assert_non_null(strstr(log_captured(), "the clock went back"));
	/* by name the newest, 2001's, would have gone; the oldest written went */
	assert_false(exists("profile-20260101T010000.000Z.pb.gz"));
	assert_true(exists("profile-20260101T010100.000Z.pb.gz"));
	assert_true(exists("profile-20010101T010100.000Z.pb.gz"));
	assert_true(exists("profile-20010101T010200.000Z.pb.gz"));
	assert_int_equal(td_profiles_close(p, &st), 0);
}

/* A lowered bound holds from the start, not from the first cut with events. */
static void test_pruned_at_open(void **state)
{
	struct td_config c = config(2, 0);
	struct td_profiles_stats st;
	struct td_profiles *p;

	(void)state;
	touch("profile-20260101T000000.000Z.pb.gz", 10);
	touch("profile-20260101T000100.000Z.pb.gz", 10);
	touch("profile-20260101T000100.000Z.folded", 10);
	touch("profile-20260101T000200.000Z.pb.gz", 10);
	p = td_profiles_open(&c, mono_ns);
	assert_non_null(p);
	assert_string_equal(listing(), "profile-20260101T000100.000Z.folded "
			    "profile-20260101T000100.000Z.pb.gz "
			    "profile-20260101T000200.000Z.pb.gz");
	td_profiles_stats(p, &st);
	assert_int_equal(st.removed, 1);
	assert_int_equal(st.kept, 2);
	assert_int_equal(st.kept_bytes, 30);
	assert_int_equal(td_profiles_close(p, &st), 0);
	assert_int_equal(st.written, 0);
}

/* Bytes bound: the intervals kept, the new one included, fit. */
static void test_bytes_bound(void **state)
{
	struct td_config c = config(0, 4);
	struct td_profiles_stats st;
	struct td_profiles *p;

	(void)state;
	touch("profile-20250101T000000.000Z.pb.gz", 2000);
	touch("profile-20250101T000100.000Z.pb.gz", 2000);
	p = td_profiles_open(&c, mono_ns);
	assert_non_null(p);
	one_interval(p);
	td_profiles_stats(p, &st);
	assert_true(st.kept_bytes <= 4096);
	assert_int_equal(st.removed, 1);
	assert_false(exists("profile-20250101T000000.000Z.pb.gz"));
	assert_true(exists("profile-20250101T000100.000Z.pb.gz"));
	assert_int_equal(td_profiles_close(p, &st), 0);
}

/*
 * An interval that cannot be removed (here: a directory under its name,
 * which unlink() refuses) is not counted as removed, and the next oldest
 * goes instead: the bound still holds and written - removed = kept.
 */
static void test_remove_fails(void **state)
{
	struct td_config c = config(2, 0);
	struct td_profiles_stats st;
	struct td_profiles *p;
	char path[128];

	(void)state;
	/* a name of ours that unlink() cannot remove, and is not counted as an interval */
	snprintf(path, sizeof(path), "%s/profile-20250101T000000.000Z.folded", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	touch("profile-20250101T000000.000Z.pb.gz", 10);
	touch("profile-20250101T000100.000Z.pb.gz", 10);
	touch("profile-20250101T000200.000Z.pb.gz", 10);
	p = td_profiles_open(&c, mono_ns);
	assert_non_null(p);
	td_profiles_stats(p, &st);
	/* the first could not be removed whole: not counted, the second went */
	assert_int_equal(st.removed, 1);
	assert_int_equal(st.kept, 2);
	assert_false(exists("profile-20250101T000100.000Z.pb.gz"));
	assert_true(exists("profile-20250101T000200.000Z.pb.gz"));
	assert_non_null(strstr(log_captured(), "cannot remove"));
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(td_profiles_close(p, &st), 0);
}

/* A link planted at the temporary name is replaced, not written through. */
static void test_tmp_link_not_followed(void **state)
{
	struct td_config c = config(3, 0);
	struct td_profiles_stats st;
	struct td_profiles *p;
	char victim[128], link[128];
	struct stat sb;
	FILE *f;

	(void)state;
	/* outside the directory: a file of someone else's that a link would name */
	snprintf(victim, sizeof(victim), "%s.victim", dir);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("keep me\n", f);
	fclose(f);
	p = td_profiles_open(&c, mono_ns);
	assert_non_null(p);
	add_events(p, 1);
	snprintf(link, sizeof(link), "%s/.profile-20260101T000000.000Z.pb.gz.tmp", dir);
	assert_int_equal(symlink(victim, link), 0);
	mono_ns += 60 * SEC;
	real_ns += 60 * SEC;
	assert_int_equal(td_profiles_tick(p, mono_ns), 0);
	assert_int_equal(lstat(victim, &sb), 0);
	assert_int_equal(sb.st_size, 8);
	snprintf(link, sizeof(link), "%s/profile-20260101T000000.000Z.pb.gz", dir);
	assert_int_equal(lstat(link, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_true(sb.st_size > 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(td_profiles_close(p, &st), 0);
	unlink(victim);
}

/* A directory others may write to, or another trace-defer uses, is refused. */
static void test_dir_refused(void **state)
{
	struct td_config c = config(3, 0);
	struct td_profiles *p, *q;

	(void)state;
	assert_int_equal(chmod(dir, 0777), 0);
	assert_null(td_profiles_open(&c, mono_ns));
	assert_non_null(strstr(log_captured(), "may be written by others (mode 0777)"));
	assert_int_equal(chmod(dir, 0700), 0);
	p = td_profiles_open(&c, mono_ns);
	assert_non_null(p);
	q = td_profiles_open(&c, mono_ns);
	assert_null(q);
	assert_non_null(strstr(log_captured(), "in use by another trace-defer"));
	assert_int_equal(td_profiles_close(p, NULL), 0);
	q = td_profiles_open(&c, mono_ns);
	assert_non_null(q);
	assert_int_equal(td_profiles_close(q, NULL), 0);
}

/* The whole of DIR/@name, gunzipped if it is a .gz file: malloc()ed, its length in *@len. */
static char *slurp(const char *name, size_t *len)
{
	size_t cap = 1 << 20;
	char path[128], *buf = malloc(cap);
	gzFile f;
	int n;

	assert_non_null(buf);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = gzopen(path, "rb");
	assert_non_null(f);
	n = gzread(f, buf, cap - 1);
	assert_true(n >= 0 && (size_t)n < cap - 1);
	gzclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The events the pprof file DIR/@name counts: its samples' values. */
static uint64_t pprof_events(const char *name)
{
	Perftools__Profiles__Profile *pb;
	uint64_t sum = 0;
	size_t len;
	char *raw = slurp(name, &len);

	pb = perftools__profiles__profile__unpack(NULL, len, (const uint8_t *)raw);
	assert_non_null(pb);
	assert_int_equal(pb->n_sample_type, 1);
	for (size_t i = 0; i < pb->n_sample; i++)
		sum += pb->sample[i]->value[0];
	perftools__profiles__profile__free_unpacked(pb, NULL);
	free(raw);
	return sum;
}

/* One event the folded stacks fail to take, then the minute's cut. */
static void fail_one_folded_then_cut(struct td_profiles *p)
{
	folded_fail = true;
	add_events_ret(p, 1, -ENOMEM);
	folded_fail = false;
	mono_ns += 60 * SEC;
	real_ns += 60 * SEC;
	assert_int_equal(td_profiles_tick(p, mono_ns), 0);
}

/*
 * An event the folded stacks cannot take (out of memory) after the pprof
 * took it: the interval is written all the same, even with no other
 * event, and the pprof file has one event more than the folded file,
 * which is counted (folded_missed) and returned as the error it is.
 */
static void test_folded_add_fails(void **state)
{
	struct td_config c = config(0, 0);
	struct td_profiles_stats st;
	struct td_profiles *p;
	size_t len;
	char *text;

	(void)state;
	c.profile_folded = true;
	p = td_profiles_open(&c, mono_ns);
	assert_non_null(p);
	fail_one_folded_then_cut(p);
	assert_string_equal(listing(), "profile-20260101T000000.000Z.folded "
			    "profile-20260101T000000.000Z.pb.gz");
	assert_int_equal(pprof_events("profile-20260101T000000.000Z.pb.gz"), 1);
	text = slurp("profile-20260101T000000.000Z.folded", &len);
	assert_string_equal(text, "");
	free(text);

	add_events(p, 3);
	fail_one_folded_then_cut(p);
	assert_int_equal(pprof_events("profile-20260101T000100.000Z.pb.gz"), 4);
	text = slurp("profile-20260101T000100.000Z.folded", &len);
	assert_string_equal(text, "fp_chain;main;c 3\n");
	free(text);

	assert_int_equal(td_profiles_close(p, &st), 0);
	assert_int_equal(st.written, 2);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.folded_missed, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keep_bound, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_clock_back, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_pruned_at_open, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_bytes_bound, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_remove_fails, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_tmp_link_not_followed, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(test_dir_refused, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_folded_add_fails, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
