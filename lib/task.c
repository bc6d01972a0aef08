// SPDX-License-Identifier: GPL-2.0
/*
 * Task identity (see trace-defer/task.h). The tid -> tgid cache: open
 * addressing on the tid, linear probing. The task check: a direct-mapped
 * table on the tid.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <trace-defer/task.h>
#include <trace-defer/types.h>

#define TGID_SLOTS	(1u << 16)	/* power of two */
#define TGID_MAX_FILL	(TGID_SLOTS / 2)
#define TGID_TTL_NS	(10ULL * 1000000000ULL)

struct tgid_entry {
	int tid;		/* 0: free slot */
	int tgid;
	uint64_t stamp;
	bool dead;		/* found gone by one sweep already */
};

struct td_tgid_cache {
	char proc_root[PATH_MAX / 2];
	struct tgid_entry *slot;
	unsigned int used;
};

struct td_tgid_cache *td_tgid_new(const char *proc_root)
{
	struct td_tgid_cache *tc = calloc(1, sizeof(*tc));

	if (!tc)
		return NULL;
	tc->slot = calloc(TGID_SLOTS, sizeof(*tc->slot));
	if (!tc->slot) {
		free(tc);
		return NULL;
	}
	snprintf(tc->proc_root, sizeof(tc->proc_root), "%s", proc_root ? proc_root : "/proc");
	return tc;
}

void td_tgid_free(struct td_tgid_cache *tc)
{
	if (!tc)
		return;
	free(tc->slot);
	free(tc);
}

static unsigned int hash(int tid)
{
	return ((unsigned int)tid * 2654435761u) & (TGID_SLOTS - 1);
}

static struct tgid_entry *find(struct td_tgid_cache *tc, int tid, bool *found)
{
	unsigned int i = hash(tid);

	for (;;) {
		struct tgid_entry *e = &tc->slot[i];

		if (e->tid == tid || !e->tid) {
			*found = e->tid == tid;
			return e;
		}
		i = (i + 1) & (TGID_SLOTS - 1);
	}
}

/* Read the start of a small /proc file into @buf (NUL-terminated); its length or -1. */
static ssize_t read_small(const char *proc_root, int tid, const char *file, char *buf,
			  size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/%s", proc_root, tid, file);
	/* O_NONBLOCK: /proc never blocks, but a root that is not /proc might. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

static int read_tgid_at(const char *proc_root, int tid)
{
	char buf[1024];
	const char *p;
	long tgid;

	if (read_small(proc_root, tid, "status", buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "\nTgid:");
	if (!p)
		return 0;
	tgid = strtol(p + 6, NULL, 10);
	return tgid > 0 && tgid <= INT_MAX ? (int)tgid : 0;
}

static int read_tgid(const struct td_tgid_cache *tc, int tid)
{
	return read_tgid_at(tc->proc_root, tid);
}

static struct tgid_entry *insert(struct td_tgid_cache *tc, int tid, int tgid, uint64_t now_ns)
{
	struct tgid_entry *e;
	bool found;

	if (tc->used >= TGID_MAX_FILL) {
		memset(tc->slot, 0, TGID_SLOTS * sizeof(*tc->slot));
		tc->used = 0;
	}
	e = find(tc, tid, &found);
	if (!found)
		tc->used++;
	e->tid = tid;
	e->tgid = tgid;
	e->stamp = now_ns;
	e->dead = false;
	return e;
}

int td_tgid_lookup_fresh(struct td_tgid_cache *tc, int tid, uint64_t now_ns, bool *fresh)
{
	struct tgid_entry *e;
	bool found, known;
	int tgid;

	*fresh = false;
	if (tid <= 0)
		return 0;
	e = find(tc, tid, &found);
	if (found && now_ns - e->stamp < TGID_TTL_NS)
		return e->tgid;
	tgid = read_tgid(tc, tid);
	if (!tgid)
		return found ? e->tgid : 0;	/* exited: what we knew is still right */
	/* New to us unless another thread of it (its leader) is known. */
	find(tc, tgid, &known);
	*fresh = !known || tgid == tid;
	insert(tc, tid, tgid, now_ns);
	return tgid;
}

int td_tgid_lookup(struct td_tgid_cache *tc, int tid, uint64_t now_ns)
{
	bool fresh;

	return td_tgid_lookup_fresh(tc, tid, now_ns, &fresh);
}

void td_tgid_note(struct td_tgid_cache *tc, int tid, int tgid, uint64_t now_ns)
{
	struct tgid_entry *e;
	bool found;

	if (tid <= 0 || tgid <= 0)
		return;
	e = find(tc, tid, &found);
	if (found && e->tgid == tgid) {
		e->stamp = now_ns;
		return;
	}
	insert(tc, tid, tgid, now_ns);
}

void td_tgid_sweep(struct td_tgid_cache *tc, void (*gone)(int tgid, void *arg), void *arg)
{
	struct tgid_entry *old = tc->slot;
	int last_gone = 0;

	tc->slot = calloc(TGID_SLOTS, sizeof(*tc->slot));
	if (!tc->slot) {
		tc->slot = old;
		return;
	}
	tc->used = 0;
	/* Rebuild without the dead: deleting in place would break probe chains. */
	for (unsigned int i = 0; i < TGID_SLOTS; i++) {
		char path[PATH_MAX];

		if (!old[i].tid)
			continue;
		snprintf(path, sizeof(path), "%s/%d", tc->proc_root, old[i].tgid);
		if (access(path, F_OK)) {
			if (old[i].dead) {
				if (gone && old[i].tgid != last_gone)
					gone(old[i].tgid, arg);
				last_gone = old[i].tgid;
				continue;
			}
			insert(tc, old[i].tid, old[i].tgid, old[i].stamp)->dead = true;
			continue;
		}
		insert(tc, old[i].tid, old[i].tgid, old[i].stamp);
	}
	free(old);
}

/* ---- the task check ---- */

#define CHECK_SLOTS	4096	/* power of two */

struct check_slot {
	int tid;		/* 0: free */
	int tgid;		/* 0: not this task, or gone */
	char comm[TD_COMM_LEN];
};

struct td_task_check {
	char proc_root[PATH_MAX / 2];
	struct check_slot slot[CHECK_SLOTS];
};

struct td_task_check *td_task_check_new(const char *proc_root)
{
	struct td_task_check *tc = calloc(1, sizeof(*tc));

	if (tc)
		snprintf(tc->proc_root, sizeof(tc->proc_root), "%s",
			 proc_root ? proc_root : "/proc");
	return tc;
}

void td_task_check_free(struct td_task_check *tc)
{
	free(tc);
}

int td_task_check(struct td_task_check *tc, int tid, const char *comm)
{
	struct check_slot *s;
	char now[64];

	if (tid <= 0 || !comm || !comm[0] || comm[0] == '<' || strlen(comm) >= TD_COMM_LEN)
		return 0;
	s = &tc->slot[(unsigned int)tid & (CHECK_SLOTS - 1)];
	if (s->tid == tid && !strcmp(s->comm, comm))
		return s->tgid;
	s->tid = tid;
	strcpy(s->comm, comm);
	s->tgid = 0;
	if (read_small(tc->proc_root, tid, "comm", now, sizeof(now)) <= 0)
		return 0;
	now[strcspn(now, "\n")] = '\0';
	if (!strcmp(now, comm))
		s->tgid = read_tgid_at(tc->proc_root, tid);
	return s->tgid;
}
