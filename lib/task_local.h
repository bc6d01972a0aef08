/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What lib/task.c, the one module that reads a task's identity from /proc,
 * tells the rest of the library. Private to the library.
 */
#ifndef TD_LIB_TASK_LOCAL_H
#define TD_LIB_TASK_LOCAL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * @pid's pid in the innermost pid namespace it is in (a container's), the
 * last of the "NSpid:" line of PROC_ROOT/@pid/status, as perf reads it;
 * @pid itself when it is in ours, is gone, or the kernel does not say.
 */
int td_task_nspid(const char *proc_root, int pid);

/*
 * When PROC_ROOT/@pid started: *@boot_ns since boot (CLOCK_BOOTTIME), and
 * *@real_ns on the wall clock (CLOCK_REALTIME, a file's times' clock) as it
 * reads now, within a clock tick: a wall clock set since the start moves
 * it too. 0, or -ENOENT when unknown (gone, or /proc unreadable).
 */
int td_task_start(const char *proc_root, int pid, uint64_t *boot_ns, uint64_t *real_ns);

/* Is PROC_ROOT/@pid gone (no such process, as that /proc says)? */
bool td_task_gone(const char *proc_root, int pid);

#endif /* TD_LIB_TASK_LOCAL_H */
