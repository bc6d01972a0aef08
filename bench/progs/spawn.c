// SPDX-License-Identifier: GPL-2.0
/*
 * spawn: a load of short-lived processes, the case an always-on tracer
 * meets on build servers and CI machines. One spawner per CPU (pinned)
 * forks and execs this program again as a child that returns at once,
 * and waits for it, for SECONDS. Every child is a new process: new pid,
 * new maps, a process that is gone by the time its records are read.
 *
 *   spawn SECONDS [CPU_A CPU_B]   (default CPUs 0 and 1; equal: one spawner)
 *
 * Prints "spawn pid=PID" first, and the processes started per second at
 * the end. Exit status 1 when a fork or exec failed.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../tests/progs/load.h"

/* Fork and exec @self as a child until @secs are up; the children started, -1 on failure. */
static long spawner(const char *self, int cpu, double secs)
{
	char *child_argv[] = { (char *)self, "--child", NULL };
	double start;
	long n = 0;

	pin(cpu);
	start = now();
	while (now() - start < secs) {
		pid_t pid = fork();
		int status;

		if (pid < 0) {
			perror("spawn: fork");
			return -1;
		}
		if (!pid) {
			execv("/proc/self/exe", child_argv);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "spawn: child %d failed\n", (int)pid);
			return -1;
		}
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	double secs, start, took;
	int cpu_a, cpu_b, status, failed = 0;
	long total = 0, n;
	int fd[2];
	pid_t other = -1;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return 0;
	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: spawn SECONDS [CPU_A CPU_B]\n");
		return 2;
	}
	secs = atof(argv[1]);
	cpu_a = argc > 3 ? atoi(argv[2]) : 0;
	cpu_b = argc > 3 ? atoi(argv[3]) : 1;
	printf("spawn pid=%d\n", (int)getpid());
	fflush(stdout);
	if (pipe(fd)) {
		perror("spawn: pipe");
		return 1;
	}
	start = now();
	if (cpu_b != cpu_a) {
		other = fork();
		if (other < 0) {
			perror("spawn: fork");
			return 1;
		}
		if (!other) {
			close(fd[0]);
			n = spawner(argv[0], cpu_b, secs);
			if (write(fd[1], &n, sizeof(n)) != sizeof(n))
				_exit(1);
			_exit(n < 0);
		}
	}
	close(fd[1]);
	n = spawner(argv[0], cpu_a, secs);
	failed |= n < 0;
	total += n > 0 ? n : 0;
	if (other > 0) {
		if (read(fd[0], &n, sizeof(n)) == sizeof(n) && n > 0)
			total += n;
		else
			failed = 1;
		waitpid(other, &status, 0);
	}
	took = now() - start;
	printf("spawn: %.0f processes/s\n", total / took);
	return failed;
}
