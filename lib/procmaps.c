// SPDX-License-Identifier: GPL-2.0
/*
 * Per-process maps cache: /proc/PID/maps text parsed into sorted mappings,
 * processes in the library's hash table (htab.h) keyed by pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "procmaps.h"
#include "htab.h"
#include "monotime.h"

/*
 * How long a process's old maps are kept once a re-read found another
 * program (see proc_read()): its exec's event comes within one read of the
 * ring buffer (a fraction of a second), or was not traced.
 */
#define EXEC_HOLD_NS		1000000000ULL

/*
 * The last td_proc.gen handed out, by any td_procs: a symbolizer that
 * starts its caches again (td_sym_restart()) never hands out a generation
 * a caller keyed on before.
 */
static uint64_t last_gen;

struct td_proc {
	struct hnode node;	/* in td_procs.procs, hashed by pid_hash() */
	int pid;
	bool read_ok;		/* maps were read at least once */
	struct td_mapping *maps;
	size_t nr;
	size_t last;		/* index of the last mapping hit */
	uint64_t read_ns;	/* when the maps were last (re)read, or tried */
	uint64_t gen;		/* td_procs_gen(): changes with every new maps */
	uint64_t exec_ns;	/* when a re-read first found another program, or 0 */
	uint64_t exe_dev, exe_ino;	/* the file /proc/PID/exe names, 0: unknown */
	/*
	 * The maps of the program before its last exec (td_procs_exec()),
	 * for the events written before that, or NULL.
	 */
	struct td_mapping *old;
	size_t old_nr, old_last;
	uint64_t old_until;	/* trace time of the exec */
	uint64_t old_gen;
	char *dir;		/* proc_root/PID */
	char *root_prefix;	/* proc_root/PID/root, or NULL if it is our "/" */
};

/* A fork not yet looked up: its child starts from its parent's maps. */
struct fork_note {
	int child;			/* 0: empty */
	int parent;
	uint64_t ts;			/* trace time of the fork */
};

/* Forks noted, by child pid: one slot each, the latest wins. */
#define FORK_NOTES		1024

struct td_procs {
	char *proc_root;
	uint64_t refresh_ns;
	td_intern_fn intern;
	void *intern_ctx;
	struct htab procs;	/* struct td_proc, by pid */
	struct td_proc *last;	/* the last process looked up */
	uint64_t when;		/* trace time of what is named now; 0: now */
	bool execs_known;	/* td_procs_exec() is told of every exec */
	char self_mnt_ns[64];	/* our mount namespace, "mnt:[4026531841]" */
	bool own_pids;		/* proc_root is the /proc of our pid namespace */
	char *buf;		/* maps text, reused across reads */
	size_t buf_alloc;
	struct td_procs_stats stats;
	struct fork_note *forks;	/* FORK_NOTES, allocated at the first fork */
};

/* ---- parsing ---------------------------------------------------------- */

static int mapping_cmp(const void *a, const void *b)
{
	const struct td_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

size_t td_path_len_live(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(path), dl = sizeof(deleted) - 1;

	return len > dl && !strcmp(path + len - dl, deleted) ? len - dl : len;
}

/* Parse one NUL-terminated line into @m: 1 done, 0 malformed, -ENOMEM. */
static int parse_line(char *line, td_intern_fn intern, void *ctx, struct td_mapping *m)
{
	char *p = line, *end;
	size_t len;

	memset(m, 0, sizeof(*m));
	m->start = strtoull(p, &end, 16);
	if (end == p || *end != '-')
		return 0;
	p = end + 1;
	m->end = strtoull(p, &end, 16);
	if (end == p || *end != ' ' || m->end <= m->start)
		return 0;
	p = end + 1;
	if (strlen(p) < 5 || p[4] != ' ')
		return 0;
	m->flags = (p[0] == 'r' ? TD_MAP_R : 0) | (p[1] == 'w' ? TD_MAP_W : 0) |
		   (p[2] == 'x' ? TD_MAP_X : 0) | (p[3] == 's' ? TD_MAP_SHARED : 0);
	p += 5;
	m->pgoff = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return 0;
	p = end + 1;
	m->dev_major = (uint32_t)strtoul(p, &end, 16);
	if (end == p || *end != ':')
		return 0;
	p = end + 1;
	m->dev_minor = (uint32_t)strtoul(p, &end, 16);
	if (end == p || *end != ' ')
		return 0;
	p = end + 1;
	m->inode = strtoull(p, &end, 10);
	if (end == p)
		return 0;
	p = end;
	while (*p == ' ' || *p == '\t')
		p++;
	len = strlen(p);
	if (!len) {
		m->path = intern(ctx, "[anon]", 6);
		return m->path ? 1 : -ENOMEM;
	}
	if (p[0] == '/') {
		size_t live = td_path_len_live(p);

		m->is_file = true;
		m->deleted = live < len;
		len = live;
	}
	m->path = intern(ctx, p, len);
	return m->path ? 1 : -ENOMEM;
}

int td_maps_parse(const char *text, size_t len, td_intern_fn intern, void *ctx,
		  struct td_mapping **out, size_t *nr)
{
	struct td_mapping *v = NULL, *nv;
	size_t n = 0, alloc = 0, i;
	const char *p = text, *end = text + len;
	char line[PATH_MAX + 256];
	bool sorted = true;
	int err = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = (nl ? nl : end) - p;

		if (ll < sizeof(line)) {
			memcpy(line, p, ll);
			line[ll] = '\0';
			if (n == alloc) {
				alloc = alloc ? alloc * 2 : 64;
				nv = realloc(v, alloc * sizeof(*v));
				if (!nv) {
					err = -ENOMEM;
					goto out;
				}
				v = nv;
			}
			err = parse_line(line, intern, ctx, &v[n]);
			if (err < 0)
				goto out;
			if (err) {
				if (n && v[n].start < v[n - 1].start)
					sorted = false;
				n++;
			}
			err = 0;
		}
		p += ll + 1;
	}
	if (!sorted)
		qsort(v, n, sizeof(*v), mapping_cmp);
	/* The kernel never reports overlaps; a hand-made file might. */
	for (i = 1; i < n; i++) {
		if (v[i].start < v[i - 1].end) {
			err = -EINVAL;
			goto out;
		}
	}
out:
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*nr = n;
	return 0;
}

/* ---- process table ---------------------------------------------------- */

static uint64_t pid_hash(int pid)
{
	return htab_hash_u64(HTAB_SEED, (uint32_t)pid);
}

static struct td_proc *proc_lookup(const struct td_procs *procs, int pid)
{
	struct hnode *n;

	for (n = htab_first(&procs->procs, pid_hash(pid)); n; n = htab_next(n)) {
		struct td_proc *p = container_of(n, struct td_proc, node);

		if (p->pid == pid)
			return p;
	}
	return NULL;
}

static void proc_free(struct td_proc *p)
{
	free(p->maps);
	free(p->old);
	free(p->dir);
	free(p->root_prefix);
	free(p);
}

static void proc_free_node(struct hnode *n)
{
	proc_free(container_of(n, struct td_proc, node));
}

/* ---- reading ---------------------------------------------------------- */

/* Read @path whole into procs->buf; returns its length or -errno. */
static ssize_t read_all(struct td_procs *procs, const char *path)
{
	size_t len = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;

		if (procs->buf_alloc - len < 4096) {
			size_t n = procs->buf_alloc ? procs->buf_alloc * 2 : 64 * 1024;
			char *b = realloc(procs->buf, n);

			if (!b) {
				err = -ENOMEM;
				break;
			}
			procs->buf = b;
			procs->buf_alloc = n;
		}
		r = read(fd, procs->buf + len, procs->buf_alloc - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	close(fd);
	return err ? err : (ssize_t)len;
}

/* Keep the objects already resolved for mappings that did not change. */
static void carry_objects(struct td_mapping *nv, size_t nn, const struct td_mapping *ov,
			  size_t on)
{
	size_t i = 0, j = 0;

	while (i < nn && j < on) {
		if (nv[i].start < ov[j].start) {
			i++;
		} else if (nv[i].start > ov[j].start) {
			j++;
		} else {
			if (nv[i].end == ov[j].end && nv[i].pgoff == ov[j].pgoff &&
			    nv[i].inode == ov[j].inode && nv[i].path == ov[j].path)
				nv[i].obj = ov[j].obj;
			i++;
			j++;
		}
	}
}

/*
 * A process sees files under our paths only if it has our root and our
 * mount namespace; otherwise its paths are reached through its root link,
 * which the kernel resolves in the process's own namespace. readlink says
 * "/" for the root of any namespace, so the namespaces are compared too.
 */
static void update_root(struct td_procs *procs, struct td_proc *p)
{
	char path[PATH_MAX], target[8], ns[64];
	ssize_t n;

	free(p->root_prefix);
	p->root_prefix = NULL;
	if (snprintf(path, sizeof(path), "%s/ns/mnt", p->dir) >= (int)sizeof(path))
		return;
	n = readlink(path, ns, sizeof(ns) - 1);
	ns[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "%s/root", p->dir);
	n = readlink(path, target, sizeof(target));
	/* Unreadable (no privilege): only our own paths are left. */
	if (n < 0)
		return;
	if (n == 1 && target[0] == '/' && procs->self_mnt_ns[0] && !strcmp(ns, procs->self_mnt_ns))
		return;
	p->root_prefix = strdup(path);
}

/* The file @p runs (/proc/PID/exe), as *@dev and *@ino; 0 when unknown. */
static void exe_of(const struct td_proc *p, uint64_t *dev, uint64_t *ino)
{
	char path[PATH_MAX];
	struct stat st;

	*dev = *ino = 0;
	if (snprintf(path, sizeof(path), "%s/exe", p->dir) < (int)sizeof(path) &&
	    !stat(path, &st)) {
		*dev = st.st_dev;
		*ino = st.st_ino;
	}
}

/*
 * (Re)read @p's maps. On failure the old maps stay: they are still the best
 * knowledge of a process that just exited.
 *
 * A re-read that finds another program (/proc/PID/exe another file)
 * keeps the old maps too, for EXEC_HOLD_NS, when every exec is told
 * (td_procs_execs_known()): the process exec'd since they were read, and
 * the events asking now were written before that, or td_procs_exec()
 * would have come (the pipeline calls it at the exec's event, which comes
 * after them). Named from the new maps, those events took the next
 * program's names (two non-PIE programs share their addresses). Past the
 * bound, should the exec's event not come (lost), the new maps are taken.
 */
static int proc_read(struct td_procs *procs, struct td_proc *p)
{
	uint64_t dev, ino;
	struct td_mapping *v;
	char path[PATH_MAX];
	size_t n;
	ssize_t len;
	int err;

	p->read_ns = td_mono_ns();
	procs->stats.reads++;
	/*
	 * Most short-lived processes are gone by the time their records are
	 * read. Opening /proc/PID/maps then fails only after a slow lookup of
	 * the PID in /proc (microseconds, most of what such a process costs);
	 * asking the kernel whether the PID exists costs a tenth of that.
	 */
	if (procs->own_pids && kill(p->pid, 0) && errno == ESRCH) {
		procs->stats.gone++;
		err = -ESRCH;
		goto fail;
	}
	if (snprintf(path, sizeof(path), "%s/maps", p->dir) >= (int)sizeof(path)) {
		err = -ENAMETOOLONG;
		goto fail;
	}
	len = read_all(procs, path);
	if (len < 0) {
		err = (int)len;
		goto fail;
	}
	err = td_maps_parse(procs->buf, (size_t)len, procs->intern, procs->intern_ctx, &v, &n);
	if (err)
		goto fail;
	/*
	 * A process that exited but is not reaped yet reads as no mappings at
	 * all: that is not news about its address space, keep what we knew.
	 */
	if (!n && p->nr) {
		free(v);
		err = -ESRCH;
		goto fail;
	}
	exe_of(p, &dev, &ino);
	if (procs->execs_known && p->read_ok && p->exe_ino && ino &&
	    (dev != p->exe_dev || ino != p->exe_ino)) {
		if (!p->exec_ns)
			p->exec_ns = p->read_ns ?: 1;
		if (p->read_ns - p->exec_ns < EXEC_HOLD_NS) {
			free(v);
			procs->stats.exec_kept++;
			return 0;
		}
	}
	p->exec_ns = 0;
	p->exe_dev = dev;
	p->exe_ino = ino;
	carry_objects(v, n, p->maps, p->nr);
	free(p->maps);
	p->maps = v;
	p->nr = n;
	p->last = 0;
	p->read_ok = true;
	p->gen = __atomic_add_fetch(&last_gen, 1, __ATOMIC_RELAXED);
	update_root(procs, p);
	return 0;
fail:
	procs->stats.read_errors++;
	return err;
}

/*
 * Whether the PIDs under @proc_root are those kill() takes: the real /proc,
 * mounted for our own pid namespace (its "self" is our PID). Not a test's
 * made-up tree, nor the /proc of another namespace.
 */
static bool is_own_proc(const char *proc_root)
{
	char self[32];
	ssize_t n;

	if (strcmp(proc_root, "/proc"))
		return false;
	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n <= 0)
		return false;
	self[n] = '\0';
	return atoi(self) == getpid();
}

/* ---- API -------------------------------------------------------------- */

struct td_procs *td_procs_new(const char *proc_root, uint64_t refresh_ns, td_intern_fn intern,
			      void *intern_ctx)
{
	struct td_procs *procs = calloc(1, sizeof(*procs));
	ssize_t n;

	if (!procs)
		return NULL;
	procs->proc_root = strdup(proc_root);
	if (!procs->proc_root || htab_init(&procs->procs)) {
		td_procs_free(procs);
		return NULL;
	}
	/* Our own, from the real /proc whatever proc_root is. */
	n = readlink("/proc/self/ns/mnt", procs->self_mnt_ns, sizeof(procs->self_mnt_ns) - 1);
	procs->self_mnt_ns[n > 0 ? n : 0] = '\0';
	procs->own_pids = is_own_proc(proc_root);
	procs->refresh_ns = refresh_ns;
	procs->intern = intern;
	procs->intern_ctx = intern_ctx;
	return procs;
}

void td_procs_free(struct td_procs *procs)
{
	if (!procs)
		return;
	htab_destroy(&procs->procs, proc_free_node);
	free(procs->proc_root);
	free(procs->buf);
	free(procs->forks);
	free(procs);
}

static struct td_mapping *lookup_in(struct td_mapping *v, size_t n, size_t *last,
				     uint64_t addr)
{
	size_t lo = 0, hi = n;
	struct td_mapping *m;

	if (!n)
		return NULL;
	m = &v[*last];
	if (addr >= m->start && addr < m->end)
		return m;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		m = &v[mid];
		if (addr < m->start) {
			hi = mid;
		} else if (addr >= m->end) {
			lo = mid + 1;
		} else {
			*last = mid;
			return m;
		}
	}
	return NULL;
}

static struct td_mapping *maps_lookup(struct td_proc *p, uint64_t addr)
{
	return lookup_in(p->maps, p->nr, &p->last, addr);
}

/* Is what is named now (procs->when) from before @p's last exec? */
static bool use_old(const struct td_procs *procs, const struct td_proc *p)
{
	return p->old && procs->when && procs->when < p->old_until;
}

static struct td_proc *proc_get(struct td_procs *procs, int pid);

/*
 * @p, just made, was forked by a process whose maps are known: take them.
 * Returns whether it did. The parent is looked up as any process (read now
 * if never met: a shell outlives its children).
 */
static bool fork_copy(struct td_procs *procs, struct td_proc *p)
{
	const struct td_mapping *from;
	uint64_t fork_ts, dev, ino;
	struct fork_note *f;
	struct td_proc *pp;
	size_t nr;
	int parent;

	if (!procs->forks || !procs->execs_known)
		return false;
	f = &procs->forks[(unsigned int)p->pid % FORK_NOTES];
	if (f->child != p->pid)
		return false;
	parent = f->parent;
	fork_ts = f->ts;
	f->child = 0;		/* taken: a parent's own note is taken at most once too */
	pp = parent != p->pid ? proc_get(procs, parent) : NULL;
	if (!pp)
		return false;
	/* The parent exec'd since the fork: what it ran then. */
	if (pp->old && fork_ts < pp->old_until) {
		from = pp->old;
		nr = pp->old_nr;
	} else {
		/* Known, its maps not read since its own exec: read now, as a lookup would. */
		if (!pp->read_ok && td_mono_ns() - pp->read_ns >= procs->refresh_ns)
			proc_read(procs, pp);
		if (!pp->read_ok)
			return false;
		from = pp->maps;
		nr = pp->nr;
	}
	if (!nr)
		return false;
	p->maps = malloc(nr * sizeof(*p->maps));
	if (!p->maps)
		return false;
	/* Its root is its parent's, as of the fork; its own may be gone already. */
	if (pp->root_prefix) {
		p->root_prefix = strdup(pp->root_prefix);
		if (!p->root_prefix) {
			free(p->maps);
			p->maps = NULL;
			return false;
		}
	}
	memcpy(p->maps, from, nr * sizeof(*p->maps));
	p->nr = nr;
	p->read_ok = true;
	p->read_ns = td_mono_ns();
	p->exe_dev = pp->exe_dev;
	p->exe_ino = pp->exe_ino;
	p->gen = __atomic_add_fetch(&last_gen, 1, __ATOMIC_RELAXED);
	/*
	 * Running another program already: its exec's record is still to
	 * come, or was lost. Should it not come within EXEC_HOLD_NS, the
	 * copy gives way to its own maps (td_procs_find()).
	 */
	exe_of(p, &dev, &ino);
	if (ino && (dev != p->exe_dev || ino != p->exe_ino))
		p->exec_ns = p->read_ns;
	procs->stats.fork_copies++;
	return true;
}

void td_procs_fork(struct td_procs *procs, int parent, int child, uint64_t trace_ns)
{
	if (parent <= 0 || child <= 0 || parent == child || !procs->execs_known ||
	    proc_lookup(procs, child))
		return;
	if (!procs->forks) {
		procs->forks = calloc(FORK_NOTES, sizeof(*procs->forks));
		if (!procs->forks)
			return;
	}
	procs->forks[(unsigned int)child % FORK_NOTES] = (struct fork_note){ child, parent, trace_ns };
}

/* A new entry for @pid, in the table, nothing read yet. */
static struct td_proc *proc_new(struct td_procs *procs, int pid)
{
	struct td_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	if (asprintf(&p->dir, "%s/%d", procs->proc_root, pid) < 0) {
		free(p);
		return NULL;
	}
	htab_add(&procs->procs, &p->node, pid_hash(pid));
	return p;
}

static struct td_proc *proc_get(struct td_procs *procs, int pid)
{
	struct td_proc *p = proc_lookup(procs, pid);

	if (p)
		return p;
	p = proc_new(procs, pid);
	if (p && !fork_copy(procs, p))
		proc_read(procs, p);
	return p;
}

struct td_mapping *td_procs_find(struct td_procs *procs, int pid, uint64_t addr,
				 struct td_proc **proc)
{
	struct td_proc *p = procs->last;
	struct td_mapping *m;

	*proc = NULL;
	if (!p || p->pid != pid) {
		p = proc_get(procs, pid);
		if (!p)
			return NULL;
		procs->last = p;
	}
	/* Written before its exec: the maps read then, never read again. */
	if (use_old(procs, p)) {
		*proc = p;
		return lookup_in(p->old, p->old_nr, &p->old_last, addr);
	}
	/*
	 * Another program found running, its exec's record not come within
	 * the hold (lost): what it maps now, though the old maps still hold
	 * the address (two programs at the same addresses).
	 */
	if (p->exec_ns) {
		uint64_t now = td_mono_ns();

		if (now - p->exec_ns >= EXEC_HOLD_NS && now - p->read_ns >= procs->refresh_ns)
			proc_read(procs, p);
	}
	m = maps_lookup(p, addr);
	if (!m && td_mono_ns() - p->read_ns >= procs->refresh_ns) {
		proc_read(procs, p);
		m = maps_lookup(p, addr);
	}
	if (p->read_ok)
		*proc = p;
	return m;
}

/* The first file mapping of @p whose path is @path (@len bytes). */
static struct td_mapping *file_lookup(const struct td_proc *p, const char *path, size_t len)
{
	size_t i;

	for (i = 0; i < p->nr; i++) {
		struct td_mapping *m = &p->maps[i];

		if (m->is_file && !strncmp(m->path, path, len) && !m->path[len])
			return m;
	}
	return NULL;
}

struct td_mapping *td_procs_find_file(struct td_procs *procs, int pid, const char *path,
				      struct td_proc **proc)
{
	/* Deleted then or since: the maps say so apart from the path. */
	size_t len = td_path_len_live(path);
	struct td_mapping *m;
	struct td_proc *p;

	*proc = NULL;
	p = proc_get(procs, pid);
	if (!p)
		return NULL;
	procs->last = p;
	m = file_lookup(p, path, len);
	if (!m && td_mono_ns() - p->read_ns >= procs->refresh_ns) {
		proc_read(procs, p);
		m = file_lookup(p, path, len);
	}
	if (p->read_ok)
		*proc = p;
	return m;
}

uint64_t td_procs_gen(struct td_procs *procs, int pid)
{
	struct td_proc *p = procs->last;

	if (!p || p->pid != pid) {
		p = proc_lookup(procs, pid);
		if (!p)
			return 0;
		procs->last = p;
	}
	return use_old(procs, p) ? p->old_gen : p->gen;
}

void td_procs_set_when(struct td_procs *procs, uint64_t trace_ns)
{
	procs->when = trace_ns;
}

/* Whether a fork of @pid is noted, not yet taken. */
static bool fork_noted(const struct td_procs *procs, int pid)
{
	return procs->forks && procs->execs_known &&
	       procs->forks[(unsigned int)pid % FORK_NOTES].child == pid;
}

bool td_procs_exec(struct td_procs *procs, int pid, uint64_t trace_ns)
{
	struct td_proc *p = proc_lookup(procs, pid);
	bool kept = false;

	/*
	 * Forked, not met yet: its parent's maps are what it ran before this
	 * exec (/proc has the next program now), kept for its events before.
	 */
	if (!p && fork_noted(procs, pid)) {
		p = proc_new(procs, pid);
		if (p && !fork_copy(procs, p)) {
			td_procs_forget(procs, pid);
			p = NULL;
		}
	}

	/*
	 * Not known: nothing to keep. An exec older than the one the old maps
	 * end at (told late, from another CPU's records): the maps now are
	 * of after that one.
	 */
	if (!p || (p->old && trace_ns <= p->old_until))
		return false;
	/* Maps read since an earlier exec (or none): the old ones stay the best there is. */
	if (p->read_ok && p->nr) {
		kept = true;
		free(p->old);
		p->old = p->maps;
		p->old_nr = p->nr;
		p->old_last = 0;
		p->old_gen = p->gen;
		p->old_until = trace_ns;
	} else {
		free(p->maps);
	}
	p->maps = NULL;
	p->nr = 0;
	p->last = 0;
	p->read_ok = false;
	p->read_ns = 0;
	p->exec_ns = 0;
	p->exe_dev = p->exe_ino = 0;
	p->gen = __atomic_add_fetch(&last_gen, 1, __ATOMIC_RELAXED);
	procs->stats.execs += kept;
	return kept;
}

void td_procs_execs_known(struct td_procs *procs, bool known)
{
	procs->execs_known = known;
}

void td_procs_forget(struct td_procs *procs, int pid)
{
	struct td_proc *p = proc_lookup(procs, pid);

	if (!p)
		return;
	if (procs->last == p)
		procs->last = NULL;
	htab_del(&procs->procs, &p->node);
	proc_free(p);
}

/* Intern @p's paths anew; -ENOMEM leaves some paths old (then @p is dropped). */
static int proc_rebase(struct td_procs *procs, struct td_proc *p)
{
	/* Kept for a moment's events only: not worth interning again. */
	free(p->old);
	p->old = NULL;
	p->old_nr = 0;
	for (size_t i = 0; i < p->nr; i++) {
		struct td_mapping *m = &p->maps[i];
		const char *path = procs->intern(procs->intern_ctx, m->path, strlen(m->path));

		if (!path)
			return -ENOMEM;
		m->path = path;
		m->obj = NULL;
	}
	p->gen = __atomic_add_fetch(&last_gen, 1, __ATOMIC_RELAXED);
	return 0;
}

struct rebase_ctx {
	struct td_procs *procs;
	size_t dropped;
};

/* htab_filter(): whether @n stays, its paths interned anew. */
static bool rebase_keep(struct hnode *n, void *arg)
{
	struct td_proc *p = container_of(n, struct td_proc, node);
	struct rebase_ctx *ctx = arg;

	/* A process never read (gone when first asked) holds nothing worth keeping. */
	if (p->read_ok && p->nr && !proc_rebase(ctx->procs, p))
		return true;
	ctx->dropped++;
	return false;
}

size_t td_procs_rebase(struct td_procs *procs)
{
	struct rebase_ctx ctx = { .procs = procs };

	procs->last = NULL;
	htab_filter(&procs->procs, rebase_keep, proc_free_node, &ctx);
	return ctx.dropped;
}

const char *td_proc_root_prefix(const struct td_proc *proc)
{
	return proc->root_prefix;
}

const char *td_proc_dir(const struct td_proc *proc)
{
	return proc->dir;
}

void td_procs_get_stats(const struct td_procs *procs, struct td_procs_stats *st)
{
	*st = procs->stats;
	st->nr_procs = procs->procs.nr;
}
