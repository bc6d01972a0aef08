// SPDX-License-Identifier: GPL-2.0
/*
 * loadgen: benchmark workloads whose user stacks are deep and exact. Built
 * with frame pointers and no inlining (like tests/progs); every syscall is
 * a raw `syscall` instruction inside leaf(), so a frame-pointer unwind from
 * the kernel sees leaf, rec x (DEPTH + 1), run (or main), main, then libc.
 *
 *   loadgen syscall N DEPTH             N getppid() calls
 *   loadgen pingpong N DEPTH CPU_A CPU_B
 *                                       two processes pinned to CPU_A and
 *                                       CPU_B pass a byte N times each way
 *                                       over two pipes (a context switch
 *                                       per pass)
 *
 * Prints "loadgen pid=PID" first, then "elapsed_ns=NS ops=N" for the loop
 * alone (set-up and process start excluded).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum role { SYSCALLS, PING, PONG };

static long nr_ops;
static enum role role;
static int fd_in = -1, fd_out = -1;

static inline __attribute__((always_inline)) long raw3(long nr, long a1, long a2, long a3)
{
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(nr), "D"(a1), "S"(a2), "d"(a3)
		     : "rcx", "r11", "memory");
	return ret;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The loop: every kernel entry of the workload is from here. */
__attribute__((noinline)) int leaf(void)
{
	char c = 0;
	long i;

	for (i = 0; i < nr_ops; i++) {
		switch (role) {
		case SYSCALLS:
			raw3(SYS_getppid, 0, 0, 0);
			break;
		case PING:
			if (raw3(SYS_write, fd_out, (long)&c, 1) != 1 ||
			    raw3(SYS_read, fd_in, (long)&c, 1) != 1)
				return 1;
			break;
		case PONG:
			if (raw3(SYS_read, fd_in, (long)&c, 1) != 1 ||
			    raw3(SYS_write, fd_out, (long)&c, 1) != 1)
				return 1;
			break;
		}
	}
	asm volatile("" ::: "memory");
	return 0;
}

__attribute__((noinline)) int rec(int depth)
{
	int ret = depth > 0 ? rec(depth - 1) : leaf();

	asm volatile("" ::: "memory");
	return ret;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("loadgen: sched_setaffinity");
}

__attribute__((noinline)) int run(int depth)
{
	unsigned long long t0, t1;
	int ret;

	t0 = now_ns();
	ret = rec(depth);
	t1 = now_ns();
	if (!ret)
		printf("elapsed_ns=%llu ops=%ld\n", t1 - t0, nr_ops);
	return ret;
}

static int usage(void)
{
	fprintf(stderr, "usage: loadgen syscall N DEPTH | pingpong N DEPTH CPU_A CPU_B\n");
	return 2;
}

int main(int argc, char **argv)
{
	int depth, ab[2], ba[2], ret;
	pid_t child;

	if (argc < 4)
		return usage();
	nr_ops = atol(argv[2]);
	depth = atoi(argv[3]);
	printf("loadgen pid=%d\n", getpid());
	fflush(stdout);
	if (!strcmp(argv[1], "syscall"))
		return run(depth);
	if (strcmp(argv[1], "pingpong") || argc < 6)
		return usage();
	if (pipe(ab) || pipe(ba)) {
		perror("loadgen: pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("loadgen: fork");
		return 1;
	}
	if (!child) {
		pin(atoi(argv[5]));
		close(ab[1]);
		close(ba[0]);
		role = PONG;
		fd_in = ab[0];
		fd_out = ba[1];
		_exit(rec(depth));
	}
	pin(atoi(argv[4]));
	close(ab[0]);
	close(ba[1]);
	role = PING;
	fd_out = ab[1];
	fd_in = ba[0];
	ret = run(depth);
	close(fd_out);
	waitpid(child, NULL, 0);
	return ret;
}
