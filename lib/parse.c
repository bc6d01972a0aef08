// SPDX-License-Identifier: GPL-2.0
/*
 * Record parser (see include/trace-defer/parse.h for what it promises).
 *
 * Sub-buffers are walked in place (pagewalk.c: one pass that reads the
 * event chain as kbuffer reads it and checks it, since a page is untrusted
 * input), records decoded with the formats the tep knows. (libtraceevent's
 * kbuffer read them first, after a check of its own: it trusts its input.
 * The two passes cost a fifth of the whole stitching stage.)
 *
 * Per CPU the events whose followers (kernel_stack, user_unwind_cookie,
 * user_stack) may still come are held, and followers attached on the way.
 * Usually that is one event. An interrupt's event written between an event
 * and its followers (both in the instance, the first written with
 * interrupts on) is nested: the kernel writes the interrupt's event and
 * its followers before the first event's followers. So the held events
 * are a stack: a follower goes to the newest held event that has not got
 * its last follower (cookie or in-place user stack) yet, and an event of
 * the same task that comes while one waits is held on top of it. All are
 * handed on, oldest first, when a record that cannot belong to any of them
 * arrives. Per event id the parser keeps what it needs to check
 * a record (fixed size, dynamic fields) in a table filled on first sight.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include <trace-defer/filetab.h>
#include <trace-defer/parse.h>
#include <trace-defer/ringbuf.h>

#include "comm.h"
#include "dynfield.h"
#include "kstack.h"
#include "le.h"
#include "pagewalk.h"

#define DEFAULT_HOLD_NS		(10ULL * 1000 * 1000)
#define USTACK_ENTRIES		8	/* ftrace:user_stack caller[8] */
/*
 * Events held per CPU: an event, the events of interrupts nested in it
 * (softirq, irq, NMI) and their neighbours in the same handler.
 */
#define HOLD_DEPTH		8
/*
 * Threads' names learned from sched_switch, direct-mapped by tid. Bounded
 * on purpose: an always-on reader meets every pid the kernel hands out,
 * and pids are reused. 64Ki slots of 32 bytes (2 MiB).
 */
#define COMM_SLOTS		(1U << 16)
/*
 * A name the comm hook gave (live: /proc) is asked again after about a
 * second of trace time (at least 2^30 ns after it was given, and in
 * another period of 2^30 ns), as the thread may have exec'd since.
 */
#define COMM_ASK_SHIFT		30

enum ev_kind {
	K_OTHER = 0,
	K_SWITCH,		/* sched:sched_switch: names prev and next */
	K_EXEC,			/* sched:sched_process_exec: names its task anew */
	K_FORK,			/* sched:sched_process_fork: names the new task as its parent */
	K_KSTACK,		/* ftrace:kernel_stack */
	K_USTACK,		/* ftrace:user_stack (fallback, in place) */
	K_COOKIE,		/* ftrace:user_unwind_cookie */
	K_UNWIND,		/* ftrace:user_unwind_stack */
	K_UFILE,		/* ftrace:user_unwind_file */
};

struct evinfo {
	struct tep_event *event;
	enum ev_kind kind;
	int min_size;			/* end of the last fixed field */
	int nr_dyn;
	struct tep_format_field **dyn;	/* __data_loc / __rel_loc fields */
};

struct hold {
	struct td_event *ev;
	bool kstack_seen;
};

/* One CPU's held events, oldest first. */
struct held {
	unsigned int n;
	unsigned int open;		/* 1 + the newest not complete one, 0: none */
	struct hold h[HOLD_DEPTH];
};

/*
 * The records of a batch at or after its cut (td_parser_pages_until()),
 * kept for the next: copies of their pages, each CPU's cursor on the
 * first of them, and the pages of that CPU no cursor has opened yet.
 */
struct td_carry {
	uint8_t *buf;
	size_t cap;
	struct batch_cpu *bc;
	unsigned int nr_bc;
	size_t cap_bc;
	struct td_page_ref *refs;
	unsigned int nr_refs;
	size_t cap_refs;
};

struct td_parser {
	struct tep_handle *tep;
	struct td_parser_out out;	/* where events and stacks go */
	struct td_kstacks *kstacks;	/* kernel stacks shared by the events */
	struct td_kstacks *ustacks;	/* and user stacks, by the stack records */
	int nr_cpus;
	int common_size;		/* bytes of the common fields */
	int type_off, pid_off;		/* u16 common_type, s32 common_pid */
	uint64_t hold_ns;
	td_tgid_fn tgid_fn;
	void *tgid_arg;
	td_comm_fn comm_fn;
	void *comm_arg;
	bool no_raw;			/* events keep no copy of their record */

	struct tep_event *ev_kstack, *ev_ustack, *ev_cookie, *ev_unwind, *ev_ufile, *ev_switch;
	struct tep_format_field *ks_size, *ks_caller;
	struct tep_format_field *us_tgid, *us_caller;
	struct tep_format_field *ck_cookie;
	struct tep_format_field *uw_cookie;
	struct td_ustack_fields uw;	/* stack and file identity of user_unwind_stack */
	struct td_filetab *ft;		/* where file records go; NULL: nowhere */
	struct tep_format_field *sw_prev_comm, *sw_next_comm, *sw_next_pid;
	struct tep_event *ev_exec;
	struct tep_format_field *exec_filename;
	bool exec_names_only;		/* ev_exec names tasks, is no event of the user's */
	struct tep_event *ev_fork;
	struct tep_format_field *fork_comm, *fork_pid;	/* child_comm, child_pid */
	bool fork_names_only;		/* the same for ev_fork */
	/*
	 * The tep's name of tid 0, asked once: a third of a busy machine's
	 * events are the idle task's, and the tep's lookup costs a call and a
	 * strnlen() each time for a name that never changes.
	 */
	char idle_comm[TD_COMM_LEN];

	struct evinfo **info;		/* by event id, filled on first sight */
	unsigned int nr_info;


	/* the latest name sched_switch gave a tid; see learn_comm() */
	struct comm_slot {
		int tid;		/* 0: empty (the idle task is never kept) */
		/*
		 * 0: given by a record, kept until another; else the period
		 * (ts >> COMM_ASK_SHIFT) + 1 in which the comm hook gave it (or
		 * an exec traced only for names), asked again after it.
		 */
		uint32_t asked;
		char comm[TD_COMM_LEN];
		uint64_t ts;		/* of the record (or event) that gave it */
	} *comms;

	struct batch_cpu *batch;	/* td_parser_pages()'s, one per CPU; on first use */
	struct td_carry carry[2];	/* what a cut batch left, and room for the next's */
	unsigned int cur;		/* carry[cur]: the one that holds it */
	struct td_page_ref *all;	/* a carry's pages and a batch's, as one list */
	size_t cap_all;
	struct td_parser_stats stats;
	struct held held[];
};

/* ---- set-up: event ids and field handles, looked up once ---- */

static struct tep_format_field *field_of(struct tep_event *ev, const char *name, int size,
					 unsigned long need_flags, int *err)
{
	struct tep_format_field *f = tep_find_field(ev, name);

	if (!f || (size && f->size != size) || (f->flags & need_flags) != need_flags) {
		*err = EPROTO;
		return NULL;
	}
	return f;
}

static int lookup_events(struct td_parser *p)
{
	int err = 0;

	p->ev_kstack = tep_find_event_by_name(p->tep, "ftrace", "kernel_stack");
	if (p->ev_kstack) {
		p->ks_size = field_of(p->ev_kstack, "size", 4, 0, &err);
		p->ks_caller = field_of(p->ev_kstack, "caller", 0, TEP_FIELD_IS_ARRAY, &err);
	}
	p->ev_ustack = tep_find_event_by_name(p->tep, "ftrace", "user_stack");
	if (p->ev_ustack) {
		p->us_tgid = field_of(p->ev_ustack, "tgid", 4, 0, &err);
		p->us_caller = field_of(p->ev_ustack, "caller", USTACK_ENTRIES * 8,
					TEP_FIELD_IS_ARRAY, &err);
	}
	p->ev_cookie = tep_find_event_by_name(p->tep, "ftrace", "user_unwind_cookie");
	if (p->ev_cookie)
		p->ck_cookie = field_of(p->ev_cookie, "cookie", 8, 0, &err);
	p->ev_unwind = tep_find_event_by_name(p->tep, "ftrace", "user_unwind_stack");
	if (p->ev_unwind) {
		p->uw_cookie = field_of(p->ev_unwind, "cookie", 8, 0, &err);
		if (td_ustack_fields_init(&p->uw, p->ev_unwind))
			err = EPROTO;
	}
	/* Its fields are checked per record: a bad one only loses that file. */
	p->ev_ufile = tep_find_event_by_name(p->tep, "ftrace", "user_unwind_file");
	if (err)
		return -err;

	/* sched_switch only lends names: without the expected fields it is plain. */
	p->ev_switch = tep_find_event_by_name(p->tep, "sched", "sched_switch");
	if (p->ev_switch) {
		p->sw_prev_comm = field_of(p->ev_switch, "prev_comm", TD_COMM_LEN, 0, &err);
		p->sw_next_comm = field_of(p->ev_switch, "next_comm", TD_COMM_LEN, 0, &err);
		p->sw_next_pid = field_of(p->ev_switch, "next_pid", 4, 0, &err);
		if (err)
			p->ev_switch = NULL;
	}
	/* So does sched_process_exec, when traced: the task's new name is its file's. */
	p->ev_exec = tep_find_event_by_name(p->tep, "sched", "sched_process_exec");
	if (p->ev_exec) {
		p->exec_filename = tep_find_field(p->ev_exec, "filename");
		if (!p->exec_filename || !(p->exec_filename->flags & TEP_FIELD_IS_DYNAMIC))
			p->ev_exec = NULL;
	}
	/*
	 * And sched_process_fork: a new task has its parent's name until it
	 * execs. /proc, asked when its first event is read, may have the
	 * name of the program it exec'd since (its execve() entry, traced,
	 * would say the program it runs, not the shell that ran it).
	 */
	p->ev_fork = tep_find_event_by_name(p->tep, "sched", "sched_process_fork");
	err = 0;
	if (p->ev_fork) {
		/* char[16] up to 6.x, a __string (__data_loc) since */
		p->fork_comm = tep_find_field(p->ev_fork, "child_comm");
		p->fork_pid = field_of(p->ev_fork, "child_pid", 4, 0, &err);
		if (err || !p->fork_comm ||
		    (!(p->fork_comm->flags & TEP_FIELD_IS_DYNAMIC) &&
		     p->fork_comm->size != TD_COMM_LEN))
			p->ev_fork = NULL;
	}
	return 0;
}

/*
 * The common fields, the same for every event: where the type and the pid
 * are, and how many bytes every record has at least. They are read straight
 * from the record, as tep_data_type() and tep_data_pid() would, minus two
 * calls and a size switch per record.
 */
static int common_layout(struct td_parser *p)
{
	struct tep_event *ev = tep_get_first_event(p->tep);
	struct tep_format_field *f, *type, *pid;

	if (!ev)
		return -EINVAL;
	type = tep_find_common_field(ev, "common_type");
	pid = tep_find_common_field(ev, "common_pid");
	if (!type || type->size != 2 || !pid || pid->size != 4)
		return -EPROTO;
	p->type_off = type->offset;
	p->pid_off = pid->offset;
	p->common_size = 0;
	for (f = ev->format.common_fields; f; f = f->next)
		if (f->offset + f->size > p->common_size)
			p->common_size = f->offset + f->size;
	return 0;
}

static void to_stitcher_event(struct td_event *ev, void *arg)
{
	td_stitch_event(arg, ev);
}

static void to_stitcher_stack(struct td_ustack *us, void *arg)
{
	td_stitch_stack(arg, us);
}

static void set_comm(char *dst, const char *src, size_t max)
{
	size_t n = strnlen(src, max);

	if (n > TD_COMM_LEN - 1)
		n = TD_COMM_LEN - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

struct td_parser *td_parser_new(struct tep_handle *tep, struct td_stitcher *st, int nr_cpus)
{
	struct td_parser_out out = {
		.event = to_stitcher_event, .stack = to_stitcher_stack, .arg = st,
	};

	if (!st) {
		errno = EINVAL;
		return NULL;
	}
	return td_parser_new_out(tep, &out, nr_cpus);
}

struct td_parser *td_parser_new_out(struct tep_handle *tep, const struct td_parser_out *out,
				    int nr_cpus)
{
	struct td_parser *p = NULL;
	int err = EINVAL;
	int ret;

	if (!tep || !out || !out->event || !out->stack || nr_cpus <= 0)
		goto fail;
	err = ENOTSUP;
	if (tep_is_file_bigendian(tep) || tep_get_long_size(tep) == 4)
		goto fail;
	err = ENOMEM;
	p = calloc(1, sizeof(*p) + (size_t)nr_cpus * sizeof(p->held[0]));
	if (!p)
		goto fail;
	p->tep = tep;
	p->out = *out;
	p->nr_cpus = nr_cpus;
	p->hold_ns = DEFAULT_HOLD_NS;
	p->kstacks = td_kstacks_new(0);
	p->ustacks = td_kstacks_new(0);
	p->comms = calloc(COMM_SLOTS, sizeof(*p->comms));
	if (!p->kstacks || !p->ustacks || !p->comms)
		goto fail;
	ret = common_layout(p);
	if (ret < 0) {
		err = -ret;
		goto fail;
	}
	ret = lookup_events(p);
	if (ret < 0) {
		err = -ret;
		goto fail;
	}
	set_comm(p->idle_comm, tep_data_comm_from_pid(tep, 0), TD_COMM_LEN);
	return p;
fail:
	td_parser_free(p);
	errno = err;
	return NULL;
}

static void free_info(struct evinfo *info)
{
	if (!info)
		return;
	free(info->dyn);
	free(info);
}

void td_parser_free(struct td_parser *p)
{
	unsigned int i;
	int cpu;

	if (!p)
		return;
	for (cpu = 0; cpu < p->nr_cpus; cpu++)
		for (i = 0; i < p->held[cpu].n; i++)
			td_event_free(p->held[cpu].h[i].ev);
	for (i = 0; i < p->nr_info; i++)
		free_info(p->info[i]);
	free(p->info);
	free(p->batch);
	for (i = 0; i < 2; i++) {
		free(p->carry[i].buf);
		free(p->carry[i].bc);
		free(p->carry[i].refs);
	}
	free(p->all);
	td_kstacks_free(p->kstacks);
	td_kstacks_free(p->ustacks);
	free(p->comms);
	free(p);
}

void td_parser_set_hold_ns(struct td_parser *p, uint64_t hold_ns)
{
	p->hold_ns = hold_ns;
}

void td_parser_set_filetab(struct td_parser *p, struct td_filetab *ft)
{
	p->ft = ft;
}

void td_parser_set_tgid_fn(struct td_parser *p, td_tgid_fn fn, void *arg)
{
	p->tgid_fn = fn;
	p->tgid_arg = arg;
}

void td_parser_set_comm_fn(struct td_parser *p, td_comm_fn fn, void *arg)
{
	p->comm_fn = fn;
	p->comm_arg = arg;
}

struct tep_event *td_parser_set_exec_names_only(struct td_parser *p)
{
	p->exec_names_only = p->ev_exec != NULL;
	return p->ev_exec;
}

struct tep_event *td_parser_set_fork_names_only(struct td_parser *p)
{
	p->fork_names_only = p->ev_fork != NULL;
	return p->ev_fork;
}

void td_parser_set_keep_raw(struct td_parser *p, bool keep)
{
	p->no_raw = !keep;
}

void td_parser_get_stats(const struct td_parser *p, struct td_parser_stats *stats)
{
	*stats = p->stats;
}

/* ---- per event id: what a record of it must satisfy ---- */

static struct evinfo *make_info(struct td_parser *p, struct tep_event *event)
{
	struct tep_format_field *f;
	struct evinfo *info;
	int n = 0;

	info = calloc(1, sizeof(*info));
	if (!info)
		return NULL;
	info->event = event;
	if (event == p->ev_kstack)
		info->kind = K_KSTACK;
	else if (event == p->ev_ustack)
		info->kind = K_USTACK;
	else if (event == p->ev_cookie)
		info->kind = K_COOKIE;
	else if (event == p->ev_unwind)
		info->kind = K_UNWIND;
	else if (event == p->ev_ufile)
		info->kind = K_UFILE;
	else if (event == p->ev_switch)
		info->kind = K_SWITCH;
	else if (event == p->ev_exec)
		info->kind = K_EXEC;
	else if (event == p->ev_fork)
		info->kind = K_FORK;

	info->min_size = p->common_size;
	for (f = event->format.fields; f; f = f->next) {
		if (f->flags & TEP_FIELD_IS_DYNAMIC)
			n++;
		/* kernel_stack's caller[8] really holds `size` entries. */
		if (f == p->ks_caller)
			continue;
		if (f->offset + f->size > info->min_size)
			info->min_size = f->offset + f->size;
	}
	if (info->kind == K_KSTACK && p->ks_caller->offset > info->min_size)
		info->min_size = p->ks_caller->offset;
	if (n) {
		info->dyn = calloc(n, sizeof(*info->dyn));
		if (!info->dyn) {
			free(info);
			return NULL;
		}
		for (f = event->format.fields; f; f = f->next)
			if (f->flags & TEP_FIELD_IS_DYNAMIC)
				info->dyn[info->nr_dyn++] = f;
	}
	return info;
}

/* First record of event id @id: its checks made and kept. */
static struct evinfo *add_info(struct td_parser *p, void *data, int size, unsigned int id,
			       bool *unknown)
{
	struct tep_record rec = { .data = data, .size = size, .record_size = size };
	struct tep_event *event;
	struct evinfo **grown;
	unsigned int n;

	event = tep_find_event_by_record(p->tep, &rec);
	if (!event) {
		*unknown = true;
		return NULL;
	}
	if (id >= p->nr_info) {
		n = id + 64;
		grown = realloc(p->info, n * sizeof(*grown));
		if (!grown)
			return NULL;
		memset(grown + p->nr_info, 0, (n - p->nr_info) * sizeof(*grown));
		p->info = grown;
		p->nr_info = n;
	}
	p->info[id] = make_info(p, event);
	return p->info[id];
}

/*
 * The checks of a record's event id; NULL with *unknown set when the tep
 * has no format for it, NULL alone when out of memory.
 */
static inline struct evinfo *lookup_info(struct td_parser *p, void *data, int size,
					 bool *unknown)
{
	unsigned int id = td_get_le16((const uint8_t *)data + p->type_off);

	*unknown = false;
	if (id < p->nr_info && p->info[id])
		return p->info[id];
	return add_info(p, data, size, id, unknown);
}

/*
 * A fixed-size number field, as tep_read_number_field() reads it (zero
 * extended, -1 for a size other than 1, 2, 4, 8) but without its calls
 * through the tep: every record reads one or two. The parser takes
 * little-endian input only, and a record's fixed fields lie inside it
 * (min_size).
 */
static int read_field(const struct tep_format_field *f, const void *data, uint64_t *val)
{
	const uint8_t *p = (const uint8_t *)data + f->offset;

	switch (f->size) {
	case 1:
		*val = *p;
		return 0;
	case 2:
		*val = td_get_le16(p);
		return 0;
	case 4:
		*val = td_get_le32(p);
		return 0;
	case 8:
		*val = td_get_le64(p);
		return 0;
	default:
		return -1;
	}
}

static bool dyn_ok(const struct evinfo *info, const void *data, int size)
{
	unsigned int off, len;
	int i;

	for (i = 0; i < info->nr_dyn; i++)
		if (!td_dyn_locate(info->dyn[i], data, size, false, &off, &len))
			return false;
	return true;
}

/* ---- records ---- */

static void hand_on_one(struct td_parser *p, struct td_event *ev)
{
	/* Read for the name it gave its task: done with, unless a stack follows. */
	if ((p->exec_names_only && ev->tep_event == p->ev_exec) ||
	    (p->fork_names_only && ev->tep_event == p->ev_fork)) {
		p->stats.naming_events++;
		if (ev->has_cookie)
			p->out.event(ev, p->out.arg);
		else
			td_event_free(ev);
		return;
	}
	/*
	 * Asked only now: an in-place user_stack record (fallback mode) says
	 * the tgid itself, better than /proc, where the tid may be gone or
	 * another task's by now, and cheaper under short-lived processes. Not
	 * asked at all for an event that waits for a deferred stack on a
	 * kernel whose stack records say the tgid: the stack will tell.
	 */
	if (!ev->pid && p->tgid_fn && ev->tid > 0 && !(ev->has_cookie && p->uw.tgid))
		ev->pid = p->tgid_fn(ev->tid, p->tgid_arg);
	p->out.event(ev, p->out.arg);
	p->stats.events++;
}

/* Every event held on a CPU, oldest first: nothing more will join them. */
static void hand_on(struct td_parser *p, struct held *h)
{
	for (unsigned int i = 0; i < h->n; i++)
		hand_on_one(p, h->h[i].ev);
	h->n = 0;
	h->open = 0;
}

/* Its last follower came: nothing more joins it. */
static inline bool complete(const struct td_event *ev)
{
	return ev->has_cookie || ev->inplace;
}

/*
 * Where a follower of @tid goes: the newest held event not yet complete,
 * if it is @tid's (an interrupt runs on the task it interrupts).
 */
static inline struct hold *open_hold(struct held *h, int tid)
{
	struct hold *o;

	if (!h->open)
		return NULL;
	o = &h->h[h->open - 1];
	return o->ev->tid == tid ? o : NULL;
}

/* A follower joined the open event: counted if across a newer, complete one. */
static inline void joined(struct td_parser *p, const struct held *h)
{
	if (h->open != h->n)
		p->stats.interleaved++;
}

/* The open event got its last follower: the next older one not complete is open. */
static void closed(struct held *h)
{
	while (h->open && complete(h->h[h->open - 1].ev))
		h->open--;
}

/* @nr unaligned u64 from a record into a malloc'ed td_ips. */
static int copy_ips(struct td_ips *ips, const uint8_t *src, unsigned int nr)
{
	unsigned int i;

	ips->nr = 0;
	ips->ips = NULL;
	if (!nr)
		return 0;
	ips->ips = malloc(nr * sizeof(*ips->ips));
	if (!ips->ips)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		ips->ips[i] = td_get_le64(src + 8 * i);
	ips->nr = nr;
	return 0;
}

/*
 * What a sched_switch says a thread is called now: its latest name wins
 * (exec renames a task; a reused tid is another task). Kept here, not in
 * the tep's comm table, which would grow by every pid ever seen and insert
 * each one in a sorted array. A tid whose slot another took since is
 * named from the tep (a trace.dat's saved cmdlines), as an unseen one is.
 */
static inline struct comm_slot *comm_slot(struct td_parser *p, int tid)
{
	return &p->comms[(unsigned int)tid & (COMM_SLOTS - 1)];
}

static void learn_comm(struct td_parser *p, const char *comm, int tid, uint32_t asked,
		       uint64_t ts)
{
	struct comm_slot *s;

	if (tid <= 0)
		return;
	s = comm_slot(p, tid);
	s->tid = tid;
	s->asked = asked;
	s->ts = ts;
	td_comm_copy(s->comm, comm);
}

/* The comm hook's period of @ts; never 0, which means "from a record". */
static inline uint32_t ask_period(uint64_t ts)
{
	return (uint32_t)(ts >> COMM_ASK_SHIFT) + 1 ?: 1;
}

/*
 * A thread no record named: the comm hook's name (live: /proc), kept a
 * while; without a hook, @tep's comm table (a trace.dat's saved cmdlines).
 */
static void comm_of(struct td_parser *p, char *dst, int tid, uint64_t ts)
{
	struct comm_slot *s = comm_slot(p, tid);
	uint32_t now = ask_period(ts);

	/*
	 * A hook's (or fork's) name holds a period from when it was given,
	 * not only to the end of the period it was given in: a child forked
	 * just before a period ends, its execve entry just after, was asked
	 * of /proc, which had the program it ran by then ("true", not "bash").
	 */
	if (tid > 0 && s->tid == tid &&
	    (!s->asked || s->asked == now || ts < s->ts + (1ULL << COMM_ASK_SHIFT))) {
		memcpy(dst, s->comm, TD_COMM_LEN);
		return;
	}
	if (tid > 0 && p->comm_fn) {
		char comm[TD_COMM_LEN] = { 0 };

		/*
		 * Not @tep's names: read at start, a reused pid's would be
		 * wrong. A thread gone since it was last named keeps that name.
		 */
		if (!p->comm_fn(tid, comm, p->comm_arg)) {
			if (s->tid == tid && s->comm[0] && s->comm[0] != '<')
				memcpy(comm, s->comm, TD_COMM_LEN);
			else
				set_comm(comm, "<...>", TD_COMM_LEN);
		}
		s->tid = tid;
		s->asked = now;
		s->ts = ts;
		td_comm_copy(s->comm, comm);
		memcpy(dst, s->comm, TD_COMM_LEN);
		return;
	}
	if (!tid)
		memcpy(dst, p->idle_comm, TD_COMM_LEN);
	else
		set_comm(dst, tep_data_comm_from_pid(p->tep, tid), TD_COMM_LEN);
}

/*
 * sched_switch runs as prev: its comm is the record's own. Both names are
 * 16-byte fields inside the record (min_size). Not the idle task's: each
 * CPU's is swapper/N, and every other event of tid 0 is named as the tep
 * names it (<idle>); one name keeps its profiles under one root.
 */
static void switch_comm(struct td_parser *p, struct td_event *ev, const uint8_t *data,
			uint64_t ts)
{
	uint64_t next_pid;

	if (ev->tid > 0) {
		td_comm_copy(ev->comm, (const char *)data + p->sw_prev_comm->offset);
		learn_comm(p, ev->comm, ev->tid, 0, ts);
	} else {
		comm_of(p, ev->comm, ev->tid, ts);
	}
	if (read_field(p->sw_next_pid, data, &next_pid))
		return;
	learn_comm(p, (const char *)data + p->sw_next_comm->offset, (int)next_pid, 0, ts);
}

int td_exec_comm(const char *file, size_t len, char *comm)
{
	const char *base;
	size_t n;

	len = strnlen(file, len);
	if (len > 8 && !memcmp(file, "/dev/fd/", 8))
		return -1;
	base = memrchr(file, '/', len);
	base = base ? base + 1 : file;
	n = file + len - base;
	if (!n)
		return 0;
	if (n > TD_COMM_LEN - 1)
		n = TD_COMM_LEN - 1;
	memset(comm, 0, TD_COMM_LEN);
	memcpy(comm, base, n);
	return 1;
}

/*
 * exec names the task after the file it runs (its base name, cut to 15
 * bytes), before the event is written: the event and every later one of
 * the task carry the new name, not the one the last switch gave. Traced
 * only for its names (exec_names_only), and no other record naming tasks,
 * the name is asked of the comm hook again after a while as one it gave
 * (the task may rename itself, its tid be used again), and kept once the
 * task is gone.
 */
static void exec_comm(struct td_parser *p, int tid, uint64_t ts, const uint8_t *data, int size)
{
	char name[TD_COMM_LEN];	/* learn_comm() reads all 16 bytes */
	unsigned int off, len;

	if (!td_dyn_locate(p->exec_filename, data, size, false, &off, &len) || !len)
		return;
	switch (td_exec_comm((const char *)data + off, len, name)) {
	case 0:
		return;
	case -1:
		/* fexecve(): forget the old name, the next event asks. */
		comm_slot(p, tid)->tid = 0;
		return;
	}
	learn_comm(p, name, tid, p->exec_names_only && p->comm_fn ? ask_period(ts) : 0, ts);
}

/*
 * The new task is named as its parent (child_comm, copied at the fork)
 * until it execs or a record names it, and asked of the comm hook again
 * after a while: a thread may rename itself (pthread_setname_np()), which
 * no record says. Live only: read later, with no hook, a fork's name
 * would stay a renamed thread's for good, where the trace's saved names
 * have its last. A name a later record gave, read first (a record of
 * another CPU read in an earlier batch, or parsed page by page), stays.
 */
static void fork_comm(struct td_parser *p, int tid, uint64_t ts, const uint8_t *data, int size)
{
	char name[TD_COMM_LEN] = { 0 };	/* learn_comm() reads all 16 bytes */
	const char *comm = (const char *)data + p->fork_comm->offset;
	unsigned int off, len;
	struct comm_slot *s;
	uint64_t child;

	if (read_field(p->fork_pid, data, &child) || (int)child <= 0)
		return;
	/* Now, not when the event is handed on: the child's records may be first. */
	if (p->out.fork)
		p->out.fork(tid, (int)child, ts, p->out.arg);
	if (!p->comm_fn)
		return;
	s = comm_slot(p, (int)child);
	if (s->tid == (int)child && s->ts > ts)
		return;
	if (p->fork_comm->flags & TEP_FIELD_IS_DYNAMIC) {
		if (!td_dyn_locate(p->fork_comm, data, size, false, &off, &len) || !len)
			return;
		memcpy(name, data + off, len < TD_COMM_LEN - 1 ? len : TD_COMM_LEN - 1);
		comm = name;
	}
	learn_comm(p, comm, (int)child, ask_period(ts), ts);
}

static int new_event(struct td_parser *p, struct held *h, const struct evinfo *info,
		     int cpu, int tid, uint64_t ts, const void *data, int size)
{
	struct td_event *ev;

	/* The record's copy comes in the same allocation (size >= common_size > 0). */
	ev = td_event_new_raw(p->no_raw ? 0 : size);
	if (!ev)
		return -ENOMEM;
	if (!p->no_raw)
		memcpy(ev->raw, data, size);
	ev->ts = ts;
	ev->cpu = cpu;
	ev->tid = tid;
	ev->tep_event = info->event;
	if (info->kind == K_SWITCH) {
		switch_comm(p, ev, data, ts);
	} else {
		if (info->kind == K_EXEC) {
			exec_comm(p, tid, ts, data, size);
			/*
			 * Now, as the fork: not when the event is handed on,
			 * which may wait for its CPU's next record while the
			 * task's next events, on another CPU, are named.
			 */
			if (p->out.exec)
				p->out.exec(tid, ts, p->out.arg);
		} else if (info->kind == K_FORK)
			fork_comm(p, tid, ts, data, size);
		comm_of(p, ev->comm, tid, ts);
	}
	/*
	 * Held on top of an event of the same task still waiting for
	 * followers: an interrupt's event, whose followers come first. Else
	 * the held ones are done.
	 */
	if (h->n && (!open_hold(h, tid) || h->n == HOLD_DEPTH))
		hand_on(p, h);
	h->h[h->n].ev = ev;
	h->h[h->n].kstack_seen = false;
	h->open = ++h->n;
	return 0;
}

static int on_kstack(struct td_parser *p, struct held *h, int tid, const uint8_t *data, int size)
{
	unsigned int avail = (size - p->ks_caller->offset) / 8;
	struct hold *o;
	uint64_t v;
	int32_t nr;
	int ret;

	if (read_field(p->ks_size, data, &v))
		goto bad;
	nr = (int32_t)v;
	if (nr < 0 || (unsigned int)nr > avail)
		goto bad;
	o = open_hold(h, tid);
	if (!o || o->kstack_seen) {
		p->stats.orphans++;
		hand_on(p, h);
		return 0;
	}
	joined(p, h);
	ret = td_kstacks_get(p->kstacks, o->ev, data + p->ks_caller->offset, nr);
	if (ret)
		return ret;
	o->kstack_seen = true;
	return 0;
bad:
	p->stats.bad_records++;
	return 0;
}

static int on_ustack(struct td_parser *p, struct held *h, int tid, const uint8_t *data)
{
	const uint8_t *caller = data + p->us_caller->offset;
	struct td_event *ev;
	struct hold *o;
	unsigned int nr;
	uint64_t tgid;
	int ret;

	o = open_hold(h, tid);	/* never one with its own in-place stack */
	if (!o) {
		p->stats.orphans++;
		hand_on(p, h);
		return 0;
	}
	joined(p, h);
	ev = o->ev;
	/* Unused slots are 0 (older kernels ended the list with -1). */
	for (nr = 0; nr < USTACK_ENTRIES; nr++) {
		uint64_t ip = td_get_le64(caller + 8 * nr);

		if (!ip || ip == UINT64_MAX)
			break;
	}
	ret = copy_ips(&ev->inplace_stack, caller, nr);
	if (ret)
		return ret;
	ev->inplace = true;
	closed(h);
	if (!ev->pid && !read_field(p->us_tgid, data, &tgid))
		ev->pid = (int)tgid;
	return 0;
}

static int on_cookie(struct td_parser *p, struct held *h, int tid, const uint8_t *data)
{
	struct hold *o;
	uint64_t cookie;

	if (read_field(p->ck_cookie, data, &cookie)) {
		p->stats.bad_records++;
		return 0;
	}
	p->stats.cookies++;
	o = open_hold(h, tid);	/* never one with a cookie */
	if (!o) {
		p->stats.orphans++;
		hand_on(p, h);
		return 0;
	}
	joined(p, h);
	o->ev->has_cookie = true;
	o->ev->cookie = cookie;
	closed(h);
	return 0;
}

/* A file record: into the file table; the held event stays (another CPU's may not). */
static int on_ufile(struct td_parser *p, const uint8_t *data, int size)
{
	p->stats.file_records++;
	if (!p->ft)
		return 0;
	switch (td_filetab_add_record(p->ft, p->ev_ufile, data, size)) {
	case -EINVAL:
		p->stats.bad_records++;
		return 0;
	case -ENOMEM:
		return -ENOMEM;
	default:
		return 0;
	}
}

/* A deferred user stack: straight to the stitcher, the held event stays. */
static int on_unwind(struct td_parser *p, int cpu, int tid, uint64_t ts, const uint8_t *data,
		     int size)
{
	struct td_ufile_area area;
	struct td_ustack *us;
	unsigned int off, len, bad;
	uint64_t cookie, v;

	if (read_field(p->uw_cookie, data, &cookie) ||
	    !td_dyn_locate(p->uw.stack, data, size, false, &off, &len) || len % 8) {
		p->stats.bad_records++;
		return 0;
	}
	us = td_ustack_new();
	if (!us)
		return -ENOMEM;
	/* The same stack as before (IPs and file identity) shares one decoded copy. */
	if (p->uw.has_files)
		td_ustack_locate_files(&p->uw, data, size, false, len / 8, &area);
	if (td_ustacks_get(p->ustacks, us, data + off, len / 8, p->uw.has_files ? &area : NULL,
			   &bad)) {
		td_ustack_free(us);
		return -ENOMEM;
	}
	if (bad)
		p->stats.bad_file_info++;
	us->ts = ts;
	us->cpu = cpu;
	us->tid = tid;
	us->cookie = cookie;
	if (p->uw.dropped && !read_field(p->uw.dropped, data, &v))
		us->dropped = v;
	if (p->uw.flags && !read_field(p->uw.flags, data, &v))
		us->flags = v;
	if (p->uw.tgid && !read_field(p->uw.tgid, data, &v))
		us->tgid = (int32_t)v;
	if (us->dropped)
		p->stats.stacks_cut++;
	p->out.stack(us, p->out.arg);
	p->stats.stacks++;
	return 0;
}

static int parse_record(struct td_parser *p, int cpu, uint64_t ts, void *data, int size)
{
	struct held *h = &p->held[cpu];
	struct evinfo *info;
	bool unknown;
	int tid;

	p->stats.records++;
	p->stats.bytes += size;
	if (ts > p->stats.last_ts)
		p->stats.last_ts = ts;
	if (size < p->common_size) {
		p->stats.bad_records++;
		return 0;
	}
	info = lookup_info(p, data, size, &unknown);
	if (!info) {
		/* A record we cannot name still says the held event is complete. */
		hand_on(p, h);
		if (!unknown)
			return -ENOMEM;
		p->stats.unknown++;
		return 0;
	}
	if (size < info->min_size) {
		p->stats.bad_records++;
		return 0;
	}
	tid = (int32_t)td_get_le32((const uint8_t *)data + p->pid_off);

	switch (info->kind) {
	case K_KSTACK:
		return on_kstack(p, h, tid, data, size);
	case K_USTACK:
		return on_ustack(p, h, tid, data);
	case K_COOKIE:
		return on_cookie(p, h, tid, data);
	case K_UNWIND:
		return on_unwind(p, cpu, tid, ts, data, size);
	case K_UFILE:
		return on_ufile(p, data, size);
	case K_SWITCH:
	case K_EXEC:
	case K_FORK:
	case K_OTHER:
		break;
	}
	if (!dyn_ok(info, data, size)) {
		p->stats.bad_records++;
		return 0;
	}
	return new_event(p, h, info, cpu, tid, ts, data, size);
}

static int carry_flush(struct td_parser *p);

int td_parser_record(struct td_parser *p, int cpu, struct tep_record *rec)
{
	if (!p || !rec || !rec->data || cpu < 0 || cpu >= p->nr_cpus || rec->size < 0)
		return -EINVAL;
	carry_flush(p);
	if (rec->missed_events) {
		p->stats.missed_pages++;
		if (rec->missed_events > 0)
			p->stats.missed_events += rec->missed_events;
		hand_on(p, &p->held[cpu]);
	}
	return parse_record(p, cpu, rec->ts, rec->data, rec->size);
}

/* ---- sub-buffers ---- */

/* One sub-buffer being walked: what its header says, and where the walk is. */
struct page_walk {
	const uint8_t *buf;
	int size;
	uint64_t word;			/* the header's commit word */
	unsigned int commit, limit;
	struct td_pagewalk w;
};

/* The header's bookkeeping, before the first record of @buf. */
static void page_open(struct td_parser *p, int cpu, struct page_walk *pw, const void *buf,
		      int size)
{
	pw->buf = buf;
	pw->size = size;
	p->stats.pages++;
	pw->word = td_get_le64(pw->buf + 8);
	pw->commit = pw->word & TD_PAGE_COMMIT_MASK;
	pw->limit = size - TD_PAGE_HDR_SIZE;
	if (pw->commit <= pw->limit)
		pw->limit = pw->commit;

	if (pw->word & TD_PAGE_MISSED_EVENTS) {
		/* Records were lost before this page: the held one's followers may be too. */
		p->stats.missed_pages++;
		hand_on(p, &p->held[cpu]);
	}
	td_pagewalk_start(&pw->w, pw->buf + TD_PAGE_HDR_SIZE, pw->limit, td_get_le64(pw->buf));
}

/* After the last record: a cut chain, and the count of lost events the page stores. */
static void page_close(struct td_parser *p, int cpu, struct page_walk *pw)
{
	const unsigned int hdr = TD_PAGE_HDR_SIZE;

	if (pw->commit > pw->limit)
		pw->w.corrupt = true;
	if (pw->w.corrupt) {
		p->stats.bad_pages++;
		/* What was cut may have held the followers: nothing may join across it. */
		hand_on(p, &p->held[cpu]);
	} else if ((pw->word & TD_PAGE_MISSED_EVENTS) && (pw->word & TD_PAGE_MISSED_STORED) &&
		   hdr + pw->commit + 8 <= (unsigned int)pw->size) {
		p->stats.missed_events += td_get_le64(pw->buf + hdr + pw->commit);
	}
}

int td_parser_page(struct td_parser *p, int cpu, void *page, int size)
{
	struct page_walk pw;
	const uint8_t *data;
	unsigned int len;
	int n = 0, ret = 0, err;
	uint64_t ts;

	if (!p || !page || cpu < 0 || cpu >= p->nr_cpus || size < (int)TD_PAGE_HDR_SIZE)
		return -EINVAL;
	/* Records a batch kept come first: they were read before this page. */
	carry_flush(p);
	page_open(p, cpu, &pw, page, size);
	while (td_pagewalk_next(&pw.w, &ts, &data, &len)) {
		err = parse_record(p, cpu, ts, (void *)data, (int)len);
		if (err)
			ret = err;
		n++;
	}
	page_close(p, cpu, &pw);
	return ret ? ret : n;
}

/*
 * One CPU's sub-buffers of a batch: the one being walked (pw), its next
 * record (ts, data, len) when has_rec, and where to look for its next one.
 */
struct batch_cpu {
	int cpu;
	unsigned int next;		/* index in the batch to look for its next page from */
	bool has_rec;
	uint64_t ts;
	const uint8_t *data;
	unsigned int len;
	struct page_walk pw;
};

/* batch_next() past the end of a page: the CPU's next pages opened; false: none left. */
static __attribute__((noinline)) bool batch_next_page(struct td_parser *p, struct batch_cpu *bc,
						      const struct td_page_ref *pages,
						      unsigned int n)
{
	for (;;) {
		if (bc->pw.buf) {
			page_close(p, bc->cpu, &bc->pw);
			bc->pw.buf = NULL;
		}
		while (bc->next < n && pages[bc->next].cpu != bc->cpu)
			bc->next++;
		if (bc->next == n)
			return false;
		page_open(p, bc->cpu, &bc->pw, pages[bc->next].page, pages[bc->next].size);
		bc->next++;
		if (td_pagewalk_next(&bc->pw.w, &bc->ts, &bc->data, &bc->len))
			return true;
	}
}

/*
 * The next record of @bc, opening its next pages as needed; false: none
 * left. Sets has_rec. Once a record, inline: the next one of the same
 * page is the usual case.
 */
static inline bool batch_next(struct td_parser *p, struct batch_cpu *bc,
			      const struct td_page_ref *pages, unsigned int n)
{
	bc->has_rec = (bc->pw.buf && td_pagewalk_next(&bc->pw.w, &bc->ts, &bc->data, &bc->len)) ||
		      batch_next_page(p, bc, pages, n);
	return bc->has_rec;
}

/* Parse @pages in the order given, as td_parser_page() would one by one. */
static int pages_in_order(struct td_parser *p, const struct td_page_ref *pages, unsigned int n)
{
	int count = 0, ret = 0, err;

	for (unsigned int i = 0; i < n; i++) {
		err = td_parser_page(p, pages[i].cpu, pages[i].page, pages[i].size);
		if (err < 0)
			ret = err;
		else
			count += err;
	}
	return ret ? ret : count;
}

/* At least @want elements of @size at *@buf, *@cap of them now. */
static int room(void *buf, size_t *cap, size_t want, size_t size)
{
	void *old, *b;

	if (want <= *cap)
		return 0;
	/* Through memcpy(): *@buf is a pointer of another type. */
	memcpy(&old, buf, sizeof(old));
	b = realloc(old, want * size);
	if (!b)
		return -ENOMEM;
	memcpy(buf, &b, sizeof(b));
	*cap = want;
	return 0;
}

/*
 * Keep what is left of a batch cut short for the next one: each CPU's
 * cursor, its page copied (with the record it stands on), and the pages
 * of that CPU it has not opened yet. Copied, as the caller reuses its
 * buffers. Returns -ENOMEM if they could not be kept; then they are
 * parsed now, in the order read, as a batch without a cut would.
 */
static int carry_keep(struct td_parser *p, struct batch_cpu *bc, unsigned int nr,
		      const struct td_page_ref *all, unsigned int n)
{
	struct td_carry *next = &p->carry[!p->cur], *cur = &p->carry[p->cur];
	size_t bytes = 0, off = 0, refs = 0;
	unsigned int i, j;

	for (i = 0; i < nr; i++) {
		bytes += (size_t)bc[i].pw.size;
		for (j = bc[i].next; j < n; j++)
			if (all[j].cpu == bc[i].cpu) {
				bytes += (size_t)all[j].size;
				refs++;
			}
	}
	if (room(&next->buf, &next->cap, bytes, 1) ||
	    room(&next->refs, &next->cap_refs, refs, sizeof(*next->refs)) ||
	    room(&next->bc, &next->cap_bc, nr, sizeof(*next->bc)))
		return -ENOMEM;
	next->nr_refs = 0;
	for (i = 0; i < nr; i++) {
		struct batch_cpu *b = &next->bc[i];
		uint8_t *copy = next->buf + off;

		*b = bc[i];
		memcpy(copy, b->pw.buf, (size_t)b->pw.size);
		b->data = copy + (b->data - b->pw.buf);
		b->pw.w.d = copy + (b->pw.w.d - b->pw.buf);
		b->pw.buf = copy;
		b->next = 0;
		off += (size_t)b->pw.size;
		for (j = bc[i].next; j < n; j++) {
			if (all[j].cpu != bc[i].cpu)
				continue;
			memcpy(next->buf + off, all[j].page, (size_t)all[j].size);
			next->refs[next->nr_refs++] = (struct td_page_ref){
				all[j].cpu, next->buf + off, all[j].size
			};
			off += (size_t)all[j].size;
		}
	}
	next->nr_bc = nr;
	cur->nr_bc = cur->nr_refs = 0;
	p->cur = !p->cur;
	return 0;
}

/*
 * The pages to walk: what the last call kept first, then @pages. -ENOMEM,
 * with nothing read, if they cannot be put in one list.
 */
static int merge_list(struct td_parser *p, const struct td_page_ref *pages, unsigned int n,
		      const struct td_page_ref **all, unsigned int *nr_all)
{
	struct td_carry *cur = &p->carry[p->cur];
	unsigned int total = cur->nr_refs + n;

	if (!p->batch) {
		p->batch = calloc(p->nr_cpus, sizeof(*p->batch));
		if (!p->batch)
			return -ENOMEM;
	}
	*all = pages;
	*nr_all = n;
	if (!cur->nr_refs)
		return 0;
	if (!n) {
		*all = cur->refs;
		*nr_all = cur->nr_refs;
		return 0;
	}
	if (room(&p->all, &p->cap_all, total, sizeof(*p->all)))
		return -ENOMEM;
	memcpy(p->all, cur->refs, cur->nr_refs * sizeof(*p->all));
	memcpy(p->all + cur->nr_refs, pages, n * sizeof(*p->all));
	*all = p->all;
	*nr_all = total;
	return 0;
}

/* Every record at or after @cut waits for the next call (or td_parser_flush()). */
static int merge(struct td_parser *p, const struct td_page_ref *all, unsigned int n,
		 uint64_t cut)
{
	struct td_carry *cur = &p->carry[p->cur];
	struct batch_cpu *bc = p->batch;
	unsigned int i, j, nr = 0, seen = 0, best;
	int count = 0, ret = 0, err;

	/* A cursor per CPU, its first record read; a CPU without any is done. */
	for (i = 0; i < cur->nr_bc; i++)
		bc[seen++] = cur->bc[i];
	for (i = 0; i < n; i++) {
		for (j = 0; j < seen && bc[j].cpu != all[i].cpu; j++)
			;
		if (j < seen)
			continue;
		bc[seen] = (struct batch_cpu){ .cpu = all[i].cpu, .next = i };
		bc[seen].has_rec = batch_next(p, &bc[seen], all, n);
		seen++;
	}
	for (i = 0; i < seen; i++)
		if (bc[i].has_rec)
			bc[nr++] = bc[i];
	/*
	 * Oldest record first; on a tie, the CPU met first in the batch. The
	 * CPUs of one batch are few: a scan is cheaper than a heap. The CPU
	 * found oldest goes on in a run, without a scan per record, while
	 * its records stay before the cut and before the others' next ones:
	 * strictly before those of CPUs met earlier, at the latest at the
	 * time of those met later.
	 */
	while (nr) {
		uint64_t before = cut, upto = UINT64_MAX;
		struct batch_cpu *b;

		best = 0;
		for (i = 1; i < nr; i++)
			if (bc[i].ts < bc[best].ts)
				best = i;
		for (i = 0; i < nr; i++) {
			if (i < best && bc[i].ts < before)
				before = bc[i].ts;
			else if (i > best && bc[i].ts < upto)
				upto = bc[i].ts;
		}
		b = &bc[best];
		if (b->ts >= cut)
			break;
		do {
			err = parse_record(p, b->cpu, b->ts, (void *)b->data, (int)b->len);
			if (err)
				ret = err;
			count++;
		} while (batch_next(p, b, all, n) && b->ts < before && b->ts <= upto);
		if (!b->has_rec) {
			nr--;
			memmove(&bc[best], &bc[best + 1], (nr - best) * sizeof(*bc));
		}
	}
	if (nr && carry_keep(p, bc, nr, all, n)) {
		/* Nothing kept: the rest now, each CPU's in order. */
		ret = -ENOMEM;
		for (i = 0; i < nr; i++) {
			do {
				parse_record(p, bc[i].cpu, bc[i].ts, (void *)bc[i].data,
					     (int)bc[i].len);
				count++;
			} while (batch_next(p, &bc[i], all, n));
		}
		nr = 0;
	}
	if (!nr)
		cur->nr_bc = cur->nr_refs = 0;
	return ret ? ret : count;
}

/* What an earlier batch kept, parsed before anything else is. */
static int carry_flush(struct td_parser *p)
{
	const struct td_carry *c = &p->carry[p->cur];

	/* Without new pages, the list is the carry's own: nothing to allocate. */
	return c->nr_bc ? merge(p, c->refs, c->nr_refs, UINT64_MAX) : 0;
}

int td_parser_pages_until(struct td_parser *p, const struct td_page_ref *pages, unsigned int n,
			  uint64_t cut)
{
	const struct td_page_ref *all;
	unsigned int i, nr_all;
	int ret;

	if (!p || (n && !pages))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!pages[i].page || pages[i].cpu < 0 || pages[i].cpu >= p->nr_cpus ||
		    pages[i].size < (int)TD_PAGE_HDR_SIZE)
			return -EINVAL;
	if (!p->carry[p->cur].nr_bc && cut == UINT64_MAX) {
		/* A batch of one CPU is one CPU's pages in order: nothing to merge. */
		for (i = 1; i < n && pages[i].cpu == pages[0].cpu; i++)
			;
		if (i >= n)
			return pages_in_order(p, pages, n);
	}
	if (merge_list(p, pages, n, &all, &nr_all)) {
		/* Out of memory: in the order read, as before batches, but nothing lost. */
		carry_flush(p);
		ret = pages_in_order(p, pages, n);
		return ret < 0 ? ret : -ENOMEM;
	}
	return merge(p, all, nr_all, cut);
}

int td_parser_pages(struct td_parser *p, const struct td_page_ref *pages, unsigned int n)
{
	return td_parser_pages_until(p, pages, n, UINT64_MAX);
}

/* ---- time ---- */

void td_parser_advance(struct td_parser *p, uint64_t now_ns)
{
	struct held *h;
	int cpu;

	for (cpu = 0; cpu < p->nr_cpus; cpu++) {
		h = &p->held[cpu];
		if (h->n && now_ns >= h->h[0].ev->ts && now_ns - h->h[0].ev->ts >= p->hold_ns)
			hand_on(p, h);
	}
}

uint64_t td_parser_held_since(const struct td_parser *p)
{
	uint64_t oldest = UINT64_MAX;
	int cpu;

	const struct td_carry *c = &p->carry[p->cur];

	for (cpu = 0; cpu < p->nr_cpus; cpu++)
		if (p->held[cpu].n && p->held[cpu].h[0].ev->ts < oldest)
			oldest = p->held[cpu].h[0].ev->ts;
	/* Not parsed yet, so not held, but not handed on either. */
	for (unsigned int i = 0; i < c->nr_bc; i++)
		if (c->bc[i].ts < oldest)
			oldest = c->bc[i].ts;
	return oldest;
}

void td_parser_flush(struct td_parser *p)
{
	int cpu;

	carry_flush(p);
	for (cpu = 0; cpu < p->nr_cpus; cpu++)
		hand_on(p, &p->held[cpu]);
}
