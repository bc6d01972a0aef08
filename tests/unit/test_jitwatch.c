// SPDX-License-Identifier: GPL-2.0
/*
 * The perf map watch (lib/jitwatch.c): its thread opens each perf-PID.map
 * the moment it is made, so that a map removed before the reader takes it
 * is read all the same; only such names count, only regular files are
 * opened (a FIFO named like a map neither blocks the thread nor is
 * handed on), a map made again before it was taken is handed on once, as
 * the newer file, and past WAIT_MAX (256) waiting, maps are closed and
 * counted. Under TSan (make SAN=thread BUILD=build-tsan) the thread's
 * hand-over is checked for races.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../lib/jitwatch.h"

struct fixture {
	char dir[64];
	struct td_jitwatch *w;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	int err = 0;

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/td-jitwatch-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	fx->w = td_jitwatch_start(NULL, fx->dir, &err);
	if (!fx->w) {
		fprintf(stderr, "td_jitwatch_start: %s\n", strerror(-err));
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	td_jitwatch_stop(fx->w);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
	if (system(cmd))
		return -1;
	free(fx);
	return 0;
}

static void make_file(const struct fixture *fx, const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fx->dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void remove_file(const struct fixture *fx, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", fx->dir, name);
	assert_int_equal(unlink(path), 0);
}

/* Until the thread has dealt with @want files (opened, or failed to): 5 s at most. */
static void settle(const struct fixture *fx, uint64_t want)
{
	struct timespec nap = { 0, 2000000 };
	struct td_jitwatch_stats st;

	for (int i = 0; i < 2500; i++) {
		td_jitwatch_get_stats(fx->w, &st);
		if (st.opened + st.open_errors >= want)
			return;
		nanosleep(&nap, NULL);
	}
	fail_msg("the watch's thread dealt with %llu of %llu files in 5 s",
		 (unsigned long long)(st.opened + st.open_errors), (unsigned long long)want);
}

static void read_all(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	assert_true(n >= 0);
	buf[n] = '\0';
}

static void test_removed_before_taken(void **state)
{
	struct fixture *fx = *state;
	struct pollfd pfd = { .fd = td_jitwatch_fd(fx->w), .events = POLLIN };
	struct td_jitmap maps[4];
	struct td_jitwatch_stats st;
	char text[64];

	/* Nothing made: nothing to take, nothing to wake for. */
	assert_int_equal(poll(&pfd, 1, 100), 0);
	assert_int_equal(td_jitwatch_take(fx->w, maps, 4), 0);

	/* Not maps: never opened, never handed on. */
	make_file(fx, "perf-x1.map", "1000 10 not_this\n");
	make_file(fx, "perf-1234.map.tmp", "1000 10 not_this\n");
	make_file(fx, "perf-0.map", "1000 10 not_this\n");

	make_file(fx, "perf-1234.map", "1000 10 brief\n");
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	remove_file(fx, "perf-1234.map");
	assert_int_equal(td_jitwatch_take(fx->w, maps, 4), 1);
	assert_int_equal(maps[0].pid, 1234);
	read_all(maps[0].fd, text, sizeof(text));
	assert_string_equal(text, "1000 10 brief\n");
	close(maps[0].fd);
	assert_int_equal(td_jitwatch_take(fx->w, maps, 4), 0);

	td_jitwatch_get_stats(fx->w, &st);
	assert_int_equal(st.opened, 1);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.open_errors, 0);
}

/* A FIFO would block an open for reading until a writer came; a device is worse. */
static void test_regular_files_only(void **state)
{
	struct fixture *fx = *state;
	struct td_jitmap maps[4];
	struct td_jitwatch_stats st;
	char path[128];

	snprintf(path, sizeof(path), "%s/perf-77.map", fx->dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	settle(fx, 1);
	td_jitwatch_get_stats(fx->w, &st);
	assert_int_equal(st.open_errors, 1);
	assert_int_equal(st.opened, 0);
	/* The thread is not stuck in it: the next map is opened. */
	make_file(fx, "perf-78.map", "2000 10 next\n");
	settle(fx, 2);
	assert_int_equal(td_jitwatch_take(fx->w, maps, 4), 1);
	assert_int_equal(maps[0].pid, 78);
	close(maps[0].fd);
}

/* Removed and made again before the reader took it: once, the newer file. */
static void test_made_again(void **state)
{
	struct fixture *fx = *state;
	struct td_jitmap maps[4];
	char text[64];

	make_file(fx, "perf-55.map", "1000 10 old\n");
	settle(fx, 1);
	remove_file(fx, "perf-55.map");
	make_file(fx, "perf-55.map", "1000 10 new\n");
	make_file(fx, "perf-56.map", "1000 10 other\n");
	settle(fx, 3);
	assert_int_equal(td_jitwatch_take(fx->w, maps, 4), 2);
	assert_int_equal(maps[0].pid, 55);
	assert_int_equal(maps[1].pid, 56);
	read_all(maps[0].fd, text, sizeof(text));
	assert_string_equal(text, "1000 10 new\n");
	close(maps[0].fd);
	close(maps[1].fd);
}

/*
 * More than wait untaken: the rest closed and counted (read at lookup, as
 * without the watch); taken a few at a time, oldest first, and the
 * descriptor says so while some are left.
 */
static void test_bounded(void **state)
{
	struct fixture *fx = *state;
	struct pollfd pfd = { .fd = td_jitwatch_fd(fx->w), .events = POLLIN };
	struct td_jitmap maps[100];
	struct td_jitwatch_stats st;
	int total = 0, n, next = 1001;
	char name[32];

	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "perf-%d.map", 1001 + i);
		make_file(fx, name, "1000 10 f\n");
	}
	settle(fx, 300);
	td_jitwatch_get_stats(fx->w, &st);
	assert_int_equal(st.opened, 300);
	assert_int_equal(st.dropped, 300 - 256);
	while ((n = td_jitwatch_take(fx->w, maps, 100)) > 0) {
		for (int i = 0; i < n; i++) {
			assert_int_equal(maps[i].pid, next++);
			close(maps[i].fd);
		}
		total += n;
		if (total < 256)
			assert_int_equal(poll(&pfd, 1, 0), 1);
	}
	assert_int_equal(n, 0);
	assert_int_equal(total, 256);
}

static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* Stopped with maps not taken: they are closed, and all of its own, the thread joined. */
static void test_stop_with_maps_waiting(void **state)
{
	struct fixture *fx = *state;
	int before, err = 0;

	td_jitwatch_stop(fx->w);
	before = open_fds();
	fx->w = td_jitwatch_start(NULL, fx->dir, &err);
	assert_non_null(fx->w);
	make_file(fx, "perf-99.map", "1000 10 left\n");
	make_file(fx, "perf-98.map", "1000 10 left\n");
	settle(fx, 2);
	assert_int_equal(open_fds(), before + 4 + 2);
	td_jitwatch_stop(fx->w);
	assert_int_equal(open_fds(), before);
	fx->w = td_jitwatch_start(NULL, fx->dir, &err);
	assert_non_null(fx->w);
}

/* A directory that is not there: an error, no thread. */
static void test_no_directory(void **state)
{
	int err = 0;

	assert_null(td_jitwatch_start(NULL, "/nonexistent-td-dir", &err));
	assert_int_equal(err, -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_removed_before_taken, setup, teardown),
		cmocka_unit_test_setup_teardown(test_regular_files_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_made_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_with_maps_waiting, setup, teardown),
		cmocka_unit_test(test_no_directory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
