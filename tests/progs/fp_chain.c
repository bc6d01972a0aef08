// SPDX-License-Identifier: GPL-2.0
/*
 * fp_chain: a program with a known user call chain, for testing user stack
 * traces. Built with frame pointers and no inlining, so a frame-pointer
 * unwind sees exactly main -> a -> b -> c. c() enters the kernel with a
 * raw syscall instruction, so the first user frame is inside c() itself
 * (a libc wrapper built without frame pointers would hide it).
 *
 *   fp_chain sleep MS [COUNT]       COUNT times: main->a->b->c->nanosleep(MS)
 *   fp_chain recurse DEPTH MS       main->a->b->rec x DEPTH->c->nanosleep(MS)
 *   fp_chain read                   main->a->b->c->read(0) (blocks on stdin)
 *   fp_chain threads N MS COUNT     N threads, thread i doing `recurse i MS`
 *                                   COUNT times (prints each thread's tid)
 *   fp_chain spawn N                N short-lived children doing `sleep 1 1`
 *   fp_chain exec PROG [ARG]...     main->a->b->c->execve(PROG, [PROG, ARG...])
 *   fp_chain sleep-exec MS COUNT PROG [ARG]...
 *                                   `sleep MS COUNT`, then `exec PROG [ARG]...`
 *   fp_chain spawn-exec N MS PROG [ARG]...
 *                                   N children one after the other, each
 *                                   main->a->b->c->execve(PROG, ...), waited
 *                                   for; then sleeps MS (a shell outlives its
 *                                   children)
 *   fp_chain cpu N MODE...          MODE on CPU N alone (moved there first)
 *
 * Prints "fp_chain pid=PID" on stdout before it starts.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline __attribute__((always_inline)) long
raw_syscall3(long nr, long a1, long a2, long a3)
{
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(nr), "D"(a1), "S"(a2), "d"(a3)
		     : "rcx", "r11", "memory");
	return ret;
}

static int mode_read;
static long sleep_ms;
static char **exec_argv;	/* exec mode: PROG and its arguments */
extern char **environ;

__attribute__((noinline)) void c(void)
{
	struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };
	char buf[64];

	if (exec_argv)
		raw_syscall3(SYS_execve, (long)exec_argv[0], (long)exec_argv, (long)environ);
	else if (mode_read)
		raw_syscall3(SYS_read, 0, (long)buf, sizeof(buf));
	else
		raw_syscall3(SYS_nanosleep, (long)&ts, 0, 0);
	asm volatile("" ::: "memory");	/* keep the frame */
}

__attribute__((noinline)) void rec(int depth)
{
	if (depth > 0)
		rec(depth - 1);
	else
		c();
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) void b(int depth)
{
	if (depth)
		rec(depth - 1);
	else
		c();
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) void a(int depth)
{
	b(depth);
	asm volatile("" ::: "memory");
}

static long thread_count;

/*
 * Thread i recurses i deep, so that a stack tells which thread it belongs
 * to: a stack stitched to the wrong thread shows the wrong depth.
 */
static void *thread_fn(void *arg)
{
	long depth = (long)arg, count = thread_count;

	printf("fp_chain thread tid=%ld depth=%ld\n", syscall(SYS_gettid), depth);
	fflush(stdout);
	while (count-- > 0)
		a(depth);
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: fp_chain [cpu N] sleep MS [COUNT] | recurse DEPTH MS | read |\n"
			"                threads N MS COUNT | spawn N | exec PROG [ARG]... |\n"
			"                sleep-exec MS COUNT PROG [ARG]... |\n"
			"                spawn-exec N MS PROG [ARG]...\n");
	return 2;
}

int main(int argc, char **argv)
{
	long count = 1, depth = 0, i, n;

	if (argc < 2)
		return usage();

	printf("fp_chain pid=%d\n", getpid());
	fflush(stdout);

	if (!strcmp(argv[1], "cpu") && argc >= 4) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(argv[2]), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("fp_chain: sched_setaffinity");
			return 1;
		}
		argv += 2;
		argc -= 2;
	}

	if (!strcmp(argv[1], "sleep") && argc >= 3) {
		sleep_ms = atol(argv[2]);
		if (argc >= 4)
			count = atol(argv[3]);
	} else if (!strcmp(argv[1], "recurse") && argc >= 4) {
		depth = atol(argv[2]);
		sleep_ms = atol(argv[3]);
	} else if (!strcmp(argv[1], "read")) {
		mode_read = 1;
	} else if (!strcmp(argv[1], "threads") && argc >= 5) {
		pthread_t *t;

		n = atol(argv[2]);
		sleep_ms = atol(argv[3]);
		count = atol(argv[4]);
		t = calloc(n, sizeof(*t));
		if (!t)
			return 1;
		thread_count = count;
		for (i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, thread_fn, (void *)i))
				return 1;
		for (i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		free(t);
		return 0;
	} else if ((!strcmp(argv[1], "exec") && argc >= 3) ||
		   (!strcmp(argv[1], "sleep-exec") && argc >= 5)) {
		if (!strcmp(argv[1], "sleep-exec")) {
			sleep_ms = atol(argv[2]);
			count = atol(argv[3]);
			while (count-- > 0)
				a(0);
			argv += 2;
		}
		exec_argv = argv + 2;
		a(0);
		fprintf(stderr, "fp_chain: cannot execute %s\n", exec_argv[0]);
		return 1;
	} else if (!strcmp(argv[1], "spawn-exec") && argc >= 5) {
		struct timespec linger;

		n = atol(argv[2]);
		linger.tv_sec = atol(argv[3]) / 1000;
		linger.tv_nsec = atol(argv[3]) % 1000 * 1000000L;
		exec_argv = argv + 4;
		for (i = 0; i < n; i++) {
			pid_t pid = fork();

			if (pid == 0) {
				a(0);
				_exit(127);
			}
			if (pid < 0 || waitpid(pid, NULL, 0) != pid)
				return 1;
		}
		nanosleep(&linger, NULL);
		return 0;
	} else if (!strcmp(argv[1], "spawn") && argc >= 3) {
		n = atol(argv[2]);
		sleep_ms = 1;
		for (i = 0; i < n; i++) {
			pid_t pid = fork();

			if (pid == 0) {
				a(0);
				_exit(0);
			}
			if (pid < 0)
				return 1;
		}
		while (wait(NULL) > 0)
			;
		return 0;
	} else {
		return usage();
	}

	while (count-- > 0)
		a(depth);
	return 0;
}
