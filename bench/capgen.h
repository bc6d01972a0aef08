/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthesized capture for the replay benchmark: per-CPU ring-buffer
 * sub-buffers, byte for byte as trace_pipe_raw returns them (written with
 * lib/pagegen.c), of a deferred-stack trace of sched_switch with kernel
 * stacks:
 *
 *   task switches out:  sched_switch, kernel_stack, user_unwind_cookie
 *   idle switches out:  sched_switch, kernel_stack (no cookie: a kernel thread)
 *   later, on the same or the other CPU: user_unwind_stack (tid, cookie,
 *   tgid, each frame's file), after the user_unwind_file records of its
 *   files when that CPU has not had them for a second
 *
 * Some kernel entries have a second event sharing the cookie, some stacks
 * never come (the task exited: user_lost), some are empty (unwind_failed),
 * some entries have an event after their stack (the task preempted on its
 * way back to user space, after the unwind: same cookie, up to 5 ms
 * later). A task is in one kernel entry at a time: its next event comes
 * after its last record of the one before (when every task is still in
 * one, the CPU's event is the idle task's).
 * The caller gives the record type ids, real kernel stacks (from
 * /proc/kallsyms) and real user addresses (of a running process), so that
 * the symbolizer does real work on the output.
 *
 * Every record on one CPU is written in time order, as the kernel does;
 * records of different CPUs interleave as on a real machine (a stack may
 * sit on another CPU than its cookie, and be read before it).
 */
#ifndef TD_BENCH_CAPGEN_H
#define TD_BENCH_CAPGEN_H

#include <stdbool.h>
#include <stdint.h>

#define CAPGEN_MAX_CPUS		64
#define CAPGEN_MAX_KFRAMES	32
#define CAPGEN_MAX_UFRAMES	128
#define CAPGEN_MAX_FILES	8
#define CAPGEN_MAX_PATH		512
/*
 * Trace time between two events, all CPUs: 50,000 events/s, two and a half
 * times the 20,000 switches/s of a busy server. The time a record waits in
 * the stitcher is trace time, so this sets how many wait at once.
 */
#define CAPGEN_GAP_MIN_NS	10000
#define CAPGEN_GAP_MAX_NS	30000

struct capgen_kstack {
	unsigned int nr;
	uint64_t ips[CAPGEN_MAX_KFRAMES];
};

/* A file of the user frames, as a user_unwind_file record names it. */
struct capgen_file {
	uint32_t id;			/* > 0 */
	uint64_t base;			/* the address of its offset 0 in the tasks */
	const char *path;		/* shorter than CAPGEN_MAX_PATH */
	unsigned int build_id_len;	/* 0: none */
	uint8_t build_id[20];
};

struct capgen_cfg {
	int nr_cpus;
	uint64_t nr_events;		/* sched_switch records to write */
	uint64_t seed;
	/* record type ids, as in the formats the reader will use */
	unsigned int id_switch, id_kstack, id_cookie, id_unwind, id_file;
	/* tasks: thread ids (processes that exist), all named task_comm */
	const int *tids;
	int nr_tids;
	const char *task_comm;
	/* kernel stacks: of a task blocking, of the idle task */
	const struct capgen_kstack *task_kstacks;
	int nr_task_kstacks;
	const struct capgen_kstack *idle_kstack;
	/*
	 * User stack: innermost frame, then @rec_ip repeated 0..max_rec times,
	 * then the outer frames (caller of the recursion up to _start).
	 */
	uint64_t leaf_ip, rec_ip;
	const uint64_t *outer_ips;
	unsigned int nr_outer;
	unsigned int max_rec;
	/*
	 * File identity. Stack records are written in the kernel series'
	 * current layout: the tgid (the tasks are processes: their tid), then
	 * the stack, file_bases, file_ids and frame_files; every frame names
	 * its file (@leaf_file, @rec_file, @outer_files[]: indexes into
	 * @files). A file's user_unwind_file record comes on each CPU before
	 * the first stack there that uses it, and again when a stack uses it
	 * a second or more (trace time) after, as the kernel writes them.
	 */
	const struct capgen_file *files;
	unsigned int nr_files;
	uint8_t leaf_file, rec_file;
	const uint8_t *outer_files;
	/* shares of events, in 1/1000 */
	unsigned int idle_permille;	/* switches of the idle task */
	unsigned int shared_permille;	/* entries with a 2nd event on the cookie */
	unsigned int lost_permille;	/* stacks that never come */
	unsigned int failed_permille;	/* stacks with no frames */
	unsigned int remote_permille;	/* stacks written on another CPU */
	unsigned int late_permille;	/* entries with an event after their stack */
	/* trace time between two events (all CPUs), ns, and stack delay range */
	unsigned int gap_min_ns, gap_max_ns;
	unsigned int delay_min_ns, delay_max_ns;
	/* how long after its stack a late event comes, ns */
	unsigned int late_min_ns, late_max_ns;
	/*
	 * Memory benchmark: task events only, every stack held back to the
	 * very end, so that all events are pending at once (the shares above
	 * are ignored).
	 */
	bool hold_stacks;
};

/* What was written. */
struct capgen_stats {
	uint64_t events, task_events, idle_events, shared_events, late_events;
	/* task events whose stack never comes (user_lost), or is empty */
	uint64_t lost_events, failed_events;
	uint64_t stacks, lost, failed, user_frames, file_records;
	uint64_t records, record_bytes, pages;
	uint64_t first_ts, last_ts;
};

/* Called for every finished page; returns 0, or non-zero to stop. */
typedef int (*capgen_sink_fn)(int cpu, const void *page, unsigned int size, void *arg);

/* Fill @cfg with the mix described above (the caller sets ids, tasks, stacks). */
void capgen_defaults(struct capgen_cfg *cfg);

/*
 * Write the capture, handing each page to @sink as it is finished (pages
 * of one CPU in order). Returns 0, -ENOMEM, -EINVAL (bad configuration),
 * or the sink's value.
 */
int capgen_run(const struct capgen_cfg *cfg, capgen_sink_fn sink, void *arg,
	       struct capgen_stats *stats);

#endif /* TD_BENCH_CAPGEN_H */
