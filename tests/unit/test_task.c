// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for task identity (lib/task.c), on a fake /proc tree the test
 * builds: the thread -> process cache (lookups, caching, expiry, notes from
 * records, the sweep of exited processes) and the task check of recorded
 * traces (same name: its process; renamed, reused or gone: 0; answers
 * cached per (tid, comm)).
 */
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

#include <trace-defer/task.h>

#include "../../lib/task_local.h"

#define SEC 1000000000ULL

static char root[64];

static void fake_task(int tid, int tgid)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, tid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/status", root, tid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "Name:\tfake\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nNgid:\t0\n"
		   "Pid:\t%d\n", tgid, tid);
	fclose(f);
}

static void set_comm(int tid, const char *comm)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/comm", root, tid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", comm);
	fclose(f);
}

static void remove_task(int tid)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%d/status", root, tid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d/comm", root, tid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d/stat", root, tid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d", root, tid);
	rmdir(path);
}

static int setup(void **state)
{
	snprintf(root, sizeof(root), "/tmp/td-task-test.XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void test_lookup_and_cache(void **state)
{
	struct td_tgid_cache *tc = td_tgid_new(root);

	assert_non_null(tc);
	fake_task(101, 100);
	assert_int_equal(td_tgid_lookup(tc, 101, 1 * SEC), 100);
	/* Cached: the file going away does not matter within the TTL... */
	remove_task(101);
	assert_int_equal(td_tgid_lookup(tc, 101, 2 * SEC), 100);
	/* ...after it /proc is asked again: gone, so the last answer stands */
	assert_int_equal(td_tgid_lookup(tc, 101, 30 * SEC), 100);
	/* Thread id reused by another process. */
	fake_task(101, 555);
	assert_int_equal(td_tgid_lookup(tc, 101, 31 * SEC), 555);
	assert_int_equal(td_tgid_lookup(tc, 0, 31 * SEC), 0);
	assert_int_equal(td_tgid_lookup(tc, -5, 31 * SEC), 0);
	assert_int_equal(td_tgid_lookup(tc, 99999, 31 * SEC), 0);
	remove_task(101);
	td_tgid_free(tc);
}

static void test_fresh(void **state)
{
	struct td_tgid_cache *tc = td_tgid_new(root);
	bool fresh;

	fake_task(600, 600);
	fake_task(601, 600);
	fake_task(701, 700);
	/* First thread of a process: fresh. */
	assert_int_equal(td_tgid_lookup_fresh(tc, 601, 1 * SEC, &fresh), 600);
	assert_true(fresh);
	/* Cached: not fresh. */
	assert_int_equal(td_tgid_lookup_fresh(tc, 601, 2 * SEC, &fresh), 600);
	assert_false(fresh);
	/* The leader itself is news even if a thread was seen (it names the process). */
	assert_int_equal(td_tgid_lookup_fresh(tc, 600, 2 * SEC, &fresh), 600);
	assert_true(fresh);
	/* A thread whose leader is known: not fresh. */
	fake_task(602, 600);
	assert_int_equal(td_tgid_lookup_fresh(tc, 602, 2 * SEC, &fresh), 600);
	assert_false(fresh);
	/* A thread whose process is gone from /proc keeps its last answer. */
	remove_task(601);
	assert_int_equal(td_tgid_lookup_fresh(tc, 601, 60 * SEC, &fresh), 600);
	assert_false(fresh);
	remove_task(600);
	remove_task(602);
	remove_task(701);
	td_tgid_free(tc);
}

static void test_note(void **state)
{
	struct td_tgid_cache *tc = td_tgid_new(root);

	/* What a record said wins over /proc, which knows nothing here. */
	td_tgid_note(tc, 201, 200, 1 * SEC);
	assert_int_equal(td_tgid_lookup(tc, 201, 2 * SEC), 200);
	td_tgid_note(tc, 201, 300, 3 * SEC);
	assert_int_equal(td_tgid_lookup(tc, 201, 4 * SEC), 300);
	td_tgid_free(tc);
}

static int gone_list[16], nr_gone, nr_gone_all;

static void gone(int tgid, void *arg)
{
	(void)arg;
	nr_gone_all++;
	if (nr_gone < 16)
		gone_list[nr_gone++] = tgid;
}

static void test_sweep(void **state)
{
	struct td_tgid_cache *tc = td_tgid_new(root);

	fake_task(400, 400);
	fake_task(401, 400);
	fake_task(500, 500);
	assert_int_equal(td_tgid_lookup(tc, 400, 1 * SEC), 400);
	assert_int_equal(td_tgid_lookup(tc, 401, 1 * SEC), 400);
	assert_int_equal(td_tgid_lookup(tc, 500, 1 * SEC), 500);
	/* Process 500 exits: kept one sweep (its events may still be pending)... */
	remove_task(500);
	nr_gone = 0;
	td_tgid_sweep(tc, gone, NULL);
	assert_int_equal(nr_gone, 0);
	assert_int_equal(td_tgid_lookup(tc, 500, 1 * SEC), 500);
	/* ...then swept and reported; 400 stays. */
	td_tgid_sweep(tc, gone, NULL);
	assert_int_equal(nr_gone, 1);
	assert_int_equal(gone_list[0], 500);
	assert_int_equal(td_tgid_lookup(tc, 401, 2 * SEC), 400);
	/* The swept entry is not served from the cache any more. */
	assert_int_equal(td_tgid_lookup(tc, 500, 2 * SEC), 0);
	remove_task(400);
	remove_task(401);
	td_tgid_free(tc);
}

/*
 * A sweep over more processes than the first guess of the directory's
 * size, past names that are not processes: every running one kept, every
 * exited one reported once, after its second sweep.
 */
static void test_sweep_many(void **state)
{
	struct td_tgid_cache *tc = td_tgid_new(root);
	char path[128];
	int pid;

	snprintf(path, sizeof(path), "%s/self", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/12abc", root);
	mkdir(path, 0755);
	for (pid = 1000; pid < 4000; pid++) {
		fake_task(pid, pid);
		assert_int_equal(td_tgid_lookup(tc, pid, 1 * SEC), pid);
	}
	nr_gone = nr_gone_all = 0;
	td_tgid_sweep(tc, gone, NULL);
	td_tgid_sweep(tc, gone, NULL);
	assert_int_equal(nr_gone_all, 0);
	/* Every third exits; "12abc" is not process 12. */
	for (pid = 1000; pid < 4000; pid += 3)
		remove_task(pid);
	td_tgid_note(tc, 12, 12, 1 * SEC);
	td_tgid_sweep(tc, NULL, NULL);
	td_tgid_sweep(tc, gone, NULL);
	/* 1000, 1003, ... 3999, and 12 */
	assert_int_equal(nr_gone_all, 1001);
	for (int i = 0; i < nr_gone; i++)
		assert_true(gone_list[i] == 12 || (gone_list[i] - 1000) % 3 == 0);
	for (pid = 1000; pid < 4000; pid++)
		assert_int_equal(td_tgid_lookup(tc, pid, 2 * SEC), (pid - 1000) % 3 ? pid : 0);
	assert_int_equal(td_tgid_lookup(tc, 12, 2 * SEC), 0);
	for (pid = 1000; pid < 4000; pid++)
		if ((pid - 1000) % 3)
			remove_task(pid);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/self", root);
	rmdir(path);
	td_tgid_free(tc);
}

static void test_many(void **state)
{
	struct td_tgid_cache *tc = td_tgid_new(root);

	/* Far more notes than slots: the table empties itself, never overflows. */
	for (int i = 1; i <= 200000; i++)
		td_tgid_note(tc, i, i + 1, 1 * SEC);
	assert_int_equal(td_tgid_lookup(tc, 200000, 1 * SEC), 200001);
	td_tgid_free(tc);
}

struct gone_seen {
	int calls;
	int live_told;		/* calls for the process that still runs */
	int live;
};

static void gone_count(int tgid, void *arg)
{
	struct gone_seen *g = arg;

	g->calls++;
	g->live_told += tgid == g->live;
}

/*
 * A cache full of short-lived processes starts again: each process it
 * held that is gone then is told gone at the next sweep (what callers
 * keep of it goes too; no sweep would ever see it again), never one that
 * runs.
 */
static void test_many_gone_told(void **state)
{
	struct td_tgid_cache *tc = td_tgid_new(root);
	struct gone_seen g = { .live = 7 };

	(void)state;
	assert_non_null(tc);
	fake_task(7, 7);
	td_tgid_set_gone(tc, gone_count, &g);
	td_tgid_note(tc, 7, 7, 1 * SEC);
	for (int i = 100; i < 100 + 40000; i++)
		td_tgid_note(tc, i, i, 1 * SEC);
	/* Started again once, at the 32,769th thread: told at the next sweep. */
	assert_int_equal(g.calls, 0);
	td_tgid_sweep(tc, gone_count, &g);
	/* 32,767 of them gone, and 7 runs; the others wait for a second sweep. */
	assert_int_equal(g.calls, 32767);
	assert_int_equal(g.live_told, 0);
	td_tgid_sweep(tc, gone_count, &g);
	assert_int_equal(g.calls, 32767 + 7233);
	remove_task(7);
	td_tgid_free(tc);
}

static void test_check(void **state)
{
	struct td_task_check *tc = td_task_check_new(root);

	assert_non_null(tc);
	fake_task(201, 200);
	set_comm(201, "worker");
	assert_int_equal(td_task_check(tc, 201, "worker", 0), 200);
	/* Another name in the trace: not this task. */
	assert_int_equal(td_task_check(tc, 201, "postgres", 0), 0);
	/* Unknown names prove nothing. */
	assert_int_equal(td_task_check(tc, 201, "<...>", 0), 0);
	assert_int_equal(td_task_check(tc, 201, "", 0), 0);
	assert_int_equal(td_task_check(tc, 0, "worker", 0), 0);
	assert_int_equal(td_task_check(tc, 201, "a-name-longer-than-comm", 0), 0);
	/* Gone. */
	assert_int_equal(td_task_check(tc, 999, "worker", 0), 0);
	/* Asked once per (tid, comm): the answer stays though /proc changed. */
	assert_int_equal(td_task_check(tc, 201, "worker", 0), 200);
	remove_task(201);
	assert_int_equal(td_task_check(tc, 201, "worker", 0), 200);
	/* The tid reused by a task of another name, seen under that name. */
	fake_task(201, 300);
	set_comm(201, "cron");
	assert_int_equal(td_task_check(tc, 201, "cron", 0), 300);
	td_task_check_free(tc);
}

/*
 * /proc/TID/stat with a comm that has what a parser trips on, in @state,
 * started @ticks after boot.
 */
static void set_stat(int tid, unsigned long long ticks, char state)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/stat", root, tid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%d (a) b (c)) %c 1 %d %d 0 -1 4194560 10 0 0 0 0 0 0 0 20 0 1 0 %llu "
		   "1000 100 18446744073709551615\n", tid, state, tid, tid, ticks);
	fclose(f);
}

static void set_start(int tid, unsigned long long ticks)
{
	set_stat(tid, ticks, 'S');
}

/* CLOCK_BOOTTIME - CLOCK_MONOTONIC: what td_task_check() takes off a start. */
static uint64_t suspended(void)
{
	struct timespec b, m;
	int64_t d;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_BOOTTIME, &b);
	d = (int64_t)(b.tv_sec - m.tv_sec) * 1000000000LL + (b.tv_nsec - m.tv_nsec);
	return d > 0 ? (uint64_t)d : 0;
}

/*
 * A tid reused by a task of the same name: told apart by when it started
 * (boot time less suspend). The trace saw the task at @at_ns: one started
 * more than 100 ms later is another.
 */
static void test_check_start(void **state)
{
	struct td_task_check *tc = td_task_check_new(root);
	uint64_t tick = 1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK), sec = 1000000000ULL;
	uint64_t start;

	(void)state;
	assert_non_null(tc);
	fake_task(211, 210);
	set_comm(211, "sh");
	set_start(211, 100000);
	/* Suspend since this was measured moves the start earlier, never later. */
	start = 100000 * tick - suspended();
	/* Seen after it started, at it, or within the clocks' drift before: this task. */
	assert_int_equal(td_task_check(tc, 211, "sh", start + 10 * sec), 210);
	assert_int_equal(td_task_check(tc, 211, "sh", start), 210);
	assert_int_equal(td_task_check(tc, 211, "sh", start - sec / 20), 210);
	/* Seen well before it started: another sh had the tid. */
	assert_int_equal(td_task_check(tc, 211, "sh", start - sec / 5), 0);
	assert_int_equal(td_task_check(tc, 211, "sh", 1), 0);
	/* No time: the name alone. */
	assert_int_equal(td_task_check(tc, 211, "sh", 0), 210);
	remove_task(211);
	/* No stat to read: the start is unknown, the name alone tells. */
	fake_task(212, 212);
	set_comm(212, "cron");
	assert_int_equal(td_task_check(tc, 212, "cron", 1), 212);
	remove_task(212);
	td_task_check_free(tc);
}

/*
 * A process that exited and is not reaped yet (a zombie) still has its
 * /proc entry and name, but no maps: nothing of it can be named, it is
 * taken as gone.
 */
static void test_check_zombie(void **state)
{
	struct td_task_check *tc = td_task_check_new(root);

	(void)state;
	assert_non_null(tc);
	fake_task(221, 221);
	set_comm(221, "fp_chain");
	set_stat(221, 100000, 'Z');
	assert_int_equal(td_task_check(tc, 221, "fp_chain", 0), 0);
	remove_task(221);
	/* The same, running: its process. */
	fake_task(222, 222);
	set_comm(222, "fp_chain");
	set_stat(222, 100000, 'R');
	assert_int_equal(td_task_check(tc, 222, "fp_chain", 0), 222);
	remove_task(222);
	td_task_check_free(tc);
}

static void write_cmdlines(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A thread's name now: /proc while it runs, the kernel's saved_cmdlines once gone. */
static void test_comm(void **state)
{
	struct td_tgid_cache *tc = td_tgid_new(root);
	char comm[16], cmdlines[128];

	assert_non_null(tc);
	fake_task(301, 300);
	set_comm(301, "a-name-longer-than-comm");
	assert_true(td_tgid_comm(tc, 301, comm));
	assert_string_equal(comm, "a-name-longer-t");	/* cut as the kernel cuts */
	/* Gone, and no saved_cmdlines given: unknown. */
	assert_false(td_tgid_comm(tc, 302, comm));

	snprintf(cmdlines, sizeof(cmdlines), "%s/saved_cmdlines", root);
	write_cmdlines(cmdlines, "302 short-lived\n8494 other\n");
	assert_int_equal(td_tgid_set_cmdlines(tc, cmdlines), 0);
	assert_true(td_tgid_comm(tc, 302, comm));
	assert_string_equal(comm, "short-lived");
	/* /proc first: a running thread is named by it, not by the kernel's list. */
	write_cmdlines(cmdlines, "301 old-name\n302 short-lived\n");
	td_tgid_cmdlines_stale(tc);
	assert_true(td_tgid_comm(tc, 301, comm));
	assert_string_equal(comm, "a-name-longer-t");
	assert_true(td_tgid_comm(tc, 302, comm));	/* the list read now */
	assert_string_equal(comm, "short-lived");
	/* Read once until stale: a pid reused since is named anew only then. */
	write_cmdlines(cmdlines, "302 reused\n");
	assert_true(td_tgid_comm(tc, 302, comm));
	assert_string_equal(comm, "short-lived");
	td_tgid_cmdlines_stale(tc);
	assert_true(td_tgid_comm(tc, 302, comm));
	assert_string_equal(comm, "reused");
	/* Not in the list (any more), or the kernel's own unknown: unknown. */
	assert_false(td_tgid_comm(tc, 8494, comm));
	write_cmdlines(cmdlines, "303 <...>\n");
	td_tgid_cmdlines_stale(tc);
	assert_false(td_tgid_comm(tc, 303, comm));
	assert_false(td_tgid_comm(tc, 0, comm));
	remove_task(301);
	unlink(cmdlines);
	td_tgid_free(tc);
}

/*
 * An always-on daemon sees far more threads than the cache holds: the
 * cache starts again, and keeps its saved_cmdlines (a thread gone after
 * that is still named from the kernel's list).
 */
static void test_comm_after_many(void **state)
{
	struct td_tgid_cache *tc = td_tgid_new(root);
	char comm[16], cmdlines[128];

	(void)state;
	assert_non_null(tc);
	snprintf(cmdlines, sizeof(cmdlines), "%s/saved_cmdlines", root);
	write_cmdlines(cmdlines, "302 short-lived\n");
	assert_int_equal(td_tgid_set_cmdlines(tc, cmdlines), 0);
	assert_true(td_tgid_comm(tc, 302, comm));
	for (int i = 1000; i <= 100000; i++)
		td_tgid_note(tc, i, i, 1 * SEC);
	write_cmdlines(cmdlines, "302 short-lived\n303 later\n");
	td_tgid_cmdlines_stale(tc);
	assert_true(td_tgid_comm(tc, 303, comm));
	assert_string_equal(comm, "later");
	unlink(cmdlines);
	td_tgid_free(tc);
}

/* Write @text as @tid's status (a task whose fake_task() status is replaced). */
static void write_status(int tid, const char *text)
{
	char path[128];
	FILE *f;

	fake_task(tid, tid);
	snprintf(path, sizeof(path), "%s/%d/status", root, tid);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/*
 * A container's process: the last pid of its NSpid line, past a long
 * Groups line; ours (one pid), without the line (older kernels), or gone:
 * the pid itself.
 */
static void test_nspid(void **state)
{
	char text[4096], *p = text;
	int i;

	p += sprintf(p, "Name:\tnode\nTgid:\t4242\nGroups:\t");
	for (i = 0; i < 200; i++)
		p += sprintf(p, "%d ", 100000 + i);
	sprintf(p, "\nNStgid:\t4242\t17\t1\nNSpid:\t4242\t17\t1\nNSpgid:\t4242\t17\t1\n");
	write_status(4242, text);
	assert_int_equal(td_task_nspid(root, 4242), 1);
	write_status(4243, "Name:\tsh\nNSpid:\t4243\nNSpgid:\t4243\n");
	assert_int_equal(td_task_nspid(root, 4243), 4243);
	write_status(4244, "Name:\told\nTgid:\t4244\n");
	assert_int_equal(td_task_nspid(root, 4244), 4244);
	assert_int_equal(td_task_nspid(root, 4245), 4245);
	remove_task(4242);
	remove_task(4243);
	remove_task(4244);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_and_cache),
		cmocka_unit_test(test_fresh),
		cmocka_unit_test(test_note),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_sweep_many),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_many_gone_told),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_check_start),
		cmocka_unit_test(test_check_zombie),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_comm_after_many),
		cmocka_unit_test(test_nspid),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
