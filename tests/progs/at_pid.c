// SPDX-License-Identifier: GPL-2.0
/*
 * at_pid: run a program as a given pid, the way a busy machine reuses the
 * pid of a process that exited, for the tests of pid reuse. clone3() with
 * set_tid (Linux 5.5+, CAP_SYS_ADMIN in the pid namespace; the pid must
 * be free), then exec; waits for it and exits with its status.
 *
 *   at_pid PID PROGRAM [ARG]...
 */
#define _GNU_SOURCE
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct clone_args args;
	pid_t want, child;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: at_pid PID PROGRAM [ARG]...\n");
		return 2;
	}
	want = (pid_t)atoi(argv[1]);
	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	args.set_tid = (uint64_t)(uintptr_t)&want;
	args.set_tid_size = 1;
	child = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (child < 0) {
		perror("at_pid: clone3");
		return 1;
	}
	if (!child) {
		execv(argv[2], argv + 2);
		perror("at_pid: exec");
		_exit(127);
	}
	if (waitpid(child, &status, 0) != child)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
