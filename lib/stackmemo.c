// SPDX-License-Identifier: GPL-2.0
/*
 * Resolved stacks, named once (see stackmemo.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "stackmemo.h"

struct entry {
	struct hnode node;
	struct td_memo_stack pub;
	enum td_memo_kind kind;
	int pid;
	uint32_t used;			/* the memo's age when last found, kept or used */
	uint64_t stamp;
	uint64_t *ips;			/* the key's copies, after frames[] */
	struct td_ufile *files;
	struct entry *dead_next;	/* dropped: on the memo's dead list */
	struct td_frame frames[];
};

struct td_memo {
	struct htab tab;
	unsigned int max_frames;
	uint64_t epoch;
	/*
	 * Ages: one passes every quarter of the bound's frames kept; a stack
	 * not used in this age or the last is the one a full memo drops.
	 */
	uint32_t age;
	unsigned int age_frames;	/* frames kept in this age */
	/*
	 * Dropped by the last td_memo_add(), freed by the next: what was
	 * handed out before an add outlives it (an event's kernel frames,
	 * then its user stack kept, which may empty the memo).
	 */
	struct entry *dead;
	struct td_memo_stats st;
};

/*
 * Ids are the process's, not one memo's: a sink fed by two pipelines may
 * still cache by id.
 */
static uint64_t next_id(void)
{
	static uint64_t last;

	return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

/* Epochs, as ids, are the process's: a tag of one memo never matches another's. */
static uint64_t next_epoch(void)
{
	static uint64_t last;

	return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

/*
 * The stamp is not hashed: a stale entry is found, then replaced. Nor is
 * the file identity: the hash only picks a chain, same_key() decides, and
 * the same IPs of one process in other files are rare (an exec at the same
 * addresses); the files would triple the work of every lookup.
 */
static uint64_t key_hash(const struct td_memo_key *k)
{
	uint64_t h = htab_hash_u64(HTAB_SEED, ((uint64_t)k->kind << 32) | (uint32_t)k->pid);

	return htab_hash_u64s(h, k->ips, k->nr);
}

static bool same_key(const struct entry *e, const struct td_memo_key *k)
{
	return e->kind == k->kind && e->pid == k->pid && e->pub.nr == k->nr &&
	       !memcmp(e->ips, k->ips, k->nr * sizeof(*k->ips)) &&
	       (!k->files ? !e->files :
			    e->files && !memcmp(e->files, k->files, k->nr * sizeof(*k->files)));
}

struct td_memo *td_memo_new(unsigned int max_frames)
{
	struct td_memo *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (htab_init(&m->tab)) {
		free(m);
		return NULL;
	}
	m->max_frames = max_frames ? max_frames : TD_MEMO_MAX_FRAMES;
	m->epoch = next_epoch();
	return m;
}

static void free_entry(struct hnode *n)
{
	free(container_of(n, struct entry, node));
}

static void bury(struct td_memo *m, struct entry *e)
{
	e->dead_next = m->dead;
	m->dead = e;
}

static void free_dead(struct td_memo *m)
{
	while (m->dead) {
		struct entry *e = m->dead;

		m->dead = e->dead_next;
		free(e);
	}
}

void td_memo_free(struct td_memo *m)
{
	if (!m)
		return;
	free_dead(m);
	htab_destroy(&m->tab, free_entry);
	free(m);
}

static struct entry *lookup(struct td_memo *m, const struct td_memo_key *k, uint64_t h)
{
	struct hnode *n;

	for (n = htab_first(&m->tab, h); n; n = htab_next(n)) {
		struct entry *e = container_of(n, struct entry, node);

		if (same_key(e, k))
			return e;
	}
	return NULL;
}

const struct td_memo_stack *td_memo_find(struct td_memo *m, const struct td_memo_key *key)
{
	struct entry *e = lookup(m, key, key_hash(key));

	if (e && e->stamp == key->stamp) {
		m->st.hits++;
		e->used = m->age;
		return &e->pub;
	}
	if (e)
		m->st.stale++;
	return NULL;
}

static void drop(struct td_memo *m, struct entry *e)
{
	htab_del(&m->tab, &e->node);
	m->epoch = next_epoch();
	m->st.stacks--;
	m->st.frames -= e->pub.nr;
	bury(m, e);
}

void td_memo_used(struct td_memo *m, const struct td_memo_stack *s)
{
	container_of(s, struct entry, pub)->used = m->age;
}

static bool used_lately(struct hnode *n, void *arg)
{
	struct entry *e = container_of(n, struct entry, node);
	struct td_memo *m = arg;

	if (e->used + 1 >= m->age)
		return true;
	m->st.stacks--;
	m->st.frames -= e->pub.nr;
	m->st.swept++;
	bury(m, e);
	return false;
}

static void sweep(struct td_memo *m)
{
	htab_filter(&m->tab, used_lately, NULL, m);
	m->epoch = next_epoch();
	m->st.sweeps++;
}

static bool bury_all(struct hnode *n, void *arg)
{
	bury(arg, container_of(n, struct entry, node));
	return false;
}

void td_memo_clear(struct td_memo *m)
{
	htab_filter(&m->tab, bury_all, NULL, m);
	m->epoch = next_epoch();
	m->st.stacks = m->st.frames = 0;
}

static void reset(struct td_memo *m)
{
	td_memo_clear(m);
	m->st.resets++;
}

const struct td_memo_stack *td_memo_add(struct td_memo *m, const struct td_memo_key *key,
					const struct td_memo_stack *own)
{
	const struct td_frame *frames = own->frames;
	uint64_t h = key_hash(key);
	size_t nfiles = key->files ? key->nr : 0;
	struct entry *e;

	m->st.misses++;
	free_dead(m);
	if (!key->nr || key->nr > m->max_frames)
		return NULL;
	e = lookup(m, key, h);
	/*
	 * Named again the same (the stamp moved for something else: a file
	 * of another process, maps that grew): the same id, so that what
	 * sinks keep by id (a stack line written once) stays good.
	 */
	if (e && !memcmp(e->frames, frames, key->nr * sizeof(*frames))) {
		e->stamp = key->stamp;
		e->used = m->age;
		e->pub.named = own->named;
		e->pub.fileid_named = own->fileid_named;
		e->pub.fileid_unknown = own->fileid_unknown;
		e->pub.tracer = own->tracer;
		m->st.renamed_same++;
		return &e->pub;
	}
	if (e)
		drop(m, e);
	/*
	 * Full: what was not used lately goes (the stacks of processes that
	 * came and went: each new one has its own layout, its own IPs).
	 * When what is left still fills most of the bound, the next sweep
	 * would come soon and drop little: everything goes instead.
	 */
	if (m->st.frames + key->nr > m->max_frames) {
		sweep(m);
		if (m->st.frames + key->nr > m->max_frames - m->max_frames / 4)
			reset(m);
	}
	e = malloc(sizeof(*e) + key->nr * (sizeof(*frames) + sizeof(*key->ips)) +
		   nfiles * sizeof(*key->files));
	if (!e)
		return NULL;
	memcpy(e->frames, frames, key->nr * sizeof(*frames));
	e->ips = (uint64_t *)(e->frames + key->nr);
	memcpy(e->ips, key->ips, key->nr * sizeof(*key->ips));
	e->files = nfiles ? (struct td_ufile *)(e->ips + key->nr) : NULL;
	if (nfiles)
		memcpy(e->files, key->files, nfiles * sizeof(*key->files));
	e->kind = key->kind;
	e->pid = key->pid;
	e->used = m->age;
	e->stamp = key->stamp;
	e->pub = *own;
	e->pub.id = next_id();
	e->pub.frames = e->frames;
	e->pub.nr = key->nr;
	htab_add(&m->tab, &e->node, h);
	m->st.stacks++;
	m->st.frames += key->nr;
	m->age_frames += key->nr;
	if (m->age_frames >= (m->max_frames / 4 ? m->max_frames / 4 : 1)) {
		m->age++;
		m->age_frames = 0;
	}
	return &e->pub;
}

void td_memo_get_stats(const struct td_memo *m, struct td_memo_stats *st)
{
	*st = m->st;
}

uint64_t td_memo_epoch(const struct td_memo *m)
{
	return m->epoch;
}

bool td_memo_stack_is(const struct td_memo_stack *s, const struct td_memo_key *key)
{
	const struct entry *e = container_of(s, struct entry, pub);

	return e->kind == key->kind && e->pid == key->pid && e->stamp == key->stamp;
}
