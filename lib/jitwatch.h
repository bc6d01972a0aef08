/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Perf maps seen as they are written: an inotify watch on the directory
 * JITs write them to, private to the library.
 *
 * A JIT that runs for a moment and removes its map at exit (jit_sleep,
 * some agents) is gone, with its map, before its events are read: a map
 * looked for only then is never found. Watched, the map is opened, read
 * and kept open (perfmap.h) when the JIT makes it, and what the JIT wrote
 * is read through that file when looked for, removed or not. The directory is the one init
 * sees (PROC_ROOT/1/root/DIR), where the JITs of the machine write, not a
 * private one of the reader's (systemd's PrivateTmp=); else DIR as the
 * caller sees it. A container's own /tmp is not watched: its maps are
 * found as before, when looked for.
 */
#ifndef TD_LIB_JITWATCH_H
#define TD_LIB_JITWATCH_H

/* A non-blocking, close-on-exec inotify descriptor watching DIR, or -errno. */
int td_jitwatch_open(const char *proc_root, const char *dir);

/*
 * What was made since: the pids of the DIR/perf-PID.map files created or
 * moved in, each once, at most @max: past that, the others of
 * the same read are dropped (read when looked up, as without a watch).
 * Returns how many, 0 when nothing more is to be read, or -errno.
 */
int td_jitwatch_read(int fd, int *pids, int max);

#endif /* TD_LIB_JITWATCH_H */
