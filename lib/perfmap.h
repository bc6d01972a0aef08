/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JIT-compiled code named from perf map files, private to the library.
 *
 * A JIT that supports perf writes /tmp/perf-PID.map (V8's and Node's
 * --perf-basic-prof, CPython's -X perf, the JVM through perf-map-agent,
 * LuaJIT, .NET): one line per compiled function, "START SIZE NAME", START
 * and SIZE in hexadecimal (an optional 0x), appended as code is compiled.
 * The code lives in anonymous memory, which no ELF file names.
 *
 * A process's file is read on its first lookup and kept sorted; a lookup
 * that finds nothing reads what was appended since (the JIT has compiled
 * more). A file read is kept open (a bounded number of them), and read
 * through that once the JIT has removed it. A process found without a
 * file is asked again a second later at the earliest. Names are interned by the caller's function and live as
 * long as it says. Not thread safe.
 */
#ifndef TD_LIB_PERFMAP_H
#define TD_LIB_PERFMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "procmaps.h"

struct td_perfmaps;

struct td_perfmaps_stats {
	uint64_t saved_maps;	/* copies started (td_perfmaps_save_to()) */
	uint64_t saved_bytes;	/* bytes written to them */
	uint64_t save_errors;	/* a copy not made or cut short */
	uint64_t stale;		/* maps older than their running process, not read */
};

/*
 * Files are DIR/perf-PID.map, opened as PROC_ROOT/PID/root/DIR/perf-PID.map
 * while the process runs (the /tmp it writes to, which may not be the
 * caller's). A process in a pid namespace of its own names its file with
 * its pid there (the last of PROC_ROOT/PID/status's NSpid), read through
 * its root only; frames then name that path. Both strings are copied. NULL
 * when out of memory.
 *
 * @proc_root NULL: the files are copies saved with a recording (below),
 * DIR/perf-PID.map, PID the process's pid on the machine that recorded;
 * they are read as they are, no process is asked, and frames name them.
 */
struct td_perfmaps *td_perfmaps_new(const char *dir, const char *proc_root, td_intern_fn intern,
				    void *intern_ctx);
void td_perfmaps_free(struct td_perfmaps *pm);

/*
 * The function of process @pid's perf map that holds @addr: 0 with *@name,
 * its *@start and the interned path of the file in *@file; -ENOENT when
 * the file has none (or there is no file); -ENOMEM.
 */
int td_perfmap_find(struct td_perfmaps *pm, int pid, uint64_t addr, const char **name,
		    uint64_t *start, const char **file);

/*
 * From now on, copy what is read of every map to SAVE_DIR/perf-PID.map
 * (the entries parsed, in the order read; PID as the caller knows the
 * process; made 0600, SAVE_DIR 0700 on first need): what named the frames of a recording, for
 * reading it after the processes, or their maps, are gone. 0 or -ENOMEM.
 */
int td_perfmaps_save_to(struct td_perfmaps *pm, const char *save_dir);
void td_perfmaps_get_stats(const struct td_perfmaps *pm, struct td_perfmaps_stats *st);

/*
 * Is a map last written at @mtime_ns (wall clock) older than a process
 * started at @start_boot_ns since boot, @start_real_ns on the wall clock,
 * so that an earlier process with the pid left it? Not for a process
 * started in the first ten minutes after boot (the wall clock may still be
 * set then), nor within a minute (a clock set forward since the file was
 * written makes it look older).
 */
bool td_perfmap_older(uint64_t start_boot_ns, uint64_t start_real_ns, uint64_t mtime_ns);

/*
 * Read @pid's map for what is new, at most once a second (the first call
 * at once): for copying maps (td_perfmaps_save_to()) when no frame is
 * named. 0 or -ENOMEM.
 */
int td_perfmap_sync(struct td_perfmaps *pm, int pid);

/*
 * @pid's map was just made, and @fd is that file, opened then (by
 * jitwatch.h's thread; the descriptor is taken, closed on error too;
 * -1: none): read what is new now, whatever the time, and keep the file
 * open, so that what it held can be read after the JIT removed it. The
 * file at the map's path, if there is one now and it is another, wins. A
 * map that only this brought, of a process gone and never looked up, is
 * dropped by td_perfmaps_recheck() a minute after its last write. Live
 * maps only (a proc_root). 0 or -ENOMEM.
 */
int td_perfmap_hold_fd(struct td_perfmaps *pm, int pid, int fd);

/*
 * Copying (td_perfmaps_save_to()): read every map known once more, for
 * what the JITs appended since (the end of a recording).
 * td_perfmap_forget() does so for the one it drops.
 */
void td_perfmaps_sync_all(struct td_perfmaps *pm);

/*
 * Names found in @pid's map may change when this does: entries appended,
 * or the file replaced. Callers that keep what a lookup found (or did
 * not) for @pid key it on this. 0 for a pid without a map.
 */
uint64_t td_perfmaps_gen(const struct td_perfmaps *pm, int pid);

/*
 * Read what was appended to every map a lookup found nothing in, until
 * new entries came: a JIT may write a function's line after the function
 * ran (a line half written when read, or a map dumped when asked, as
 * perf-map-agent does), and callers that keep misses look up no more. For
 * a periodic call: a stat, an open and a close per such map.
 */
void td_perfmaps_recheck(struct td_perfmaps *pm);

/*
 * @pid ran a new program: drop its map (td_perfmap_forget()), unless the
 * map is one td_perfmap_hold_fd() brought and no lookup asked for yet. The
 * exec is read from the trace, seconds after it may be, while the watch
 * sees the new program's map made at once: dropping that would lose it if
 * the JIT removed its file since.
 */
void td_perfmap_exec(struct td_perfmaps *pm, int pid);

/* Drop what is kept of @pid (it exited: its pid may name another process). */
void td_perfmap_forget(struct td_perfmaps *pm, int pid);

#endif /* TD_LIB_PERFMAP_H */
