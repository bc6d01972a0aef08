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
 * more). A process found without a file is asked again a second later at
 * the earliest. Names are interned by the caller's function and live as
 * long as it says. Not thread safe.
 */
#ifndef TD_LIB_PERFMAP_H
#define TD_LIB_PERFMAP_H

#include <stdint.h>

#include "procmaps.h"

struct td_perfmaps;

/*
 * Files are DIR/perf-PID.map, opened as PROC_ROOT/PID/root/DIR/perf-PID.map
 * while the process runs (the /tmp it writes to, which may not be the
 * caller's). A process in a pid namespace of its own names its file with
 * its pid there (the last of PROC_ROOT/PID/status's NSpid), read through
 * its root only; frames then name that path. Both strings are copied. NULL
 * when out of memory.
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

/* Drop what is kept of @pid (it exited: its pid may name another process). */
void td_perfmap_forget(struct td_perfmaps *pm, int pid);

#endif /* TD_LIB_PERFMAP_H */
