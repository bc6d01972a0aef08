// SPDX-License-Identifier: GPL-2.0
/*
 * Emit callback of the stitcher: symbolize, then write (see resolve.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include <trace-defer/filetab.h>
#include <trace-defer/symbolize.h>

#include "log.h"
#include "resolve.h"
#include "tgid.h"

struct td_resolver {
	struct td_symbolizer *sym;	/* NULL: symbolize = no */
	struct td_filetab *files;	/* file identity: filled by the parser */
	struct td_tgid_cache *tgid;
	struct td_outputs *out;
	struct td_counters *counters;
	struct td_frame *kframes, *uframes;
	unsigned int kcap, ucap;
	uint64_t now_ns;
	bool warned_write;
	/* "system:name" of the events seen, made once each (few events are traced). */
	struct {
		const struct tep_event *event;
		char name[128];
	} names[16];
	unsigned int nr_names;
	struct td_resolver_hooks hooks;	/* see resolve.h; zeroed: live behaviour */
};

static const char *event_name(struct td_resolver *r, const struct tep_event *event)
{
	unsigned int i;

	if (!event)
		return "unknown";
	for (i = 0; i < r->nr_names; i++)
		if (r->names[i].event == event)
			return r->names[i].name;
	i = r->nr_names < 16 ? r->nr_names++ : 15;
	r->names[i].event = event;
	snprintf(r->names[i].name, sizeof(r->names[i].name), "%s:%s", event->system,
		 event->name);
	return r->names[i].name;
}

struct td_resolver *td_resolver_new(const struct td_config *cfg, struct td_outputs *out,
				    struct td_counters *counters)
{
	struct td_resolver *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->out = out;
	r->counters = counters;
	r->now_ns = td_now_mono_ns();
	r->tgid = td_tgid_new(NULL);
	r->files = td_filetab_new(0);
	if (!r->tgid || !r->files)
		goto fail;
	if (cfg->symbolize) {
		struct td_sym_config sc = { .debug_dir = cfg->debug_dir };

		r->sym = td_sym_new(&sc);
		if (!r->sym)
			goto fail;
		/*
		 * Load kallsyms now, not at the first event: reading it takes
		 * long enough for the ring buffer to overrun under load.
		 */
		if (cfg->kernel_stack) {
			struct td_frame f;

			td_sym_kernel(r->sym, 0, &f);
		}
	}
	return r;
fail:
	td_resolver_free(r);
	return NULL;
}

void td_resolver_free(struct td_resolver *r)
{
	if (!r)
		return;
	td_sym_free(r->sym);
	td_filetab_free(r->files);
	td_tgid_free(r->tgid);
	free(r->kframes);
	free(r->uframes);
	free(r);
}

struct td_filetab *td_resolver_filetab(struct td_resolver *r)
{
	return r->files;
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

/*
 * User frame @i from the stack record's file identity. /proc is read only
 * for a file found nowhere else, through the root of @pid (0: never), the
 * task that recorded the stack while it still lives.
 */
static void name_from_file(struct td_resolver *r, const struct td_ustack *us, unsigned int i,
			   int pid, struct td_frame *f)
{
	td_sym_ufile_pid(r->sym, r->files, &us->files[i], pid, us->ips.ips[i], i > 0, f);
	if (f->file_kind != TD_FILE_IN)
		return;
	if (!f->object)
		r->counters->fileid_unknown++;
	else if (f->symbol)
		r->counters->fileid_named++;
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

void td_resolver_emit(const struct td_event *ev, const struct td_ustack *us,
		      enum td_status status, void *arg)
{
	struct td_resolver *r = arg;
	const struct td_ips *uips = user_ips(ev, us, status);
	unsigned int nk = ev->kstack.nr, nu = uips ? uips->nr : 0;
	uint64_t now = r->now_ns;
	struct td_resolved res = { 0 };
	struct td_event copy;
	bool live = true;
	int maps_pid, ret;

	if (r->hooks.task_live && ev->tid > 0)
		live = r->hooks.task_live(ev->tid, ev->comm, r->hooks.arg);
	/* The records may not say which process the thread belongs to. */
	copy = *ev;
	if (copy.pid > 0)
		td_tgid_note(r->tgid, copy.tid, copy.pid, now);
	else if (copy.tid > 0 && live)
		copy.pid = td_tgid_lookup(r->tgid, copy.tid, now);
	if (copy.tid > 0 && copy.pid <= 0)
		r->counters->no_pid++;
	/* /proc/TID/maps is the process's too, should the tgid be unknown. */
	maps_pid = copy.pid > 0 ? copy.pid : copy.tid;

	res.ev = &copy;
	res.status = status;
	res.cookie = ev->has_cookie ? ev->cookie : 0;
	res.event_name = event_name(r, ev->tep_event);

	if (frames(&r->kframes, &r->kcap, nk) || frames(&r->uframes, &r->ucap, nu)) {
		td_err("out of memory symbolizing an event: written without frames");
		nk = nu = 0;
	}
	for (unsigned int i = 0; i < nk; i++) {
		struct td_frame *f = &r->kframes[i];

		memset(f, 0, sizeof(*f));
		f->addr = ev->kstack.ips[i];
		if (r->sym && r->hooks.kernel_sym)
			r->hooks.kernel_sym(f->addr, f, r->hooks.arg);
		else if (r->sym)
			td_sym_kernel(r->sym, f->addr, f);
	}
	for (unsigned int i = 0; i < nu; i++) {
		struct td_frame *f = &r->uframes[i];

		if (status != TD_INPLACE && us && us->files) {
			name_from_file(r, us, i, live ? maps_pid : 0, f);
			continue;
		}
		memset(f, 0, sizeof(*f));
		f->addr = uips->ips[i];
		/* Frame 0 is where the task was; the others are return addresses. */
		if (r->sym && maps_pid > 0 && live)
			td_sym_user(r->sym, maps_pid, f->addr, i > 0, f);
	}
	res.kframes = r->kframes;
	res.nr_kframes = nk;
	res.uframes = r->uframes;
	res.nr_uframes = nu;

	ret = td_outputs_write(r->out, &res);
	if (r->hooks.write) {
		int hret = r->hooks.write(&res, r->hooks.arg);

		if (!ret)
			ret = hret;
	}
	if (ret && ret != -EPIPE) {
		r->counters->write_errors++;
		if (!r->warned_write)
			td_err("cannot write an event: %s (counting further errors)",
			       strerror(-ret));
		r->warned_write = true;
	} else if (!ret && r->out->json) {
		r->counters->written++;
	}
}

int td_resolver_tgid(int tid, void *arg)
{
	struct td_resolver *r = arg;
	bool fresh;
	int tgid;

	tgid = td_tgid_lookup_fresh(r->tgid, tid, r->now_ns, &fresh);
	if (fresh && r->sym) {
		struct td_frame f;

		/* No address is mapped at 0: the lookup just reads and caches the maps. */
		td_sym_user(r->sym, tgid, 0, false, &f);
	}
	return tgid;
}

void td_resolver_set_now(struct td_resolver *r, uint64_t now_ns)
{
	r->now_ns = now_ns;
}

static void forget(int tgid, void *arg)
{
	struct td_resolver *r = arg;

	if (r->sym)
		td_sym_forget(r->sym, tgid);
}

void td_resolver_tick(struct td_resolver *r)
{
	td_tgid_sweep(r->tgid, forget, r);
}

bool td_resolver_sym_stats(const struct td_resolver *r, struct td_sym_stats *st)
{
	if (!r->sym)
		return false;
	td_sym_get_stats(r->sym, st);
	return true;
}

bool td_resolver_output_broken(const struct td_resolver *r)
{
	return r->out->json_broken;
}

void td_resolver_set_hooks(struct td_resolver *r, const struct td_resolver_hooks *hooks)
{
	if (hooks)
		r->hooks = *hooks;
	else
		memset(&r->hooks, 0, sizeof(r->hooks));
}
