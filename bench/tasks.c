// SPDX-License-Identifier: GPL-2.0
/*
 * Blocked copies of a test program (see tasks.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tasks.h"

/* Wait for the program's "NAME pid=PID" line: it has exec'ed and mapped itself. */
static int wait_ready(int fd)
{
	char buf[128];
	size_t len = 0;
	ssize_t n;

	while (len < sizeof(buf) - 1) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		len += n;
		if (memchr(buf, '\n', len))
			return 0;
	}
	return -EIO;
}

int tasks_start(struct bench_tasks *t, const char *prog, int nr)
{
	int in[2], out[2], ret;
	pid_t pid;

	memset(t, 0, sizeof(*t));
	if (nr < 1 || nr > (int)(sizeof(t->pids) / sizeof(t->pids[0])))
		return -EINVAL;
	while (t->nr < nr) {
		if (pipe2(in, O_CLOEXEC))
			goto fail_errno;
		if (pipe2(out, O_CLOEXEC)) {
			close(in[0]);
			close(in[1]);
			goto fail_errno;
		}
		pid = fork();
		if (pid < 0) {
			close(in[0]);
			close(in[1]);
			close(out[0]);
			close(out[1]);
			goto fail_errno;
		}
		if (!pid) {
			/* Same layout in every copy: one set of libc addresses fits all. */
			personality(ADDR_NO_RANDOMIZE);
			dup2(in[0], 0);
			dup2(out[1], 1);
			execl(prog, prog, "read", (char *)NULL);
			_exit(127);
		}
		close(in[0]);
		close(out[1]);
		t->pids[t->nr] = pid;
		t->stdin_fd[t->nr] = in[1];
		t->nr++;
		ret = wait_ready(out[0]);
		close(out[0]);
		if (ret)
			goto fail;
	}
	return 0;
fail_errno:
	ret = -errno;
fail:
	tasks_stop(t);
	return ret;
}

void tasks_stop(struct bench_tasks *t)
{
	for (int i = 0; i < t->nr; i++) {
		close(t->stdin_fd[i]);
		kill(t->pids[i], SIGTERM);
		waitpid(t->pids[i], NULL, 0);
	}
	t->nr = 0;
}
