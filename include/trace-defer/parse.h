/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Record parser: turns ring-buffer records (raw sub-buffers from
 * trace_pipe_raw, or tep_records from a trace.dat) into td_events and
 * td_ustacks, and feeds them to a stitcher (or to callbacks of the caller's).
 *
 * Per CPU it assembles an event with the records that follow it on the same
 * CPU for the same task: ftrace:kernel_stack, ftrace:user_unwind_cookie, or
 * in fallback mode ftrace:user_stack. An event is handed on when the next
 * unrelated record on its CPU arrives, or by td_parser_advance() once trace
 * time has moved on by hold_ns. An event of the same task that comes before
 * an event's last follower (an interrupt's, written in between) is held on
 * top of it: its followers come first, then the first event's.
 */
#ifndef TRACE_DEFER_PARSE_H
#define TRACE_DEFER_PARSE_H

#include <stdint.h>

#include <trace-defer/stitch.h>

struct tep_handle;
struct tep_record;
struct td_filetab;

struct td_parser_stats {
	uint64_t records;		/* all records seen */
	uint64_t events;		/* kernel events handed on */
	uint64_t cookies;		/* user_unwind_cookie records */
	uint64_t stacks;		/* user_unwind_stack records handed on */
	uint64_t bad_records;		/* malformed, skipped */
	uint64_t bytes;			/* record data bytes */
	uint64_t orphans;		/* kernel_stack/cookie/user_stack with no event */
	uint64_t unknown;		/* records of an event the tep has no format for */
	uint64_t pages;			/* sub-buffers parsed */
	uint64_t bad_pages;		/* sub-buffers cut short: corrupt event chain */
	uint64_t missed_pages;		/* sub-buffers flagged: events lost before them */
	uint64_t missed_events;		/* count stored on such pages, when stored */
	uint64_t last_ts;		/* latest record timestamp seen, any CPU */
	/* Added with file identity: */
	uint64_t file_records;		/* user_unwind_file records */
	/* Stack records whose file identity did not hold together: frames unrecorded. */
	uint64_t bad_file_info;
	/* Stack records the kernel cut to fit a sub-buffer (dropped != 0). */
	uint64_t stacks_cut;
	/* Followers joined to their event across a nested (interrupt's) event. */
	uint64_t interleaved;
	/*
	 * Added later: sched_process_exec (and sched_process_fork) events
	 * read only for the name they give their task
	 * (td_parser_set_exec_names_only(), _fork_names_only()), not in
	 * @events.
	 */
	uint64_t naming_events;
};

/* Returns the thread group id of @tid, or 0 if unknown. */
typedef int (*td_tgid_fn)(int tid, void *arg);
/* Fills @comm (TD_COMM_LEN bytes) with @tid's name now; false if unknown. */
typedef bool (*td_comm_fn)(int tid, char *comm, void *arg);

struct td_parser;

/*
 * Added later. A tep handle for td_parser_new(): the header page and the
 * event formats of @systems (NULL-terminated; list "ftrace" too; NULL:
 * every system) under @tracing_dir (the mounted tracefs when NULL, or a
 * copy of one), with its saved_cmdlines and printk_formats when it has
 * them. Unlike tracefs_local_events_system(), no kernel symbols: the
 * parser never looks one up, and /proc/kallsyms in a tep costs several
 * MiB. Formats that do not parse are left out, as libtracefs does. NULL
 * with errno when the header page cannot be read (not a tracefs) or out
 * of memory. Free with tep_free().
 */
struct tep_handle *td_local_events(const char *tracing_dir, const char *const *systems);

/*
 * @tep must already know the formats (ftrace and the traced events); the
 * ftrace event ids and field handles are looked up here, once. Events the
 * kernel lacks (user_unwind_* before the patches) are simply never seen.
 * Returns NULL with errno: EINVAL, ENOMEM, ENOTSUP (not a 64-bit
 * little-endian layout), EPROTO (an ftrace event with unexpected fields).
 * Events are named (td_event.comm) from what sched_switch records last said
 * of their thread, kept by the parser in a bounded table; a thread no
 * switch has named is named from @tep's comm table (a trace.dat's saved
 * cmdlines), which the parser only reads.
 */
struct td_parser *td_parser_new(struct tep_handle *tep, struct td_stitcher *st, int nr_cpus);
/*
 * Where a parser hands what it assembles, instead of a stitcher: @event and
 * @stack take ownership (td_event_free(), td_ustack_free()).
 */
struct td_parser_out {
	void (*event)(struct td_event *ev, void *arg);
	void (*stack)(struct td_ustack *us, void *arg);
	void *arg;
	/*
	 * Optional: thread @tid ran exec at @ts (a sched:sched_process_exec
	 * record, traced or only naming tasks), called when the record is
	 * read (before: when its event was handed on), before any later
	 * record is: what the process maps is another program's from then.
	 */
	void (*exec)(int tid, uint64_t ts, void *arg);
	/*
	 * Added later, optional: thread @tid forked @child at @ts (a
	 * sched:sched_process_fork record, traced or only naming tasks),
	 * called when the record is read, before any record of @child can
	 * be handed on.
	 */
	void (*fork)(int tid, int child, uint64_t ts, void *arg);
};

/* The same as td_parser_new(), handing events and stacks to @out (copied). */
struct td_parser *td_parser_new_out(struct tep_handle *tep, const struct td_parser_out *out,
				    int nr_cpus);
/* Frees held events without handing them on; td_parser_flush() first to keep them. */
void td_parser_free(struct td_parser *p);

/* How long (trace time) an event waits for its followers; default 10 ms. */
void td_parser_set_hold_ns(struct td_parser *p, uint64_t hold_ns);
/*
 * Where ftrace:user_unwind_file records go (not owned; NULL: nowhere). A
 * user_unwind_stack record's per-frame file identity (td_ustack.files) is
 * decoded either way; an id is named through the table later.
 */
void td_parser_set_filetab(struct td_parser *p, struct td_filetab *ft);
/*
 * Fills td_event.pid of an event no record gave it to (an in-place
 * user_stack record does), when the event is complete and handed on;
 * without it pid is 0 then.
 */
void td_parser_set_tgid_fn(struct td_parser *p, td_tgid_fn fn, void *arg);
/*
 * Added later. Names an event's thread that no record named yet (tracing
 * syscalls without sched_switch, say), instead of @tep's comm table; the
 * answer is kept, and asked again after about a second of trace time (the
 * thread may have exec'd). For live captures: /proc.
 */
void td_parser_set_comm_fn(struct td_parser *p, td_comm_fn fn, void *arg);
/*
 * Added later. Whether an event keeps a copy of its record's data
 * (td_event.raw), default true; false when nothing will read its fields.
 */
void td_parser_set_keep_raw(struct td_parser *p, bool keep);
/*
 * Added later. sched:sched_process_exec is in the input only to name tasks
 * (traced for that by the caller, not asked for by the user): its events
 * name their task as ever, and are counted in naming_events, not events.
 * One still waiting for a deferred stack (it has a cookie) is handed on all
 * the same, for its stack to find it: the receiver drops it (it can tell it
 * by its tep_event). Returns the event's format, or NULL when @tep has none
 * (then nothing changes).
 */
struct tep_event *td_parser_set_exec_names_only(struct td_parser *p);
/*
 * Added later. The same for sched:sched_process_fork, which names the new
 * task as its parent (whose name it has until it execs).
 */
struct tep_event *td_parser_set_fork_names_only(struct td_parser *p);

/*
 * Parse one raw sub-buffer as read from per_cpu/cpuN/trace_pipe_raw.
 * Returns the number of records read from it, or -EINVAL (bad cpu or
 * size), -ENOMEM (some records could not be kept; the rest were parsed).
 */
int td_parser_page(struct td_parser *p, int cpu, void *page, int size);
/* Added later: a sub-buffer of a batch (td_parser_pages()). */
struct td_page_ref {
	int cpu;
	void *page;
	int size;
};
/*
 * Added later. Parse sub-buffers of several CPUs read at one time, their
 * records merged by time: each CPU's pages in the order given (the order
 * they were read), a record of one CPU before a later one of another. A
 * live reader that reads its CPUs one after the other hands on, this way,
 * the exec (or fork) of a task before that task's events that follow it
 * on another CPU, though their CPU was read first. Records of one CPU keep
 * their order whatever their times (clocks may step back). Returns the
 * number of records read, or -EINVAL (a bad cpu or size: nothing parsed),
 * -ENOMEM (some records could not be kept; the rest were parsed).
 */
int td_parser_pages(struct td_parser *p, const struct td_page_ref *pages, unsigned int n);
/*
 * Added later. td_parser_pages(), but a record at or after trace time @cut
 * is not parsed yet: it and the rest of its CPU's records wait, copied,
 * for the next call (their pages before the new ones), td_parser_page(),
 * td_parser_record() or td_parser_flush(). A live reader passes the time
 * it began a round of reads at: records written while it read a CPU,
 * after an earlier CPU was read, then wait for what that CPU wrote at
 * the same time (a child's first records for its parent's fork). Returns
 * the number of records parsed; -ENOMEM if what was to wait could not be
 * kept (then parsed now; nothing is lost).
 */
int td_parser_pages_until(struct td_parser *p, const struct td_page_ref *pages, unsigned int n,
			  uint64_t cut);
/* Parse one record (e.g. from libtracecmd). Returns 0, -EINVAL or -ENOMEM. */
int td_parser_record(struct td_parser *p, int cpu, struct tep_record *rec);
/*
 * Trace time reached @now_ns: hand on events held longer than hold_ns.
 * @now_ns should be a time every CPU has been read up to. Does not advance
 * the stitcher: call td_stitch_advance() after.
 */
void td_parser_advance(struct td_parser *p, uint64_t now_ns);
/* End of input: hand on everything held (td_stitch_flush() is the caller's). */
void td_parser_flush(struct td_parser *p);
/*
 * The timestamp of the oldest event held now, or kept from a cut batch,
 * UINT64_MAX when none is.
 */
uint64_t td_parser_held_since(const struct td_parser *p);

void td_parser_get_stats(const struct td_parser *p, struct td_parser_stats *stats);

/*
 * The name exec gives a task that runs @file (@len bytes, a NUL ends it
 * sooner), as sched_process_exec's filename says it: its base name cut to
 * 15 bytes, into @comm (TD_COMM_LEN bytes, zero after the name); returns
 * 1. Else @comm is untouched: 0 when the file names nothing (empty, or
 * ending in '/'), -1 when the task's name is not in the record (fexecve()'s
 * "/dev/fd/N": the kernel names the task after the file the descriptor
 * opened).
 */
int td_exec_comm(const char *file, size_t len, char *comm);

#endif /* TRACE_DEFER_PARSE_H */
