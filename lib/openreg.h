/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Open a path for reading only if it names a regular file. The library
 * opens paths that trace records, perf map directories and /proc give: a
 * trace file, or a racing rename, can point one at a FIFO (an open would
 * wait for a writer), a terminal or a device, and opening a device is an
 * action of its own (a watchdog is armed, a tape rewinds, a modem line
 * drops). The type is checked before the open, and again on what was
 * opened, which must be the very file checked. Private to the library.
 */
#ifndef TD_LIB_OPENREG_H
#define TD_LIB_OPENREG_H

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * @path relative to directory @dirfd (AT_FDCWD: as open(2) takes it); *@st
 * (may be NULL) the file's status. The fd, or -1 (errno ENOENT for a
 * missing file, EINVAL for one that is not regular).
 */
static inline int td_open_regular_at(int dirfd, const char *path, struct stat *st)
{
	struct stat before, after;
	int fd;

	if (fstatat(dirfd, path, &before, 0))
		return -1;
	if (!S_ISREG(before.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &after) || !S_ISREG(after.st_mode) || after.st_dev != before.st_dev ||
	    after.st_ino != before.st_ino) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if (st)
		*st = after;
	return fd;
}

static inline int td_open_regular(const char *path, struct stat *st)
{
	return td_open_regular_at(AT_FDCWD, path, st);
}

#endif /* TD_LIB_OPENREG_H */
