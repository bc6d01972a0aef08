// SPDX-License-Identifier: GPL-2.0
/*
 * Task identity (see trace-defer/task.h). The tid -> tgid cache: the
 * library's hash table on the tid. The task check: a direct-mapped table
 * on the tid.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <trace-defer/task.h>
#include <trace-defer/types.h>

#include "htab.h"
#include "monotime.h"
#include "task_local.h"

#define TGID_MAX	(1u << 15)	/* entries; then the cache starts again */
#define TGID_TTL_NS	(10ULL * 1000000000ULL)

struct tgid_entry {
	struct hnode node;	/* keyed on the tid */
	int tid;
	int tgid;
	uint64_t stamp;
	bool dead;		/* found gone by one sweep already */
};

/*
 * The kernel's saved_cmdlines (pid -> the name it had at its last switch
 * while tracing), for threads gone before /proc could name them. Read
 * whole, on a miss, at most once between two td_tgid_cmdlines_stale():
 * a read after an event's pages were read knows the event's task, unless
 * its pid was reused within that time. A pid it lacks (a task started
 * after the read, its page read since) has it read again, at most every
 * CMDLINES_AGAIN_NS. Kept sorted by pid.
 */
#define CMDLINES_AGAIN_NS	(20 * 1000 * 1000ULL)

struct cmdline {
	int tid;
	char comm[TD_COMM_LEN];
};

struct td_tgid_cache {
	char proc_root[PATH_MAX / 2];
	struct htab tab;
	char *cmdlines_path;		/* NULL: not asked */
	struct cmdline *cmdlines;	/* the last read, by pid */
	size_t nr_cmdlines, cap_cmdlines;
	bool cmdlines_fresh;		/* read since the last td_tgid_cmdlines_stale() */
	uint64_t cmdlines_read_ns;	/* when (CLOCK_MONOTONIC) */
	void (*gone)(int tgid, void *arg);	/* td_tgid_set_gone() */
	void *gone_arg;
	int *gone_q;			/* found gone when the cache started again */
	size_t nr_gone_q, cap_gone_q;
};

static void entry_free(struct hnode *n)
{
	free(container_of(n, struct tgid_entry, node));
}

struct td_tgid_cache *td_tgid_new(const char *proc_root)
{
	struct td_tgid_cache *tc = calloc(1, sizeof(*tc));

	if (!tc)
		return NULL;
	if (htab_init(&tc->tab)) {
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
	htab_destroy(&tc->tab, entry_free);
	free(tc->cmdlines_path);
	free(tc->cmdlines);
	free(tc->gone_q);
	free(tc);
}

static uint64_t hash(int tid)
{
	return htab_hash_u64(HTAB_SEED, (uint32_t)tid);
}

static struct tgid_entry *find(const struct td_tgid_cache *tc, int tid)
{
	struct hnode *n;

	if (!tc->tab.b)
		return NULL;
	for (n = htab_first(&tc->tab, hash(tid)); n; n = htab_next(n)) {
		struct tgid_entry *e = container_of(n, struct tgid_entry, node);

		if (e->tid == tid)
			return e;
	}
	return NULL;
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

int td_task_nspid(const char *proc_root, int pid)
{
	/* Past a long Groups: line. */
	char buf[4096];
	const char *p, *eol, *last;
	long v;

	if (read_small(proc_root, pid, "status", buf, sizeof(buf)) <= 0)
		return pid;
	p = strstr(buf, "\nNSpid:");
	if (!p)
		return pid;
	p += 7;
	eol = strchr(p, '\n');
	if (!eol)
		return pid;	/* cut: not the whole line */
	last = memrchr(p, '\t', (size_t)(eol - p));
	v = strtol(last ? last + 1 : p, NULL, 10);
	return v > 0 && v <= INT_MAX ? (int)v : pid;
}

static int read_tgid(const struct td_tgid_cache *tc, int tid)
{
	return read_tgid_at(tc->proc_root, tid);
}

int td_tgid_set_cmdlines(struct td_tgid_cache *tc, const char *path)
{
	char *p = path ? strdup(path) : NULL;

	if (path && !p)
		return -ENOMEM;
	free(tc->cmdlines_path);
	tc->cmdlines_path = p;
	tc->cmdlines_fresh = false;
	return 0;
}

void td_tgid_cmdlines_stale(struct td_tgid_cache *tc)
{
	tc->cmdlines_fresh = false;
}

static int cmdline_cmp(const void *a, const void *b)
{
	const struct cmdline *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Lines "PID NAME", all of them anew: no pid of an older read is left. */
static void read_cmdlines(struct td_tgid_cache *tc)
{
	char line[128];
	struct cmdline c;
	FILE *f;

	tc->cmdlines_fresh = true;
	tc->cmdlines_read_ns = td_mono_ns();
	tc->nr_cmdlines = 0;
	f = fopen(tc->cmdlines_path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%d %15[^\n]", &c.tid, c.comm) != 2 || c.tid <= 0 ||
		    c.comm[0] == '<')
			continue;
		if (tc->nr_cmdlines == tc->cap_cmdlines) {
			size_t cap = tc->cap_cmdlines ? 2 * tc->cap_cmdlines : 256;
			struct cmdline *v = realloc(tc->cmdlines, cap * sizeof(*v));

			if (!v)
				break;	/* named from what fits */
			tc->cmdlines = v;
			tc->cap_cmdlines = cap;
		}
		tc->cmdlines[tc->nr_cmdlines++] = c;
	}
	fclose(f);
	qsort(tc->cmdlines, tc->nr_cmdlines, sizeof(*tc->cmdlines), cmdline_cmp);
}

static const struct cmdline *cmdline_find(const struct td_tgid_cache *tc, int tid)
{
	struct cmdline key = { .tid = tid };

	if (!tc->nr_cmdlines)
		return NULL;
	return bsearch(&key, tc->cmdlines, tc->nr_cmdlines, sizeof(key), cmdline_cmp);
}

static bool cmdline_comm(struct td_tgid_cache *tc, int tid, char *comm)
{
	const struct cmdline *c;

	if (!tc->cmdlines_path)
		return false;
	if (!tc->cmdlines_fresh)
		read_cmdlines(tc);
	c = cmdline_find(tc, tid);
	if (!c && td_mono_ns() - tc->cmdlines_read_ns >= CMDLINES_AGAIN_NS) {
		read_cmdlines(tc);
		c = cmdline_find(tc, tid);
	}
	if (!c)
		return false;
	memcpy(comm, c->comm, TD_COMM_LEN);
	return true;
}

bool td_tgid_comm(struct td_tgid_cache *tc, int tid, char *comm)
{
	char buf[64];
	size_t n;

	if (tid <= 0)
		return false;
	if (read_small(tc->proc_root, tid, "comm", buf, sizeof(buf)) <= 0)
		return cmdline_comm(tc, tid, comm);
	n = strcspn(buf, "\n");
	if (!n)
		return false;
	if (n > TD_COMM_LEN - 1)
		n = TD_COMM_LEN - 1;
	memcpy(comm, buf, n);
	comm[n] = '\0';
	return true;
}

static void forget_gone(struct td_tgid_cache *tc);

/* Set (@tid -> @tgid); NULL when out of memory (then simply not cached). */
static struct tgid_entry *insert(struct td_tgid_cache *tc, int tid, int tgid, uint64_t now_ns)
{
	struct tgid_entry *e = find(tc, tid);

	if (!e) {
		if (tc->tab.nr >= TGID_MAX || !tc->tab.b) {
			forget_gone(tc);
			htab_destroy(&tc->tab, entry_free);
			if (htab_init(&tc->tab))
				return NULL;
		}
		e = malloc(sizeof(*e));
		if (!e)
			return NULL;
		e->tid = tid;
		htab_add(&tc->tab, &e->node, hash(tid));
	}
	e->tgid = tgid;
	e->stamp = now_ns;
	e->dead = false;
	return e;
}

int td_tgid_lookup_fresh(struct td_tgid_cache *tc, int tid, uint64_t now_ns, bool *fresh)
{
	struct tgid_entry *e;
	int tgid;

	*fresh = false;
	if (tid <= 0)
		return 0;
	e = find(tc, tid);
	if (e && now_ns - e->stamp < TGID_TTL_NS)
		return e->tgid;
	tgid = read_tgid(tc, tid);
	if (!tgid)
		return e ? e->tgid : 0;	/* exited: what we knew is still right */
	/* New to us unless another thread of it (its leader) is known. */
	*fresh = !find(tc, tgid) || tgid == tid;
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

	if (tid <= 0 || tgid <= 0)
		return;
	e = find(tc, tid);
	if (e && e->tgid == tgid) {
		e->stamp = now_ns;
		return;
	}
	insert(tc, tid, tgid, now_ns);
}

struct sweep {
	const char *proc_root;
	void (*gone)(int tgid, void *arg);
	void *arg;
	int last_gone;
	int *live;		/* sorted; NULL: ask /proc per process */
	size_t nr_live;
};

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/*
 * The processes that exist now, sorted, from one read of the proc
 * directory: a sweep over a cache full of short-lived processes would
 * otherwise ask /proc once per entry (up to TGID_MAX calls every sweep).
 * NULL when the directory cannot be read.
 */
static int *live_pids(const char *proc_root, size_t *nr)
{
	size_t n = 0, cap = 1024;
	int *v = malloc(cap * sizeof(*v)), *nv;
	struct dirent *de;
	DIR *d;

	if (!v)
		return NULL;
	d = opendir(proc_root);
	if (!d) {
		free(v);
		return NULL;
	}
	while ((de = readdir(d))) {
		char *end;
		long pid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid > INT_MAX)
			continue;
		if (n == cap) {
			nv = realloc(v, 2 * cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return NULL;
			}
			v = nv;
			cap *= 2;
		}
		v[n++] = (int)pid;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), int_cmp);
	*nr = n;
	return v;
}

bool td_task_gone(const char *proc_root, int pid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d", proc_root, pid);
	return access(path, F_OK) && errno == ENOENT;
}

static bool process_gone(const struct sweep *sw, int tgid)
{
	if (sw->live)
		return !bsearch(&tgid, sw->live, sw->nr_live, sizeof(*sw->live), int_cmp);
	return td_task_gone(sw->proc_root, tgid);
}

/* Keep a process that runs, or that one sweep has found gone (its events may wait). */
static bool sweep_keep(struct hnode *n, void *arg)
{
	struct tgid_entry *e = container_of(n, struct tgid_entry, node);
	struct sweep *sw = arg;
	bool gone = process_gone(sw, e->tgid);

	if (!gone || !e->dead) {
		e->dead = gone;
		return true;
	}
	if (sw->gone && e->tgid != sw->last_gone)
		sw->gone(e->tgid, sw->arg);
	sw->last_gone = e->tgid;
	return false;
}

void td_tgid_sweep(struct td_tgid_cache *tc, void (*gone)(int tgid, void *arg), void *arg)
{
	struct sweep sw = { tc->proc_root, gone, arg, 0, NULL, 0 };

	if (tc->tab.nr)
		sw.live = live_pids(tc->proc_root, &sw.nr_live);
	htab_filter(&tc->tab, sweep_keep, entry_free, &sw);
	free(sw.live);
	/* Those of the cache before it started again, a sweep's grace later, once each. */
	if (gone && tc->nr_gone_q)
		qsort(tc->gone_q, tc->nr_gone_q, sizeof(*tc->gone_q), int_cmp);
	for (size_t i = 0; gone && i < tc->nr_gone_q; i++)
		if (!i || tc->gone_q[i] != tc->gone_q[i - 1])
			gone(tc->gone_q[i], arg);
	tc->nr_gone_q = 0;
}

void td_tgid_set_gone(struct td_tgid_cache *tc, void (*gone)(int tgid, void *arg), void *arg)
{
	tc->gone = gone;
	tc->gone_arg = arg;
}

struct gone_walk {
	struct td_tgid_cache *tc;
	struct sweep sw;
};

/* Walk only: the caller empties the table. */
static bool queue_gone(struct hnode *n, void *arg)
{
	struct tgid_entry *e = container_of(n, struct tgid_entry, node);
	struct gone_walk *g = arg;
	struct td_tgid_cache *tc = g->tc;

	if (e->tgid == g->sw.last_gone || !process_gone(&g->sw, e->tgid))
		return true;
	if (tc->nr_gone_q == tc->cap_gone_q) {
		size_t cap = tc->cap_gone_q ? 2 * tc->cap_gone_q : 1024;
		int *q = realloc(tc->gone_q, cap * sizeof(*q));

		if (!q)
			return true;	/* kept until td_sym_free(), as before */
		tc->gone_q = q;
		tc->cap_gone_q = cap;
	}
	tc->gone_q[tc->nr_gone_q++] = e->tgid;
	g->sw.last_gone = e->tgid;
	return true;
}

/*
 * The cache starts again: its processes that are gone now would never be
 * swept, so what callers keep of them (maps, perf maps) would stay for
 * good. Queued for the next sweep: their events may still wait, as a
 * sweep's grace allows for.
 */
static void forget_gone(struct td_tgid_cache *tc)
{
	struct gone_walk g = { tc, { tc->proc_root, NULL, NULL, 0, NULL, 0 } };

	if (!tc->gone || !tc->tab.nr)
		return;
	g.sw.live = live_pids(tc->proc_root, &g.sw.nr_live);
	htab_filter(&tc->tab, queue_gone, NULL, &g);
	free(g.sw.live);
}

/* ---- the task check ---- */

#define CHECK_SLOTS	4096	/* power of two */

struct check_slot {
	int tid;		/* 0: free */
	int tgid;		/* 0: not this task, or gone */
	uint64_t start_ns;	/* when it started (ns since boot), 0: unknown */
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

/* CLOCK_BOOTTIME - CLOCK_MONOTONIC now: the time spent suspended since boot. */
static uint64_t suspended_ns(void)
{
	struct timespec b, m;
	int64_t d;

	/* Monotonic first: with no suspend, the later read of the two is not less. */
	if (clock_gettime(CLOCK_MONOTONIC, &m) || clock_gettime(CLOCK_BOOTTIME, &b))
		return 0;
	d = (int64_t)(b.tv_sec - m.tv_sec) * 1000000000LL + (b.tv_nsec - m.tv_nsec);
	return d > 0 ? (uint64_t)d : 0;
}

/*
 * When @tid started, in ns since boot (/proc/TID/stat's starttime, in
 * clock ticks: the start is at most a tick after), or 0 when unknown; its
 * state letter in *@state if asked (0 when unknown).
 */
static uint64_t stat_of(const char *proc_root, int tid, char *state)
{
	long tck = sysconf(_SC_CLK_TCK);
	char buf[1024], *p;
	uint64_t ticks;

	if (state)
		*state = 0;
	if (tck <= 0 || read_small(proc_root, tid, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	/* After the comm, which may hold spaces and parentheses: field 3 on. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	if (state && p[0] == ' ')
		*state = p[1];
	/* starttime is field 22: the 20th after the comm. */
	for (int field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return 0;
		if (field == 22)
			break;
		p += strcspn(p, " ");
	}
	ticks = strtoull(p, NULL, 10);
	return ticks * (1000000000ULL / (uint64_t)tck);
}

int td_task_start(const char *proc_root, int pid, uint64_t *boot_ns, uint64_t *real_ns)
{
	uint64_t start = stat_of(proc_root ? proc_root : "/proc", pid, NULL);
	struct timespec b, r;
	int64_t off;

	if (!start || clock_gettime(CLOCK_BOOTTIME, &b) || clock_gettime(CLOCK_REALTIME, &r))
		return -ENOENT;
	/* starttime is on the boot clock: moved to the wall clock by their distance now. */
	off = (int64_t)(r.tv_sec - b.tv_sec) * 1000000000LL + (r.tv_nsec - b.tv_nsec);
	if (off < 0 && (uint64_t)-off > start)
		return -ENOENT;
	*boot_ns = start;
	*real_ns = start + off;
	return 0;
}

/*
 * How much later than the event a task must have started to be taken for
 * another: sched_clock (the local, global and perf trace clocks) and the
 * kernel's timekeeping drift apart by parts per million (32 ms after a
 * day up, measured). A tid reused by a task of the same name within
 * 100 ms of the event is missed.
 */
#define START_MARGIN_NS	100000000ULL

int td_task_check(struct td_task_check *tc, int tid, const char *comm, uint64_t at_ns)
{
	struct check_slot *s;
	char now[64];

	if (tid <= 0 || !comm || !comm[0] || comm[0] == '<' || strlen(comm) >= TD_COMM_LEN)
		return 0;
	s = &tc->slot[(unsigned int)tid & (CHECK_SLOTS - 1)];
	if (s->tid != tid || strcmp(s->comm, comm)) {
		s->tid = tid;
		strcpy(s->comm, comm);
		s->tgid = 0;
		s->start_ns = 0;
		if (read_small(tc->proc_root, tid, "comm", now, sizeof(now)) <= 0)
			return 0;
		now[strcspn(now, "\n")] = '\0';
		if (!strcmp(now, comm)) {
			uint64_t off = suspended_ns(), start;
			char state;

			start = stat_of(tc->proc_root, tid, &state);
			/*
			 * Exited, not reaped yet (a zombie): /proc shows no maps
			 * of it any more (nor of a group leader that exited
			 * before its threads), so nothing of it can be named.
			 */
			if (state == 'Z' || state == 'X')
				return 0;

			s->tgid = read_tgid_at(tc->proc_root, tid);
			/*
			 * starttime counts suspend (boot time); the trace clocks
			 * do not: minus what was spent suspended so far, exact
			 * for a task started since the last resume, else early.
			 */
			s->start_ns = start > off ? start - off : 0;
		}
	}
	/* Started after the event: another task, of the same name, with the tid. */
	if (at_ns && s->start_ns > at_ns + START_MARGIN_NS)
		return 0;
	return s->tgid;
}
