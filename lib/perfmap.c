// SPDX-License-Identifier: GPL-2.0
/*
 * Perf map files of JITs (see perfmap.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "htab.h"
#include "monotime.h"
#include "openreg.h"
#include "perfmap.h"
#include "task_local.h"

/*
 * A process without a map (most are) is asked again only this long after:
 * every frame in anonymous memory of every new process would otherwise
 * cost two failed open() calls, and an unwind through code without frame
 * pointers yields many such frames.
 */
#define ABSENT_RECHECK_NS	1000000000ULL

/*
 * How much older than its process a map must be to be taken for another
 * process's, and how long after boot the process must have started. A
 * file's time is the wall clock's when written, the start is on the boot
 * clock, and the two are compared through the wall clock as it is now: a
 * clock set forward since the file was written makes it look older. That
 * happens mostly early in a boot (NTP's first sync, a machine without a
 * real-time clock), and by seconds later on; a pid comes back after a long
 * while (pid_max is 4 million on 64-bit), so its old map is older by far.
 */
#define STALE_MARGIN_NS		(60 * 1000000000ULL)
#define STALE_AFTER_BOOT_NS	(600 * 1000000000ULL)

/*
 * Maps kept open once read, at most: a JIT that removes its map at exit
 * (jit_sleep, some agents) leaves it readable through the open file, for
 * frames named after. One file per JIT process that runs; beyond these,
 * a map is opened for each read and closed again, as before.
 */
#define HELD_MAX		256

/*
 * A map only its writes brought (td_perfmap_hold_fd()), of a process that
 * is gone and no lookup asked for, is dropped this long after the write:
 * its process's events, if any, are named by then.
 */
#define HELD_UNUSED_NS		(60 * 1000000000ULL)

struct pentry {
	uint64_t start, end;
	const char *name;
	size_t line;		/* a later line wins over an earlier one at the same start */
};

struct pmap {
	struct hnode node;
	int pid;
	off_t size;		/* bytes of the file read (whole lines); -1: none yet */
	dev_t dev;		/* and which file that was */
	ino_t ino;
	size_t lines;		/* lines read, numbering the next one */
	uint64_t absent_ns;	/* monotonic time the file was last found missing, or 0 */
	uint64_t synced_ns;	/* monotonic time of the last td_perfmap_sync(), or 0 */
	int fd;			/* the file read last, kept open (HELD_MAX), or -1 */
	bool used;		/* a lookup or a sync asked for it, not only a write seen */
	uint64_t held_ns;	/* monotonic time of the last td_perfmap_hold_fd(), or 0 */
	bool missed;		/* a lookup found nothing in the file: td_perfmaps_recheck() */
	bool stale;		/* the file found is older than the process: counted once */
	uint64_t gen;		/* its names may have changed: entries added or replaced */
	/*
	 * The path, interned only once a frame is named from it: the strings
	 * interned live as long as the symbolizer, and most processes (an
	 * always-on daemon sees millions) have no map.
	 */
	const char *file;
	struct pentry *v;
	size_t nr;
	/*
	 * A process in a pid namespace of its own (a container) names its
	 * map with its pid there: ns_path, DIR/perf-NSPID.map, reached only
	 * through its root. nspid 0: not asked yet.
	 */
	int nspid;
	char *ns_path;
	char path[];
};

struct td_perfmaps {
	struct htab maps;
	char *dir;
	char *proc_root;		/* NULL: saved copies, DIR/perf-PID.map as they are */
	char *save_dir;			/* copies made here; NULL: none */
	bool save_dir_made;
	struct td_perfmaps_stats st;
	unsigned int nr_held;		/* maps kept open */
	uint64_t bumps;			/* of every map's gen: 0, no map named anything */
	td_intern_fn intern;
	void *intern_ctx;
};

static uint64_t pid_hash(int pid)
{
	return htab_hash_u64(HTAB_SEED, (uint32_t)pid);
}

struct td_perfmaps *td_perfmaps_new(const char *dir, const char *proc_root, td_intern_fn intern,
				    void *intern_ctx)
{
	struct td_perfmaps *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->dir = strdup(dir);
	pm->proc_root = proc_root ? strdup(proc_root) : NULL;
	if (!pm->dir || (proc_root && !pm->proc_root) || htab_init(&pm->maps)) {
		free(pm->dir);
		free(pm->proc_root);
		free(pm);
		return NULL;
	}
	pm->intern = intern;
	pm->intern_ctx = intern_ctx;
	return pm;
}

static void pmap_free(struct hnode *n)
{
	struct pmap *m = container_of(n, struct pmap, node);

	if (m->fd >= 0)
		close(m->fd);
	free(m->v);
	free(m->ns_path);
	free(m);
}

void td_perfmaps_free(struct td_perfmaps *pm)
{
	if (!pm)
		return;
	htab_destroy(&pm->maps, pmap_free);
	free(pm->dir);
	free(pm->proc_root);
	free(pm->save_dir);
	free(pm);
}

int td_perfmaps_save_to(struct td_perfmaps *pm, const char *save_dir)
{
	char *d = strdup(save_dir);

	if (!d)
		return -ENOMEM;
	free(pm->save_dir);
	pm->save_dir = d;
	pm->save_dir_made = false;
	return 0;
}

void td_perfmaps_get_stats(const struct td_perfmaps *pm, struct td_perfmaps_stats *st)
{
	*st = pm->st;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct pentry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* One "START SIZE NAME" line (@len bytes, no newline) into @e; false if malformed. */
static bool parse_line(struct td_perfmaps *pm, const char *p, size_t len, struct pentry *e)
{
	char buf[64], *end;
	const char *sp;
	uint64_t size;
	size_t n;

	/* The two numbers, copied out: strtoull() needs a terminated string. */
	sp = memchr(p, ' ', len);
	if (!sp)
		return false;
	sp = memchr(sp + 1, ' ', len - (size_t)(sp + 1 - p));
	if (!sp || (size_t)(sp - p) >= sizeof(buf))
		return false;
	memcpy(buf, p, (size_t)(sp - p));
	buf[sp - p] = '\0';
	errno = 0;
	e->start = strtoull(buf, &end, 16);
	if (end == buf || *end != ' ')
		return false;
	size = strtoull(end + 1, &end, 16);
	if (errno || *end || !size || e->start + size < e->start)
		return false;
	e->end = e->start + size;
	n = len - (size_t)(sp + 1 - p);
	while (n && (sp[n] == '\r' || sp[n] == ' '))
		n--;
	if (!n)
		return false;
	e->name = pm->intern(pm->intern_ctx, sp + 1, n);
	return e->name != NULL;
}

/*
 * Append the @nr entries just parsed from @m's file (at byte @from) to its
 * copy in pm->save_dir; @from 0: the copy starts again, as the table does.
 * The entries are written as parsed, not the bytes read: the file is
 * whatever the path led to (a container's /tmp may link anywhere), and
 * only what a perf map says may leave it. The copy is named with the pid
 * the reader knows, unique here, not the one in the file's name (a
 * container's perf-1.map), and is private to its owner. A failure only
 * costs the copy, counted: the names given now do not depend on it.
 */
static void save_entries(struct td_perfmaps *pm, const struct pmap *m, off_t from,
			 const struct pentry *e, size_t nr)
{
	char path[PATH_MAX];
	FILE *f;
	int fd;

	/* Only maps asked for: not those of every JIT on the machine the watch saw made. */
	if (!pm->save_dir || !nr || !m->used)
		return;
	if (!pm->save_dir_made) {
		if (mkdir(pm->save_dir, 0700) && errno != EEXIST) {
			pm->st.save_errors++;
			return;
		}
		pm->save_dir_made = true;
	}
	if (snprintf(path, sizeof(path), "%s/perf-%d.map", pm->save_dir, m->pid) >=
	    (int)sizeof(path)) {
		pm->st.save_errors++;
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (from ? O_APPEND : O_TRUNC),
		  0600);
	f = fd >= 0 ? fdopen(fd, from ? "a" : "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		pm->st.save_errors++;
		return;
	}
	if (!from)
		pm->st.saved_maps++;
	for (size_t i = 0; i < nr; i++)
		fprintf(f, "%" PRIx64 " %" PRIx64 " %s\n", e[i].start, e[i].end - e[i].start,
			e[i].name);
	if (ferror(f) | fclose(f))
		pm->st.save_errors++;
}

/*
 * Add the lines of @fd from byte @from to @size to @m's table (@from 0: a
 * new table). A JIT only appends: a file that grew is read from where the
 * last read stopped. The entries parsed are copied when asked
 * (td_perfmaps_save_to()). 0 or -ENOMEM.
 */
static int read_map(struct td_perfmaps *pm, struct pmap *m, int fd, off_t from, off_t size)
{
	size_t len = (size_t)(size - from), got = 0, nr = from ? m->nr : 0, first = nr;
	size_t cap = from ? m->nr : 0;
	struct pentry *v = from ? m->v : NULL, *nv;
	char *text = malloc(len + 1);
	const char *p, *nl, *stop;
	int ret = 0;
	ssize_t r;

	if (!text)
		return -ENOMEM;
	while (got < len) {
		r = pread(fd, text + got, len - got, from + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	/* A line being written has no newline yet: read again later. */
	stop = text + got;
	for (p = text; p < stop; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(stop - p));
		if (!nl)
			break;
		if (nr == cap) {
			cap = cap ? 2 * cap : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				/* Keep the lines read so far; the rest is read next time. */
				ret = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[nr].line = m->lines++;
		if (parse_line(pm, p, (size_t)(nl - p), &v[nr]))
			nr++;
	}
	save_entries(pm, m, from, v + first, nr - first);
	if (nr)
		qsort(v, nr, sizeof(*v), entry_cmp);
	if (!from && m->v != v)
		free(m->v);
	/*
	 * New entries, or a whole read (a file replaced) over entries there
	 * were: names may have changed. Not a file of no whole line read
	 * again and again: nothing changed.
	 */
	if (nr != first || (!from && m->nr)) {
		m->gen++;
		pm->bumps++;
	}
	m->v = v;
	m->nr = nr;
	m->size = from + (off_t)(p - text);
	free(text);
	return ret;
}

/* @file as process @pid sees it, through its root; -1 if none. */
static int open_in_root(const struct td_perfmaps *pm, int pid, const char *file)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%d/root%s", pm->proc_root, pid, file) >=
	    (int)sizeof(path))
		return -1;
	return td_open_regular(path, NULL);
}

/*
 * @m's file: through its process's root first, where /tmp is the one the
 * process writes to (the service's PrivateTmp= gives the daemon another).
 * Not there: a process in a container names the file with its pid in the
 * container, asked once. Last, as the daemon sees it (the process may be
 * gone, its map left behind), else, for a process gone, as init sees it:
 * the daemon's own /tmp may be private (the service's PrivateTmp=) while
 * the JITs write to the system's; a process that runs has a map of its
 * own, and one an earlier process with the pid left there is not it.
 * Never under the container's pid, which names another process here.
 * A path under /tmp may be anyone's FIFO, device or link to one: regular
 * files only, never opened otherwise (openreg.h).
 */
static int open_map(const struct td_perfmaps *pm, struct pmap *m)
{
	int fd;

	/* Saved copies: no process to ask. */
	if (!pm->proc_root)
		return td_open_regular(m->path, NULL);
	if (m->ns_path)
		return open_in_root(pm, m->pid, m->ns_path);
	fd = open_in_root(pm, m->pid, m->path);
	if (fd >= 0)
		return fd;
	if (!m->nspid) {
		m->nspid = td_task_nspid(pm->proc_root, m->pid);
		if (m->nspid != m->pid &&
		    asprintf(&m->ns_path, "%s/perf-%d.map", pm->dir, m->nspid) < 0)
			m->ns_path = NULL;
		if (m->ns_path) {
			/* The one it writes from now on: the path named in frames. */
			m->file = NULL;
			return open_in_root(pm, m->pid, m->ns_path);
		}
	}
	fd = td_open_regular(m->path, NULL);
	if (fd >= 0 || errno != ENOENT || !td_task_gone(pm->proc_root, m->pid))
		return fd;
	return open_in_root(pm, 1, m->path);
}

/*
 * Is the file @st, found for running process @m, older than the process?
 * Then an earlier process with the pid left it (Node.js never removes its
 * maps), and its names are not this one's: a JIT writes its map after it
 * starts, and keeps appending to it. Gone, or read from saved copies, the
 * process's start is unknown, and the file is taken as its.
 */
bool td_perfmap_older(uint64_t start_boot_ns, uint64_t start_real_ns, uint64_t mtime_ns)
{
	return start_boot_ns >= STALE_AFTER_BOOT_NS && start_real_ns > STALE_MARGIN_NS &&
	       mtime_ns < start_real_ns - STALE_MARGIN_NS;
}

static bool stale(const struct td_perfmaps *pm, const struct pmap *m, const struct stat *st)
{
	uint64_t boot, start;

	if (!pm->proc_root || st->st_mtim.tv_sec < 0 ||
	    td_task_start(pm->proc_root, m->pid, &boot, &start))
		return false;
	return td_perfmap_older(boot, start, (uint64_t)st->st_mtim.tv_sec * 1000000000ULL +
					     (uint64_t)st->st_mtim.tv_nsec);
}

/* @m's file is not kept open any more. */
static void let_go(struct td_perfmaps *pm, struct pmap *m)
{
	if (m->fd < 0)
		return;
	close(m->fd);
	m->fd = -1;
	pm->nr_held--;
}

/* Done with @fd, the file just read for @m: kept open if it may be, else closed. */
static void done_with(struct td_perfmaps *pm, struct pmap *m, int fd)
{
	if (fd == m->fd)
		return;
	if (m->fd < 0 && pm->nr_held < HELD_MAX && pm->proc_root) {
		m->fd = fd;
		pm->nr_held++;
		return;
	}
	close(fd);
}

/* Are @fd and @m's file kept open the same file? */
static bool kept_file(const struct pmap *m, int fd)
{
	struct stat a, b;

	return m->fd >= 0 && !fstat(fd, &a) && !fstat(m->fd, &b) && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

/*
 * @m's file now: the one at its path, else the one kept open (removed
 * since, or the path not looked at again so soon). -1 if neither.
 */
static int map_fd(struct td_perfmaps *pm, struct pmap *m, uint64_t now)
{
	int fd;

	if (m->absent_ns && now - m->absent_ns < ABSENT_RECHECK_NS)
		return m->fd;
	fd = open_map(pm, m);
	if (fd < 0) {
		if (m->fd < 0)
			m->absent_ns = now ?: 1;
		return m->fd;
	}
	m->absent_ns = 0;
	if (kept_file(m, fd)) {
		close(fd);
		return m->fd;
	}
	/* Another file at the path: the one kept is not read again. */
	let_go(pm, m);
	return fd;
}

/* (Re)read @m's file if it has grown or appeared since. */
static int refresh(struct td_perfmaps *pm, struct pmap *m)
{
	uint64_t now = td_mono_ns();
	struct stat st;
	int fd, ret;

	fd = map_fd(pm, m, now);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_size == m->size && st.st_ino == m->ino && st.st_dev == m->dev)) {
		done_with(pm, m, fd);
		return 0;
	}
	/* Not this process's: asked again later, as a missing one (the JIT may write its own). */
	if (stale(pm, m, &st)) {
		if (fd == m->fd)
			let_go(pm, m);
		else
			close(fd);
		if (!m->stale)
			pm->st.stale++;
		m->stale = true;
		m->absent_ns = now ?: 1;
		return 0;
	}
	m->stale = false;
	/* Shorter, or another file: a process with the pid again. Read whole. */
	if (m->size < 0 || st.st_size < m->size || st.st_ino != m->ino || st.st_dev != m->dev) {
		m->ino = st.st_ino;
		m->dev = st.st_dev;
		m->size = 0;
		m->lines = 0;
		ret = read_map(pm, m, fd, 0, st.st_size);
	} else {
		ret = read_map(pm, m, fd, m->size, st.st_size);
	}
	done_with(pm, m, fd);
	return ret;
}

/*
 * A lookup or a sync asks for @m: kept for good now, and copied whole
 * if the watch read it before (sorted, later lines after earlier ones at
 * one start, so the copy reads back the same).
 */
static void mark_used(struct td_perfmaps *pm, struct pmap *m)
{
	if (m->used)
		return;
	m->used = true;
	save_entries(pm, m, 0, m->v, m->nr);
}

/* What is kept of @pid, or NULL. */
static struct pmap *pmap_find(const struct td_perfmaps *pm, int pid)
{
	struct hnode *n;

	for (n = htab_first(&pm->maps, pid_hash(pid)); n; n = htab_next(n)) {
		struct pmap *m = container_of(n, struct pmap, node);

		if (m->pid == pid)
			return m;
	}
	return NULL;
}

static struct pmap *pmap_get(struct td_perfmaps *pm, int pid)
{
	struct pmap *m = pmap_find(pm, pid);
	int len;

	if (m)
		return m;
	len = snprintf(NULL, 0, "%s/perf-%d.map", pm->dir, pid);
	if (len < 0 || len >= PATH_MAX)
		return NULL;
	m = calloc(1, sizeof(*m) + (size_t)len + 1);
	if (!m)
		return NULL;
	snprintf(m->path, (size_t)len + 1, "%s/perf-%d.map", pm->dir, pid);
	m->pid = pid;
	m->size = -1;
	m->fd = -1;
	htab_add(&pm->maps, &m->node, pid_hash(pid));
	return m;
}

static const struct pentry *lookup(const struct pmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The latest entry at or below @addr that covers it (code may be replaced). */
	for (k = 0; k < 4 && hi > 0; k++, hi--)
		if (addr < m->v[hi - 1].end)
			return &m->v[hi - 1];
	return NULL;
}

int td_perfmap_find(struct td_perfmaps *pm, int pid, uint64_t addr, const char **name,
		    uint64_t *start, const char **file)
{
	const struct pentry *e;
	struct pmap *m;
	int ret;

	if (pid <= 0)
		return -ENOENT;
	m = pmap_get(pm, pid);
	if (!m)
		return -ENOMEM;
	mark_used(pm, m);
	e = lookup(m, addr);
	if (!e) {
		ret = refresh(pm, m);
		if (ret)
			return ret;
		e = lookup(m, addr);
		if (!e) {
			/* The line, or the file, may come later (half written, dumped when asked). */
			m->missed = true;
			return -ENOENT;
		}
	}
	if (!m->file) {
		const char *path = m->ns_path ? m->ns_path : m->path;

		m->file = pm->intern(pm->intern_ctx, path, strlen(path));
		if (!m->file)
			return -ENOMEM;
	}
	*name = e->name;
	*start = e->start;
	*file = m->file;
	return 0;
}

int td_perfmap_sync(struct td_perfmaps *pm, int pid)
{
	uint64_t now = td_mono_ns();
	struct pmap *m;

	if (pid <= 0)
		return 0;
	m = pmap_get(pm, pid);
	if (!m)
		return -ENOMEM;
	mark_used(pm, m);
	if (m->synced_ns && now - m->synced_ns < ABSENT_RECHECK_NS)
		return 0;
	m->synced_ns = now ?: 1;
	return refresh(pm, m);
}

int td_perfmap_hold_fd(struct td_perfmaps *pm, int pid, int fd)
{
	struct pmap *m;

	if (pid <= 0 || !pm->proc_root) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	m = pmap_get(pm, pid);
	if (!m) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	/* Kept open in place of the one kept, unless that is the same file. */
	if (fd >= 0 && kept_file(m, fd)) {
		close(fd);
	} else if (fd >= 0) {
		let_go(pm, m);
		done_with(pm, m, fd);
	}
	/* Written just now: the path is looked at whatever the time. */
	m->absent_ns = 0;
	m->held_ns = td_mono_ns() ?: 1;
	return refresh(pm, m);
}

/* htab_filter() as a walk: every map read once more, kept. */
static bool sync_one(struct hnode *n, void *arg)
{
	struct pmap *m = container_of(n, struct pmap, node);

	/* What was appended last, for the copy: whatever the time. */
	m->absent_ns = 0;
	refresh(arg, m);
	return true;
}

uint64_t td_perfmaps_gen(const struct td_perfmaps *pm, int pid)
{
	const struct pmap *m;

	/* Most machines run no JIT: no lookup per stack then. */
	if (!pm->bumps)
		return 0;
	m = pmap_find(pm, pid);
	return m ? m->gen : 0;
}

/* Until new entries come: what missed may be there, or never be. */
static bool recheck_one(struct hnode *n, void *arg)
{
	struct td_perfmaps *pm = arg;
	struct pmap *m = container_of(n, struct pmap, node);
	uint64_t gen = m->gen;

	/* Only its writes brought it, long ago, and its process is gone: nobody's. */
	if (!m->used && m->held_ns && td_mono_ns() - m->held_ns >= HELD_UNUSED_NS &&
	    td_task_gone(pm->proc_root, m->pid)) {
		let_go(pm, m);
		return false;
	}

	if (m->missed) {
		refresh(arg, m);
		if (m->gen != gen)
			m->missed = false;
	}
	return true;
}

void td_perfmaps_recheck(struct td_perfmaps *pm)
{
	htab_filter(&pm->maps, recheck_one, pmap_free, pm);
}

void td_perfmaps_sync_all(struct td_perfmaps *pm)
{
	if (pm->save_dir)
		htab_filter(&pm->maps, sync_one, NULL, pm);
}

void td_perfmap_exec(struct td_perfmaps *pm, int pid)
{
	const struct pmap *m = pmap_find(pm, pid);

	/*
	 * Made while the reader was behind (the watch sees files at once,
	 * records later): the new program's, most likely. The old program's,
	 * were it a JIT, was asked for by its frames.
	 */
	if (m && !m->used && m->held_ns)
		return;
	td_perfmap_forget(pm, pid);
}

void td_perfmap_forget(struct td_perfmaps *pm, int pid)
{
	struct pmap *m = pmap_find(pm, pid);

	if (!m)
		return;
	/* The JIT's last functions, for the copy, if its map is still there. */
	if (pm->save_dir && m->size >= 0) {
		m->absent_ns = 0;
		refresh(pm, m);
	}
	let_go(pm, m);
	htab_del(&pm->maps, &m->node);
	pmap_free(&m->node);
}
