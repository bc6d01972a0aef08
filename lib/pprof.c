// SPDX-License-Identifier: GPL-2.0
/*
 * pprof profiles (see trace-defer/pprof.h). Strings, mappings, functions,
 * locations and samples are interned in lib/htab.c tables as events come;
 * the protobuf-c message is built only when a profile is written, and
 * zlib gzips it on the way to the file.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <trace-defer/pprof.h>

#include "arena.h"
#include "htab.h"
#include "profile.pb-c.h"

/* A growing array of pointers; what they point to belongs to a table. */
struct vec {
	void **v;
	size_t nr, cap;
};

struct pstr {
	struct hnode node;
	uint32_t idx;
	uint32_t len;
	char s[];
};

/* A mapping (a = file, b = build-id) or a function (a = name, b = file). */
struct ppair {
	struct hnode node;
	uint32_t id, a, b;
};

struct ploc {
	struct hnode node;
	uint32_t id, map, func;
	uint64_t addr;
	bool user;			/* a user frame's */
};

/* A frame as a symbolizer handed it out, to its location: no string hashed. */
struct pcache {
	struct hnode node;
	uint64_t strings_id, addr;
	const char *symbol, *object, *build_id;
	bool user;
	uint32_t loc;
};

struct psample {
	struct hnode node;
	uint64_t value;
	int64_t pid;
	uint32_t comm, event, nloc;
	uint32_t loc[];
};

/*
 * An event as the symbolizer handed it out (addresses and string pointers
 * of every frame, comm, pid, event, status), to its sample: an event seen
 * before costs one hash over its addresses and one comparison.
 */
struct praw {
	struct hnode node;
	struct psample *sample;
	uint32_t nw;
	uint64_t w[];
};

/*
 * The kernel or the user part of a stack the pipeline gave an id to, to
 * its locations: a new process or comm with a stack seen before costs a
 * sample lookup, not a location per frame, and a new process's new user
 * stacks still find their kernel part (the same few kernel stacks serve
 * every process).
 */
struct pstack {
	struct hnode node;
	uint64_t id;
	bool user;
	uint32_t nloc;
	uint32_t loc[];
};

#define RAW_HEAD	6	/* words before the frames' */
#define RAW_FRAME	4	/* words per frame */
#define RAW_IDS		(RAW_HEAD + 2)	/* words of a key by stack ids */

/*
 * A folded sample found by an event's raw key (by stack ids): direct
 * mapped, a few, so that a busy process first met with the tables three
 * quarters full finds its folded samples in one probe, as the raw table
 * finds the others, and yet takes no room per process.
 */
#define FOLD_SLOTS	16

struct fold_slot {
	struct psample *sample;		/* NULL: empty */
	uint64_t hash;
	uint64_t w[RAW_IDS];
};

struct td_pprof {
	uint64_t start_ns, events;
	uint64_t mem;			/* see account() */
	struct arena arena;		/* every table entry of the interval */
	struct htab strs, maps, funcs, locs, cache, samples, raws, stacks;
	struct vec strv, mapv, funcv, locv, samplev;
	uint32_t *locbuf;		/* the sample being built */
	size_t loccap;
	uint64_t *rawbuf;		/* the raw key being built */
	size_t rawcap;
	char *tmp;			/* names made up, sanitized strings */
	size_t tmpcap;
	/* fixed strings and pseudo locations of this interval */
	uint32_t s_events, s_count, s_comm, s_event, s_pid, s_unknown;
	uint32_t loc_user_lost, loc_unwind_failed, loc_unknown, loc_bound;
	uint64_t max_mem;		/* td_pprof_set_max_mem(); 0: none */
	uint64_t over_events;		/* counted in @over, the tables full */
	struct psample *over;		/* the sample of those, once made */
	uint64_t folded_events;		/* counted in samples without their pid */
	const char *last_event;		/* event name pointer -> its string */
	uint32_t last_event_idx;
	bool broken;			/* a reset ran out of memory: tables unusable */
	/* The tables are full: entries are looked up, none added (NOT_THERE). */
	bool find_only;
	/* The tables are nearly full: the sample being built has no pid. */
	bool fold;
	struct fold_slot fold_cache[FOLD_SLOTS];	/* emptied with the tables */
};

/* What a lookup of the tables returns, find_only, for an entry not there. */
#define NOT_THERE	(-2)
/* The pid of a sample counting the events of any process (written with no pid label). */
#define PID_FOLDED	(-1)

static int vec_push(struct vec *a, void *p)
{
	if (a->nr == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		void **v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->nr++] = p;
	return 0;
}

static int reserve_tmp(struct td_pprof *pp, size_t len)
{
	char *t;

	if (len <= pp->tmpcap)
		return 0;
	t = realloc(pp->tmp, len);
	if (!t)
		return -ENOMEM;
	pp->tmp = t;
	pp->tmpcap = len;
	return 0;
}

/* ---- strings ---- */

/* Protobuf strings must be UTF-8 without surprises: comms may hold anything. */
static bool clean_utf8(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		if (u[i] >= 0x80) {
			n = td_utf8_seq_len(u + i, len - i);
			if (!n)
				return false;
			i += n;
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			return false;
		} else {
			i++;
		}
	}
	return true;
}

static const char *sanitize(struct td_pprof *pp, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n;
	char *out;

	if (reserve_tmp(pp, len + 1))
		return NULL;
	out = pp->tmp;
	while (i < len) {
		n = u[i] >= 0x80 ? td_utf8_seq_len(u + i, len - i) : 1;
		if (!n || (n == 1 && (u[i] < 0x20 || u[i] == 0x7f))) {
			*out++ = '?';
			i++;
			continue;
		}
		memcpy(out, s + i, n);
		out += n;
		i += n;
	}
	*out = '\0';
	return pp->tmp;
}

/* The string table index of @s (@len bytes), added when new; -1: no memory. */
static int64_t intern(struct td_pprof *pp, const char *s, size_t len)
{
	struct hnode *n;
	struct pstr *ps;
	uint64_t h;

	if (!clean_utf8(s, len)) {
		s = sanitize(pp, s, len);
		if (!s)
			return -1;
	}
	h = htab_hash_bytes(s, len, HTAB_SEED);
	for (n = htab_first(&pp->strs, h); n; n = htab_next(n)) {
		ps = container_of(n, struct pstr, node);
		if (ps->len == len && !memcmp(ps->s, s, len))
			return ps->idx;
	}
	if (pp->find_only)
		return NOT_THERE;
	ps = arena_alloc(&pp->arena, sizeof(*ps) + len + 1);
	if (!ps)
		return -1;
	ps->idx = pp->strv.nr;
	ps->len = len;
	memcpy(ps->s, s, len);
	ps->s[len] = '\0';
	if (vec_push(&pp->strv, ps->s))
		return -1;
	htab_add(&pp->strs, &ps->node, h);
	return ps->idx;
}

static int64_t intern_str(struct td_pprof *pp, const char *s)
{
	return intern(pp, s, strlen(s));
}

/* ---- mappings, functions, locations ---- */

/* The id (from 1) of the pair (@a, @b) in @tab/@v, added when new; -1: no memory. */
static int64_t pair(struct td_pprof *pp, struct htab *tab, struct vec *v, uint32_t a,
		    uint32_t b)
{
	uint64_t h = htab_hash_u64(htab_hash_u64(HTAB_SEED, a), b);
	struct ppair *p;
	struct hnode *n;

	for (n = htab_first(tab, h); n; n = htab_next(n)) {
		p = container_of(n, struct ppair, node);
		if (p->a == a && p->b == b)
			return p->id;
	}
	if (pp->find_only)
		return NOT_THERE;
	p = arena_alloc(&pp->arena, sizeof(*p));
	if (!p || vec_push(v, p))
		return -1;
	p->id = v->nr;
	p->a = a;
	p->b = b;
	htab_add(tab, &p->node, h);
	return p->id;
}

static int64_t mapping(struct td_pprof *pp, uint32_t file, uint32_t build_id)
{
	return pair(pp, &pp->maps, &pp->mapv, file, build_id);
}

static int64_t function(struct td_pprof *pp, uint32_t name, uint32_t file)
{
	return pair(pp, &pp->funcs, &pp->funcv, name, file);
}

static int64_t location(struct td_pprof *pp, uint32_t map, uint32_t func, uint64_t addr,
			bool user)
{
	uint64_t h = htab_hash_u64(htab_hash_u64(htab_hash_u64(HTAB_SEED, map), func), addr);
	struct hnode *n;
	struct ploc *l;

	for (n = htab_first(&pp->locs, h); n; n = htab_next(n)) {
		l = container_of(n, struct ploc, node);
		if (l->map == map && l->func == func && l->addr == addr)
			return l->id;
	}
	if (pp->find_only)
		return NOT_THERE;
	l = arena_alloc(&pp->arena, sizeof(*l));
	if (!l || vec_push(&pp->locv, l))
		return -1;
	l->id = pp->locv.nr;
	l->map = map;
	l->func = func;
	l->addr = addr;
	l->user = user;
	htab_add(&pp->locs, &l->node, h);
	return l->id;
}

/* A location with no mapping whose function is just @name ("[user_lost]"). */
static int64_t pseudo_location(struct td_pprof *pp, const char *name)
{
	int64_t s = intern_str(pp, name), f;

	if (s < 0)
		return -1;
	f = function(pp, s, 0);
	return f < 0 ? -1 : location(pp, 0, f, 0, false);
}

/* The name folded stacks give a frame (see trace-defer/output.h). */
static const char *frame_name(struct td_pprof *pp, const struct td_frame *fr, bool user)
{
	const char *base;
	size_t len;

	if (fr->symbol && fr->symbol[0])
		return fr->symbol;
	/* Recorded as in the vDSO, at no offset the record says. */
	if (user && fr->file_kind == TD_FILE_VDSO && fr->object)
		return fr->object;
	if (user && fr->object) {
		base = strrchr(fr->object, '/');
		base = base && base[1] ? base + 1 : fr->object;
		len = strlen(base) + 24;
		if (reserve_tmp(pp, len))
			return NULL;
		snprintf(pp->tmp, len, "%s+0x%" PRIx64, base, fr->file_offset);
	} else {
		if (reserve_tmp(pp, 24))
			return NULL;
		snprintf(pp->tmp, 24, "0x%" PRIx64, fr->addr);
	}
	return pp->tmp;
}

static uint64_t cache_hash(const struct td_frame *fr, uint64_t addr, bool user)
{
	uint64_t h = htab_hash_u64(HTAB_SEED, fr->strings_id);

	h = htab_hash_u64(h, (uintptr_t)fr->symbol);
	h = htab_hash_u64(h, (uintptr_t)fr->object);
	h = htab_hash_u64(h, (uintptr_t)fr->build_id);
	return htab_hash_u64(h, addr * 2 + user);
}

static int64_t frame_location(struct td_pprof *pp, const struct td_frame *fr, bool user)
{
	/* A recorded vDSO frame has no offset: 0, one location in every process. */
	uint64_t addr = user && fr->object ? fr->file_offset : fr->addr, h = 0;
	int64_t name, file = 0, build_id = 0, map = 0, func, loc;
	struct hnode *n;
	struct pcache *c;
	const char *s;

	/*
	 * A user address in no known file and with no name (the process was
	 * gone before its maps were read, JIT, anonymous memory): nothing can
	 * name it later, and under ASLR every process has other ones. One
	 * "[unknown]" frame keeps a profile of many short-lived processes to
	 * the stacks it can say something about (see trace-defer/output.h).
	 */
	if (user && !fr->object && !(fr->symbol && fr->symbol[0]))
		return pp->loc_unknown;
	if (fr->strings_id) {
		h = cache_hash(fr, addr, user);
		for (n = htab_first(&pp->cache, h); n; n = htab_next(n)) {
			c = container_of(n, struct pcache, node);
			if (c->strings_id == fr->strings_id && c->addr == addr &&
			    c->symbol == fr->symbol && c->object == fr->object &&
			    c->build_id == fr->build_id && c->user == user)
				return c->loc;
		}
	}
	/* Each step: -1 (no memory) or NOT_THERE (find_only), passed on. */
	if (fr->object) {
		file = intern_str(pp, fr->object);
		if (file >= 0 && fr->build_id)
			build_id = intern_str(pp, fr->build_id);
		if (file < 0 || build_id < 0)
			return file < 0 ? file : build_id;
		map = mapping(pp, file, build_id);
		if (map < 0)
			return map;
	}
	s = frame_name(pp, fr, user);
	name = s ? intern_str(pp, s) : -1;
	if (name < 0)
		return name;
	func = function(pp, name, file);
	loc = func < 0 ? func : location(pp, map, func, addr, user);
	if (loc < 0 || !fr->strings_id || pp->find_only)
		return loc;
	/* Not caching only costs time. */
	c = arena_alloc(&pp->arena, sizeof(*c));
	if (c) {
		c->strings_id = fr->strings_id;
		c->addr = addr;
		c->symbol = fr->symbol;
		c->object = fr->object;
		c->build_id = fr->build_id;
		c->user = user;
		c->loc = loc;
		htab_add(&pp->cache, &c->node, h);
	}
	return loc;
}

/* ---- life cycle ---- */

static void empty_tables(struct td_pprof *pp)
{
	/* The entries are the arena's: the tables only drop their buckets. */
	htab_destroy(&pp->raws, NULL);
	htab_destroy(&pp->stacks, NULL);
	htab_destroy(&pp->samples, NULL);
	htab_destroy(&pp->cache, NULL);
	htab_destroy(&pp->locs, NULL);
	htab_destroy(&pp->funcs, NULL);
	htab_destroy(&pp->maps, NULL);
	htab_destroy(&pp->strs, NULL);
	arena_reset(&pp->arena);
	pp->strv.nr = pp->mapv.nr = pp->funcv.nr = pp->locv.nr = pp->samplev.nr = 0;
	pp->events = pp->mem = 0;
	pp->last_event = NULL;
	pp->over = NULL;
	pp->over_events = 0;
	pp->folded_events = 0;
	memset(pp->fold_cache, 0, sizeof(pp->fold_cache));
}

static size_t table_bytes(const struct htab *t)
{
	return t->b ? (t->mask + 1) * sizeof(*t->b) : 0;
}

/*
 * What the interval holds now: its entries, the tables' buckets, the
 * arrays. Not the arena's first chunk, kept from one interval to the
 * next, which a bound on what an interval grows to must not count. Taken
 * whenever the tables may have grown (an event not counted before), so
 * that td_pprof_stats(), which a caller may ask for every event, only
 * reads it.
 */
static void account(struct td_pprof *pp)
{
	pp->mem = pp->arena.handed + table_bytes(&pp->strs) + table_bytes(&pp->maps) +
		  table_bytes(&pp->funcs) + table_bytes(&pp->locs) + table_bytes(&pp->cache) +
		  table_bytes(&pp->samples) + table_bytes(&pp->raws) + table_bytes(&pp->stacks) +
		  (pp->strv.cap + pp->mapv.cap + pp->funcv.cap + pp->locv.cap +
		   pp->samplev.cap) * sizeof(void *);
}

/* Tables ready for an interval, with its fixed strings. Returns 0 or -ENOMEM. */
static int start_interval(struct td_pprof *pp, uint64_t start_ns)
{
	int64_t v[6];

	pp->start_ns = start_ns;
	if (htab_init(&pp->strs) || htab_init(&pp->maps) || htab_init(&pp->funcs) ||
	    htab_init(&pp->locs) || htab_init(&pp->cache) || htab_init(&pp->samples) ||
	    htab_init(&pp->raws) || htab_init(&pp->stacks))
		return -ENOMEM;
	if (intern_str(pp, "") != 0)
		return -ENOMEM;
	v[0] = pp->s_events = intern_str(pp, "events");
	v[1] = pp->s_count = intern_str(pp, "count");
	v[2] = pp->s_comm = intern_str(pp, "comm");
	v[3] = pp->s_event = intern_str(pp, "event");
	v[4] = pp->s_pid = intern_str(pp, "pid");
	v[5] = pp->s_unknown = intern_str(pp, "[unknown]");
	if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 || v[4] < 0 || v[5] < 0)
		return -ENOMEM;
	v[0] = pp->loc_user_lost = pseudo_location(pp, "[user_lost]");
	v[1] = pp->loc_unwind_failed = pseudo_location(pp, "[unwind_failed]");
	v[2] = pp->loc_unknown = pseudo_location(pp, "[unknown]");
	v[3] = pp->loc_bound = pseudo_location(pp, "[memory_bound]");
	account(pp);
	return v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 ? -ENOMEM : 0;
}

/* ---- samples ---- */

/* The sample counted, or NULL (out of memory). */
static struct psample *count_sample(struct td_pprof *pp, uint32_t nloc, uint32_t comm,
				    uint32_t event, int64_t pid)
{
	uint64_t h = htab_hash_u64(htab_hash_u64(htab_hash_u64(HTAB_SEED, comm), event), pid);
	struct psample *s;
	struct hnode *n;
	uint32_t i;

	for (i = 0; i < nloc; i++)
		h = htab_hash_u64(h, pp->locbuf[i]);
	for (n = htab_first(&pp->samples, h); n; n = htab_next(n)) {
		s = container_of(n, struct psample, node);
		if (s->nloc == nloc && s->comm == comm && s->event == event && s->pid == pid &&
		    !memcmp(s->loc, pp->locbuf, nloc * sizeof(*s->loc))) {
			s->value++;
			return s;
		}
	}
	if (pp->find_only)
		return NULL;
	s = arena_alloc(&pp->arena, sizeof(*s) + nloc * sizeof(*s->loc));
	if (!s || vec_push(&pp->samplev, s))
		return NULL;
	s->value = 1;
	s->pid = pid;
	s->comm = comm;
	s->event = event;
	s->nloc = nloc;
	memcpy(s->loc, pp->locbuf, nloc * sizeof(*s->loc));
	htab_add(&pp->samples, &s->node, h);
	return s;
}

/*
 * The raw key of @r in pp->rawbuf; false when @r cannot have one: frames
 * not all from one symbolizer, whose strings could change under the same
 * pointers. Only addresses go into the hash; the whole key is compared.
 * Stacks the pipeline gave ids to are keyed by the ids (word 0 is then 0,
 * which no symbolizer's strings_id is): the same ids, the same frames,
 * whoever named them (raw addresses too).
 */
static bool raw_key(struct td_pprof *pp, const struct td_resolved *r, uint32_t *nw,
		    uint64_t *hash)
{
	unsigned int nf = r->nr_kframes + r->nr_uframes, i, n;
	uint64_t sid, h, *w;
	bool ids;

	if (!nf)
		return false;
	ids = (!r->nr_kframes || r->kstack_id) && (!r->nr_uframes || r->ustack_id);
	sid = r->nr_kframes ? r->kframes[0].strings_id : r->uframes[0].strings_id;
	if (!sid && !ids)
		return false;
	n = RAW_HEAD + nf * RAW_FRAME;
	if (n > pp->rawcap) {
		w = realloc(pp->rawbuf, n * sizeof(*w));
		if (!w)
			return false;
		pp->rawbuf = w;
		pp->rawcap = n;
	}
	w = pp->rawbuf;
	w[0] = sid;
	w[1] = r->nr_kframes | (uint64_t)r->nr_uframes << 20 | (uint64_t)r->status << 40;
	w[2] = r->ev->pid > 0 ? r->ev->pid : r->ev->tid;
	w[3] = (uintptr_t)r->event_name;
	memcpy(&w[4], r->ev->comm, 2 * sizeof(uint64_t));
	h = htab_hash_u64(htab_hash_u64(HTAB_SEED, w[1]), w[2]);
	if (ids) {
		w[0] = 0;
		w[RAW_HEAD] = r->kstack_id;
		w[RAW_HEAD + 1] = r->ustack_id;
		*nw = RAW_HEAD + 2;
		*hash = htab_hash_u64(htab_hash_u64(h, r->kstack_id), r->ustack_id);
		return true;
	}
	for (i = 0; i < nf; i++) {
		bool user = i >= r->nr_kframes;
		const struct td_frame *f = user ? &r->uframes[i - r->nr_kframes] : &r->kframes[i];
		uint64_t *x = &w[RAW_HEAD + i * RAW_FRAME];

		if (f->strings_id != sid)
			return false;
		x[0] = f->addr;
		x[1] = (uintptr_t)f->symbol;
		x[2] = (uintptr_t)f->object;
		x[3] = f->file_offset;
		h = htab_hash_u64(h, f->addr);
	}
	*nw = n;
	*hash = h;
	return true;
}

static struct praw *raw_find(struct td_pprof *pp, uint32_t nw, uint64_t hash)
{
	struct hnode *n;

	for (n = htab_first(&pp->raws, hash); n; n = htab_next(n)) {
		struct praw *rw = container_of(n, struct praw, node);

		if (rw->nw == nw && !memcmp(rw->w, pp->rawbuf, nw * sizeof(*rw->w)))
			return rw;
	}
	return NULL;
}

/* Not remembering only costs time. */
static void raw_add(struct td_pprof *pp, struct psample *s, uint32_t nw, uint64_t hash)
{
	struct praw *rw = arena_alloc(&pp->arena, sizeof(*rw) + nw * sizeof(*rw->w));

	if (!rw)
		return;
	rw->sample = s;
	rw->nw = nw;
	memcpy(rw->w, pp->rawbuf, nw * sizeof(*rw->w));
	htab_add(&pp->raws, &rw->node, hash);
}

/*
 * Append the locations of @nr frames @f (user frames if @user) to
 * pp->locbuf at *@n, remembered by @id (0: not remembered). 0, -ENOMEM,
 * or -ENOENT (find_only: a location not in the tables).
 */
static int part_locations(struct td_pprof *pp, const struct td_frame *f, unsigned int nr,
			  uint64_t id, bool user, unsigned int *n)
{
	uint64_t h = htab_hash_u64(htab_hash_u64(HTAB_SEED, id), user);
	uint32_t *locs = pp->locbuf + *n;
	struct pstack *st;
	struct hnode *hn;
	unsigned int i;
	int64_t loc;

	for (hn = id ? htab_first(&pp->stacks, h) : NULL; hn; hn = htab_next(hn)) {
		st = container_of(hn, struct pstack, node);
		if (st->id == id && st->user == user && st->nloc == nr) {
			memcpy(locs, st->loc, nr * sizeof(*locs));
			*n += nr;
			return 0;
		}
	}
	for (i = 0; i < nr; i++) {
		loc = frame_location(pp, &f[i], user);
		if (loc < 0)
			return loc == NOT_THERE ? -ENOENT : -ENOMEM;
		locs[i] = loc;
	}
	*n += nr;
	/* Folding: a process's user stacks have ids of its own, not worth their room. */
	if (!id || !nr || pp->find_only || (pp->fold && user))
		return 0;
	/* Not remembering only costs time. */
	st = arena_alloc(&pp->arena, sizeof(*st) + nr * sizeof(*st->loc));
	if (!st)
		return 0;
	st->id = id;
	st->user = user;
	st->nloc = nr;
	memcpy(st->loc, locs, nr * sizeof(*st->loc));
	htab_add(&pp->stacks, &st->node, h);
	return 0;
}

/*
 * Count @r in its sample, made if new; find_only, only if it is there.
 * 0, -ENOMEM, or -ENOENT (find_only: not there; nothing counted).
 */
static int count_event(struct td_pprof *pp, const struct td_resolved *r, struct psample **out)
{
	const char *comm = r->ev->comm;
	unsigned int n = 0;
	size_t clen;
	int64_t c, ev;
	int ret;

	ret = part_locations(pp, r->kframes, r->nr_kframes, r->kstack_id, false, &n);
	if (!ret)
		ret = part_locations(pp, r->uframes, r->nr_uframes, r->ustack_id, true, &n);
	if (ret)
		return ret;
	if (!r->nr_uframes && r->status == TD_USER_LOST)
		pp->locbuf[n++] = pp->loc_user_lost;
	else if (!r->nr_uframes && r->status == TD_UNWIND_FAILED)
		pp->locbuf[n++] = pp->loc_unwind_failed;
	clen = strnlen(comm, TD_COMM_LEN);
	c = clen ? intern(pp, comm, clen) : pp->s_unknown;
	if (r->event_name != pp->last_event || !pp->last_event) {
		ev = intern_str(pp, r->event_name ? r->event_name : "unknown");
		if (ev < 0)
			return ev == NOT_THERE ? -ENOENT : -ENOMEM;
		pp->last_event = r->event_name;
		pp->last_event_idx = ev;
	}
	if (c < 0)
		return c == NOT_THERE ? -ENOENT : -ENOMEM;
	*out = count_sample(pp, n, c, pp->last_event_idx, pp->fold ? PID_FOLDED :
			    r->ev->pid > 0 ? r->ev->pid : r->ev->tid);
	if (!*out)
		return pp->find_only ? -ENOENT : -ENOMEM;
	return 0;
}

/*
 * The tables hold three quarters of max_mem (their raw table had no entry
 * for @r). Its own sample still counts it when there, found frame by frame
 * (its stacks may have new ids: a symbolizer started again names them
 * anew); not looked for when @r has a raw key, which would have found it
 * (a sample of the same frames under other ids is then not found: the
 * event counts without its pid). Else it counts in the sample of its
 * stacks, comm and event without a pid, made if need be until the tables
 * are full: the processes of one program started again and again (a
 * shell loop, a build, cron) add only their new stacks, where a sample
 * per process would fill the tables and leave every new stack out. Full,
 * what has neither sample counts in one of its own, made once.
 */
static int add_near_full(struct td_pprof *pp, const struct td_resolved *r, bool raw,
			 uint32_t nw, uint64_t rhash)
{
	bool full = pp->mem >= pp->max_mem, ids = raw && nw == RAW_IDS;
	struct fold_slot *fs = &pp->fold_cache[rhash & (FOLD_SLOTS - 1)];
	struct psample *s;
	int ret;

	if (ids && fs->sample && fs->hash == rhash &&
	    !memcmp(fs->w, pp->rawbuf, sizeof(fs->w))) {
		fs->sample->value++;
		goto folded;
	}
	if (!raw || full) {
		pp->find_only = true;
		ret = count_event(pp, r, &s);
		pp->find_only = false;
		if (!ret) {
			pp->events++;
			return 0;
		}
		if (ret != -ENOENT)
			return ret;
	}
	pp->fold = true;
	pp->find_only = full;
	ret = count_event(pp, r, &s);
	pp->fold = pp->find_only = false;
	if (!ret) {
		if (ids) {
			fs->sample = s;
			fs->hash = rhash;
			memcpy(fs->w, pp->rawbuf, sizeof(fs->w));
		}
		account(pp);
		goto folded;
	}
	if (ret != -ENOENT)
		return ret;
	if (pp->over) {
		pp->over->value++;
	} else {
		pp->locbuf[0] = pp->loc_bound;
		pp->over = count_sample(pp, 1, pp->s_unknown, pp->s_unknown, 0);
		if (!pp->over)
			return -ENOMEM;
	}
	pp->over_events++;
	pp->events++;
	return 0;
folded:
	pp->folded_events++;
	pp->events++;
	return 0;
}

int td_pprof_add(struct td_pprof *pp, const struct td_resolved *r)
{
	unsigned int nr = r->nr_kframes + r->nr_uframes + 1;
	struct psample *s;
	uint64_t rhash = 0;
	uint32_t nw = 0;
	bool raw;
	int ret;

	if (pp->broken) {
		pp->broken = start_interval(pp, pp->start_ns) != 0;
		if (pp->broken) {
			empty_tables(pp);
			return -ENOMEM;
		}
	}
	raw = raw_key(pp, r, &nw, &rhash);
	if (raw) {
		struct praw *rw = raw_find(pp, nw, rhash);

		if (rw) {
			rw->sample->value++;
			pp->events++;
			return 0;
		}
	}
	if (nr > pp->loccap) {
		uint32_t *b = realloc(pp->locbuf, nr * sizeof(*b));

		if (!b)
			return -ENOMEM;
		pp->locbuf = b;
		pp->loccap = nr;
	}
	if (pp->max_mem && pp->mem >= pp->max_mem - pp->max_mem / 4)
		return add_near_full(pp, r, raw, nw, rhash);
	ret = count_event(pp, r, &s);
	if (ret)
		return ret;
	if (raw)
		raw_add(pp, s, nw, rhash);
	account(pp);
	pp->events++;
	return 0;
}

struct td_pprof *td_pprof_new(uint64_t start_ns)
{
	struct td_pprof *pp = calloc(1, sizeof(*pp));

	if (!pp)
		return NULL;
	if (start_interval(pp, start_ns)) {
		td_pprof_free(pp);
		return NULL;
	}
	return pp;
}

void td_pprof_free(struct td_pprof *pp)
{
	if (!pp)
		return;
	empty_tables(pp);
	arena_free(&pp->arena);
	free(pp->strv.v);
	free(pp->mapv.v);
	free(pp->funcv.v);
	free(pp->locv.v);
	free(pp->samplev.v);
	free(pp->locbuf);
	free(pp->rawbuf);
	free(pp->tmp);
	free(pp);
}

void td_pprof_set_start(struct td_pprof *pp, uint64_t start_ns)
{
	pp->start_ns = start_ns;
}

void td_pprof_reset(struct td_pprof *pp, uint64_t start_ns)
{
	empty_tables(pp);
	/* Out of memory: no tables; td_pprof_add() tries again. */
	pp->broken = start_interval(pp, start_ns) != 0;
	if (pp->broken)
		empty_tables(pp);
}

void td_pprof_stats(const struct td_pprof *pp, struct td_pprof_stats *st)
{
	st->events = pp->events;
	st->samples = pp->samplev.nr;
	st->locations = pp->locv.nr;
	st->functions = pp->funcv.nr;
	st->mappings = pp->mapv.nr;
	st->strings = pp->strv.nr;
	st->mem_bytes = pp->mem;
	st->over_events = pp->over_events;
	st->folded_events = pp->folded_events;
}

void td_pprof_set_max_mem(struct td_pprof *pp, uint64_t bytes)
{
	pp->max_mem = bytes;
}

/* ---- writing ---- */

/* Every message of a profile, in arrays allocated once. */
struct msg {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType st, period;
	Perftools__Profiles__ValueType *stp;
	Perftools__Profiles__Sample *samples, **samplep;
	Perftools__Profiles__Label *labels, **labelp;
	uint64_t *locids;
	int64_t *values;
	Perftools__Profiles__Mapping *maps, **mapp;
	Perftools__Profiles__Location *locs, **locp;
	Perftools__Profiles__Line *lines, **linep;
	Perftools__Profiles__Function *funcs, **funcp;
};

static void msg_free(struct msg *m)
{
	free(m->samples);
	free(m->samplep);
	free(m->labels);
	free(m->labelp);
	free(m->locids);
	free(m->values);
	free(m->maps);
	free(m->mapp);
	free(m->locs);
	free(m->locp);
	free(m->lines);
	free(m->linep);
	free(m->funcs);
	free(m->funcp);
}

#define NR_LABELS 3

/* A shared library's file name ("libc.so.6", "ld-linux-x86-64.so.2"), or the vDSO. */
static bool shared_object(const char *file)
{
	const char *base = strrchr(file, '/'), *so;

	base = base ? base + 1 : file;
	if (!strcmp(base, "[vdso]"))
		return true;
	for (so = strstr(base, ".so"); so; so = strstr(so + 1, ".so"))
		if (so[3] == '\0' || so[3] == '.')
			return true;
	return false;
}

/*
 * The index in pp->mapv of the profile's main binary: pprof takes the
 * first mapping for it ("File:" heading its reports), which would be the
 * kernel's, met first in every stack. For each sample, the mapping of its
 * outermost user frame that is not in a shared library (a program's own
 * code below libc's start and thread functions), else of its outermost
 * user frame; of those, the one of the most events. 0 when no user frame
 * has a mapping.
 */
static size_t main_mapping(const struct td_pprof *pp)
{
	size_t nm = pp->mapv.nr, best = 0, i;
	uint64_t *w = calloc(2 * (nm + 1), sizeof(*w)), *any;

	if (!w)
		return 0;
	any = w + nm + 1;
	for (i = 0; i < pp->samplev.nr; i++) {
		const struct psample *ps = pp->samplev.v[i];
		uint32_t outer = 0;

		for (uint32_t j = ps->nloc; j-- > 0;) {
			const struct ploc *l = pp->locv.v[ps->loc[j] - 1];
			const struct ppair *m;

			if (!l->user || !l->map)
				continue;
			if (!outer)
				outer = l->map;
			m = pp->mapv.v[l->map - 1];
			if (!shared_object(pp->strv.v[m->a])) {
				w[l->map] += ps->value;
				outer = 0;
				break;
			}
		}
		if (outer)
			any[outer] += ps->value;
	}
	for (i = 1; i <= nm; i++)
		if (w[i] > w[best + 1] || (!w[best + 1] && any[i] > any[best + 1]))
			best = i - 1;
	free(w);
	return best;
}

static int msg_build(struct td_pprof *pp, struct msg *m, uint64_t end_ns)
{
	static const Perftools__Profiles__Profile prof0 = PERFTOOLS__PROFILES__PROFILE__INIT;
	static const Perftools__Profiles__ValueType vt0 = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	static const Perftools__Profiles__Sample s0 = PERFTOOLS__PROFILES__SAMPLE__INIT;
	static const Perftools__Profiles__Label l0 = PERFTOOLS__PROFILES__LABEL__INIT;
	static const Perftools__Profiles__Mapping m0 = PERFTOOLS__PROFILES__MAPPING__INIT;
	static const Perftools__Profiles__Location lo0 = PERFTOOLS__PROFILES__LOCATION__INIT;
	static const Perftools__Profiles__Line li0 = PERFTOOLS__PROFILES__LINE__INIT;
	static const Perftools__Profiles__Function f0 = PERFTOOLS__PROFILES__FUNCTION__INIT;
	size_t ns = pp->samplev.nr, nl = pp->locv.nr, nm = pp->mapv.nr, nf = pp->funcv.nr;
	size_t i, j, nids = 0, main;

	for (i = 0; i < ns; i++)
		nids += ((struct psample *)pp->samplev.v[i])->nloc;
	/* calloc(0) may return NULL: ask for one more of each. */
	m->samples = calloc(ns + 1, sizeof(*m->samples));
	m->samplep = calloc(ns + 1, sizeof(*m->samplep));
	m->labels = calloc(ns * NR_LABELS + 1, sizeof(*m->labels));
	m->labelp = calloc(ns * NR_LABELS + 1, sizeof(*m->labelp));
	m->locids = calloc(nids + 1, sizeof(*m->locids));
	m->values = calloc(ns + 1, sizeof(*m->values));
	m->maps = calloc(nm + 1, sizeof(*m->maps));
	m->mapp = calloc(nm + 1, sizeof(*m->mapp));
	m->locs = calloc(nl + 1, sizeof(*m->locs));
	m->locp = calloc(nl + 1, sizeof(*m->locp));
	m->lines = calloc(nl + 1, sizeof(*m->lines));
	m->linep = calloc(nl + 1, sizeof(*m->linep));
	m->funcs = calloc(nf + 1, sizeof(*m->funcs));
	m->funcp = calloc(nf + 1, sizeof(*m->funcp));
	if (!m->samples || !m->samplep || !m->labels || !m->labelp || !m->locids ||
	    !m->values || !m->maps || !m->mapp || !m->locs || !m->locp || !m->lines ||
	    !m->linep || !m->funcs || !m->funcp)
		return -ENOMEM;

	m->prof = prof0;
	m->st = vt0;
	m->st.type = pp->s_events;
	m->st.unit = pp->s_count;
	m->period = m->st;
	m->stp = &m->st;
	m->prof.n_sample_type = 1;
	m->prof.sample_type = &m->stp;
	m->prof.period_type = &m->period;
	m->prof.period = 1;
	m->prof.time_nanos = pp->start_ns;
	m->prof.duration_nanos = end_ns > pp->start_ns ? end_ns - pp->start_ns : 0;
	m->prof.n_string_table = pp->strv.nr;
	m->prof.string_table = (char **)pp->strv.v;

	nids = 0;
	for (i = 0; i < ns; i++) {
		struct psample *ps = pp->samplev.v[i];
		Perftools__Profiles__Sample *s = &m->samples[i];
		Perftools__Profiles__Label *l = &m->labels[i * NR_LABELS];

		*s = s0;
		s->n_location_id = ps->nloc;
		s->location_id = m->locids + nids;
		for (j = 0; j < ps->nloc; j++)
			m->locids[nids++] = ps->loc[j];
		m->values[i] = ps->value;
		s->n_value = 1;
		s->value = &m->values[i];
		for (j = 0; j < NR_LABELS; j++) {
			l[j] = l0;
			m->labelp[i * NR_LABELS + j] = &l[j];
		}
		l[0].key = pp->s_comm;
		l[0].str = ps->comm;
		l[1].key = pp->s_event;
		l[1].str = ps->event;
		l[2].key = pp->s_pid;
		l[2].num = ps->pid;
		/* The last label, left out: a folded sample is of no one process. */
		s->n_label = ps->pid == PID_FOLDED ? NR_LABELS - 1 : NR_LABELS;
		s->label = &m->labelp[i * NR_LABELS];
		m->samplep[i] = s;
	}
	m->prof.n_sample = ns;
	m->prof.sample = m->samplep;

	main = main_mapping(pp);
	for (i = 0; i < nm; i++) {
		struct ppair *pm = pp->mapv.v[i];

		m->maps[i] = m0;
		m->maps[i].id = pm->id;
		m->maps[i].filename = pm->a;
		m->maps[i].build_id = pm->b;
		m->maps[i].has_functions = 1;
		/* The main one first, the others in their order. */
		m->mapp[i < main ? i + 1 : i > main ? i : 0] = &m->maps[i];
	}
	m->prof.n_mapping = nm;
	m->prof.mapping = m->mapp;

	for (i = 0; i < nl; i++) {
		struct ploc *pl = pp->locv.v[i];

		m->lines[i] = li0;
		m->lines[i].function_id = pl->func;
		m->linep[i] = &m->lines[i];
		m->locs[i] = lo0;
		m->locs[i].id = pl->id;
		m->locs[i].mapping_id = pl->map;
		m->locs[i].address = pl->addr;
		m->locs[i].n_line = 1;
		m->locs[i].line = &m->linep[i];
		m->locp[i] = &m->locs[i];
	}
	m->prof.n_location = nl;
	m->prof.location = m->locp;

	for (i = 0; i < nf; i++) {
		struct ppair *pf = pp->funcv.v[i];

		m->funcs[i] = f0;
		m->funcs[i].id = pf->id;
		m->funcs[i].name = pf->a;
		m->funcs[i].system_name = pf->a;
		/*
		 * The source file, which is not known (no line tables are read):
		 * left empty. The object a function is told apart by (pf->b) is
		 * its mapping's file; pprof reads a filename as source and shows
		 * the binary's bytes as lines (-list), or path:0 (-lines).
		 */
		m->funcs[i].filename = 0;
		m->funcp[i] = &m->funcs[i];
	}
	m->prof.n_function = nf;
	m->prof.function = m->funcp;
	return 0;
}

/* gzip @len bytes of @data to @f. Returns 0 or a negative errno. */
static int write_gzip(FILE *f, const uint8_t *data, size_t len, size_t *written)
{
	unsigned char out[1 << 15];
	z_stream zs = { 0 };
	int zr, ret = 0;

	/*
	 * 15 + 16: a gzip header and trailer around the deflate stream. Level
	 * 3: on the profile of many short-lived processes (bench/profiles.c)
	 * the default level 6 took longer than building and packing the
	 * profile together; 3 took 43% less time for 16% more bytes (Go's
	 * runtime/pprof writes at level 1: 48% more bytes there).
	 */
	if (deflateInit2(&zs, 3, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (unsigned char *)data;
	do {
		size_t n;

		/* zlib counts its input in an unsigned int: more than 4 GiB goes in parts. */
		if (!zs.avail_in && len) {
			zs.avail_in = len > UINT_MAX ? UINT_MAX : len;
			len -= zs.avail_in;
		}
		zs.next_out = out;
		zs.avail_out = sizeof(out);
		zr = deflate(&zs, len ? Z_NO_FLUSH : Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			ret = -EIO;
			break;
		}
		n = sizeof(out) - zs.avail_out;
		if (n && fwrite(out, 1, n, f) != n) {
			ret = errno ? -errno : -EIO;
			break;
		}
		*written += n;
	} while (zr != Z_STREAM_END);
	deflateEnd(&zs);
	return ret;
}

int td_pprof_write(struct td_pprof *pp, FILE *f, uint64_t end_ns, size_t *bytes)
{
	struct msg m = { 0 };
	size_t len = 0, written = 0;
	uint8_t *buf = NULL;
	int ret;

	if (bytes)
		*bytes = 0;
	if (pp->broken)
		return -ENOMEM;
	ret = msg_build(pp, &m, end_ns);
	if (!ret) {
		len = perftools__profiles__profile__get_packed_size(&m.prof);
		buf = malloc(len + 1);
		if (!buf)
			ret = -ENOMEM;
	}
	if (!ret) {
		perftools__profiles__profile__pack(&m.prof, buf);
		ret = write_gzip(f, buf, len, &written);
	}
	free(buf);
	msg_free(&m);
	if (bytes)
		*bytes = written;
	return ret;
}
