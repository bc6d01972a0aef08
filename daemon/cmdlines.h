/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command lines of a recording's trace.dat. trace-cmd takes them from
 * a tracing directory's saved_cmdlines; the kernel's misses programs that
 * exited at once, so a recording keeps the names it learned from their exec
 * in DIR/names ("PID COMM" lines, in the order learned), and the trace.dat
 * is made from DIR/tracing: links to the running tracefs' events and
 * printk_formats, and a saved_cmdlines where each pid of DIR/names has the
 * name it last exec'd under, every other pid the kernel's.
 */
#ifndef TD_DAEMON_CMDLINES_H
#define TD_DAEMON_CMDLINES_H

#include <stddef.h>

/*
 * Make DIR/tracing when DIR/names holds a name: 1 (then @path, @size bytes,
 * is that directory), 0 when there is nothing to add (the running tracefs
 * serves), -1 when it cannot be made (said at debug level; nothing left).
 */
int td_cmdlines_dir(const char *dir, char *path, size_t size);

/*
 * The merged list: DIR/names' last name of each pid, then the lines of
 * @kernel_list (a saved_cmdlines; NULL: none) of every other pid, into
 * @out (created: never an existing file). Lines that are not "PID COMM"
 * are skipped. Returns 1 (written), 0 (DIR/names holds no name: @out not
 * made) or -1 (errno).
 */
int td_cmdlines_write(const char *dir, const char *kernel_list, const char *out);

/* Remove DIR/tracing (what td_cmdlines_dir() made), quietly. */
void td_cmdlines_dir_remove(const char *dir);

#endif /* TD_DAEMON_CMDLINES_H */
