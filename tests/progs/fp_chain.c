// SPDX-License-Identifier: GPL-2.0
/*
 * fp_chain: a known user call chain blocked in the kernel, for checking
 * user stacks end to end.
 *
 *   fp_chain [SLEEP_MS [DEPTH [COUNT]]]
 *
 * Calls main -> a -> b -> c, then c -> recurse(DEPTH) -> ... -> recurse(1)
 * when DEPTH > 0, and the innermost function makes a blocking nanosleep of
 * SLEEP_MS (default 10) itself, with an inline `syscall` instruction: the
 * user IP at every sched_switch is then inside c (or recurse), and a
 * frame-pointer unwind gives exactly c, b, a, main (recurse... first).
 * Repeats COUNT times (default 0: until killed). Prints "fp_chain pid=N"
 * first, flushed, so a test can filter on it.
 *
 * Built by the Makefile with frame pointers and without inlining.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static struct timespec pause_ts;
static int depth;

/* The syscall, made from the calling function's own frame (no libc wrapper frame). */
#define BLOCK() do {								\
	long __ret;								\
	__asm__ volatile("syscall"						\
			 : "=a"(__ret)						\
			 : "0"((long)SYS_nanosleep), "D"(&pause_ts), "S"(0L)	\
			 : "rcx", "r11", "memory");				\
	(void)__ret;								\
} while (0)

#ifndef __x86_64__
#undef BLOCK
#define BLOCK() syscall(SYS_nanosleep, &pause_ts, NULL)
#endif

/*
 * No shrink-wrapping: GCC would otherwise set up the frame only on the path
 * that calls on, and the unwind from the syscall would skip the caller.
 */
#define CHAIN __attribute__((noinline, optimize("no-shrink-wrap")))

CHAIN int recurse(int n);
CHAIN int c(void);
CHAIN int b(void);
CHAIN int a(void);

CHAIN int recurse(int n)
{
	if (n > 1)
		return recurse(n - 1) + 1;
	BLOCK();
	return 1;
}

CHAIN int c(void)
{
	if (depth > 0)
		return recurse(depth) + 1;
	BLOCK();
	return 1;
}

CHAIN int b(void)
{
	return c() + 1;
}

CHAIN int a(void)
{
	return b() + 1;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 10;
	long count = argc > 3 ? atol(argv[3]) : 0;
	volatile int sink = 0;

	depth = argc > 2 ? atoi(argv[2]) : 0;
	if (ms < 0 || depth < 0 || count < 0) {
		fprintf(stderr, "usage: fp_chain [SLEEP_MS [DEPTH [COUNT]]]\n");
		return 2;
	}
	pause_ts.tv_sec = ms / 1000;
	pause_ts.tv_nsec = (ms % 1000) * 1000000L;
	printf("fp_chain pid=%d\n", (int)getpid());
	fflush(stdout);
	for (long i = 0; !count || i < count; i++)
		sink += a();
	return 0;
}
