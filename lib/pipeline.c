// SPDX-License-Identifier: GPL-2.0
/*
 * The pipeline (see include/trace-defer/pipeline.h): parser -> stitcher ->
 * resolve -> sinks, owned and wired here once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event-parse.h>

#include <trace-defer/pipeline.h>

#include <trace-defer/task.h>

#include "kstack.h"
#include "stackmemo.h"
#include "tracerframes.h"
#include "monotime.h"

struct sink {
	const struct td_sink_ops *ops;
	void *priv;
	bool gone;			/* returned -EPIPE: not called again */
};

struct td_pipeline {
	struct td_pipeline_config cfg;
	struct td_parser *parser;
	struct td_stitcher *stitcher;
	struct td_filetab *files;
	struct td_symbolizer *sym;	/* NULL: symbolize off */
	/* Symbolize off, perf maps saved: a symbolizer that only copies them. */
	struct td_symbolizer *jit_sym;
	struct td_tgid_cache *tgid;	/* thread -> process */
	struct td_memo *memo;		/* named stacks; NULL: cfg.no_memo */
	struct sink *sinks;
	unsigned int nr_sinks;
	struct td_frame *kframes, *uframes;
	unsigned int kcap, ucap;
	uint64_t now_ns;
	uint64_t sym_restart_ns;	/* now_ns of the symbolizer's last restart, 0: none */
	uint64_t ksyms_check_ns;	/* now_ns kallsyms was last read again */
	bool stacks_have_files;		/* a user stack record said its files */
	bool fields_read;		/* a sink reads events' fields (not no_fields) */
	bool jit_saved;			/* cfg.perf_maps_saved was given */
	int error;			/* first failed sink write */
	const char *error_sink;
	char **names;			/* "system:name" by event id, each its own string */
	unsigned int nr_names;
	int *pids;			/* cfg.pids, our copy */
	/* cfg.exec_names_only: the event that only names tasks, and its own emitted */
	const struct tep_event *naming_event;
	uint64_t naming_emitted[TD_NR_STATUS];
	/* cfg.pids: the events of other processes, by status (counted in st.other_pids) */
	uint64_t other_emitted[TD_NR_STATUS];
	struct td_pipeline_stats st;	/* the counters of this file; the rest asked for */
	/* What the symbolizer held just after its last restart: no restart frees that. */
	uint64_t sym_kept_bytes;
	/* cfg.fork_names_only: the other event that only names tasks */
	const struct tep_event *naming_fork;
};

/*
 * "system:name" of @event: one string per event id, made once and kept for
 * the pipeline's life, so that sinks may tell events apart by the pointer
 * (output.h). "unknown" when out of memory.
 */
static const char *event_name(struct td_pipeline *pl, const struct tep_event *event)
{
	unsigned int id;

	if (!event || event->id < 0)
		return "unknown";
	id = (unsigned int)event->id;
	if (id < pl->nr_names && pl->names[id])
		return pl->names[id];
	if (id >= pl->nr_names) {
		unsigned int n = id + 64;
		char **grown = realloc(pl->names, n * sizeof(*grown));

		if (!grown)
			return "unknown";
		memset(grown + pl->nr_names, 0, (n - pl->nr_names) * sizeof(*grown));
		pl->names = grown;
		pl->nr_names = n;
	}
	if (asprintf(&pl->names[id], "%s:%s", event->system, event->name) < 0) {
		pl->names[id] = NULL;
		return "unknown";
	}
	return pl->names[id];
}

/* Make room for @nr frames in *buf. Returns 0 or -ENOMEM. */
static int frames(struct td_frame **buf, unsigned int *cap, unsigned int nr)
{
	struct td_frame *n;

	if (nr <= *cap)
		return 0;
	n = realloc(*buf, nr * sizeof(*n));
	if (!n)
		return -ENOMEM;
	*buf = n;
	*cap = nr;
	return 0;
}

static const struct td_ips *user_ips(const struct td_event *ev, const struct td_ustack *us,
				     enum td_status status)
{
	switch (status) {
	case TD_STITCHED:
	case TD_UNWIND_FAILED:
		return us ? &us->ips : NULL;
	case TD_INPLACE:
		return &ev->inplace_stack;
	default:
		return NULL;
	}
}

static void name_kernel(struct td_pipeline *pl, struct td_frame *f, uint64_t addr,
			bool return_addr)
{
	memset(f, 0, sizeof(*f));
	f->addr = addr;
	if (!pl->sym)
		return;
	if (pl->cfg.hooks.kernel_sym)
		pl->cfg.hooks.kernel_sym(addr, return_addr, f, pl->cfg.hooks.arg);
	else
		td_sym_kernel(pl->sym, addr, return_addr, f);
}

/*
 * @own, as named just now into the pipeline's frame buffer: the memo's copy
 * when it may be kept (@keep) and the memo took it, else @own itself.
 */
static const struct td_memo_stack *keep_named(struct td_pipeline *pl, const struct td_memo_key *key,
					      bool keep, struct td_memo_stack *own)
{
	const struct td_memo_stack *kept;

	if (keep && pl->memo) {
		kept = td_memo_add(pl->memo, key, own);
		if (kept)
			return kept;
	}
	return own;
}

/*
 * The kernel frames of @ev, named now or found named before. The parser
 * shares one block among the events of one kernel stack: the frames the
 * memo keeps for it are kept in the block too, found again without a hash.
 */
static const struct td_memo_stack *kernel_frames(struct td_pipeline *pl, const struct td_event *ev,
						 unsigned int nr, struct td_memo_stack *own)
{
	/* Named by address alone, from a table that never changes: no stamp. */
	struct td_memo_key key = { .kind = TD_MEMO_KERNEL, .ips = ev->kstack.ips, .nr = nr };
	const struct td_ips *ips = &ev->kstack;
	bool shared = pl->memo && nr == ips->nr && td_kstack_is_shared(ev);
	const struct td_memo_stack *found;

	if (shared && (found = td_kstack_slot_get(ips->ips, td_memo_epoch(pl->memo)))) {
		td_memo_used(pl->memo, found);
		pl->st.stacks_reused++;
		return found;
	}
	if (pl->memo && (found = td_memo_find(pl->memo, &key))) {
		pl->st.stacks_reused++;
		if (shared)
			td_kstack_slot_set(ips->ips, td_memo_epoch(pl->memo), found);
		return found;
	}
	pl->st.stacks_named++;
	*own = (struct td_memo_stack){ .frames = pl->kframes, .nr = nr };
	for (unsigned int i = 0; i < nr; i++) {
		/* The first is where the stack was taken, the others return addresses. */
		name_kernel(pl, &pl->kframes[i], ips->ips[i], i > 0);
		own->named += pl->kframes[i].symbol != NULL;
	}
	own->tracer = td_tracer_frames(pl->kframes, nr);
	found = keep_named(pl, &key, true, own);
	if (shared && found != own)
		td_kstack_slot_set(ips->ips, td_memo_epoch(pl->memo), found);
	return found;
}

/*
 * What a user stack's names depend on: the file table and the files found
 * (file identity), or the maps of the process as cached now. Asked twice
 * per user stack, as find_named() is: both inline, a call costs as much.
 */
static __always_inline uint64_t user_stamp(struct td_pipeline *pl, const struct td_memo_key *key)
{
	switch (key->kind) {
	case TD_MEMO_UFILES:
		return td_filetab_gen(pl->files) << 32 |
		       (pl->sym ? (uint32_t)td_sym_files_gen(pl->sym) : 0);
	case TD_MEMO_UMAPS:
		return td_sym_maps_gen(pl->sym, key->pid);
	default:
		return 0;
	}
}

/*
 * And for a stack kept for one process (@pid > 0): its JIT's perf map as
 * read so far, whose frames it may not have named yet (its line written
 * later); they are once the map gave new entries. Stacks kept for any
 * process hold no JIT frame.
 */
static inline uint64_t jit_stamp(struct td_pipeline *pl, int pid)
{
	return pl->sym && pid > 0 ? td_sym_jit_gen(pl->sym, pid) * 0x9e3779b97f4a7c15ULL : 0;
}

/*
 * A shared user stack's slots: the first for frames named for any process,
 * the others for frames named for one (a forked server's workers share
 * their layout; their stacks are the same bytes).
 */
#define ANY_PROCESS_WAY	0

static unsigned int memo_way(int pid)
{
	return pid ? 1 + (unsigned int)pid % (TD_STACK_SLOTS - 1) : ANY_PROCESS_WAY;
}

/* @key's frames, kept in the memo, found in a shared stack's slots or hashed. */
static __always_inline const struct td_memo_stack *
find_named(struct td_pipeline *pl, const uint64_t *shared, const struct td_memo_key *key,
	   unsigned int way)
{
	uint64_t epoch = td_memo_epoch(pl->memo);
	const struct td_memo_stack *found;

	if (shared && (found = td_stack_slot_get(shared, epoch, way)) &&
	    td_memo_stack_is(found, key)) {
		td_memo_used(pl->memo, found);
		return found;
	}
	found = td_memo_find(pl->memo, key);
	if (found && shared)
		td_stack_slot_set(shared, epoch, way, found);
	return found;
}

/*
 * The user frames of @uips, named now or found named before. From the
 * stack record's file identity when it has some; /proc is read then only
 * for a file found nowhere else, through the root of @pid (0: never).
 * Otherwise through the maps of @pid, if live (frame 0 is where the task
 * was; the others are return addresses). A stack named through maps is
 * kept only if every frame was found in maps that did not change while it
 * was named: a miss re-reads them later, and must still be able to.
 * A stack named from file identity whose files were all found without the
 * process's root is kept for any process (one id for every worker of a
 * forked server); one with a recorded file found nowhere is kept for its
 * process, and looked for again (through the root of its process) only
 * once it is named again: a new file record, a file found for another
 * stack, or another process.
 */
static const struct td_memo_stack *user_frames(struct td_pipeline *pl, const struct td_ustack *us,
					       const struct td_ips *uips, unsigned int nr, int pid,
					       int jit_pid, uint64_t ts, struct td_memo_stack *own)
{
	struct td_memo_key key = { .ips = uips->ips, .nr = nr, .pid = pid };
	const uint64_t *shared = NULL;
	const struct td_memo_stack *found;
	struct td_frame *f = pl->uframes;
	bool keep = true, own_process = false;
	uint64_t before;

	if (us && us->files && uips == &us->ips) {
		key.kind = TD_MEMO_UFILES;
		key.files = us->files;
	} else if (pl->sym && pid > 0) {
		key.kind = TD_MEMO_UMAPS;
		/*
		 * Unwound before its process's last exec: the maps it had then.
		 * A deferred stack is unwound on the way back to user space.
		 */
		td_sym_set_when(pl->sym, us ? us->ts : ts);
	} else {
		key.kind = TD_MEMO_URAW;
		/* Named from its process's saved perf map: kept for that process. */
		key.pid = jit_pid;
	}
	key.stamp = before = user_stamp(pl, &key);
	/* A shared stack's block remembers what it was named last: no hash then. */
	if (pl->memo && us && uips == &us->ips && td_ustack_is_shared(us))
		shared = uips->ips;
	if (pl->memo && key.kind == TD_MEMO_UFILES) {
		/* Named for any process, else for this one (-1: for none). */
		key.pid = 0;
		found = find_named(pl, shared, &key, ANY_PROCESS_WAY);
		key.pid = pid > 0 ? pid : jit_pid > 0 ? jit_pid : -1;
		if (found)
			goto reused;
	}
	key.stamp = before ^ jit_stamp(pl, key.pid);
	if (pl->memo && (found = find_named(pl, shared, &key, memo_way(key.pid))))
		goto reused;
	pl->st.stacks_named++;
	*own = (struct td_memo_stack){ .frames = f, .nr = nr };
	for (unsigned int i = 0; i < nr; i++, f++) {
		switch (key.kind) {
		case TD_MEMO_UFILES:
			if (td_sym_ufile_pid(pl->sym, pl->files, &us->files[i], pid, uips->ips[i],
					     i > 0, f))
				own_process = true;
			if (f->file_kind == TD_FILE_IN && !f->object)
				own->fileid_unknown++;
			else if (f->file_kind == TD_FILE_IN && f->symbol)
				own->fileid_named++;
			break;
		case TD_MEMO_UMAPS:
			if (td_sym_user(pl->sym, pid, uips->ips[i], i > 0, f))
				keep = false;
			break;
		default:
			*f = (struct td_frame){ .addr = uips->ips[i] };
			break;
		}
		if (td_sym_jit_candidate(f)) {
			/*
			 * No process may be asked (a recording read later), or
			 * its maps were never read (gone before: a short-lived
			 * JIT): a perf map saved with the recording, or left
			 * behind, may name it.
			 */
			if (jit_pid > 0 &&
			    (pid <= 0 || (key.kind == TD_MEMO_UMAPS && !td_sym_maps_gen(pl->sym, pid))))
				td_sym_jit(pl->sym, jit_pid, uips->ips[i], i > 0, f);
			/* Named or not, by one process's map: not for any other. */
			if (pid > 0 || jit_pid > 0)
				own_process = true;
		}
		own->named += f->symbol != NULL;
	}
	key.stamp = user_stamp(pl, &key);
	if (key.kind == TD_MEMO_UMAPS && key.stamp != before)
		keep = false;
	if (key.kind == TD_MEMO_UFILES)
		key.pid = own_process ? (pid > 0 ? pid : jit_pid > 0 ? jit_pid : -1) : 0;
	/* As read after naming: a map read for the first time just now counts. */
	key.stamp ^= jit_stamp(pl, key.pid);
	found = keep_named(pl, &key, keep, own);
	if (shared && found != own)
		td_stack_slot_set(shared, td_memo_epoch(pl->memo), memo_way(key.pid), found);
	return found;
reused:
	pl->st.stacks_reused++;
	return found;
}

/* Is @pid one of cfg.pids? A few are given (-p), so a scan. */
static bool pid_wanted(const struct td_pipeline *pl, int pid)
{
	for (unsigned int i = 0; i < pl->cfg.nr_pids; i++)
		if (pl->pids[i] == pid)
			return true;
	return false;
}

/*
 * @res to every sink; those that draw profiles (no_tracer_frames) get its
 * kernel stack without its @tracer innermost frames, under the same id:
 * the count is the stack's own, so the id still names one list of frames.
 */
static void to_sinks(struct td_pipeline *pl, const struct td_resolved *res, unsigned int tracer)
{
	const struct td_resolved *cut = NULL;	/* made for the first sink that wants it */
	struct td_resolved trimmed;

	pl->st.resolved++;
	for (unsigned int i = 0; i < pl->nr_sinks; i++) {
		struct sink *s = &pl->sinks[i];
		const struct td_resolved *r = res;
		int ret;

		if (s->gone)
			continue;
		if (tracer && s->ops->no_tracer_frames) {
			if (!cut) {
				trimmed = *res;
				trimmed.kframes += tracer;
				trimmed.nr_kframes -= tracer;
				cut = &trimmed;
			}
			r = cut;
		}
		ret = s->ops->write(s->priv, r);
		if (!ret)
			continue;
		if (ret == -EPIPE) {
			s->gone = true;
			pl->st.broken = true;
			continue;
		}
		pl->st.sink_errors++;
		if (!pl->error) {
			pl->error = ret;
			pl->error_sink = s->ops->name;
		}
	}
}

/* The stitcher's emit callback: name the frames and the process, then the sinks. */
static void resolve(const struct td_event *ev, const struct td_ustack *us,
		    enum td_status status, void *arg)
{
	struct td_pipeline *pl = arg;
	const struct td_ips *uips = user_ips(ev, us, status);
	unsigned int nk = ev->kstack.nr, nu = uips ? uips->nr : 0;
	const struct td_memo_stack *ks, *s;
	struct td_memo_stack kown, uown;
	struct td_resolved res = { 0 };
	struct td_event copy;
	bool live = true;
	int maps_pid, jit_pid, pid = ev->pid;

	/* It came only to meet its deferred stack: nobody asked for it. */
	if ((pl->naming_event && ev->tep_event == pl->naming_event) ||
	    (pl->naming_fork && ev->tep_event == pl->naming_fork)) {
		pl->naming_emitted[status]++;
		return;
	}
	pl->st.emitted++;
	if (pl->cfg.stage == TD_PIPE_STITCH)
		return;
	if (pl->cfg.hooks.task_live && ev->tid > 0)
		live = pl->cfg.hooks.task_live(ev->tid, ev->comm, ev->ts, pl->cfg.hooks.arg);
	/* The records may not say which process the thread belongs to. */
	if (pid > 0)
		td_tgid_note(pl->tgid, ev->tid, pid, pl->now_ns);
	else if (ev->tid > 0 && live)
		pid = td_tgid_lookup(pl->tgid, ev->tid, pl->now_ns);
	if (ev->tid > 0 && pid <= 0)
		pl->st.no_pid++;
	/* Before any frame is named: most of what is dropped here costs nothing more. */
	if (pl->cfg.nr_pids && !pid_wanted(pl, pid)) {
		pl->st.other_pids++;
		pl->other_emitted[status]++;
		return;
	}
	/* A recording that names nothing still keeps the JITs' maps. */
	if (pl->jit_sym && live && pid > 0)
		td_sym_jit_sync(pl->jit_sym, pid);
	/* No sink (a recording's trace.dat alone): frames would be made for nobody. */
	if (!pl->nr_sinks)
		return;
	/* /proc/TID/maps is the process's too, should the tgid be unknown. */
	maps_pid = live ? (pid > 0 ? pid : ev->tid) : 0;
	/*
	 * A JIT's perf map names its code even once it is gone: live, the map
	 * it left; read later, only the copy saved with the recording.
	 */
	jit_pid = pl->sym && pid > 0 && (live || pl->jit_saved) ? pid : 0;

	/* The sinks see the process found here: a copy only when it differs. */
	res.ev = ev;
	if (pid != ev->pid) {
		copy = *ev;
		copy.pid = pid;
		res.ev = &copy;
	}
	res.status = status;
	res.cookie = ev->has_cookie ? ev->cookie : 0;
	res.event_name = event_name(pl, ev->tep_event);
	/* Out of memory: the event still goes out, without its frames. */
	if (frames(&pl->kframes, &pl->kcap, nk) || frames(&pl->uframes, &pl->ucap, nu)) {
		pl->st.no_frames++;
		nk = nu = 0;
	}
	if (nk) {
		ks = kernel_frames(pl, ev, nk, &kown);
		pl->st.kframes_named += ks->named;
		res.kframes = ks->frames;
		res.kstack_id = ks->id;
	}
	if (nu) {
		const struct td_ustack *fus = status == TD_INPLACE ? NULL : us;

		s = user_frames(pl, fus, uips, nu, maps_pid, jit_pid, ev->ts, &uown);
		/* Only /proc/PID/maps could have named them, and the task is gone. */
		if (!live && pl->sym && !(fus && fus->files))
			pl->st.uframes_gone += nu - s->named;
		pl->st.uframes_named += s->named;
		pl->st.fileid_named += s->fileid_named;
		pl->st.fileid_unknown += s->fileid_unknown;
		res.uframes = s->frames;
		res.ustack_id = s->id;
	}
	pl->st.kframes += nk;
	pl->st.uframes += nu;
	res.nr_kframes = nk;
	res.nr_uframes = nu;
	to_sinks(pl, &res, nk ? ks->tracer : 0);
}

/* The parser's name of a thread no record named, live input only: /proc now. */
static bool comm_now(int tid, char *comm, void *arg)
{
	struct td_pipeline *pl = arg;

	return td_tgid_comm(pl->tgid, tid, comm);
}

/*
 * The parser's process lookup, live input only: at the moment a record is
 * read its task most likely still runs. A process seen for the first time
 * has its maps read right then, for the same reason.
 */
static int tgid_now(int tid, void *arg)
{
	struct td_pipeline *pl = arg;
	struct td_frame f;
	bool fresh;
	int tgid;

	tgid = td_tgid_lookup_fresh(pl->tgid, tid, pl->now_ns, &fresh);
	/*
	 * No address is mapped at 0: the lookup only reads and caches the
	 * maps. Not once the kernel records file identity: the frames are
	 * named from it, never from the maps, and a read of the maps of every
	 * new process is most of what short-lived processes cost.
	 */
	if (fresh && pl->sym && !pl->stacks_have_files) {
		/* As maps now: not those of before an exec, for whatever was named last. */
		td_sym_set_when(pl->sym, 0);
		td_sym_user(pl->sym, tgid, 0, false, &f);
	}
	return tgid;
}

/* TD_PIPE_PARSE: what the parser assembles is dropped at once. */
static void drop_event(struct td_event *ev, void *arg)
{
	td_event_free(ev);
}

static void drop_stack(struct td_ustack *us, void *arg)
{
	td_ustack_free(us);
}

/*
 * The parser's exec hook: a new program, whose maps and perf map those
 * read for the process do not describe (two non-PIE programs share their
 * addresses). The process's events after this one find them read again;
 * those before it, handed on later (from another CPU: exec may move the
 * task), still find the old ones (resolve() says when each was written).
 * The thread that exec'd leads its process by then: its tid is the pid.
 */
static void exec_seen(int tid, uint64_t ts, void *arg)
{
	struct td_pipeline *pl = arg;

	if (!pl->sym || tid <= 0 || !td_sym_exec(pl->sym, tid, ts))
		return;
	pl->st.exec_forgets++;
	/*
	 * Its maps are kept (a forked child's made from its parent's here):
	 * a process whose own events never come is forgotten when it is
	 * gone, as any process the cache knows.
	 */
	if (pl->cfg.live)
		td_tgid_note(pl->tgid, tid, tid, pl->now_ns);
}

/*
 * The parser's fork hook, as the record is read: a new process runs its
 * parent's program until it execs. Live and named from the maps only: a
 * trace.dat's processes are not asked of /proc, and file identity names
 * frames without the maps. The symbolizer takes it only when every exec
 * is traced.
 */
static void fork_seen(int tid, int child, uint64_t ts, void *arg)
{
	struct td_pipeline *pl = arg;
	int parent;

	if (!pl->sym || !pl->cfg.live || pl->stacks_have_files || !pl->cfg.execs_traced)
		return;
	parent = td_tgid_lookup(pl->tgid, tid, pl->now_ns);
	td_sym_fork(pl->sym, parent > 0 ? parent : tid, child, ts);
}

static void to_stitcher_event(struct td_event *ev, void *arg)
{
	struct td_pipeline *pl = arg;

	td_stitch_event(pl->stitcher, ev);
}

static void to_stitcher_stack(struct td_ustack *us, void *arg)
{
	struct td_pipeline *pl = arg;

	if (us->files)
		pl->stacks_have_files = true;
	td_stitch_stack(pl->stitcher, us);
}

static int setup_stitcher(struct td_pipeline *pl)
{
	struct td_stitch_config sc;
	const struct td_stitch_config *c = &pl->cfg.stitch;

	td_stitch_config_default(&sc);
	if (c->max_pending_events)
		sc.max_pending_events = c->max_pending_events;
	if (c->max_stacks)
		sc.max_stacks = c->max_stacks;
	if (c->max_wait_ns)
		sc.max_wait_ns = c->max_wait_ns;
	if (c->stack_keep_ns)
		sc.stack_keep_ns = c->stack_keep_ns;
	if (c->settle_margin_ns)
		sc.settle_margin_ns = c->settle_margin_ns;
	sc.keep_superseded = c->keep_superseded;
	sc.max_whole_events = c->max_whole_events;
	sc.pack_all = c->pack_all;
	pl->stitcher = td_stitch_new(&sc, resolve, pl);
	return pl->stitcher ? 0 : -ENOMEM;
}

static int setup_symbolizer(struct td_pipeline *pl, const struct td_pipeline_config *cfg)
{
	struct td_sym_config sc = {
		.debug_dir = cfg->debug_dir,
		.kallsyms = cfg->kallsyms,
		.perfmap_save_dir = cfg->perf_maps_save,
		.perfmap_saved_dir = cfg->perf_maps_saved,
	};
	struct td_frame f;

	if (pl->cfg.stage != TD_PIPE_ALL)
		return 0;
	errno = 0;
	/* No names, but a recording: the perf maps are copied all the same. */
	if (!pl->cfg.symbolize && cfg->perf_maps_save) {
		sc = (struct td_sym_config){ .perfmap_save_dir = cfg->perf_maps_save };
		pl->jit_sym = td_sym_new(&sc);
		return pl->jit_sym ? 0 : errno ? -errno : -ENOMEM;
	}
	if (!pl->cfg.symbolize)
		return 0;
	pl->sym = td_sym_new(&sc);
	if (!pl->sym)
		return errno ? -errno : -ENOMEM;
	/* Reading kallsyms takes long enough for a ring buffer to overrun meanwhile. */
	if (pl->cfg.load_kallsyms && !pl->cfg.hooks.kernel_sym)
		td_sym_kernel(pl->sym, 0, false, &f);
	return 0;
}

static void forget(int tgid, void *arg);

struct td_pipeline *td_pipeline_new(struct tep_handle *tep, const struct td_pipeline_config *cfg)
{
	struct td_parser_out out = { drop_event, drop_stack, NULL, NULL, NULL };
	struct td_pipeline *pl;
	int err = EINVAL;

	if (!tep || !cfg || cfg->nr_cpus <= 0 || cfg->stage > TD_PIPE_STITCH ||
	    (cfg->nr_pids && !cfg->pids))
		goto fail_early;
	err = ENOMEM;
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		goto fail_early;
	pl->cfg = *cfg;
	pl->cfg.debug_dir = NULL;	/* the caller's: only td_sym_new() reads it */
	pl->cfg.kallsyms = NULL;
	pl->jit_saved = cfg->perf_maps_saved;
	pl->cfg.perf_maps_save = pl->cfg.perf_maps_saved = NULL;	/* the same */
	pl->now_ns = td_mono_ns();
	pl->ksyms_check_ns = pl->now_ns;
	pl->cfg.saved_cmdlines = NULL;	/* the caller's too: given to the task module */
	pl->cfg.pids = NULL;
	if (cfg->nr_pids) {
		pl->pids = malloc(cfg->nr_pids * sizeof(*pl->pids));
		if (!pl->pids)
			goto fail;
		memcpy(pl->pids, cfg->pids, cfg->nr_pids * sizeof(*pl->pids));
	}
	pl->tgid = td_tgid_new(NULL);
	pl->files = td_filetab_new(0);
	if (!pl->tgid || !pl->files)
		goto fail;
	/* A trace.dat's processes are not this machine's: never asked of /proc. */
	if (cfg->live)
		td_tgid_set_gone(pl->tgid, forget, pl);
	if (cfg->live && td_tgid_set_cmdlines(pl->tgid, cfg->saved_cmdlines))
		goto fail;
	if (!cfg->no_memo && cfg->stage == TD_PIPE_ALL) {
		pl->memo = td_memo_new(0);
		if (!pl->memo)
			goto fail;
	}
	err = -setup_symbolizer(pl, cfg);
	if (err)
		goto fail;
	if (pl->sym)
		td_sym_execs_known(pl->sym, cfg->execs_traced);
	if (cfg->stage != TD_PIPE_PARSE) {
		err = -setup_stitcher(pl);
		if (err)
			goto fail;
		out = (struct td_parser_out){ to_stitcher_event, to_stitcher_stack, pl,
					      exec_seen, fork_seen };
	}
	pl->parser = td_parser_new_out(tep, &out, cfg->nr_cpus);
	if (!pl->parser) {
		err = errno;
		goto fail;
	}
	if (cfg->hold_ns)
		td_parser_set_hold_ns(pl->parser, cfg->hold_ns);
	td_parser_set_filetab(pl->parser, pl->files);
	if (cfg->live) {
		td_parser_set_tgid_fn(pl->parser, tgid_now, pl);
		td_parser_set_comm_fn(pl->parser, comm_now, pl);
	}
	if (cfg->exec_names_only)
		pl->naming_event = td_parser_set_exec_names_only(pl->parser);
	if (cfg->fork_names_only)
		pl->naming_fork = td_parser_set_fork_names_only(pl->parser);
	return pl;
fail:
	td_pipeline_free(pl);
fail_early:
	errno = err;
	return NULL;
}

void td_pipeline_free(struct td_pipeline *pl)
{
	if (!pl)
		return;
	/* The parser first: it points at the stitcher and the file table. */
	td_parser_free(pl->parser);
	td_stitch_free(pl->stitcher);
	td_sym_free(pl->sym);
	td_sym_free(pl->jit_sym);
	td_filetab_free(pl->files);
	td_tgid_free(pl->tgid);
	td_memo_free(pl->memo);
	for (unsigned int i = 0; i < pl->nr_names; i++)
		free(pl->names[i]);
	free(pl->names);
	free(pl->pids);
	free(pl->sinks);
	free(pl->kframes);
	free(pl->uframes);
	free(pl);
}

bool td_pipeline_exec_names_only(const struct td_pipeline *pl)
{
	return pl->naming_event != NULL;
}

bool td_pipeline_fork_names_only(const struct td_pipeline *pl)
{
	return pl->naming_fork != NULL;
}

int td_pipeline_add_sink(struct td_pipeline *pl, const struct td_sink_ops *ops, void *priv)
{
	struct sink *n = realloc(pl->sinks, (pl->nr_sinks + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	pl->sinks = n;
	pl->sinks[pl->nr_sinks++] = (struct sink){ .ops = ops, .priv = priv };
	/* One sink that reads fields is enough to keep every event's record. */
	pl->fields_read |= !ops->no_fields;
	td_parser_set_keep_raw(pl->parser, pl->fields_read);
	return 0;
}

struct td_filetab *td_pipeline_filetab(struct td_pipeline *pl)
{
	return pl->files;
}

int td_pipeline_page(struct td_pipeline *pl, int cpu, void *page, int size)
{
	return td_parser_page(pl->parser, cpu, page, size);
}

int td_pipeline_pages(struct td_pipeline *pl, const struct td_page_ref *pages, unsigned int n)
{
	return td_parser_pages(pl->parser, pages, n);
}

int td_pipeline_pages_until(struct td_pipeline *pl, const struct td_page_ref *pages,
			    unsigned int n, uint64_t cut)
{
	return td_parser_pages_until(pl->parser, pages, n, cut);
}

int td_pipeline_record(struct td_pipeline *pl, int cpu, struct tep_record *rec)
{
	return td_parser_record(pl->parser, cpu, rec);
}

void td_pipeline_advance(struct td_pipeline *pl, uint64_t trace_ns)
{
	uint64_t held;

	td_parser_advance(pl->parser, trace_ns);
	/* Records read since: a gone thread's name is read from the kernel afresh. */
	if (pl->cfg.live)
		td_tgid_cmdlines_stale(pl->tgid);
	if (!pl->stitcher)
		return;
	td_stitch_advance(pl->stitcher, trace_ns);
	/* Events the parser still holds have not reached the stitcher. */
	held = td_parser_held_since(pl->parser);
	td_stitch_settle(pl->stitcher, held < trace_ns ? held : trace_ns);
}

void td_pipeline_flush(struct td_pipeline *pl)
{
	td_parser_flush(pl->parser);
	if (pl->stitcher)
		td_stitch_flush(pl->stitcher);
	/* A recording's copies of the JITs' maps: what they appended last. */
	if (pl->sym)
		td_sym_jit_sync(pl->sym, -1);
	if (pl->jit_sym)
		td_sym_jit_sync(pl->jit_sym, -1);
}

void td_pipeline_set_now(struct td_pipeline *pl, uint64_t mono_ns)
{
	pl->now_ns = mono_ns;
}

/* What a symbolizer restart costs (files read again) paid at most so often. */
#define SYM_RESTART_MIN_NS	(60 * 1000000000ULL)
/* And a read of /proc/kallsyms (some 50 ms of the kernel's time). */
#define KSYMS_CHECK_NS		(60 * 1000000000ULL)

static void forget(int tgid, void *arg)
{
	struct td_pipeline *pl = arg;

	if (pl->sym)
		td_sym_forget(pl->sym, tgid);
	if (pl->jit_sym)
		td_sym_forget(pl->jit_sym, tgid);
}

int td_pipeline_jit_watch(struct td_pipeline *pl)
{
	struct td_symbolizer *sym = pl->sym ? pl->sym : pl->jit_sym;

	if (!sym || !pl->cfg.live)
		return -ENOENT;
	return td_sym_jit_watch(sym);
}

int td_pipeline_jit_watched(struct td_pipeline *pl)
{
	struct td_symbolizer *sym = pl->sym ? pl->sym : pl->jit_sym;

	return sym && pl->cfg.live ? td_sym_jit_watched(sym) : 0;
}

unsigned int td_pipeline_housekeeping(struct td_pipeline *pl)
{
	/* The one that names, or the one that only copies a recording's perf maps. */
	struct td_symbolizer *sym = pl->sym ? pl->sym : pl->jit_sym;
	unsigned int did = 0;
	uint64_t held;

	td_tgid_sweep(pl->tgid, forget, pl);
	if (!sym)
		return 0;
	/* JIT code looked up before its perf map line was written; maps nobody's. */
	td_sym_jit_recheck(sym);
	/*
	 * Modules and BPF programs come and go: live, kallsyms is read again
	 * once a minute, and the stacks named from the old one are dropped
	 * (kernel stacks are kept with no stamp: nothing else would).
	 */
	if (pl->sym && pl->cfg.live && !pl->cfg.hooks.kernel_sym &&
	    pl->now_ns >= pl->ksyms_check_ns + KSYMS_CHECK_NS) {
		pl->ksyms_check_ns = pl->now_ns;
		if (td_sym_kernel_reload(pl->sym) > 0) {
			did |= TD_HK_KSYMS_RELOADED;
			if (pl->memo)
				td_memo_clear(pl->memo);
		}
	}
	/*
	 * Between events: no frame is in flight. The memo's stacks hold the
	 * old names (the kernel's too, stamped with nothing): all dropped.
	 * At most once a minute: files in use that alone pass the bound are
	 * read again once a minute, not at every call; but a burst of new
	 * files that takes four times the bound is not waited for. Out of
	 * memory: tried again next time.
	 */
	held = pl->cfg.sym_max_bytes ? td_sym_held_bytes(sym) : 0;
	/*
	 * A restart keeps the processes' maps and their paths: should they
	 * alone pass the bound, restarting would free nothing, once a minute
	 * for as long as those processes live. The bound is on what a
	 * restart can free; what it kept, measured after the last one, is
	 * set aside (it only grows until the next restart: strings are
	 * freed by restarts alone).
	 */
	held = held > pl->sym_kept_bytes ? held - pl->sym_kept_bytes : 0;
	if (held <= pl->cfg.sym_max_bytes ||
	    (pl->sym_restart_ns && pl->now_ns - pl->sym_restart_ns < SYM_RESTART_MIN_NS &&
	     held / 4 < pl->cfg.sym_max_bytes))
		return did;
	if (td_sym_restart(sym))
		return did;
	pl->sym_restart_ns = pl->now_ns ? pl->now_ns : 1;
	pl->sym_kept_bytes = td_sym_held_bytes(sym);
	if (pl->memo)
		td_memo_clear(pl->memo);
	return did | TD_HK_SYM_RESTARTED;
}

void td_pipeline_get_stats(const struct td_pipeline *pl, struct td_pipeline_stats *st)
{
	*st = pl->st;
	td_parser_get_stats(pl->parser, &st->parse);
	if (pl->stitcher) {
		td_stitch_get_stats(pl->stitcher, &st->stitch);
		for (int i = 0; i < TD_NR_STATUS; i++)
			st->stitch.emitted[i] -= pl->naming_emitted[i] + pl->other_emitted[i];
		st->other_user_stacks = pl->other_emitted[TD_STITCHED] +
					pl->other_emitted[TD_INPLACE];
	} else {
		memset(&st->stitch, 0, sizeof(st->stitch));
	}
	td_filetab_get_stats(pl->files, &st->files);
	if (pl->memo) {
		struct td_memo_stats ms;

		td_memo_get_stats(pl->memo, &ms);
		st->stack_resets = ms.resets;
		st->stack_sweeps = ms.sweeps;
		st->stacks_swept = ms.swept;
	}
	st->has_sym = pl->sym != NULL;
	if (pl->sym)
		td_sym_get_stats(pl->sym, &st->sym);
	else if (pl->jit_sym)
		td_sym_get_stats(pl->jit_sym, &st->sym);
	else
		memset(&st->sym, 0, sizeof(st->sym));
}

int td_pipeline_error(const struct td_pipeline *pl, const char **sink)
{
	if (sink)
		*sink = pl->error_sink;
	return pl->error;
}

bool td_pipeline_broken(const struct td_pipeline *pl)
{
	return pl->st.broken;
}
