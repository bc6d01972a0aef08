// SPDX-License-Identifier: GPL-2.0
/*
 * Interval profiles in a bounded directory (see profiles.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <trace-defer/pprof.h>

#include "counters.h"
#include "log.h"
#include "profiles.h"

#define PREFIX		"profile-"
#define EXT_PPROF	".pb.gz"
#define EXT_FOLDED	".folded"
#define STEM_MAX	64

struct td_profiles {
	char *dir;
	int dirfd;
	uint64_t interval_ns, keep, max_bytes, max_mem;
	uint64_t start_mono, start_real;	/* of the interval being counted */
	uint64_t events;			/* in it */
	struct td_pprof *pp;
	struct td_folded *fo;			/* NULL without profile_folded */
	struct td_profiles_stats st;
	/*
	 * The stems this run published and that are still there, in the
	 * order they were written: what prune() removes last, oldest first,
	 * whatever their names say (names follow the wall clock, which may
	 * be set back while we run).
	 */
	char (*mine)[STEM_MAX];
	size_t nr_mine, cap_mine;
	bool clock_warned;
};

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* A listing of the directory from its start (a dup() would share the offset). */
static DIR *open_listing(struct td_profiles *p)
{
	int fd = openat(p->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d && fd >= 0)
		close(fd);
	return d;
}

static bool digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/*
 * Is @s (@len bytes, no extension) a name interval_stem() makes,
 * profile-YYYYMMDDTHHMMSS.mmmZ with an optional _NNNNNN? Only those are
 * ever removed: the directory may be shared with a user's own profiles
 * (profile-incident.pb.gz is not ours to prune, nor to count).
 */
static bool our_stem(const char *s, size_t len)
{
	const size_t base = strlen(PREFIX "YYYYMMDDTHHMMSS.mmmZ");
	const char *d = s + strlen(PREFIX);

	if (len != base && len != base + 7)
		return false;
	if (strncmp(s, PREFIX, strlen(PREFIX)) || !digits(d, 8) || d[8] != 'T' ||
	    !digits(d + 9, 6) || d[15] != '.' || !digits(d + 16, 3) || d[19] != 'Z')
		return false;
	return len == base || (d[20] == '_' && digits(d + 21, 6));
}

/* The length of @name's stem if it is STEM.pb.gz or STEM.folded of ours, else 0. */
static size_t interval_file(const char *name)
{
	size_t len = strlen(name);

	if (has_suffix(name, EXT_PPROF))
		len -= strlen(EXT_PPROF);
	else if (has_suffix(name, EXT_FOLDED))
		len -= strlen(EXT_FOLDED);
	else
		return 0;
	return our_stem(name, len) ? len : 0;
}

/* Is @name .FILE.tmp, the dot-file publish() renames into FILE, one of ours? */
static bool our_tmp(const char *name)
{
	char file[STEM_MAX + 16];
	size_t len = strlen(name);

	if (name[0] != '.' || len <= 1 + strlen(".tmp") || !has_suffix(name, ".tmp") ||
	    len >= sizeof(file))
		return false;
	len -= 1 + strlen(".tmp");
	memcpy(file, name + 1, len);
	file[len] = '\0';
	return interval_file(file) != 0;
}

/* Dot-files of ours left by a run that died while writing. */
static void remove_stale(struct td_profiles *p)
{
	DIR *d = open_listing(p);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (our_tmp(de->d_name) && !unlinkat(p->dirfd, de->d_name, 0))
			td_info("removed %s/%s, left by an earlier run", p->dir, de->d_name);
	}
	closedir(d);
}

/*
 * Is @fd, the directory just opened, fit to use? Ours alone: one another
 * user owns or may write to would let them put a link where we, root,
 * write, or remove what we keep. Not another trace-defer's: two pruning
 * one directory remove each other's profiles (the lock goes with @fd).
 */
static int check_dir(struct td_profiles *p, int fd)
{
	struct stat st;

	if (fstat(fd, &st)) {
		td_err("cannot read profile directory %s: %s", p->dir, strerror(errno));
		return -1;
	}
	if (st.st_uid != geteuid()) {
		td_err("profile directory %s belongs to uid %u, not to this one (%u): "
		       "give a directory of our own", p->dir, (unsigned int)st.st_uid,
		       (unsigned int)geteuid());
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		td_err("profile directory %s may be written by others (mode %04o): "
		       "give a directory of our own", p->dir, (unsigned int)(st.st_mode & 07777));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK)
			td_err("profile directory %s is in use by another trace-defer", p->dir);
		else
			td_err("cannot lock profile directory %s: %s", p->dir, strerror(errno));
		return -1;
	}
	return 0;
}

static void prune(struct td_profiles *p, uint64_t bytes, unsigned int slots, uint64_t *kept,
		  uint64_t *kept_bytes);

struct td_profiles *td_profiles_open(const struct td_config *cfg, uint64_t mono_ns)
{
	struct td_profiles *p = calloc(1, sizeof(*p));

	if (!p)
		goto nomem;
	p->dirfd = -1;
	p->dir = strdup(cfg->profile_dir);
	p->pp = td_pprof_new(td_now_real_ns());
	if (!p->dir || !p->pp)
		goto nomem;
	if (cfg->profile_folded) {
		p->fo = td_folded_new();
		if (!p->fo)
			goto nomem;
	}
	p->interval_ns = (uint64_t)(cfg->profile_interval * 1e9);
	p->keep = cfg->profile_keep;
	p->max_bytes = cfg->profile_max_kb << 10;
	p->max_mem = cfg->profile_max_mem_kb << 10;
	/*
	 * Cut at max_mem (td_profiles_add()), the pprof never finds its
	 * tables full, but it counts new processes without their pid from
	 * three quarters on: a shell loop's processes then share their
	 * samples, and cut fewer intervals early, each of which takes one of
	 * profile_keep's files.
	 */
	td_pprof_set_max_mem(p->pp, p->max_mem);
	if (mkdir(p->dir, 0700) && errno != EEXIST) {
		td_err("cannot create profile directory %s: %s", p->dir, strerror(errno));
		goto fail;
	}
	p->dirfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd < 0) {
		td_err("cannot open profile directory %s: %s", p->dir, strerror(errno));
		goto fail;
	}
	if (check_dir(p, p->dirfd))
		goto fail;
	if (faccessat(p->dirfd, ".", W_OK, AT_EACCESS)) {
		td_err("cannot write to profile directory %s: %s", p->dir, strerror(errno));
		goto fail;
	}
	remove_stale(p);
	/* Bounds lowered since the last run hold from the start, not from the first cut. */
	prune(p, 0, 0, &p->st.kept, &p->st.kept_bytes);
	p->start_mono = mono_ns;
	p->start_real = td_now_real_ns();
	return p;
nomem:
	td_err("out of memory");
fail:
	if (p && p->dirfd >= 0)
		close(p->dirfd);
	if (p) {
		free(p->mine);
		td_pprof_free(p->pp);
		td_folded_free(p->fo);
		free(p->dir);
		free(p);
	}
	return NULL;
}

static int cut(struct td_profiles *p, uint64_t mono_ns);

int td_profiles_add(struct td_profiles *p, const struct td_resolved *r)
{
	struct td_pprof_stats st;
	int ret;

	/* The folded lines share the bound: the pprof's three quarters are of what they leave. */
	if (p->max_mem && p->fo) {
		uint64_t fm = td_folded_mem(p->fo);

		td_pprof_set_max_mem(p->pp, fm < p->max_mem ? p->max_mem - fm : 1);
	}
	ret = td_pprof_add(p->pp, r);
	if (ret)
		return ret;
	/*
	 * In the pprof now: the interval has it and is written. Should the
	 * folded file not get it (out of memory), the two files of the
	 * interval differ by that event: counted (folded_missed) and
	 * returned, a write error the run says and exits 1 for.
	 */
	if (p->fo && td_folded_add(p->fo, r)) {
		p->st.folded_missed++;
		ret = -ENOMEM;
	}
	p->events++;
	if (p->max_mem) {
		td_pprof_stats(p->pp, &st);
		if (st.mem_bytes + (p->fo ? td_folded_mem(p->fo) : 0) >= p->max_mem) {
			p->st.early++;
			cut(p, td_now_mono_ns());
		}
	}
	return ret;
}

/*
 * Write one file of the interval under its dot-name .STEM.EXT.tmp; *@bytes
 * gets its size. Returns 0 or a negative errno (message printed, nothing left).
 */
static int write_tmp(struct td_profiles *p, const char *stem, const char *ext, bool pprof,
		     uint64_t end_real, size_t *bytes)
{
	char tmp[STEM_MAX + 16];
	FILE *f;
	int fd, ret;

	*bytes = 0;
	snprintf(tmp, sizeof(tmp), ".%s%s.tmp", stem, ext);
	/* Made anew, never through what is there (a link would be followed). */
	if (unlinkat(p->dirfd, tmp, 0) && errno != ENOENT) {
		ret = -errno;
		goto out;
	}
	fd = openat(p->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (pprof) {
		ret = td_pprof_write(p->pp, f, end_real, bytes);
	} else {
		ret = td_folded_write(p->fo, f);
		*bytes = ret ? 0 : (size_t)ftell(f);
	}
	if (fflush(f) && !ret)
		ret = -errno;
	if (fsync(fileno(f)) && !ret)
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
out:
	if (ret) {
		td_err("cannot write profile %s/%s: %s", p->dir, tmp, strerror(-ret));
		unlinkat(p->dirfd, tmp, 0);
	}
	return ret;
}

/* .STEM.EXT.tmp becomes STEM.EXT (or is removed, @keep false). */
static int publish(struct td_profiles *p, const char *stem, const char *ext, bool keep)
{
	char tmp[STEM_MAX + 16], name[STEM_MAX + 16];

	snprintf(tmp, sizeof(tmp), ".%s%s.tmp", stem, ext);
	snprintf(name, sizeof(name), "%s%s", stem, ext);
	if (!keep) {
		unlinkat(p->dirfd, tmp, 0);
		return 0;
	}
	if (renameat(p->dirfd, tmp, p->dirfd, name)) {
		td_err("cannot rename %s/%s: %s", p->dir, tmp, strerror(errno));
		unlinkat(p->dirfd, tmp, 0);
		return -1;
	}
	return 0;
}

struct entry {
	char stem[STEM_MAX];
	uint64_t bytes;
	size_t rank;		/* 0: not this run's; else 1 + its index in p->mine */
	bool removed;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->stem, ((const struct entry *)b)->stem);
}

/* Removal order: earlier runs' intervals by name, then this run's as written. */
static int cmp_age(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return cmp_entry(a, b);
}

/* The intervals in the directory, sorted by name, each with its files' bytes. */
static struct entry *list_intervals(struct td_profiles *p, size_t *nr)
{
	DIR *d = open_listing(p);
	struct entry *v = NULL, *nv;
	size_t n = 0, cap = 0, i, j;
	struct dirent *de;
	struct stat st;

	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		const char *s = de->d_name;
		size_t len = interval_file(s);

		if (!len || len >= STEM_MAX || fstatat(p->dirfd, s, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return NULL;
			}
			v = nv;
		}
		memcpy(v[n].stem, s, len);
		v[n].stem[len] = '\0';
		v[n].bytes = st.st_size;
		v[n].rank = 0;
		v[n].removed = false;
		n++;
	}
	closedir(d);
	*nr = n;
	if (!n)
		return v ? v : calloc(1, sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_entry);
	/* one entry per interval */
	for (i = 0, j = 1; j < n; j++) {
		if (!strcmp(v[i].stem, v[j].stem))
			v[i].bytes += v[j].bytes;
		else
			v[++i] = v[j];
	}
	*nr = i + 1;
	return v;
}

/* Remove both files of @stem. false when one of them is still there (message printed). */
static bool remove_interval(struct td_profiles *p, const char *stem)
{
	static const char *const exts[] = { EXT_PPROF, EXT_FOLDED };
	char name[STEM_MAX + 16];
	bool gone = true;
	size_t i;

	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", stem, exts[i]);
		if (unlinkat(p->dirfd, name, 0) && errno != ENOENT) {
			td_warn("cannot remove %s/%s: %s", p->dir, name, strerror(errno));
			gone = false;
		}
	}
	if (gone)
		p->st.removed++;
	return gone;
}

/*
 * Order @v (@n intervals, sorted by name) as they were written, oldest
 * first, as far as we know: this run's after the others, in its order;
 * the others by name.
 */
static void order_by_age(struct td_profiles *p, struct entry *v, size_t n)
{
	size_t i;

	for (i = 0; i < p->nr_mine; i++) {
		struct entry key, *e;

		memcpy(key.stem, p->mine[i], STEM_MAX);
		e = n ? bsearch(&key, v, n, sizeof(*v), cmp_entry) : NULL;
		if (e)
			e->rank = i + 1;
	}
	qsort(v, n, sizeof(*v), cmp_age);
}

/*
 * Make room for @slots (0 or 1) new intervals of @bytes: remove the
 * oldest until at most keep - @slots remain and their bytes plus @bytes
 * fit, so that the published intervals never hold more than the bounds,
 * not even for a moment (the new one's temporary file, written before
 * its size is known, is there too meanwhile). An interval that cannot be
 * removed stays counted and the next oldest goes. What is then kept, the
 * new one included, goes to *@kept and *@kept_bytes.
 */
static void prune(struct td_profiles *p, uint64_t bytes, unsigned int slots, uint64_t *kept,
		  uint64_t *kept_bytes)
{
	uint64_t total = bytes;
	size_t n, i, left, k;
	struct entry *v;

	if (!p->keep && !p->max_bytes)
		return;
	v = list_intervals(p, &n);
	if (!v) {
		td_warn("cannot list profile directory %s", p->dir);
		return;
	}
	order_by_age(p, v, n);
	for (i = 0; i < n; i++)
		total += v[i].bytes;
	for (i = 0, left = n; i < n; i++) {
		if (!(p->keep && left + slots > p->keep) && !(p->max_bytes && total > p->max_bytes))
			break;
		if (!remove_interval(p, v[i].stem))
			continue;
		v[i].removed = true;
		left--;
		total -= v[i].bytes;
	}
	/* this run's still there, in their order (v holds them by rank) */
	for (i = 0, k = 0; i < n; i++)
		if (v[i].rank && !v[i].removed)
			memcpy(p->mine[k++], v[i].stem, STEM_MAX);
	p->nr_mine = k;
	*kept = left + slots;
	*kept_bytes = total;
	free(v);
}

/*
 * Remember @stem, just published, as the newest of this run's (not
 * remembering it would only let the next prune order it by its name).
 * Says once that the clock went back when its name sorts before another's.
 */
static void remember(struct td_profiles *p, const char *stem)
{
	if (p->nr_mine && strcmp(stem, p->mine[p->nr_mine - 1]) < 0 && !p->clock_warned) {
		td_warn("the clock went back: profile names (start times) in %s no longer "
			"sort as written; they are removed oldest written first", p->dir);
		p->clock_warned = true;
	}
	if (!p->keep && !p->max_bytes)
		return;
	if (p->nr_mine == p->cap_mine) {
		size_t cap = p->cap_mine ? p->cap_mine * 2 : 16;
		char (*m)[STEM_MAX] = realloc(p->mine, cap * sizeof(*m));

		if (!m)
			return;
		p->mine = m;
		p->cap_mine = cap;
	}
	snprintf(p->mine[p->nr_mine++], STEM_MAX, "%s", stem);
}

/*
 * A name for the interval that started at @real_ns, not used yet. Names
 * sort as the intervals started (prune() removes by name): the start to the
 * millisecond, and cuts within one millisecond a fixed-width count.
 */
static void interval_stem(struct td_profiles *p, uint64_t real_ns, char *stem)
{
	time_t t = real_ns / 1000000000ULL;
	unsigned int ms = real_ns / 1000000ULL % 1000;
	char date[32], base[STEM_MAX - 8], name[STEM_MAX + 16];
	struct tm tm;
	int i;

	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y%m%dT%H%M%S", &tm);
	snprintf(base, sizeof(base), PREFIX "%s.%03uZ", date, ms);
	snprintf(stem, STEM_MAX, "%s", base);
	for (i = 1; i < 1000000; i++) {
		snprintf(name, sizeof(name), "%s%s", stem, EXT_PPROF);
		if (faccessat(p->dirfd, name, F_OK, AT_EACCESS) && errno == ENOENT)
			break;
		snprintf(stem, STEM_MAX, "%s_%06d", base, i);
	}
}

/*
 * The directory was removed while we ran (a cleanup, a mistaken rm -rf):
 * made again, as at start, rather than failing every interval until a
 * restart. A directory made in its place by someone else is used if
 * check_dir() finds it fit, as at start.
 */
static void dir_again(struct td_profiles *p)
{
	struct stat st;
	int fd;

	if (fstat(p->dirfd, &st) || st.st_nlink)
		return;
	if (mkdir(p->dir, 0700) && errno != EEXIST) {
		td_err("profile directory %s was removed and cannot be made again: %s", p->dir,
		       strerror(errno));
		return;
	}
	fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		td_err("cannot open profile directory %s: %s", p->dir, strerror(errno));
		return;
	}
	if (check_dir(p, fd)) {
		close(fd);
		return;
	}
	close(p->dirfd);
	p->dirfd = fd;
	p->st.dir_made_again++;
	td_warn("profile directory %s was removed: made again (the profiles in it are gone)",
		p->dir);
}

static int cut(struct td_profiles *p, uint64_t mono_ns)
{
	uint64_t end_real = td_now_real_ns();
	char stem[STEM_MAX];
	int ret = 0;

	if (p->events) {
		uint64_t kept = 0, kept_bytes = 0;
		size_t pb = 0, fb = 0;

		dir_again(p);

		interval_stem(p, p->start_real, stem);
		if (write_tmp(p, stem, EXT_PPROF, true, end_real, &pb) ||
		    (p->fo && write_tmp(p, stem, EXT_FOLDED, false, end_real, &fb)))
			ret = -1;
		/* One interval bigger than the bound on its own is still written. */
		if (!ret)
			prune(p, pb + fb, 1, &kept, &kept_bytes);
		/* The folded file first: a pprof file never stands without it. */
		if (p->fo && publish(p, stem, EXT_FOLDED, !ret))
			ret = -1;
		if (publish(p, stem, EXT_PPROF, !ret))
			ret = -1;
		if (ret) {
			p->st.errors++;
		} else {
			remember(p, stem);
			p->st.written++;
			p->st.bytes += pb + fb;
			p->st.last_bytes = pb;
			p->st.kept = kept;
			p->st.kept_bytes = kept_bytes;
		}
	}
	td_pprof_reset(p->pp, end_real);
	if (p->fo) {
		struct td_folded *fo = td_folded_new();

		/* Out of memory: the next interval's folded stacks add to this one's. */
		if (fo) {
			td_folded_free(p->fo);
			p->fo = fo;
		}
	}
	p->events = 0;
	p->start_mono = mono_ns;
	p->start_real = end_real;
	return ret;
}

int td_profiles_tick(struct td_profiles *p, uint64_t mono_ns)
{
	/* An early cut may have started the interval after @mono_ns was read. */
	if (!p->interval_ns || mono_ns < p->start_mono ||
	    mono_ns - p->start_mono < p->interval_ns)
		return 0;
	return cut(p, mono_ns);
}

int td_profiles_close(struct td_profiles *p, struct td_profiles_stats *st)
{
	int ret;

	if (!p)
		return 0;
	ret = cut(p, p->start_mono);
	/* Every interval lost counts, not only the last: each is a profile missing. */
	if (p->st.errors)
		ret = -1;
	if (st)
		*st = p->st;
	close(p->dirfd);
	free(p->mine);
	td_pprof_free(p->pp);
	td_folded_free(p->fo);
	free(p->dir);
	free(p);
	return ret;
}

void td_profiles_stats(const struct td_profiles *p, struct td_profiles_stats *st)
{
	*st = p->st;
}
