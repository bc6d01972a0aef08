// SPDX-License-Identifier: GPL-2.0
/*
 * Perf maps seen as they are written (see jitwatch.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "jitwatch.h"

/*
 * A map made, not each write to it: the file is kept open from then on
 * (perfmap.h), and what the JIT writes is read through it when looked
 * for. Each write to any file of /tmp would wake the reader (a compiler's
 * temporary files), and a reader writing its output there, itself.
 */
#define WATCH_MASK	(IN_CREATE | IN_MOVED_TO)

int td_jitwatch_open(const char *proc_root, const char *dir)
{
	char path[PATH_MAX];
	int fd, err;

	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (proc_root && snprintf(path, sizeof(path), "%s/1/root%s", proc_root, dir) <
			 (int)sizeof(path) &&
	    inotify_add_watch(fd, path, WATCH_MASK | IN_ONLYDIR) >= 0)
		return fd;
	if (inotify_add_watch(fd, dir, WATCH_MASK | IN_ONLYDIR) >= 0)
		return fd;
	err = errno;
	close(fd);
	return -err;
}

/* The pid of a "perf-PID.map" name, or 0. */
static int map_pid(const char *name)
{
	char *end;
	long pid;

	if (strncmp(name, "perf-", 5) || name[5] < '1' || name[5] > '9')
		return 0;
	errno = 0;
	pid = strtol(name + 5, &end, 10);
	if (errno || pid <= 0 || pid > INT_MAX || strcmp(end, ".map"))
		return 0;
	return (int)pid;
}

int td_jitwatch_read(int fd, int *pids, int max)
{
	/* As inotify(7) says: aligned as the events, room for one with the longest name. */
	char buf[4096 + sizeof(struct inotify_event) + NAME_MAX + 1]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	int nr = 0;

	while (nr < max) {
		ssize_t len = read(fd, buf, sizeof(buf));

		if (len < 0)
			return errno == EAGAIN || errno == EINTR ? nr : -errno;
		if (!len)
			return nr;
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			int pid = ev->len ? map_pid(ev->name) : 0;
			int i;

			p += sizeof(*ev) + ev->len;
			if (!pid)
				continue;
			for (i = 0; i < nr && pids[i] != pid; i++)
				;
			/* Beyond @max: this read's other events are lost, the map read at lookup. */
			if (i == nr && nr < max)
				pids[nr++] = pid;
		}
	}
	return nr;
}
