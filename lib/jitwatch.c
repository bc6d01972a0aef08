// SPDX-License-Identifier: GPL-2.0
/*
 * Perf maps opened as they are made (see jitwatch.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "jitwatch.h"
#include "openreg.h"

/*
 * A map made, not each write to it: the file is opened then, and what the
 * JIT writes is read through it later. Each write to any file of /tmp
 * would wake the thread (a compiler's temporary files), and a reader
 * writing its output there, itself.
 */
#define WATCH_MASK	(IN_CREATE | IN_MOVED_TO)

/*
 * Maps opened and not yet taken. The reader takes them at every round;
 * past this many in one round, JITs start faster than any reader keeps
 * up with, and the rest are read when looked up, as without the watch.
 */
#define WAIT_MAX	256

struct td_jitwatch {
	pthread_t thread;
	int ino_fd;		/* inotify, the thread's */
	int dir_fd;		/* the directory watched: names are opened in it */
	int ready_fd;		/* eventfd: maps wait, or the thread ended */
	int stop_fd;		/* eventfd: the thread is to end */
	pthread_mutex_t lock;	/* the fields below */
	unsigned int nr;
	struct td_jitmap wait[WAIT_MAX];
	struct td_jitwatch_stats st;
	int error;		/* the thread ended on this errno */
};

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

static void wake(struct td_jitwatch *w)
{
	uint64_t one = 1;

	/* Only EAGAIN, at a counter near its end: readable all the same. */
	if (write(w->ready_fd, &one, sizeof(one)) < 0)
		return;
}

/* Hand @fd, @pid's map just opened, to the reader. */
static void put(struct td_jitwatch *w, int pid, int fd)
{
	unsigned int i;

	pthread_mutex_lock(&w->lock);
	w->st.opened++;
	for (i = 0; i < w->nr && w->wait[i].pid != pid; i++)
		;
	if (i < w->nr) {
		/* Made again: the file the pid writes to now. */
		close(w->wait[i].fd);
		w->wait[i].fd = fd;
	} else if (w->nr < WAIT_MAX) {
		w->wait[w->nr++] = (struct td_jitmap){ .pid = pid, .fd = fd };
	} else {
		close(fd);
		w->st.dropped++;
	}
	pthread_mutex_unlock(&w->lock);
	wake(w);
}

static void opened(struct td_jitwatch *w, const struct inotify_event *ev)
{
	int pid = ev->len ? map_pid(ev->name) : 0, fd;

	if (!pid)
		return;
	fd = td_open_regular_at(w->dir_fd, ev->name, NULL);
	if (fd >= 0) {
		put(w, pid, fd);
		return;
	}
	pthread_mutex_lock(&w->lock);
	w->st.open_errors++;
	pthread_mutex_unlock(&w->lock);
}

/* Every event queued: 0, or the errno that ends the watch. */
static int read_events(struct td_jitwatch *w)
{
	/* As inotify(7) says: aligned as the events, room for one with the longest name. */
	char buf[4096 + sizeof(struct inotify_event) + NAME_MAX + 1]
		__attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t len = read(w->ino_fd, buf, sizeof(buf));

		if (len < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : errno;
		if (!len)
			return 0;
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			p += sizeof(*ev) + ev->len;
			/* The directory went away (or was unmounted): nothing more to see. */
			if (ev->mask & IN_IGNORED)
				return ENOENT;
			opened(w, ev);
		}
	}
}

static void *watch(void *arg)
{
	struct td_jitwatch *w = arg;
	struct pollfd pfd[2] = {
		{ .fd = w->ino_fd, .events = POLLIN },
		{ .fd = w->stop_fd, .events = POLLIN },
	};
	int err = 0;

	while (!err) {
		if (poll(pfd, 2, -1) < 0) {
			err = errno == EINTR ? 0 : errno;
			continue;
		}
		if (pfd[1].revents)
			return NULL;
		if (pfd[0].revents & (POLLERR | POLLNVAL))
			err = EIO;
		else if (pfd[0].revents)
			err = read_events(w);
	}
	pthread_mutex_lock(&w->lock);
	w->error = err;
	pthread_mutex_unlock(&w->lock);
	wake(w);
	return NULL;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* The directory to watch, as init sees it if it can be: 0 or -errno. */
static int add_watch(struct td_jitwatch *w, const char *proc_root, const char *dir)
{
	char path[PATH_MAX];

	if (proc_root && snprintf(path, sizeof(path), "%s/1/root%s", proc_root, dir) <
			 (int)sizeof(path) &&
	    inotify_add_watch(w->ino_fd, path, WATCH_MASK | IN_ONLYDIR) >= 0) {
		w->dir_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (w->dir_fd >= 0)
			return 0;
	}
	if (inotify_add_watch(w->ino_fd, dir, WATCH_MASK | IN_ONLYDIR) < 0)
		return -errno;
	w->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return w->dir_fd < 0 ? -errno : 0;
}

static void free_watch(struct td_jitwatch *w)
{
	for (unsigned int i = 0; i < w->nr; i++)
		close(w->wait[i].fd);
	close_fd(w->ino_fd);
	close_fd(w->dir_fd);
	close_fd(w->ready_fd);
	close_fd(w->stop_fd);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

struct td_jitwatch *td_jitwatch_start(const char *proc_root, const char *dir, int *err)
{
	struct td_jitwatch *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int ret;

	if (!w) {
		*err = -ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&w->lock, NULL);
	w->dir_fd = w->ready_fd = w->stop_fd = -1;
	w->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ino_fd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = add_watch(w, proc_root, dir);
	if (ret)
		goto fail;
	w->ready_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	w->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->ready_fd < 0 || w->stop_fd < 0) {
		ret = -errno;
		goto fail;
	}
	/* Signals are for the caller's threads (a daemon reads them from a signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&w->thread, NULL, watch, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto fail;
	return w;
fail:
	*err = ret;
	free_watch(w);
	return NULL;
}

void td_jitwatch_stop(struct td_jitwatch *w)
{
	uint64_t one = 1;

	if (!w)
		return;
	/*
	 * An eventfd write fails only at a counter near its end, never from
	 * 0; should it, poll() is a cancellation point.
	 */
	if (write(w->stop_fd, &one, sizeof(one)) != sizeof(one))
		pthread_cancel(w->thread);
	pthread_join(w->thread, NULL);
	free_watch(w);
}

int td_jitwatch_fd(const struct td_jitwatch *w)
{
	return w->ready_fd;
}

int td_jitwatch_take(struct td_jitwatch *w, struct td_jitmap *maps, int max)
{
	unsigned int left;
	uint64_t count;
	int n, err;

	/* Read first: a map put after this wakes the reader again. */
	if (read(w->ready_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&w->lock);
	n = (int)w->nr < max ? (int)w->nr : max;
	memcpy(maps, w->wait, (size_t)n * sizeof(*maps));
	w->nr -= (unsigned int)n;
	memmove(w->wait, w->wait + n, w->nr * sizeof(*w->wait));
	left = w->nr;
	err = w->error;
	pthread_mutex_unlock(&w->lock);
	/* Some left: readable again for the next call. */
	if (left)
		wake(w);
	return n || !err ? n : -err;
}

void td_jitwatch_get_stats(struct td_jitwatch *w, struct td_jitwatch_stats *st)
{
	pthread_mutex_lock(&w->lock);
	*st = w->st;
	pthread_mutex_unlock(&w->lock);
}
