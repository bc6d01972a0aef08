/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Process memory maps: /proc/PID/maps parsed into a sorted array, cached per
 * process and re-read when an address is not found (the process may have
 * mapped something since), at most once per refresh interval.
 *
 * Promises: a lookup in a cached process is one hash probe (none when it is
 * the same process as the last lookup) and one binary search (none when it
 * hits the same mapping as the last lookup); no system call. Paths are
 * interned through the caller's function, so they outlive the maps.
 */
#ifndef TD_PROCMAPS_H
#define TD_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TD_MAP_R	0x1
#define TD_MAP_W	0x2
#define TD_MAP_X	0x4
#define TD_MAP_SHARED	0x8

struct td_mapping {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	uint64_t inode;		/* 0 for anonymous and special mappings */
	const char *path;	/* interned: "/usr/bin/x", "[vdso]", "[anon]"... */
	void *obj;		/* the caller's object for this mapping, NULL if unset */
	uint32_t dev_major, dev_minor;
	uint8_t flags;		/* TD_MAP_* */
	bool is_file;		/* path names a file (maybe deleted) */
	bool deleted;		/* the maps line said " (deleted)" (stripped from path) */
};

struct td_proc;
struct td_procs;

/*
 * The length of @path without the " (deleted)" the kernel appends to the
 * path of an unlinked file (in maps, /proc/PID/exe and the recorded file
 * identity alike): what two such paths are compared by.
 */
size_t td_path_len_live(const char *path);

/* Interns @len bytes of @s; returns a string valid as long as the caller says. */
typedef const char *(*td_intern_fn)(void *ctx, const char *s, size_t len);

struct td_procs_stats {
	uint64_t reads;
	uint64_t read_errors;
	uint64_t gone;		/* of those, found gone without opening /proc */
	uint64_t nr_procs;
	/* re-reads that found another program (an exec), the old maps kept a while */
	uint64_t exec_kept;
	uint64_t execs;		/* td_procs_exec() that kept maps */
	/* Added later: processes first met with their parent's maps (td_procs_fork()) */
	uint64_t fork_copies;
};

struct td_procs *td_procs_new(const char *proc_root, uint64_t refresh_ns, td_intern_fn intern,
			      void *intern_ctx);
void td_procs_free(struct td_procs *procs);

/*
 * The mapping of @pid that holds @addr, reading or re-reading the maps as
 * needed; NULL when none does (errno not set). *@proc is set to the process
 * when its maps could be read at all.
 */
struct td_mapping *td_procs_find(struct td_procs *procs, int pid, uint64_t addr,
				 struct td_proc **proc);

/*
 * The first file mapping of @pid whose path is @path, with or without
 * " (deleted)" (a recorded path), read as td_procs_find() reads maps, in
 * the maps of now (not those before an exec); NULL when none is. *@proc as
 * td_procs_find() sets it. A walk of the maps: for rare lookups.
 */
struct td_mapping *td_procs_find_file(struct td_procs *procs, int pid, const char *path,
				      struct td_proc **proc);

/*
 * The version of @pid's cached maps: 0 when none are cached, else a value
 * that changes whenever they are read anew (or dropped and read again) and
 * is never given to other maps, of this td_procs or another. While it stays the same,
 * td_procs_find() gives the same mapping for an address it found before.
 * No system call: a cached lookup.
 */
uint64_t td_procs_gen(struct td_procs *procs, int pid);

/* Drop @pid's cached maps. */
void td_procs_forget(struct td_procs *procs, int pid);
/*
 * @pid ran exec at @trace_ns: its maps are read again for what is named
 * from now on, but those it had stay for what was written before then
 * (td_procs_set_when()). Returns whether it had maps to keep so.
 */
bool td_procs_exec(struct td_procs *procs, int pid, uint64_t trace_ns);
/*
 * Whether td_procs_exec() is told of every exec of the processes looked
 * up (the caller traces them all): then a re-read that finds another
 * program keeps the old maps a while (see proc_read()). Default false.
 */
void td_procs_execs_known(struct td_procs *procs, bool known);
/*
 * Added later. Process @parent forked @child (a new process, or a thread:
 * the note of a thread is never asked for) at @trace_ns. When every exec
 * is told (td_procs_execs_known()) and @child is first looked up, it
 * starts from its parent's maps, not /proc's: until its exec it runs its
 * parent's program, and a process first met after it exec'd (a shell's
 * child, between its fork and its exec) is read as its next program, or
 * not at all once it exited. Its exec then keeps them for its events
 * before it, as any process's maps. Only the latest forks are noted (a
 * bounded table); @child already known changes nothing.
 */
void td_procs_fork(struct td_procs *procs, int parent, int child, uint64_t trace_ns);
/*
 * The trace time of what td_procs_find() and td_procs_gen() are asked for
 * next (0: now): before a process's exec, its maps of then.
 */
void td_procs_set_when(struct td_procs *procs, uint64_t trace_ns);
/*
 * The caller is about to free what the mappings point to (their interned
 * paths and objects): every cached process keeps its maps, with each path
 * interned again (through the intern function, which now interns into the
 * caller's new table) and its object unset, under a new generation. Maps
 * are kept because a process that exited cannot be read again: its records
 * still in flight are named only from them. A process whose paths cannot
 * be interned again (out of memory) is dropped, as is one whose maps were
 * never read (it held nothing). Returns how many were.
 */
size_t td_procs_rebase(struct td_procs *procs);

/*
 * The directory the process sees as "/", as a path to prefix to its mapped
 * paths ("/proc/PID/root"), or NULL when it has our root and our mount
 * namespace (its paths are ours).
 */
const char *td_proc_root_prefix(const struct td_proc *proc);

/* "/proc" (or the configured root) + "/PID": where map_files lives. */
const char *td_proc_dir(const struct td_proc *proc);

void td_procs_get_stats(const struct td_procs *procs, struct td_procs_stats *st);

/* Exposed for tests: parse a maps text of @len bytes into @out (sorted). */
int td_maps_parse(const char *text, size_t len, td_intern_fn intern, void *ctx,
		  struct td_mapping **out, size_t *nr);

#endif /* TD_PROCMAPS_H */
