/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `trace-defer report FILE.dat`: read a trace.dat (from `trace-defer
 * record`, --record, or `trace-cmd record`) with libtracecmd and write every
 * event with its kernel and user stacks, as text or as the daemon's JSON
 * lines, folded stacks and flame graph.
 *
 * Promises:
 *  - the records go through the same parser, stitcher, resolver and output
 *    writers as the live daemon's, in timestamp order across CPUs, with
 *    trace time advanced as they are read and everything flushed at the
 *    end: a trace.dat saved with --record gives the records the daemon
 *    wrote live (statuses, frames, addresses);
 *  - kernel frames are named with the kallsyms saved in the trace.dat, not
 *    with this machine's;
 *  - user frames are named through /proc/PID/maps only when the trace's
 *    kernel symbols match the running kernel's (same boot) and the task
 *    still runs under the name the trace gives it: otherwise they stay raw
 *    addresses rather than risk the names of another process;
 *  - nothing in tracefs is touched; no root needed beyond reading the file.
 */
#ifndef TD_DAEMON_REPORT_H
#define TD_DAEMON_REPORT_H

/*
 * @argv[0] is "report". Returns an exit status: 0 ok, 1 the trace.dat
 * cannot be read (truncated, damaged, unsupported) or an output failed,
 * 2 usage error, or the file is missing, unreadable or not a trace.dat.
 */
int td_report_main(int argc, char **argv);

#endif /* TD_DAEMON_REPORT_H */
