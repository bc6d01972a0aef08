/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files written whole (the pprof, folded and SVG files at exit and on
 * SIGHUP, a recording's trace.dat): written into TARGET.tmp.PID next to
 * the file and renamed over it once complete, so that a write that fails
 * half way (the disk full, the process killed) leaves the last good file,
 * never a part of one. What a path leads to is decided here, once, for
 * all of them.
 */
#ifndef TD_DAEMON_WHOLEFILE_H
#define TD_DAEMON_WHOLEFILE_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Where @path's bytes go: through a symbolic link, the file it names
 * (made by the rename if not there yet); *@in_place when that is not a
 * regular file (a device such as /dev/null, a FIFO, /dev/stdout), which is
 * written where it is: a rename over it would put a file where the device
 * was. malloc()ed; NULL with errno (EISDIR: a directory; a link to
 * nowhere; no memory).
 */
char *td_whole_target(const char *path, bool *in_place);

/* TARGET.tmp.PID, malloc()ed; NULL: no memory. */
char *td_whole_tmp_path(const char *target);

/*
 * Create @tmp anew, exclusively, with @mode (one of a run of the same pid
 * that died is removed first). Returns the fd, or -1 with errno.
 */
int td_whole_create_tmp(const char *tmp, mode_t mode);

/*
 * Remove TARGET.tmp.PID files of runs that died while writing them (their
 * pid gone), said; one whose pid a live process has now is left alone.
 */
void td_whole_remove_stale(const char *target);

#endif /* TD_DAEMON_WHOLEFILE_H */
