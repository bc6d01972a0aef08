/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recording a trace.dat: every raw sub-buffer the loop reads is also
 * appended, as read, to a per-CPU file in a scratch directory next to the
 * output; at the end trace-cmd builds the trace.dat from them:
 *
 *   trace-cmd restore -c -o head.dat          (formats, kallsyms, cmdlines)
 *   trace-cmd restore -i head.dat -o FILE.dat cpu0.raw cpu1.raw ...
 *
 * so `trace-cmd report` and KernelShark open it (libtracecmd has no public
 * writer). The live outputs (JSON, folded) work at the same time. The
 * headers are also taken at the start, and the directory holds an "info"
 * file (sub-buffer size, CPUs, boot id, the trace.dat meant): a run that
 * never reaches its end (SIGKILL, out of memory, power lost) leaves a
 * directory that td_recorder_recover() makes a trace.dat of, even after a
 * reboot. trace-cmd writes FILE.dat.tmp.PID, renamed over FILE.dat once
 * it is done: when it fails, FILE.dat is left as it was, the raw files are
 * kept and the command to retry is printed. The JITs' perf maps the run
 * saves are kept there too.
 */
#ifndef TD_DAEMON_RECORD_H
#define TD_DAEMON_RECORD_H

struct td_recorder;

/* Scratch directory and one file per CPU 0..nr_cpus-1. NULL on error (printed). */
struct td_recorder *td_recorder_open(const char *path, int nr_cpus, int page_size);

/* Append one sub-buffer of @cpu (padded to a whole sub-buffer). Returns 0 or -1 (printed once). */
int td_recorder_page(struct td_recorder *rec, int cpu, const void *page, int size);

/*
 * Close the raw files, build the trace.dat, remove the scratch directory.
 * Call after the readers are closed. A SIGINT or SIGTERM while trace-cmd
 * runs (blocked by the caller) stops it: the directory is kept. Returns 0
 * or -1 (printed). Frees @rec.
 */
int td_recorder_finish(struct td_recorder *rec);

/* Give up: remove the scratch directory, free @rec. */
void td_recorder_abort(struct td_recorder *rec);

/*
 * Make a trace.dat of the scratch directory @dir a run left behind, at
 * @out (NULL: the one that run meant, only if no such file exists), then
 * remove @dir. @dir is locked meanwhile, as a recording locks its own.
 * @out is checked as every output is. Returns 0, -EINVAL (@dir is not
 * one, is in use: a running recording's or another recover's; the file
 * exists, or @out is a program or in @dir) or -EIO (@out cannot be
 * written, trace-cmd failed or was stopped by a SIGINT or SIGTERM, or
 * no headers to be had; @dir is kept); printed.
 */
int td_recorder_recover(const char *dir, const char *out);

/*
 * Where the pipeline copies the JITs' perf maps while the recording runs
 * (see td_pipeline_config.perf_maps_save): DIR/perf-maps in the scratch
 * directory, made on first need. td_recorder_finish() and
 * td_recorder_recover() put them next to the trace.dat they write,
 * FILE.dat.perf-maps (replacing an earlier one's), where `report` finds
 * them; a run given up removes them.
 */
const char *td_recorder_maps_dir(const struct td_recorder *rec);

/*
 * Keep the name @comm (a task's, at most 15 bytes) that @pid took at exec
 * for the trace.dat's command lines: DIR/names, read by
 * td_recorder_finish() and td_recorder_recover() (cmdlines.h). Returns 0;
 * 1 for a name the command lines cannot carry (blank: a file named " "),
 * not kept; -1 when it cannot be kept (said once).
 */
int td_recorder_name(struct td_recorder *rec, int pid, const char *comm);

/*
 * The pid of trace-cmd taking the headers at the start while it may still
 * run (the capture keeps it out of the recording's events), or 0.
 */
int td_recorder_helper(const struct td_recorder *rec);

/* Warn of scratch directories of @path (PATH.raw.XXXXXX) a run left behind. */
void td_recorder_note_leftovers(const char *path);

#endif /* TD_DAEMON_RECORD_H */
