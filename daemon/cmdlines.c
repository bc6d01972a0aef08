// SPDX-License-Identifier: GPL-2.0
/*
 * A recording's saved_cmdlines: the kernel's, and the names it learned
 * (see cmdlines.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracefs.h>

#include "cmdlines.h"
#include "log.h"

struct learned {
	int pid;
	size_t seq;		/* line of DIR/names: the later one wins */
	char *comm;
};

struct names {
	struct learned *v;
	size_t nr, cap;
};

static void names_free(struct names *nm)
{
	for (size_t i = 0; i < nm->nr; i++)
		free(nm->v[i].comm);
	free(nm->v);
}

/* By pid, and for one pid the last learned first. */
static int by_pid_last(const void *a, const void *b)
{
	const struct learned *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->seq < y->seq ? 1 : (x->seq > y->seq ? -1 : 0);
}

static int by_pid(const void *key, const void *elem)
{
	int pid = *(const int *)key, other = ((const struct learned *)elem)->pid;

	return pid < other ? -1 : pid > other;
}

/* One "PID COMM" line (COMM not blank); false when it is not one (skipped). */
static bool parse_line(char *line, int *pid, char **comm)
{
	char *end;
	long v;

	line[strcspn(line, "\n")] = '\0';
	errno = 0;
	v = strtol(line, &end, 10);
	/* A blank name would make trace-cmd give up on the rest of the list. */
	if (errno || end == line || *end != ' ' || v <= 0 || v > INT_MAX ||
	    !end[1 + strspn(end + 1, " \t\v\f\r")])
		return false;
	*pid = (int)v;
	*comm = end + 1;
	return true;
}

/* DIR/names, sorted, one entry per pid. -1 on error (errno). */
static int read_names(const char *dir, struct names *nm)
{
	char path[PATH_MAX], *line = NULL;
	size_t len = 0, keep = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/names", dir);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -1;
	while (getline(&line, &len, f) > 0) {
		struct learned *l;
		char *comm;
		int pid;

		if (!parse_line(line, &pid, &comm))
			continue;
		if (nm->nr == nm->cap) {
			size_t cap = nm->cap ? nm->cap * 2 : 256;

			l = realloc(nm->v, cap * sizeof(*l));
			if (!l)
				goto oom;
			nm->v = l;
			nm->cap = cap;
		}
		l = &nm->v[nm->nr];
		l->pid = pid;
		l->seq = nm->nr;
		l->comm = strdup(comm);
		if (!l->comm)
			goto oom;
		nm->nr++;
	}
	free(line);
	fclose(f);
	if (!nm->nr)
		return 0;
	qsort(nm->v, nm->nr, sizeof(*nm->v), by_pid_last);
	for (size_t i = 0; i < nm->nr; i++) {
		if (keep && nm->v[keep - 1].pid == nm->v[i].pid) {
			free(nm->v[i].comm);
			continue;
		}
		nm->v[keep++] = nm->v[i];
	}
	nm->nr = keep;
	return 0;
oom:
	free(line);
	fclose(f);
	errno = ENOMEM;
	return -1;
}

/* @out: the learned names, then the lines of @kernel_list (NULL: none) of every other pid. */
static int write_cmdlines(const char *out, const struct names *nm, const char *kernel_list)
{
	char *line = NULL;
	size_t len = 0;
	FILE *k, *f;
	int ret = 0;

	f = fopen(out, "wxe");
	if (!f)
		return -1;
	for (size_t i = 0; i < nm->nr; i++)
		fprintf(f, "%d %s\n", nm->v[i].pid, nm->v[i].comm);
	/* No kernel list: the learned names alone are still worth having. */
	k = kernel_list ? fopen(kernel_list, "re") : NULL;
	while (k && getline(&line, &len, k) > 0) {
		char *comm;
		int pid;

		if (!parse_line(line, &pid, &comm) ||
		    bsearch(&pid, nm->v, nm->nr, sizeof(*nm->v), by_pid))
			continue;
		fprintf(f, "%d %s\n", pid, comm);
	}
	free(line);
	if (k)
		fclose(k);
	if (ferror(f))
		ret = -1;
	if (fclose(f))
		ret = -1;
	return ret;
}

int td_cmdlines_write(const char *dir, const char *kernel_list, const char *out)
{
	struct names nm = { 0 };
	int ret;

	if (read_names(dir, &nm)) {
		names_free(&nm);
		return -1;
	}
	if (!nm.nr) {
		names_free(&nm);
		return 0;
	}
	ret = write_cmdlines(out, &nm, kernel_list);
	names_free(&nm);
	return ret ? -1 : 1;
}

/* DIR/tracing/NAME -> the running tracefs' NAME. */
static int link_tracefs(const char *tdir, const char *name)
{
	char *target = tracefs_get_tracing_file(name);
	char path[PATH_MAX];
	int ret;

	if (!target)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", tdir, name);
	ret = symlink(target, path);
	tracefs_put_tracing_file(target);
	return ret;
}

void td_cmdlines_dir_remove(const char *dir)
{
	static const char *const names[] = { "events", "printk_formats", "saved_cmdlines" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/tracing/%s", dir, names[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/tracing", dir);
	rmdir(path);
}

int td_cmdlines_dir(const char *dir, char *path, size_t size)
{
	char file[PATH_MAX], names[PATH_MAX];
	char *kernel_list;
	int ret;

	snprintf(names, sizeof(names), "%s/names", dir);
	if (access(names, F_OK))
		return 0;
	/* A run killed while it made one leaves it behind. */
	td_cmdlines_dir_remove(dir);
	snprintf(path, size, "%s/tracing", dir);
	snprintf(file, sizeof(file), "%s/saved_cmdlines", path);
	kernel_list = tracefs_get_tracing_file("saved_cmdlines");
	ret = mkdir(path, 0700) || link_tracefs(path, "events") ||
	      link_tracefs(path, "printk_formats") ? -1 : td_cmdlines_write(dir, kernel_list, file);
	tracefs_put_tracing_file(kernel_list);
	if (ret <= 0) {
		if (ret < 0)
			td_debug("cannot make %s: %s; the kernel's command lines only", path,
				 strerror(errno));
		td_cmdlines_dir_remove(dir);
	}
	return ret;
}
