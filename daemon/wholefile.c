// SPDX-License-Identifier: GPL-2.0
/*
 * Files written whole, through a temporary file renamed into place (see
 * wholefile.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "wholefile.h"

/* What link @path names, relative to the link's directory (malloc'ed, NULL: errno). */
static char *link_target(const char *path)
{
	char buf[PATH_MAX], *out;
	const char *slash = strrchr(path, '/');
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0)
		return NULL;
	buf[n] = '\0';
	if (buf[0] == '/' || !slash)
		return strdup(buf);
	if (asprintf(&out, "%.*s/%s", (int)(slash - path), path, buf) < 0)
		return NULL;
	return out;
}

char *td_whole_target(const char *path, bool *in_place)
{
	struct stat st;
	char *target;

	*in_place = false;
	if (!lstat(path, &st) && S_ISLNK(st.st_mode)) {
		/* /dev/stdout is a link to a pipe's /proc/self/fd/1, which has no real path. */
		if (!stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
			*in_place = true;
			return strdup(path);
		}
		target = realpath(path, NULL);
		/* A link to a file not made yet: the file it names, made by the rename. */
		if (!target && errno == ENOENT)
			target = link_target(path);
		if (!target)
			return NULL;
	} else {
		target = strdup(path);
		if (!target)
			return NULL;
	}
	if (stat(target, &st))
		return target;		/* not there yet: made by the rename */
	if (S_ISDIR(st.st_mode)) {
		free(target);
		errno = EISDIR;
		return NULL;
	}
	*in_place = !S_ISREG(st.st_mode);
	return target;
}

char *td_whole_tmp_path(const char *target)
{
	char *tmp;

	return asprintf(&tmp, "%s.tmp.%d", target, (int)getpid()) < 0 ? NULL : tmp;
}

int td_whole_create_tmp(const char *tmp, mode_t mode)
{
	unlink(tmp);	/* left by a run of the same pid that died */
	return open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
}

void td_whole_remove_stale(const char *target)
{
	const char *slash = strrchr(target, '/');
	char *dir = slash ? strndup(target, slash == target ? 1 : slash - target) : strdup(".");
	const char *base = slash ? slash + 1 : target;
	size_t blen = strlen(base);
	struct dirent *de;
	DIR *d;

	d = dir ? opendir(dir) : NULL;
	while (d && (de = readdir(d))) {
		const char *suffix;
		char *end;
		long pid;

		if (strncmp(de->d_name, base, blen) || strncmp(de->d_name + blen, ".tmp.", 5))
			continue;
		/* Only what td_whole_tmp_path() makes: a pid in decimal, no sign, no leading 0. */
		suffix = de->d_name + blen + 5;
		if (*suffix < '1' || *suffix > '9')
			continue;
		errno = 0;
		pid = strtol(suffix, &end, 10);
		/* Another pid namespace's run (a container) would look gone: one writer a path. */
		if (errno || *end || pid > INT_MAX || pid == getpid() || !kill((pid_t)pid, 0) ||
		    errno != ESRCH)
			continue;
		if (!unlinkat(dirfd(d), de->d_name, 0))
			td_notice("removed %s/%s, left by a run that died", dir, de->d_name);
	}
	if (d)
		closedir(d);
	free(dir);
}
