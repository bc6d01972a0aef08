/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pipeline: ring-buffer pages or trace.dat records in, resolved events
 * out to sinks. One object holds the parser, the stitcher, the file table,
 * the symbolizer and the thread -> process cache, wired the one way they
 * fit, so the live daemon, `trace-defer report` and the benchmark run the
 * same code on the same data:
 *
 *   td_pipeline_page/record -> parser -> stitcher -> resolve -> sinks
 *
 * Resolving names kernel frames (/proc/kallsyms, or the kernel_sym hook),
 * user frames from the file identity of their stack record when it has
 * some, else through /proc/PID/maps of a live process, and fills in the
 * process id the records did not carry.
 *
 * Errors are returned and counted, never printed: a sink's failed write
 * is counted (sink_errors) and its first error kept (td_pipeline_error());
 * a sink returning -EPIPE marks the pipeline broken (the reader of its
 * output went away) and is not called again.
 *
 * Not thread safe: one pipeline per thread.
 */
#ifndef TRACE_DEFER_PIPELINE_H
#define TRACE_DEFER_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <trace-defer/filetab.h>
#include <trace-defer/output.h>
#include <trace-defer/parse.h>
#include <trace-defer/stitch.h>
#include <trace-defer/symbolize.h>

struct tep_handle;
struct tep_record;

/* How far events go; the shorter ones are for measuring the stages. */
enum td_pipeline_stage {
	TD_PIPE_ALL = 0,	/* parse, stitch, resolve, sinks */
	TD_PIPE_PARSE,		/* parse only: events and stacks freed as they come */
	TD_PIPE_STITCH,		/* parse and stitch: events counted, not resolved */
};

/* For input that does not describe this system now (a trace.dat). */
struct td_pipeline_hooks {
	/*
	 * Name a kernel address instead of this machine's /proc/kallsyms
	 * (e.g. from the kallsyms saved in a trace.dat), @return_addr as
	 * td_sym_kernel() takes it. Returns 0, or -ENOENT (@out then holds
	 * only the address).
	 */
	int (*kernel_sym)(uint64_t addr, bool return_addr, struct td_frame *out, void *arg);
	/*
	 * May /proc/@tid be asked about this task (its process and maps),
	 * seen by the trace at @ts (the event's time)? false when the thread
	 * id may now name another task: the pid stays what the records said
	 * and user frames without file identity stay raw.
	 */
	bool (*task_live)(int tid, const char *comm, uint64_t ts, void *arg);
	void *arg;
};

struct td_pipeline_config {
	int nr_cpus;				/* CPUs of the input, > 0 */
	enum td_pipeline_stage stage;
	struct td_stitch_config stitch;		/* zero fields: the stitcher's defaults */
	/*
	 * How long (trace time) an event waits for the records that follow
	 * it on its CPU: 0, the parser's default; UINT64_MAX, until the next
	 * record of its CPU (a file, where that record is known to come).
	 */
	uint64_t hold_ns;
	bool symbolize;				/* false: addresses only */
	const char *debug_dir;			/* see td_sym_config */
	/* Read /proc/kallsyms now, not at the first kernel frame (a live capture). */
	bool load_kallsyms;
	/*
	 * The input is this system, now: a thread's process is read from
	 * /proc when its event is parsed (unless a record says it), and the
	 * maps of a process seen for the first time are read right then,
	 * while it most likely still runs (unless the user stacks come with
	 * their file identity, which names them without the maps). Otherwise
	 * /proc is asked only when an event is resolved, and only if
	 * hooks.task_live allows (no hook: always).
	 */
	bool live;
	struct td_pipeline_hooks hooks;
	/*
	 * Added later. Resolving keeps the frames of every stack it named
	 * (bounded) and hands them out again for the same stack, as long as
	 * what named them has not changed; no_memo names every frame of
	 * every event again (to measure what keeping them saves).
	 */
	bool no_memo;
	/*
	 * Added later, live only: the kernel's saved_cmdlines (tracefs), where
	 * a thread that neither a record nor /proc names any more (it exited
	 * before its event was read) is named; NULL: such a thread is "<...>".
	 */
	const char *saved_cmdlines;
	/*
	 * Added later: only events of these processes (thread group ids)
	 * reach the sinks; an event whose process neither a record nor /proc
	 * says is dropped too. For a capture that follows new threads
	 * (set_event_pid with event-fork), whose kernel side also records
	 * switches into the process from other tasks, and other processes
	 * the ones followed start. Copied; nr_pids 0: every event.
	 */
	const int *pids;
	unsigned int nr_pids;
	/*
	 * Added later, for a recording and its reading (td_sym_config's
	 * perfmap_save_dir and perfmap_saved_dir, which only td_pipeline_new()
	 * reads). perf_maps_save: the JITs' perf maps read to name frames are
	 * copied there. perf_maps_saved: JIT frames are named from such copies,
	 * also of processes hooks.task_live says are gone (their anonymous,
	 * memfd, or, without file identity, unnamed frames).
	 */
	const char *perf_maps_save;
	const char *perf_maps_saved;
	/*
	 * Added later: sched:sched_process_exec is in the input only to name
	 * the tasks that exec (the caller traced it for that): its events
	 * reach no sink and are counted in neither the parser's events nor
	 * the stitcher's emitted (td_parser_set_exec_names_only()).
	 */
	bool exec_names_only;
	/*
	 * Added later: the same for sched:sched_process_fork, traced to name
	 * new tasks as their parent until they exec.
	 */
	bool fork_names_only;
	/*
	 * Added later: every exec of the traced processes is in the input
	 * (sched:sched_process_exec traced unfiltered, for names or not):
	 * see td_sym_execs_known().
	 */
	bool execs_traced;
	/*
	 * Added later: td_pipeline_housekeeping() starts the symbolizer
	 * again (td_sym_restart()) when what it holds of files passes this
	 * many bytes, at most once a minute (td_pipeline_set_now() time)
	 * unless it holds four times as much; 0: no bound. What the last
	 * restart kept (the processes' maps' paths) is not counted: no
	 * restart would free it. For a pipeline that runs for weeks on a
	 * machine that keeps running new binaries.
	 */
	uint64_t sym_max_bytes;
	/* Added later: where kernel symbols are read (NULL: /proc/kallsyms). */
	const char *kallsyms;
};

/*
 * A sink: where resolved events go. @write returns 0 or a negative errno;
 * -EPIPE means its reader went away. The pipeline does not own @priv.
 */
struct td_sink_ops {
	const char *name;
	int (*write)(void *priv, const struct td_resolved *r);
	/*
	 * Added later: the sink never reads an event's record data
	 * (td_event.raw; its fields). When every sink of a pipeline says so,
	 * events keep none: nothing to copy, and events that wait for their
	 * user stack share what is left (event, CPU, process, name, kernel
	 * stack). Add sinks before the first page or record.
	 */
	bool no_fields;
	/*
	 * Added later: the sink draws profiles, whose kernel stacks start
	 * at the traced code: the pipeline hands it each event's kernel
	 * frames without the tracer's own innermost ones (the event's probe,
	 * trace_event_raw_event_CLASS or ftrace_syscall_enter, and the
	 * tracepoint's iterator __traceiter_NAME when another probe is
	 * attached too), under the same kstack_id. Other sinks get every
	 * frame as recorded.
	 */
	bool no_tracer_frames;
};

/*
 * Sinks of the library's writers; each writer keeps its own caches.
 * td_folded_sink_ops' priv is a struct td_folded, td_pprof_sink_ops' a
 * struct td_pprof, td_json_sink_ops' a struct td_json_sink: a JSON writer
 * and the stream it writes to (which the caller may change between events,
 * e.g. after reopening a rotated file; NULL: events fail with -EBADF,
 * counted in failed, as when a reopen failed).
 */
struct td_json_sink {
	struct td_json_writer *jw;
	FILE *f;
	uint64_t written;		/* events written */
	uint64_t failed;		/* events whose write failed */
	int error;			/* the last failed write's -errno (0: none) */
};

extern const struct td_sink_ops td_json_sink_ops;
extern const struct td_sink_ops td_folded_sink_ops;
extern const struct td_sink_ops td_pprof_sink_ops;

struct td_pipeline_stats {
	struct td_parser_stats parse;
	/* stitch.emitted[]: the events handed to the sinks, by status (not other_pids) */
	struct td_stitch_stats stitch;
	struct td_filetab_stats files;
	bool has_sym;				/* symbolize: sym is filled */
	struct td_sym_stats sym;
	uint64_t emitted;			/* events out of the stitcher */
	uint64_t resolved;			/* events handed to the sinks */
	uint64_t no_pid;			/* events whose process was not known */
	uint64_t fileid_named;			/* user frames named from file identity */
	uint64_t fileid_unknown;		/* user frames in a file id nothing described */
	uint64_t kframes, kframes_named;	/* kernel frames resolved, with a symbol */
	uint64_t uframes, uframes_named;	/* user frames resolved, with a symbol */
	uint64_t no_frames;			/* out of memory: resolved without frames */
	uint64_t sink_errors;			/* failed sink writes (not -EPIPE) */
	bool broken;				/* a sink's reader went away */
	/* Added later: stacks found named before, named now, kept ones all dropped (bound). */
	uint64_t stacks_reused, stacks_named, stack_resets;
	/* Added later: the bound reached, stacks not used lately dropped (sweeps, stacks). */
	uint64_t stack_sweeps, stacks_swept;
	/*
	 * Added later: user frames without file identity left unnamed because
	 * the task_live hook said their task no longer runs.
	 */
	uint64_t uframes_gone;
	/* Added later: events of a process not in cfg.pids, or of an unknown one, dropped. */
	uint64_t other_pids;
	/*
	 * Added later: execs met (sched_process_exec) of processes whose maps
	 * were read: kept for the records from before the exec.
	 */
	uint64_t exec_forgets;
	/* Added later: of other_pids, the events that had a user stack (stitched, inplace). */
	uint64_t other_user_stacks;
};

struct td_pipeline;

/*
 * @tep must know the formats of the input (see td_parser_new()). Returns
 * NULL with errno: EINVAL, ENOMEM, ENOTSUP (32-bit or big-endian input),
 * EPROTO (an ftrace event with unexpected fields), or what setting up the
 * symbolizer failed with.
 */
struct td_pipeline *td_pipeline_new(struct tep_handle *tep, const struct td_pipeline_config *cfg);
/* Frees what is still pending without emitting it: td_pipeline_flush() first. */
void td_pipeline_free(struct td_pipeline *pl);

/*
 * Whether cfg.exec_names_only took effect: false when the input's formats
 * have no usable sched_process_exec (then its events, if any, are events
 * as any other).
 */
bool td_pipeline_exec_names_only(const struct td_pipeline *pl);
/* Added later: the same for cfg.fork_names_only. */
bool td_pipeline_fork_names_only(const struct td_pipeline *pl);

/*
 * Sinks are called in the order they were added. Returns 0 or -ENOMEM.
 * A pipeline with no sink (a recording's, whose trace.dat is written from
 * the sub-buffers) counts its events as emitted and makes no frames.
 */
int td_pipeline_add_sink(struct td_pipeline *pl, const struct td_sink_ops *ops, void *priv);

/*
 * The file table that user_unwind_file records fill; a caller may add
 * records to it ahead of the stream (a file read twice). Owned by the
 * pipeline.
 */
struct td_filetab *td_pipeline_filetab(struct td_pipeline *pl);

/* One raw sub-buffer of @cpu (td_parser_page()). */
int td_pipeline_page(struct td_pipeline *pl, int cpu, void *page, int size);
/*
 * Added later: sub-buffers of several CPUs read at one time, merged by
 * record time (td_parser_pages()). A live reader should read every CPU
 * and hand their pages on together: a task's exec or fork then names the
 * events that follow it on another CPU.
 */
int td_pipeline_pages(struct td_pipeline *pl, const struct td_page_ref *pages, unsigned int n);
/* Added later: the same, records at or after @cut kept for later (td_parser_pages_until()). */
int td_pipeline_pages_until(struct td_pipeline *pl, const struct td_page_ref *pages,
			    unsigned int n, uint64_t cut);
/* One record of @cpu (td_parser_record()). */
int td_pipeline_record(struct td_pipeline *pl, int cpu, struct tep_record *rec);
/*
 * Every CPU has been read up to trace time @trace_ns: events held or
 * waiting too long move on (parser, then stitcher).
 */
void td_pipeline_advance(struct td_pipeline *pl, uint64_t trace_ns);
/* End of input: everything held or pending is emitted, stackless as user_lost. */
void td_pipeline_flush(struct td_pipeline *pl);

/* Monotonic time (ns) for cache ages; set once per batch, not read per event. */
void td_pipeline_set_now(struct td_pipeline *pl, uint64_t mono_ns);
/*
 * Added later. Live, naming JIT code (or copying perf maps for a
 * recording): the descriptor to poll for perf maps being written
 * (td_sym_jit_watch()), -ENOENT when there is nothing to watch for, or
 * -errno. When it is readable, td_pipeline_jit_watched() reads the maps
 * written: how many, or -errno.
 */
int td_pipeline_jit_watch(struct td_pipeline *pl);
int td_pipeline_jit_watched(struct td_pipeline *pl);
/* What td_pipeline_housekeeping() did, for its caller to say so. */
#define TD_HK_SYM_RESTARTED	0x1	/* the symbolizer started again */
#define TD_HK_KSYMS_RELOADED	0x2	/* kallsyms changed and was read again */

/*
 * Every few seconds: forget processes that exited (their caches go), read
 * again the perf maps that lacked a JIT frame's line, start the
 * symbolizer again past cfg.sym_max_bytes (its stacks named so far are
 * named anew; stats.sym.restarts), and, live, once a minute read kallsyms
 * again (td_sym_kernel_reload(); stats.sym.kernel_reloads). Returns the
 * TD_HK_* of what it did, 0 for nothing (or a restart out of memory: tried
 * again next time).
 */
unsigned int td_pipeline_housekeeping(struct td_pipeline *pl);

void td_pipeline_get_stats(const struct td_pipeline *pl, struct td_pipeline_stats *st);
/*
 * The first failed sink write: its negative errno (0: none yet) and, in
 * *@sink when not NULL, the sink's name.
 */
int td_pipeline_error(const struct td_pipeline *pl, const char **sink);
/* A sink's reader went away: the caller should stop. */
bool td_pipeline_broken(const struct td_pipeline *pl);

#endif /* TRACE_DEFER_PIPELINE_H */
