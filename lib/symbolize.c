// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer: public API and the caches that make a repeated lookup
 * cheap.
 *
 *  process (pid) --procmaps--> mapping --obj--> object --syms--> symbol
 *
 * - processes and their maps: procmaps.c (re-read on a miss);
 * - objects: one per distinct file, keyed by (st_dev, st_ino, st_size,
 *   st_mtime) of the file actually opened, so a file replaced on disk is a
 *   new object and the same file seen through another path or mount
 *   namespace is the same object; each mapping remembers its object;
 * - symbol tables: one per object, shared between objects with the same
 *   build-id (the same library in several containers is read once);
 * - strings handed out (paths, build-ids) are interned and, like symbol
 *   tables, live until td_sym_free(), as the header promises;
 * - recorded files (file identity: path + build-id) are resolved once to
 *   an object, or to none, and the outcome kept by (path, build-id) and on
 *   the td_file itself;
 * - code in anonymous memory (a JIT's) is named from the process's perf
 *   map file, if its JIT writes one: perfmap.c.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trace-defer/filetab.h>
#include <trace-defer/symbolize.h>

#include "debuginfod.h"
#include "elfsyms.h"
#include "htab.h"
#include "kallsyms.h"
#include "monotime.h"
#include "openreg.h"
#include "jitwatch.h"
#include "perfmap.h"
#include "procmaps.h"

/* ---- caches ----------------------------------------------------------- */

struct istr {
	struct hnode node;
	size_t len;
	char s[];
};

struct file_key {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
};

struct object {
	struct hnode node;
	struct file_key key;
	struct td_elfseg *segs;
	unsigned int nr_segs;
	const char *build_id;		/* interned hex, NULL if none */
	struct td_elfsyms *syms;	/* NULL: not an ELF file */
};

/* A symbol table, owned here, indexed by build-id when it has one. */
struct symtab {
	struct hnode node;
	struct symtab *next_all;
	uint8_t build_id[TD_BUILD_ID_MAX];
	unsigned int build_id_len;
	struct td_elfsyms *syms;
};

/*
 * Kernel lookups, by address: a direct-mapped cache in front of the binary
 * search over kallsyms (some 200k symbols: a search misses the CPU caches
 * about as often as it compares). kallsyms is read once, so an entry never
 * goes stale.
 */
#define KCACHE_BITS	12

struct kcache_entry {
	uint64_t addr;
	const char *name;	/* NULL: empty entry, or the address is unknown */
	const char *object;
	uint64_t offset;
	bool valid;
};

/*
 * User lookups, by (pid, address, return_addr): a direct-mapped cache in
 * front of the maps search, the segment walk and the symbol search. An
 * entry holds the version of the process's maps it was found in
 * (td_procs_gen): a maps re-read or td_sym_forget() gives the process a new
 * version, so its old entries no longer match. Only found addresses are
 * cached: a miss must still re-read the maps when they may have changed.
 */
#define UCACHE_BITS	12

struct ucache_entry {
	uint64_t addr;
	uint64_t gen;		/* 0: empty */
	const char *symbol, *object, *build_id;
	uint64_t sym_offset;	/* jit: the perf map's gen (td_perfmaps_gen()) instead */
	uint64_t file_offset;
	int pid;
	bool return_addr;
	bool jit;		/* JIT code its process's perf map did not name (yet) */
};

/* A recorded file, resolved. */
struct fres {
	struct hnode node;		/* by (path, build-id) */
	const char *path;		/* interned, as recorded */
	const char *build_id;		/* interned hex, NULL when none recorded */
	struct object *obj;		/* NULL: found nowhere (or only with another build-id) */
	int tried_pid;			/* last process whose root was looked through */
	unsigned int tried_scan;	/* last scan of namespaces looked through, 0: none */
};

/* A live process of a mount namespace not ours, found by scan_namespaces(). */
struct ns_rep {
	uint64_t dev, ino;		/* the namespace: its nsfs file */
	int pid;
};

struct td_symbolizer {
	char *debuginfo_path;		/* libdwfl's ":.debug:DEBUG_DIR" */
	char *debug_dirs[2];		/* searched by build-id, NULL-terminated early */
	struct htab fileids;		/* struct fres */
	debuginfod_client *dbgd;	/* NULL until first needed */
	char *kallsyms_path;
	char *proc_root;		/* "/proc", or the tests' */
	/* One live process of each other mount namespace, as of the last scan. */
	struct ns_rep *ns_reps;
	size_t nr_ns_reps, ns_cap;
	uint64_t ns_scan_ns;		/* when, CLOCK_MONOTONIC */
	unsigned int ns_scan_gen;	/* scans made */
	struct td_procs *procs;
	struct td_perfmaps *perfmaps;
	struct td_jitwatch *jit_watch;	/* td_sym_jit_watch()'s, or NULL */
	/* What td_sym_restart() makes procs and perfmaps again from. */
	uint64_t refresh_ns;
	char *perfmap_dir, *perfmap_save_dir;
	bool perfmap_saved;		/* perfmap_dir holds a recording's copies */
	uint64_t object_bytes;		/* objects and file lookups: td_sym_held_bytes() */
	/* What the caches td_sym_restart() freed had counted (stats since td_sym_new()). */
	struct td_procs_stats procs_base;
	struct td_perfmaps_stats pm_base;
	struct htab strings;
	struct htab objects;
	struct htab symtabs;		/* by build-id */
	struct symtab *all_symtabs;
	struct object no_object;	/* a mapping whose file cannot be opened */
	struct td_kallsyms *ksyms;
	bool ksyms_tried;
	uint64_t ksyms_digest;		/* td_kallsyms_digest() of ksyms */
	/* Tables td_sym_kernel_reload() replaced: frames handed out name into them. */
	struct old_ksyms *old_ksyms;
	uint64_t files_gen;		/* td_sym_files_gen() */
	uint64_t strings_id;		/* td_frame.strings_id of our frames */
	struct kcache_entry *kcache;	/* NULL until the first kernel lookup */
	struct ucache_entry *ucache;	/* NULL until the first user lookup */
	bool ucache_failed;
	struct td_sym_stats stats;
};

struct old_ksyms {
	struct old_ksyms *next;
	struct td_kallsyms *ks;
};

/* Symbolizer serial numbers: never 0, never reused in the process. */
static uint64_t last_strings_id;

uint64_t td_strings_id_new(void)
{
	return __atomic_add_fetch(&last_strings_id, 1, __ATOMIC_RELAXED);
}

static const char *intern(void *ctx, const char *s, size_t len)
{
	struct td_symbolizer *sym = ctx;
	uint64_t h = htab_hash_bytes(s, len, HTAB_SEED);
	struct hnode *n;
	struct istr *is;

	for (n = htab_first(&sym->strings, h); n; n = htab_next(n)) {
		is = container_of(n, struct istr, node);
		if (is->len == len && !memcmp(is->s, s, len))
			return is->s;
	}
	is = malloc(sizeof(*is) + len + 1);
	if (!is)
		return NULL;
	is->len = len;
	memcpy(is->s, s, len);
	is->s[len] = '\0';
	htab_add(&sym->strings, &is->node, h);
	sym->stats.strings++;
	sym->stats.string_bytes += sizeof(*is) + len + 1;
	return is->s;
}

static uint64_t key_hash(const struct file_key *k)
{
	return htab_hash_bytes(k, sizeof(*k), HTAB_SEED);
}

static struct object *object_lookup(struct td_symbolizer *sym, const struct file_key *k)
{
	struct hnode *n;

	for (n = htab_first(&sym->objects, key_hash(k)); n; n = htab_next(n)) {
		struct object *o = container_of(n, struct object, node);

		if (!memcmp(&o->key, k, sizeof(*k)))
			return o;
	}
	return NULL;
}

static const char *build_id_hex(struct td_symbolizer *sym, const uint8_t *id, unsigned int len)
{
	static const char hex[] = "0123456789abcdef";
	char buf[TD_BUILD_ID_MAX * 2];
	unsigned int i;

	for (i = 0; i < len; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 0xf];
	}
	return intern(sym, buf, 2 * len);
}

/*
 * The symbol table for @e: shared with an earlier file of the same build-id,
 * else read now. A stripped copy read first gives a .dynsym-only table; a
 * later unstripped copy of the same build then reads its own, better one,
 * which replaces the shared entry.
 */
static struct td_elfsyms *object_symbols(struct td_symbolizer *sym, struct td_elf *e)
{
	uint64_t h = htab_hash_bytes(e->build_id, e->build_id_len, HTAB_SEED);
	struct symtab *st, *shared = NULL;
	struct hnode *n;

	if (e->build_id_len) {
		for (n = htab_first(&sym->symtabs, h); n; n = htab_next(n)) {
			st = container_of(n, struct symtab, node);
			if (st->build_id_len == e->build_id_len &&
			    !memcmp(st->build_id, e->build_id, e->build_id_len)) {
				shared = st;
				break;
			}
		}
		if (shared && (td_elfsyms_full(shared->syms) || !e->has_symtab)) {
			sym->stats.symtabs_shared++;
			return shared->syms;
		}
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->syms = td_elf_symbols(e);
	if (!st->syms) {
		free(st);
		return NULL;
	}
	sym->stats.symtabs++;
	st->next_all = sym->all_symtabs;
	sym->all_symtabs = st;
	if (e->build_id_len) {
		memcpy(st->build_id, e->build_id, e->build_id_len);
		st->build_id_len = e->build_id_len;
		/* The poorer table stays for the objects using it, unindexed. */
		if (shared && td_elfsyms_full(st->syms))
			htab_del(&sym->symtabs, &shared->node);
		if (!shared || td_elfsyms_full(st->syms))
			htab_add(&sym->symtabs, &st->node, h);
	}
	return st->syms;
}

/*
 * The object for the file open on @fd (consumed); @file_name is where it is
 * found, for libdwfl's debug file search. NULL only on allocation failure.
 */
static struct object *object_for_fd(struct td_symbolizer *sym, int fd, const char *file_name)
{
	struct file_key k = { 0 };
	struct td_elf *e;
	struct object *o;
	struct stat st;

	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	k.dev = st.st_dev;
	k.ino = st.st_ino;
	k.size = (uint64_t)st.st_size;
	k.mtime_sec = st.st_mtim.tv_sec;
	k.mtime_nsec = st.st_mtim.tv_nsec;
	o = object_lookup(sym, &k);
	if (o) {
		close(fd);
		return o;
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		close(fd);
		return NULL;
	}
	o->key = k;
	htab_add(&sym->objects, &o->node, key_hash(&k));
	sym->stats.objects++;
	sym->object_bytes += sizeof(*o);
	/* Not an ELF file (or unreadable): cached as such, without symbols. */
	if (td_elf_open(fd, file_name, sym->debuginfo_path, &e))
		return o;
	o->segs = e->segs;
	o->nr_segs = e->nr_segs;
	sym->object_bytes += o->nr_segs * sizeof(*o->segs);
	e->segs = NULL;
	if (e->build_id_len)
		o->build_id = build_id_hex(sym, e->build_id, e->build_id_len);
	o->syms = object_symbols(sym, e);
	td_elf_close(e);
	return o;
}

/* Open @path if it is a regular file with inode @ino (0: any). */
static int open_checked(const char *path, uint64_t ino)
{
	struct stat st;
	int fd = td_open_regular(path, &st);

	if (fd < 0 || !ino || st.st_ino == ino)
		return fd;
	close(fd);
	return -1;
}

/*
 * Find the object of file mapping @m of @proc. The mapped file itself is
 * reached through map_files (works for deleted files and across mount
 * namespaces, needs privilege), else through the process's root, else by its
 * path; the last two only if the inode is the mapped one.
 */
static struct object *resolve_mapping(struct td_symbolizer *sym, struct td_proc *proc,
				      const struct td_mapping *m)
{
	const char *prefix = td_proc_root_prefix(proc);
	char path[PATH_MAX], rooted[PATH_MAX];
	const char *file_name = m->path;
	struct object *o;
	int fd;

	if (prefix && snprintf(rooted, sizeof(rooted), "%s%s", prefix, m->path) <
			      (int)sizeof(rooted))
		file_name = rooted;
	fd = -1;
	if (snprintf(path, sizeof(path), "%s/map_files/%" PRIx64 "-%" PRIx64, td_proc_dir(proc),
		     m->start, m->end) < (int)sizeof(path))
		fd = open_checked(path, 0);
	if (fd < 0 && file_name == rooted)
		fd = open_checked(rooted, m->inode);
	if (fd < 0)
		fd = open_checked(m->path, m->inode);
	if (fd < 0)
		return &sym->no_object;
	o = object_for_fd(sym, fd, file_name);
	return o ? o : &sym->no_object;
}

/* Name file offset @off (the lookup offset) of @o into @out. */
static void name_offset(struct td_symbolizer *sym, struct object *o, uint64_t off,
			uint64_t delta, struct td_frame *out)
{
	uint64_t vaddr, start;
	const char *name;

	out->build_id = o->build_id;
	if (o->syms && td_elf_off2vaddr(o->segs, o->nr_segs, off, &vaddr) &&
	    td_elfsyms_find(o->syms, vaddr, &name, &start)) {
		out->symbol = name;
		/* Against the recorded address, not the lookup address. */
		out->sym_offset = vaddr - start + delta;
		return;
	}
	sym->stats.user_no_symbol++;
}

/* The JIT maps cache, empty; NULL (errno set) when out of memory. */
static struct td_perfmaps *new_perfmaps(struct td_symbolizer *sym)
{
	struct td_perfmaps *pm;
	int err;

	pm = td_perfmaps_new(sym->perfmap_dir, sym->perfmap_saved ? NULL : sym->proc_root,
			     intern, sym);
	if (!pm || !sym->perfmap_save_dir || !td_perfmaps_save_to(pm, sym->perfmap_save_dir))
		return pm;
	err = errno;
	td_perfmaps_free(pm);
	errno = err;
	return NULL;
}

/* ---- API -------------------------------------------------------------- */

struct td_symbolizer *td_sym_new(const struct td_sym_config *cfg)
{
	static const struct td_sym_config defaults;
	struct td_symbolizer *sym;
	uint64_t refresh_us;

	if (!cfg)
		cfg = &defaults;
	sym = calloc(1, sizeof(*sym));
	if (!sym)
		return NULL;
	sym->strings_id = td_strings_id_new();
	if (htab_init(&sym->strings) || htab_init(&sym->objects) || htab_init(&sym->symtabs) ||
	    htab_init(&sym->fileids))
		goto fail;
	sym->debug_dirs[0] = strdup(cfg->debug_dir ? cfg->debug_dir : "/usr/lib/debug");
	if (!sym->debug_dirs[0])
		goto fail;
	if (strcmp(sym->debug_dirs[0], "/usr/lib/debug")) {
		sym->debug_dirs[1] = strdup("/usr/lib/debug");
		if (!sym->debug_dirs[1])
			goto fail;
	}
	/* CRC checks on (the default); the object's dir, its .debug/, then DEBUG_DIR. */
	if (asprintf(&sym->debuginfo_path, ":.debug:%s",
		     cfg->debug_dir ? cfg->debug_dir : "/usr/lib/debug") < 0) {
		sym->debuginfo_path = NULL;
		goto fail;
	}
	sym->kallsyms_path = strdup(cfg->kallsyms ? cfg->kallsyms : "/proc/kallsyms");
	if (!sym->kallsyms_path)
		goto fail;
	refresh_us = cfg->maps_refresh_us ? cfg->maps_refresh_us : 10000;
	sym->refresh_ns = refresh_us * 1000;
	sym->proc_root = strdup(cfg->proc_root ? cfg->proc_root : "/proc");
	sym->perfmap_saved = cfg->perfmap_saved_dir;
	sym->perfmap_dir = strdup(cfg->perfmap_saved_dir ? cfg->perfmap_saved_dir :
				  cfg->perfmap_dir ? cfg->perfmap_dir : "/tmp");
	if (cfg->perfmap_save_dir)
		sym->perfmap_save_dir = strdup(cfg->perfmap_save_dir);
	if (!sym->proc_root || !sym->perfmap_dir ||
	    (cfg->perfmap_save_dir && !sym->perfmap_save_dir))
		goto fail;
	sym->procs = td_procs_new(sym->proc_root, sym->refresh_ns, intern, sym);
	sym->perfmaps = new_perfmaps(sym);
	if (!sym->procs || !sym->perfmaps)
		goto fail;
	return sym;
fail:
	td_sym_free(sym);
	return NULL;
}

static void free_string(struct hnode *n)
{
	free(container_of(n, struct istr, node));
}

static void free_object(struct hnode *n)
{
	struct object *o = container_of(n, struct object, node);

	/* Symbol tables are freed through all_symtabs. */
	free(o->segs);
	free(o);
}

static void free_nothing(struct hnode *n)
{
}

static void free_fres(struct hnode *n)
{
	free(container_of(n, struct fres, node));
}

/*
 * Free what was learnt of files: objects, symbol tables, file lookups and
 * every name. The tables need htab_init() again.
 */
/* What is learnt of files; detached by td_sym_restart() before it is freed. */
struct files {
	struct htab strings, objects, symtabs, fileids;
	struct symtab *all_symtabs;
};

static void files_take(struct files *f, struct td_symbolizer *sym)
{
	f->strings = sym->strings;
	f->objects = sym->objects;
	f->symtabs = sym->symtabs;
	f->fileids = sym->fileids;
	f->all_symtabs = sym->all_symtabs;
}

static void files_free(struct files *f)
{
	htab_destroy(&f->objects, free_object);
	htab_destroy(&f->symtabs, free_nothing);
	htab_destroy(&f->fileids, free_fres);
	while (f->all_symtabs) {
		struct symtab *st = f->all_symtabs;

		f->all_symtabs = st->next_all;
		td_elfsyms_free(st->syms);
		free(st);
	}
	htab_destroy(&f->strings, free_string);
}

static void free_old_ksyms(struct td_symbolizer *sym)
{
	while (sym->old_ksyms) {
		struct old_ksyms *o = sym->old_ksyms;

		sym->old_ksyms = o->next;
		td_kallsyms_free(o->ks);
		free(o);
	}
}

void td_sym_free(struct td_symbolizer *sym)
{
	struct files files;

	if (!sym)
		return;
	free_old_ksyms(sym);
	td_procs_free(sym->procs);
	td_jitwatch_stop(sym->jit_watch);
	td_perfmaps_free(sym->perfmaps);
	files_take(&files, sym);
	files_free(&files);
	if (sym->dbgd)
		td_debuginfod()->end(sym->dbgd);
	free(sym->debug_dirs[0]);
	free(sym->debug_dirs[1]);
	td_kallsyms_free(sym->ksyms);
	free(sym->kcache);
	free(sym->ucache);
	free(sym->debuginfo_path);
	free(sym->proc_root);
	free(sym->ns_reps);
	free(sym->perfmap_dir);
	free(sym->perfmap_save_dir);
	free(sym->kallsyms_path);
	free(sym);
}

/* Fold the JIT maps cache's counters into the base, before it is freed. */
static void add_perfmaps_stats(struct td_symbolizer *sym)
{
	struct td_perfmaps_stats ms;

	td_perfmaps_get_stats(sym->perfmaps, &ms);
	sym->pm_base.saved_maps += ms.saved_maps;
	sym->pm_base.saved_bytes += ms.saved_bytes;
	sym->pm_base.save_errors += ms.save_errors;
	sym->pm_base.stale += ms.stale;
}

int td_sym_restart(struct td_symbolizer *sym)
{
	struct files old;
	struct htab t[4];
	struct td_perfmaps *pm;
	int i;

	for (i = 0; i < 4; i++) {
		if (htab_init(&t[i]))
			goto fail;
	}
	pm = new_perfmaps(sym);
	if (!pm)
		goto fail;
	/* A recording's copies get what the JITs appended since last read. */
	td_perfmaps_sync_all(sym->perfmaps);
	add_perfmaps_stats(sym);
	td_perfmaps_free(sym->perfmaps);
	sym->perfmaps = pm;
	files_take(&old, sym);
	sym->strings = t[0];
	sym->objects = t[1];
	sym->symtabs = t[2];
	sym->fileids = t[3];
	sym->all_symtabs = NULL;
	sym->object_bytes = 0;
	sym->stats.objects = sym->stats.symtabs = 0;
	sym->stats.strings = sym->stats.string_bytes = 0;
	/*
	 * The processes' maps are kept, their paths interned into the new
	 * table: a process that exited since its maps were read has records
	 * still to name, and nothing else to name them from.
	 */
	td_procs_rebase(sym->procs);
	files_free(&old);
	free_old_ksyms(sym);
	/* Entries name freed objects and strings; the kernel's stay good. */
	if (sym->ucache)
		memset(sym->ucache, 0, sizeof(*sym->ucache) << UCACHE_BITS);
	sym->strings_id = td_strings_id_new();
	sym->files_gen++;
	sym->stats.restarts++;
	return 0;
fail:
	while (i-- > 0)
		htab_destroy(&t[i], NULL);
	return -ENOMEM;
}

uint64_t td_sym_held_bytes(const struct td_symbolizer *sym)
{
	uint64_t bytes = sym->stats.string_bytes + sym->object_bytes;
	const struct old_ksyms *o;
	const struct symtab *st;

	bytes += sym->fileids.nr * sizeof(struct fres);
	for (st = sym->all_symtabs; st; st = st->next_all)
		bytes += sizeof(*st) + td_elfsyms_bytes(st->syms);
	for (o = sym->old_ksyms; o; o = o->next)
		bytes += sizeof(*o) + td_kallsyms_bytes(o->ks);
	return bytes;
}

int td_sym_kernel_reload(struct td_symbolizer *sym)
{
	struct td_kallsyms *ks;
	struct old_ksyms *o;
	uint64_t digest;

	/* Never read (no kernel frame yet), or unreadable: the first lookup reads it. */
	if (!sym->ksyms)
		return 0;
	ks = td_kallsyms_load(sym->kallsyms_path);
	if (!ks)
		return -errno;
	digest = td_kallsyms_digest(ks);
	o = digest != sym->ksyms_digest ? malloc(sizeof(*o)) : NULL;
	if (!o) {
		td_kallsyms_free(ks);
		return digest != sym->ksyms_digest ? -ENOMEM : 0;
	}
	o->ks = sym->ksyms;
	o->next = sym->old_ksyms;
	sym->old_ksyms = o;
	sym->ksyms = ks;
	sym->ksyms_digest = digest;
	if (sym->kcache)
		memset(sym->kcache, 0, sizeof(*sym->kcache) << KCACHE_BITS);
	sym->stats.kernel_reloads++;
	return 1;
}

static inline struct ucache_entry *ucache_slot(struct td_symbolizer *sym, int pid,
					       uint64_t addr, bool return_addr)
{
	uint64_t h = (addr ^ ((uint64_t)(uint32_t)pid << 33) ^ return_addr) *
		     0x9e3779b97f4a7c15ULL;

	return &sym->ucache[h >> (64 - UCACHE_BITS)];
}

/*
 * A frame in anonymous memory of process @pid: JIT code, if the JIT wrote
 * a perf map that covers @look. The object is then that file.
 */
static bool name_jit(struct td_symbolizer *sym, int pid, uint64_t look, uint64_t addr,
		     struct td_frame *out)
{
	const char *name, *file;
	uint64_t start;

	if (td_perfmap_find(sym->perfmaps, pid, look, &name, &start, &file))
		return false;
	out->symbol = name;
	out->sym_offset = addr - start;
	out->object = file;
	sym->stats.jit_named++;
	return true;
}

/*
 * A memfd is not an ELF file but where a JIT may map its code twice, to
 * write through one view and run the other (.NET's W^X): named as JIT
 * code, by the perf map.
 */
static bool is_memfd(const char *path)
{
	return !strncmp(path, "/memfd:", 7);
}

/* The lookup itself; @out is set up by the caller. */
static int sym_user(struct td_symbolizer *sym, int pid, uint64_t addr, bool return_addr,
		    struct td_frame *out)
{
	/* A return address may be one past its caller's last byte. */
	uint64_t look = td_sym_lookup_addr(addr, return_addr);
	struct td_mapping *m;
	struct td_proc *proc;
	struct object *o;

	m = td_procs_find(sym->procs, pid, look, &proc);
	if (!m) {
		sym->stats.user_unmapped++;
		return -ENOENT;
	}
	out->object = m->path;
	if (!m->is_file) {
		/* [vdso], [stack], [heap], [anon]...: offset in the mapping. */
		out->file_offset = addr - m->start;
		/* Only anonymous memory ("[anon]", "[anon:NAME]") holds a JIT's code. */
		if (strncmp(m->path, "[anon", 5) || !name_jit(sym, pid, look, addr, out))
			sym->stats.user_no_symbol++;
		return 0;
	}
	out->file_offset = addr - m->start + m->pgoff;
	if (is_memfd(m->path) && name_jit(sym, pid, look, addr, out))
		return 0;
	o = m->obj;
	if (!o) {
		o = resolve_mapping(sym, proc, m);
		m->obj = o;
	}
	name_offset(sym, o, look - m->start + m->pgoff, addr - look, out);
	return 0;
}

int td_sym_user(struct td_symbolizer *sym, int pid, uint64_t addr, bool return_addr,
		struct td_frame *out)
{
	struct ucache_entry *e = NULL;
	uint64_t gen;
	int ret;

	*out = (struct td_frame){ .addr = addr, .strings_id = sym->strings_id };
	sym->stats.user_lookups++;
	if (!sym->ucache && !sym->ucache_failed) {
		sym->ucache = calloc(1U << UCACHE_BITS, sizeof(*sym->ucache));
		sym->ucache_failed = !sym->ucache;
	}
	if (sym->ucache) {
		e = ucache_slot(sym, pid, addr, return_addr);
		gen = td_procs_gen(sym->procs, pid);
		if (gen && e->gen == gen && e->addr == addr && e->pid == pid &&
		    e->return_addr == return_addr &&
		    (!e->jit || e->sym_offset == td_perfmaps_gen(sym->perfmaps, pid))) {
			out->symbol = e->symbol;
			out->sym_offset = e->jit ? 0 : e->sym_offset;
			out->object = e->object;
			out->file_offset = e->file_offset;
			out->build_id = e->build_id;
			/* Counted as the lookup that filled the entry counted it. */
			if (!e->symbol)
				sym->stats.user_no_symbol++;
			return 0;
		}
	}
	ret = sym_user(sym, pid, addr, return_addr, out);
	/* The maps the address was found in (maybe read just now). */
	if (!ret && e) {
		bool jit = !out->symbol && out->object &&
			   (!strncmp(out->object, "[anon", 5) || is_memfd(out->object));

		*e = (struct ucache_entry){
			.addr = addr, .gen = td_procs_gen(sym->procs, pid),
			.symbol = out->symbol, .object = out->object, .build_id = out->build_id,
			.sym_offset = jit ? td_perfmaps_gen(sym->perfmaps, pid) : out->sym_offset,
			.file_offset = out->file_offset,
			.pid = pid, .return_addr = return_addr, .jit = jit,
		};
	}
	return ret;
}

int td_sym_kernel(struct td_symbolizer *sym, uint64_t addr, bool return_addr,
		  struct td_frame *out)
{
	/* Cached by the address looked up: what it names does not depend on @addr. */
	uint64_t look = td_sym_lookup_addr(addr, return_addr);
	struct kcache_entry *e = NULL;
	const char *name, *object;
	uint64_t off;

	*out = (struct td_frame){ .addr = addr, .strings_id = sym->strings_id };
	sym->stats.kernel_lookups++;
	if (!sym->ksyms_tried) {
		sym->ksyms_tried = true;
		sym->ksyms = td_kallsyms_load(sym->kallsyms_path);
		sym->ksyms_digest = td_kallsyms_digest(sym->ksyms);
		/* Without a table every lookup fails at once: no cache needed. */
		if (sym->ksyms)
			sym->kcache = calloc(1U << KCACHE_BITS, sizeof(*sym->kcache));
	}
	if (sym->kcache) {
		e = &sym->kcache[(look * 0x9e3779b97f4a7c15ULL) >> (64 - KCACHE_BITS)];
		if (e->valid && e->addr == look) {
			if (!e->name)
				goto unknown;
			out->symbol = e->name;
			out->sym_offset = e->offset + (addr - look);
			out->object = e->object;
			return 0;
		}
	}
	if (td_kallsyms_find(sym->ksyms, look, &name, &off, &object)) {
		if (e)
			*e = (struct kcache_entry){ .addr = look, .valid = true };
		goto unknown;
	}
	if (e)
		*e = (struct kcache_entry){ .addr = look, .name = name, .object = object,
					    .offset = off, .valid = true };
	out->symbol = name;
	out->sym_offset = off + (addr - look);
	out->object = object;
	return 0;
unknown:
	sym->stats.kernel_unknown++;
	return -ENOENT;
}

int td_sym_file(struct td_symbolizer *sym, const char *path, uint64_t file_offset,
		struct td_frame *out)
{
	struct object *o;
	int fd;

	*out = (struct td_frame){ .addr = file_offset, .file_offset = file_offset,
				 .strings_id = sym->strings_id };
	fd = open_checked(path, 0);
	if (fd < 0)
		return -ENOENT;
	out->object = intern(sym, path, strlen(path));
	o = object_for_fd(sym, fd, path);
	if (o)
		name_offset(sym, o, file_offset, 0, out);
	return 0;
}

/* ---- file identity ---------------------------------------------------- */

/*
 * The object of the file at @path, if its build-id is @bid (hex; NULL: the
 * file must have none). NULL when it cannot be opened, is not ELF, or is
 * another build (counted once per resolution in *@mismatch).
 */
static struct object *object_checked(struct td_symbolizer *sym, const char *path,
				     const char *bid, bool *mismatch)
{
	struct object *o;
	int fd = open_checked(path, 0);

	if (fd < 0)
		return NULL;
	o = object_for_fd(sym, fd, path);
	if (!o || !o->syms)
		return NULL;
	if (bid ? o->build_id && !strcmp(o->build_id, bid) : !o->build_id)
		return o;
	*mismatch = true;
	return NULL;
}

/* Ask debuginfod (DEBUGINFOD_URLS set): the debug file, else the executable. */
static struct object *object_debuginfod(struct td_symbolizer *sym, const struct td_file *f,
					bool *mismatch)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	const struct td_debuginfod *dbgd;
	struct object *o = NULL;
	char *path = NULL;
	int fd, pass;

	if (!urls || !*urls || !f->build_id_len)
		return NULL;
	/* Not installed: as if no server had the file. */
	dbgd = td_debuginfod();
	if (!dbgd)
		return NULL;
	if (!sym->dbgd) {
		sym->dbgd = dbgd->begin();
		if (!sym->dbgd)
			return NULL;
	}
	sym->stats.debuginfod_queries++;
	for (pass = 0; pass < 2 && !o; pass++) {
		fd = pass ? dbgd->find_executable(sym->dbgd, f->build_id, (int)f->build_id_len,
						  &path)
			  : dbgd->find_debuginfo(sym->dbgd, f->build_id, (int)f->build_id_len,
						 &path);
		if (fd < 0)
			continue;
		o = object_for_fd(sym, fd, path ? path : f->path);
		if (o && (!o->syms || !o->build_id || strcmp(o->build_id, f->build_id_hex))) {
			*mismatch = true;
			o = NULL;
		}
		free(path);
		path = NULL;
	}
	return o;
}

/* Where the recorded file @f is now, if anywhere (see td_sym_file_id()). */
static struct object *find_recorded(struct td_symbolizer *sym, const struct td_file *f)
{
	size_t len = td_path_len_live(f->path);
	char path[PATH_MAX];
	bool mismatch = false;
	struct object *o;
	unsigned int i;

	o = object_checked(sym, f->path, f->build_id_hex, &mismatch);
	/* The file was deleted: a file at its old path may be the same build. */
	if (!o && f->build_id_len && f->path[len] && len < sizeof(path)) {
		memcpy(path, f->path, len);
		path[len] = '\0';
		o = object_checked(sym, path, f->build_id_hex, &mismatch);
	}
	if (o) {
		sym->stats.files_at_path++;
		return o;
	}
	for (i = 0; f->build_id_len && i < 2 && sym->debug_dirs[i]; i++) {
		if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", sym->debug_dirs[i],
			     f->build_id_hex, f->build_id_hex + 2) >= (int)sizeof(path))
			continue;
		o = object_checked(sym, path, f->build_id_hex, &mismatch);
		if (o) {
			sym->stats.files_debug_dir++;
			goto found;
		}
	}
	o = object_debuginfod(sym, f, &mismatch);
	if (o) {
		sym->stats.files_debuginfod++;
		goto found;
	}
	sym->stats.files_missing++;
found:
	if (mismatch)
		sym->stats.files_mismatch++;
	return o;
}

static struct fres *resolve_file(struct td_symbolizer *sym, struct td_file *f)
{
	uint64_t h = htab_hash_bytes(f->path, strlen(f->path), HTAB_SEED);
	struct fres *r;
	struct hnode *n;

	if (f->sym_owner == sym->strings_id && f->sym_res)
		return f->sym_res;
	h = htab_hash_bytes(f->build_id, f->build_id_len, h);
	for (n = htab_first(&sym->fileids, h); n; n = htab_next(n)) {
		r = container_of(n, struct fres, node);
		if (!strcmp(r->path, f->path) &&
		    (r->build_id && f->build_id_hex ? !strcmp(r->build_id, f->build_id_hex)
						    : r->build_id == f->build_id_hex))
			goto done;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->path = intern(sym, f->path, strlen(f->path));
	r->build_id = f->build_id_hex ? intern(sym, f->build_id_hex, strlen(f->build_id_hex))
				      : NULL;
	if (!r->path || (f->build_id_hex && !r->build_id)) {
		free(r);
		return NULL;
	}
	sym->stats.files_resolved++;
	sym->files_gen++;
	r->obj = find_recorded(sym, f);
	htab_add(&sym->fileids, &r->node, h);
done:
	f->sym_owner = sym->strings_id;
	f->sym_res = r;
	return r;
}

/*
 * The file @r as process @pid maps it, whatever became of its path since
 * (a binary replaced or deleted while it runs: a service upgraded under
 * it, its path now "... (deleted)" or another build): /proc/PID/exe for
 * its program, which needs ptrace access only, else the mapping's
 * map_files entry (CAP_SYS_ADMIN). Only with a recorded build-id, which
 * must match.
 */
static struct object *find_mapped(struct td_symbolizer *sym, const struct fres *r, int pid)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct object *o = NULL;
	bool mismatch = false;
	struct td_mapping *m;
	struct td_proc *proc;
	size_t len;
	ssize_t n;

	if (!r->build_id)
		return NULL;
	snprintf(path, sizeof(path), "%s/%d/exe", sym->proc_root, pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		/* Either may have been taken before the file was deleted. */
		link[n] = '\0';
		len = td_path_len_live(link);
		if (len == td_path_len_live(r->path) && !strncmp(link, r->path, len))
			o = object_checked(sym, path, r->build_id, &mismatch);
	}
	if (o)
		return o;
	/* Its first mapping is as good as any: the others are the same file. */
	m = td_procs_find_file(sym->procs, pid, r->path, &proc);
	if (!m || !proc)
		return NULL;
	if (!m->obj)
		m->obj = resolve_mapping(sym, proc, m);
	o = m->obj;
	return o->syms && o->build_id && !strcmp(o->build_id, r->build_id) ? o : NULL;
}

/*
 * A recorded file found nowhere else, through process @pid, which
 * recorded it: through its root, the path as that process sees it
 * (another mount namespace, a service's PrivateTmp), else as it maps the
 * file (find_mapped()). Once per file and process.
 */
static void find_through_pid(struct td_symbolizer *sym, struct fres *r, int pid)
{
	char path[PATH_MAX];
	bool mismatch = false;

	if (r->obj || pid <= 0 || r->tried_pid == pid || r->path[0] != '/')
		return;
	r->tried_pid = pid;
	if (snprintf(path, sizeof(path), "%s/%d/root%s", sym->proc_root, pid, r->path) <
	    (int)sizeof(path))
		r->obj = object_checked(sym, path, r->build_id, &mismatch);
	if (!r->obj)
		r->obj = find_mapped(sym, r, pid);
	if (r->obj) {
		sym->stats.files_proc_root++;
		sym->files_gen++;
	}
}

/*
 * How often /proc is scanned for mount namespaces at most: a scan stats
 * every process's ns/mnt (some 10 ms with 10,000 processes), made only
 * when a recorded file is found nowhere else.
 */
#define NS_SCAN_EVERY_NS	(5 * 1000000000ULL)
/* And how many namespaces one scan keeps at most. */
#define NS_REPS_MAX		4096

/* The mount namespace of process @pid (a /proc entry name); false if gone. */
static bool ns_of(const char *proc_root, const char *pid, struct ns_rep *ns)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%s/ns/mnt", proc_root, pid) >= (int)sizeof(path) ||
	    stat(path, &st))
		return false;
	ns->dev = st.st_dev;
	ns->ino = st.st_ino;
	return true;
}

/* One live process of each mount namespace but ours, into sym->ns_reps. */
static void scan_namespaces(struct td_symbolizer *sym, uint64_t now)
{
	struct ns_rep own = { 0 }, ns;
	struct dirent *de;
	DIR *dir;
	size_t i;

	sym->ns_scan_ns = now;
	sym->ns_scan_gen++;
	sym->nr_ns_reps = 0;
	dir = opendir(sym->proc_root);
	if (!dir)
		return;
	ns_of(sym->proc_root, "self", &own);
	while ((de = readdir(dir)) && sym->nr_ns_reps < NS_REPS_MAX) {
		if (!isdigit((unsigned char)de->d_name[0]) || !ns_of(sym->proc_root, de->d_name, &ns))
			continue;
		if (ns.dev == own.dev && ns.ino == own.ino)
			continue;
		for (i = 0; i < sym->nr_ns_reps; i++)
			if (sym->ns_reps[i].dev == ns.dev && sym->ns_reps[i].ino == ns.ino)
				break;
		if (i < sym->nr_ns_reps)
			continue;
		if (sym->nr_ns_reps == sym->ns_cap) {
			size_t cap = sym->ns_cap ? 2 * sym->ns_cap : 16;
			struct ns_rep *n = realloc(sym->ns_reps, cap * sizeof(*n));

			if (!n)
				break;
			sym->ns_reps = n;
			sym->ns_cap = cap;
		}
		ns.pid = atoi(de->d_name);
		sym->ns_reps[sym->nr_ns_reps++] = ns;
	}
	closedir(dir);
}

/*
 * A recorded file found nowhere else, and not through the root of its
 * process, gone by now (a short-lived program in a container): through
 * the root of a live process of each other mount namespace (the
 * container's shell, its init), where the file at that path must have the
 * recorded build-id; without one, a path alone could name another file.
 * Only when /proc may be asked (@pid given). Once per file and scan.
 */
static void find_through_namespaces(struct td_symbolizer *sym, struct fres *r, int pid)
{
	char path[PATH_MAX];
	bool mismatch = false;
	uint64_t now;

	if (r->obj || pid <= 0 || !r->build_id || r->path[0] != '/')
		return;
	now = td_mono_ns();
	if (!sym->ns_scan_gen || now - sym->ns_scan_ns >= NS_SCAN_EVERY_NS)
		scan_namespaces(sym, now);
	if (r->tried_scan == sym->ns_scan_gen)
		return;
	r->tried_scan = sym->ns_scan_gen;
	for (size_t i = 0; i < sym->nr_ns_reps && !r->obj; i++) {
		/* Its own process's root was looked through already. */
		if (sym->ns_reps[i].pid == pid ||
		    snprintf(path, sizeof(path), "%s/%d/root%s", sym->proc_root,
			     sym->ns_reps[i].pid, r->path) >= (int)sizeof(path))
			continue;
		r->obj = object_checked(sym, path, r->build_id, &mismatch);
	}
	if (r->obj) {
		sym->stats.files_other_ns++;
		sym->files_gen++;
	}
}

int td_sym_file_id_pid(struct td_symbolizer *sym, struct td_file *file, int pid, uint64_t addr,
		       uint64_t file_offset, bool return_addr, struct td_frame *out)
{
	uint64_t look = td_sym_lookup_addr(file_offset, return_addr);
	struct fres *r;

	*out = (struct td_frame){ .addr = addr, .file_offset = file_offset,
				 .strings_id = sym->strings_id, .file_id = file->id,
				 .file_kind = TD_FILE_IN };
	sym->stats.fileid_lookups++;
	r = resolve_file(sym, file);
	if (!r) {
		/* Out of memory: the strings cannot be made ours. */
		out->strings_id = 0;
		out->object = file->path;
		out->build_id = file->build_id_hex;
		return -ENOENT;
	}
	out->object = r->path;
	out->build_id = r->build_id;
	find_through_pid(sym, r, pid);
	find_through_namespaces(sym, r, pid);
	if (!r->obj) {
		sym->stats.user_no_symbol++;
		return -ENOENT;
	}
	name_offset(sym, r->obj, look, file_offset - look, out);
	/* The recorded build-id stays (name_offset() gives the object's: the same). */
	out->build_id = r->build_id;
	if (out->symbol)
		sym->stats.fileid_named++;
	return 0;
}

int td_sym_file_id(struct td_symbolizer *sym, struct td_file *file, uint64_t addr,
		   uint64_t file_offset, bool return_addr, struct td_frame *out)
{
	return td_sym_file_id_pid(sym, file, 0, addr, file_offset, return_addr, out);
}

void td_sym_ufile(struct td_symbolizer *sym, struct td_filetab *ft, const struct td_ufile *uf,
		  uint64_t addr, bool return_addr, struct td_frame *out)
{
	td_sym_ufile_pid(sym, ft, uf, 0, addr, return_addr, out);
}

int td_sym_ufile_pid(struct td_symbolizer *sym, struct td_filetab *ft, const struct td_ufile *uf,
		     int pid, uint64_t addr, bool return_addr, struct td_frame *out)
{
	struct td_file *f;

	*out = (struct td_frame){ .addr = addr, .file_kind = uf->kind };
	switch (uf->kind) {
	case TD_FILE_IN:
		out->file_id = uf->id;
		out->file_offset = uf->offset;
		f = td_filetab_get(ft, uf->id);
		if (!f) {
			if (sym)
				sym->stats.fileid_unknown++;
			return 0;
		}
		/* JIT code in a memfd: named by @pid's perf map, so for @pid alone. */
		if (sym && pid > 0 && is_memfd(f->path) &&
		    name_jit(sym, pid, td_sym_lookup_addr(addr, return_addr), addr, out))
			return 1;
		if (sym)
			return td_sym_file_id_pid(sym, f, pid, addr, uf->offset, return_addr, out);
		/* Not symbolizing: what the record says, for naming elsewhere. */
		out->object = f->path;
		out->build_id = f->build_id_hex;
		return 0;
	case TD_FILE_VDSO:
		out->object = "[vdso]";
		return 0;
	case TD_FILE_ANON:
		/* A JIT's code: named by @pid's perf map, so for @pid alone. */
		if (sym && pid > 0 &&
		    name_jit(sym, pid, td_sym_lookup_addr(addr, return_addr), addr, out))
			return 1;
		return 0;
	default:
		return 0;
	}
}

bool td_sym_jit_candidate(const struct td_frame *f)
{
	if (f->symbol)
		return false;
	switch (f->file_kind) {
	case TD_FILE_ANON:
		return true;
	case TD_FILE_IN:
		return f->object && is_memfd(f->object);
	case TD_FILE_NONE:
		return !f->object;
	default:
		return false;
	}
}

int td_sym_jit(struct td_symbolizer *sym, int pid, uint64_t addr, bool return_addr,
	       struct td_frame *out)
{
	if (out->symbol || pid <= 0)
		return -ENOENT;
	return name_jit(sym, pid, td_sym_lookup_addr(addr, return_addr), addr, out) ? 0 : -ENOENT;
}

int td_sym_jit_sync(struct td_symbolizer *sym, int pid)
{
	if (pid < 0) {
		td_perfmaps_sync_all(sym->perfmaps);
		return 0;
	}
	return td_perfmap_sync(sym->perfmaps, pid);
}

void td_sym_forget(struct td_symbolizer *sym, int pid)
{
	td_procs_forget(sym->procs, pid);
	td_perfmap_forget(sym->perfmaps, pid);
}

bool td_sym_exec(struct td_symbolizer *sym, int pid, uint64_t trace_ns)
{
	td_perfmap_exec(sym->perfmaps, pid);
	return td_procs_exec(sym->procs, pid, trace_ns);
}

void td_sym_fork(struct td_symbolizer *sym, int parent, int child, uint64_t trace_ns)
{
	td_procs_fork(sym->procs, parent, child, trace_ns);
}

void td_sym_execs_known(struct td_symbolizer *sym, bool known)
{
	td_procs_execs_known(sym->procs, known);
}

void td_sym_set_when(struct td_symbolizer *sym, uint64_t trace_ns)
{
	td_procs_set_when(sym->procs, trace_ns);
}

uint64_t td_sym_maps_gen(struct td_symbolizer *sym, int pid)
{
	return td_procs_gen(sym->procs, pid);
}

uint64_t td_sym_jit_gen(const struct td_symbolizer *sym, int pid)
{
	return pid > 0 ? td_perfmaps_gen(sym->perfmaps, pid) : 0;
}

void td_sym_jit_recheck(struct td_symbolizer *sym)
{
	td_perfmaps_recheck(sym->perfmaps);
}

int td_sym_jit_watch(struct td_symbolizer *sym)
{
	int err = -EINVAL;

	/* A recording's saved copies are not written to any more. */
	if (sym->perfmap_saved)
		return -EINVAL;
	if (!sym->jit_watch)
		sym->jit_watch = td_jitwatch_start(sym->proc_root, sym->perfmap_dir, &err);
	return sym->jit_watch ? td_jitwatch_fd(sym->jit_watch) : err;
}

int td_sym_jit_watched(struct td_symbolizer *sym)
{
	struct td_jitmap maps[64];
	int n, total = 0, ret = 0;

	if (!sym->jit_watch)
		return 0;
	while ((n = td_jitwatch_take(sym->jit_watch, maps, (int)(sizeof(maps) / sizeof(maps[0])))) > 0) {
		/* Every one taken is handed on, each descriptor then owned there. */
		for (int i = 0; i < n; i++)
			if (td_perfmap_hold_fd(sym->perfmaps, maps[i].pid, maps[i].fd) == -ENOMEM)
				ret = -ENOMEM;
		total += n;
	}
	if (ret)
		return ret;
	return n < 0 ? n : total;
}

uint64_t td_sym_files_gen(const struct td_symbolizer *sym)
{
	return sym->files_gen;
}

void td_sym_get_stats(const struct td_symbolizer *sym, struct td_sym_stats *st)
{
	struct td_perfmaps_stats ms;
	struct td_procs_stats ps;

	*st = sym->stats;
	st->held_bytes = td_sym_held_bytes(sym);
	td_procs_get_stats(sym->procs, &ps);
	st->maps_reads = sym->procs_base.reads + ps.reads;
	st->maps_read_errors = sym->procs_base.read_errors + ps.read_errors;
	st->maps_gone = sym->procs_base.gone + ps.gone;
	st->processes = ps.nr_procs;
	st->maps_forked = ps.fork_copies;
	td_perfmaps_get_stats(sym->perfmaps, &ms);
	st->jit_maps_saved = sym->pm_base.saved_maps + ms.saved_maps;
	st->jit_map_save_errors = sym->pm_base.save_errors + ms.save_errors;
	st->jit_maps_stale = sym->pm_base.stale + ms.stale;
	if (sym->jit_watch) {
		struct td_jitwatch_stats ws;

		td_jitwatch_get_stats(sym->jit_watch, &ws);
		st->jit_maps_watched = ws.opened;
		st->jit_watch_dropped = ws.dropped;
		st->jit_watch_missed = ws.open_errors;
	}
}
