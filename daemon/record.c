// SPDX-License-Identifier: GPL-2.0
/*
 * trace.dat recording through saved sub-buffers and `trace-cmd restore`
 * (see record.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "record.h"

extern char **environ;

struct td_recorder {
	char *path;		/* the trace.dat to make */
	char *dir;		/* scratch: PATH.raw.XXXXXX */
	int nr_cpus;
	int page_size;
	int *fds;
	char *pad;		/* a zeroed sub-buffer, to pad short reads */
	unsigned long long pages;
	bool failed;
};

static char *raw_path(const struct td_recorder *rec, int cpu)
{
	char *p;

	if (asprintf(&p, "%s/cpu%d.raw", rec->dir, cpu) < 0)
		return NULL;
	return p;
}

static void remove_scratch(struct td_recorder *rec)
{
	char path[PATH_MAX];

	for (int cpu = 0; cpu < rec->nr_cpus; cpu++) {
		snprintf(path, sizeof(path), "%s/cpu%d.raw", rec->dir, cpu);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/head.dat", rec->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/restore.log", rec->dir);
	unlink(path);
	rmdir(rec->dir);
}

static void recorder_free(struct td_recorder *rec)
{
	if (!rec)
		return;
	for (int cpu = 0; rec->fds && cpu < rec->nr_cpus; cpu++)
		if (rec->fds[cpu] >= 0)
			close(rec->fds[cpu]);
	free(rec->fds);
	free(rec->pad);
	free(rec->dir);
	free(rec->path);
	free(rec);
}

struct td_recorder *td_recorder_open(const char *path, int nr_cpus, int page_size)
{
	struct td_recorder *rec = calloc(1, sizeof(*rec));

	if (!rec)
		goto oom;
	rec->nr_cpus = nr_cpus;
	rec->page_size = page_size;
	rec->path = strdup(path);
	rec->fds = malloc(nr_cpus * sizeof(*rec->fds));
	rec->pad = calloc(1, page_size);
	if (!rec->path || !rec->fds || !rec->pad)
		goto oom;
	if (asprintf(&rec->dir, "%s.raw.XXXXXX", path) < 0) {
		rec->dir = NULL;
		goto oom;
	}
	for (int cpu = 0; cpu < nr_cpus; cpu++)
		rec->fds[cpu] = -1;
	/* Next to the output: same file system, and a clear name if it is left behind. */
	if (!mkdtemp(rec->dir)) {
		td_err("cannot create %s: %s", rec->dir, strerror(errno));
		free(rec->dir);
		rec->dir = NULL;
		recorder_free(rec);
		return NULL;
	}
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		char *p = raw_path(rec, cpu);

		if (!p)
			goto oom_dir;
		rec->fds[cpu] = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (rec->fds[cpu] < 0) {
			td_err("cannot create %s: %s", p, strerror(errno));
			free(p);
			td_recorder_abort(rec);
			return NULL;
		}
		free(p);
	}
	return rec;
oom_dir:
	td_recorder_abort(rec);
	td_err("out of memory");
	return NULL;
oom:
	recorder_free(rec);
	td_err("out of memory");
	return NULL;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

int td_recorder_page(struct td_recorder *rec, int cpu, const void *page, int size)
{
	if (rec->failed || cpu < 0 || cpu >= rec->nr_cpus)
		return -1;
	if (size > rec->page_size)
		size = rec->page_size;
	/* trace-cmd reads the files in whole sub-buffers. */
	if (write_all(rec->fds[cpu], page, size) ||
	    (size < rec->page_size && write_all(rec->fds[cpu], rec->pad, rec->page_size - size))) {
		td_err("cannot write %s/cpu%d.raw: %s (recording stopped)", rec->dir, cpu,
		       strerror(errno));
		rec->failed = true;
		return -1;
	}
	rec->pages++;
	return 0;
}

/* Run trace-cmd with @argv, output to @log_fd. Returns its exit status, or -1. */
static int run(char *const argv[], int log_fd)
{
	posix_spawn_file_actions_t fa;
	int status, ret = -1;
	pid_t pid;

	if (posix_spawn_file_actions_init(&fa))
		return -1;
	posix_spawn_file_actions_adddup2(&fa, log_fd, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, log_fd, STDERR_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	errno = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (errno) {
		td_err("cannot run %s: %s", argv[0], strerror(errno));
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status))
		ret = WEXITSTATUS(status);
	return ret;
}

static void show_log(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "    %s", line);
	fclose(f);
}

int td_recorder_finish(struct td_recorder *rec)
{
	char head[PATH_MAX], log[PATH_MAX];
	char **argv = NULL;
	int log_fd = -1, ret = -1, n = 0;

	for (int cpu = 0; cpu < rec->nr_cpus; cpu++) {
		if (close(rec->fds[cpu]) && !rec->failed) {
			td_err("cannot write %s/cpu%d.raw: %s", rec->dir, cpu, strerror(errno));
			rec->failed = true;
		}
		rec->fds[cpu] = -1;
	}
	if (rec->failed)
		goto keep;
	snprintf(head, sizeof(head), "%s/head.dat", rec->dir);
	snprintf(log, sizeof(log), "%s/restore.log", rec->dir);
	log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (log_fd < 0) {
		td_err("cannot create %s: %s", log, strerror(errno));
		goto keep;
	}
	{
		char *const create[] = { "trace-cmd", "restore", "-c", "-o", head, NULL };

		if (run(create, log_fd)) {
			td_err("'trace-cmd restore -c' failed:");
			show_log(log);
			goto keep;
		}
	}
	argv = calloc(rec->nr_cpus + 7, sizeof(*argv));
	if (!argv)
		goto keep;
	argv[n++] = "trace-cmd";
	argv[n++] = "restore";
	argv[n++] = "-i";
	argv[n++] = head;
	argv[n++] = "-o";
	argv[n++] = rec->path;
	for (int cpu = 0; cpu < rec->nr_cpus; cpu++) {
		argv[n] = raw_path(rec, cpu);
		if (!argv[n++])
			goto keep;
	}
	if (run(argv, log_fd)) {
		td_err("'trace-cmd restore -i' failed:");
		show_log(log);
		goto keep;
	}
	td_info("wrote %s (%llu sub-buffers)", rec->path, rec->pages);
	remove_scratch(rec);
	ret = 0;
	goto out;
keep:
	td_err("the raw sub-buffers are kept in %s; to retry: trace-cmd restore -c -o %s/head.dat "
	       "&& trace-cmd restore -i %s/head.dat -o %s %s/cpu0.raw ... %s/cpu%d.raw "
	       "(every CPU, in order)", rec->dir, rec->dir, rec->dir, rec->path, rec->dir,
	       rec->dir, rec->nr_cpus - 1);
out:
	if (log_fd >= 0)
		close(log_fd);
	for (int i = 6; argv && i < n; i++)
		free(argv[i]);
	free(argv);
	recorder_free(rec);
	return ret;
}

void td_recorder_abort(struct td_recorder *rec)
{
	if (!rec)
		return;
	for (int cpu = 0; cpu < rec->nr_cpus; cpu++) {
		if (rec->fds[cpu] >= 0)
			close(rec->fds[cpu]);
		rec->fds[cpu] = -1;
	}
	if (rec->dir)
		remove_scratch(rec);
	recorder_free(rec);
}
