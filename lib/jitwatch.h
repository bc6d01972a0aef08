/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Perf maps opened as they are made: a thread of its own on an inotify
 * watch of the directory JITs write them to, private to the library.
 *
 * A JIT that runs for a moment and removes its map at exit (jit_sleep,
 * some agents) is gone, with its map, before its events are read: a map
 * looked for only then is never found. Nor is one looked for between two
 * rounds of reads, by a reader busy for seconds with one (a burst of new
 * binaries to load, a loaded machine): a JIT that lives a second is gone
 * by then. So the watch has a thread that does nothing but open each map
 * the moment it is made, and hands the open file over; the reader reads
 * it (perfmap.h), removed or not, when it next looks. The directory is
 * the one init sees (PROC_ROOT/1/root/DIR), where the JITs of the machine
 * write, not a private one of the reader's (systemd's PrivateTmp=); else
 * DIR as the caller sees it. A container's own /tmp is not watched: its
 * maps are found as before, when looked for.
 */
#ifndef TD_LIB_JITWATCH_H
#define TD_LIB_JITWATCH_H

#include <stdint.h>

struct td_jitwatch;

/* A map just made: its process, and the file, open (regular files only). */
struct td_jitmap {
	int pid;
	int fd;
};

struct td_jitwatch_stats {
	uint64_t opened;	/* maps opened as they were made */
	uint64_t dropped;	/* opened, but more than wait were not yet taken: closed */
	uint64_t open_errors;	/* made, but gone (or not a regular file) when opened */
};

/*
 * Start watching: NULL with *@err the -errno (inotify limits, no such
 * directory, no thread). The thread takes no signal.
 */
struct td_jitwatch *td_jitwatch_start(const char *proc_root, const char *dir, int *err);

/* Stop the thread, close what was not taken. NULL is fine. */
void td_jitwatch_stop(struct td_jitwatch *w);

/*
 * A non-blocking, close-on-exec descriptor, readable when maps wait to be
 * taken (it may also be readable when none do, after a take).
 */
int td_jitwatch_fd(const struct td_jitwatch *w);

/*
 * The maps made since, at most @max, each once (a map made again before it
 * was taken: the newer file), oldest first; their descriptors are the
 * caller's. How many.
 */
int td_jitwatch_take(struct td_jitwatch *w, struct td_jitmap *maps, int max);

void td_jitwatch_get_stats(struct td_jitwatch *w, struct td_jitwatch_stats *st);

#endif /* TD_LIB_JITWATCH_H */
