// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong: a context-switch-heavy load for measuring the daemon. Two
 * processes pinned to two CPUs pass one byte back and forth over two pipes
 * for SECONDS; every pass blocks one side, so each CPU switches to idle and
 * back for every byte.
 *
 *   pingpong SECONDS [CPU_A CPU_B [RATE]]   (default CPUs 0 and 1)
 *
 * CPU_A may equal CPU_B (then the two switch directly to each other, the
 * highest switch rate). RATE caps the round trips per second (0: none).
 * Prints "pingpong pid=PID" first, and the round trips per second at the end.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "load.h"

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, start;
	int cpu_a = argc > 3 ? atoi(argv[2]) : 0;
	int cpu_b = argc > 3 ? atoi(argv[3]) : 1;
	double rate = argc > 4 ? atof(argv[4]) : 0;
	int ab[2], ba[2];
	unsigned long trips = 0;
	char c = 0;
	pid_t child;

	if (pipe(ab) || pipe(ba)) {
		perror("pipe");
		return 1;
	}
	printf("pingpong pid=%d\n", (int)getpid());
	fflush(stdout);
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child) {
		close(ab[1]);
		close(ba[0]);
		pin(cpu_b);
		while (read(ab[0], &c, 1) == 1 && write(ba[1], &c, 1) == 1)
			;
		_exit(0);
	}
	close(ab[0]);
	close(ba[1]);
	pin(cpu_a);
	start = now();
	while (now() - start < secs) {
		int batch = rate > 0 && rate < 10000 ? 10 : 1000;

		/* Ahead of the asked rate: wait (the sleep's switches are few). */
		while (rate > 0 && trips > rate * (now() - start))
			usleep(1000);
		for (int i = 0; i < batch; i++) {
			if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) {
				perror("pingpong");
				return 1;
			}
		}
		trips += batch;
	}
	close(ab[1]);
	waitpid(child, NULL, 0);
	printf("pingpong: %.0f round trips/s\n", trips / (now() - start));
	return 0;
}
