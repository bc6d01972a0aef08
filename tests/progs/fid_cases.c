// SPDX-License-Identifier: GPL-2.0
/*
 * fid_cases: user stacks where naming frames from the recorded file
 * identity is hard. Built with frame pointers, like fp_chain.
 *
 *   fid_cases dlopen LIB N MS     N times: dlopen LIB, then
 *                                 main->dl_round->fid_lib_sleep->
 *                                 fid_lib_inner->nanosleep(MS), dlclose
 *   fid_cases exec MS PROG ARG... main->x_a->x_b->nanosleep(MS), then
 *                                 execv(PROG) in the same process
 *
 * Prints "fid_cases pid=PID" on stdout before it starts.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "raw_nanosleep.h"

__attribute__((noinline)) static void x_b(long ms)
{
	raw_nanosleep_ms(ms);
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void x_a(long ms)
{
	x_b(ms);
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static int dl_round(const char *lib, long ms)
{
	void (*fn)(long);
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "fid_cases: %s\n", dlerror());
		return -1;
	}
	fn = (void (*)(long))dlsym(h, "fid_lib_sleep");
	if (fn)
		fn(ms);
	dlclose(h);
	asm volatile("" ::: "memory");
	return fn ? 0 : -1;
}

int main(int argc, char **argv)
{
	printf("fid_cases pid=%d\n", getpid());
	fflush(stdout);
	if (argc >= 5 && !strcmp(argv[1], "dlopen")) {
		long n = atol(argv[3]), ms = atol(argv[4]);

		while (n-- > 0)
			if (dl_round(argv[2], ms))
				return 1;
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "exec")) {
		x_a(atol(argv[2]));
		execv(argv[3], argv + 3);
		perror("fid_cases: execv");
		return 1;
	}
	fprintf(stderr, "usage: fid_cases dlopen LIB N MS | exec MS PROG ARG...\n");
	return 2;
}
