/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbolizer: user addresses through /proc/PID/maps and elfutils, kernel
 * addresses through /proc/kallsyms.
 *
 * Promises:
 *  - never fails a lookup as a whole: an address it cannot name still gets
 *    its object, file offset and build-id when those are known;
 *  - maps are cached per process and re-read on a miss (the process may have
 *    mapped something new), and dropped by td_sym_forget();
 *  - ELF files are opened through /proc/PID/map_files (deleted files, other
 *    mount namespaces), else /proc/PID/root/PATH, else PATH, and cached by
 *    file identity (device, inode, size, mtime); symbol tables are shared
 *    by build-id; symbols come from the object's .symtab, else the .symtab
 *    of a debug file found by build-id (DEBUGDIR/.build-id/xx/rest.debug)
 *    or by .gnu_debuglink (next to the object, OBJDIR/.debug/,
 *    DEBUGDIR/OBJDIR/; checked by build-id, or CRC without one), else
 *    .dynsym (and MiniDebugInfo); an address past the end of the nearest
 *    symbol gets no name rather than a wrong one;
 *  - C++ names are demangled (libstdc++'s __cxa_demangle, loaded with dlopen
 *    on first use; without it the mangled name is returned);
 *  - a cached lookup (known process, known object) does no system call and
 *    no allocation: two binary searches.
 * Strings in a td_frame belong to the symbolizer and stay valid until
 * td_sym_free() or td_sym_restart(); copy them if you need them longer.
 * A symbolizer is not thread-safe: use one per thread.
 * Debug files are searched by elfutils, which also asks debuginfod servers
 * when DEBUGINFOD_URLS is set in the environment: a lookup can then block on
 * the network the first time it meets an object. A daemon that must not
 * block should unset DEBUGINFOD_URLS before td_sym_new().
 */
#ifndef TRACE_DEFER_SYMBOLIZE_H
#define TRACE_DEFER_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

struct td_frame {
	uint64_t addr;		/* as recorded */
	const char *symbol;	/* NULL when unknown */
	/* addr - symbol start (a return address ending its caller: the caller's size) */
	uint64_t sym_offset;
	const char *object;	/* mapped file, "[vdso]", "[kernel]", or NULL */
	uint64_t file_offset;	/* offset of addr in object (user frames) */
	const char *build_id;	/* lower-case hex, NULL when unknown */
	/*
	 * Added after the first version of this contract. Non-zero when
	 * symbol, object and build_id are strings owned by one symbolizer,
	 * which never changes them and never reuses their memory for other
	 * text while it lives: two frames with the same strings_id and the
	 * same pointers hold the same strings, so a writer may cache what it
	 * renders from them. Every symbolizer has its own value, never reused
	 * in the process. 0 (hand-made frames): no such promise.
	 */
	uint64_t strings_id;
	/*
	 * Added with file identity (see trace-defer/filetab.h): how the
	 * stack record placed the frame (enum td_file_kind; TD_FILE_NONE for
	 * frames named through /proc/PID/maps or by hand) and, for
	 * TD_FILE_IN, the recorded file id. A TD_FILE_IN frame with a NULL
	 * object has an id no file record described (unknown): file_offset
	 * is still its offset in that file.
	 */
	uint32_t file_id;
	uint32_t file_kind;
};

struct td_sym_config {
	/* default "/usr/lib/debug"; another one is searched before it */
	const char *debug_dir;
	const char *kallsyms;	/* default "/proc/kallsyms" */
	const char *proc_root;	/* default "/proc" (tests point it elsewhere) */
	/*
	 * A miss re-reads the process's maps at most once per this many
	 * microseconds (0: 10000). Frame-pointer unwinds through code built
	 * without frame pointers yield junk addresses; without a bound each
	 * of them would cost a full maps read.
	 */
	unsigned int maps_refresh_us;
	/* Where JITs write perf-PID.map (default "/tmp"; tests point it elsewhere). */
	const char *perfmap_dir;
	/*
	 * Added later. perfmap_save_dir: every perf map read is also copied
	 * there as read (perf-PID.map), for naming a recording's JIT frames
	 * after the process is gone. perfmap_saved_dir: JIT frames are named
	 * from such copies alone (td_sym_jit()), and no process is asked for
	 * its map; the frames' object is the copy. NULL: neither.
	 */
	const char *perfmap_save_dir;
	const char *perfmap_saved_dir;
};

/* Counters since td_sym_new(), for the daemon's status output. */
struct td_sym_stats {
	uint64_t user_lookups;
	uint64_t user_unmapped;		/* -ENOENT from td_sym_user */
	uint64_t user_no_symbol;	/* mapped, but no symbol covers it */
	uint64_t kernel_lookups;
	uint64_t kernel_unknown;
	uint64_t maps_reads;		/* /proc/PID/maps parsed */
	uint64_t maps_read_errors;	/* process gone or unreadable */
	uint64_t maps_gone;		/* of those, known gone without reading /proc */
	uint64_t objects;		/* distinct files opened (held: since the last restart) */
	uint64_t symtabs;		/* symbol tables loaded (held: since the last restart) */
	uint64_t symtabs_shared;	/* files that reused a table by build-id */
	uint64_t processes;		/* processes cached now */
	/* Added with file identity: */
	uint64_t fileid_lookups;	/* frames named through td_sym_file_id() */
	uint64_t fileid_named;		/* ... and given a symbol */
	uint64_t fileid_unknown;	/* frames with an id no file record described */
	uint64_t files_resolved;	/* recorded files looked for */
	uint64_t files_at_path;		/* found at their path, build-id matching */
	uint64_t files_debug_dir;	/* found under a debug dir by build-id */
	uint64_t files_debuginfod;	/* found through debuginfod */
	uint64_t files_mismatch;	/* a file at the path had another build-id: not used */
	uint64_t files_missing;		/* found nowhere: frames keep file and offset only */
	uint64_t debuginfod_queries;	/* files asked of debuginfod */
	/* Added later: */
	/* found only through /proc/PID (pid given): its root, exe or map_files */
	uint64_t files_proc_root;
	uint64_t jit_named;		/* anonymous-memory frames named by a perf map */
	uint64_t jit_maps_saved;	/* perf maps copied (perfmap_save_dir) */
	uint64_t jit_map_save_errors;	/* copies not made or cut short */
	uint64_t jit_maps_stale;	/* maps older than their running process, not read */
	/* Added later: names held (paths, JITs' symbols), since the last restart. */
	uint64_t strings;
	uint64_t string_bytes;
	uint64_t restarts;		/* td_sym_restart() calls that freed what was held */
	uint64_t held_bytes;		/* td_sym_held_bytes() */
	uint64_t kernel_reloads;	/* kallsyms read again and changed */
	/* Added later: processes first met with their parent's maps (td_sym_fork()) */
	uint64_t maps_forked;
	/* Added later: perf maps opened the moment they were made (td_sym_jit_watch()) */
	uint64_t jit_maps_watched;
	uint64_t jit_watch_dropped;	/* ... more than a reader's round takes: read later */
	uint64_t jit_watch_missed;	/* ... gone, or not regular files, when opened */
	/*
	 * Added later: recorded files found through the root of a live process
	 * of another mount namespace, their own process gone (td_sym_file_id_pid()).
	 */
	uint64_t files_other_ns;
};

struct td_symbolizer;

/*
 * Where a frame's address is looked up: a return address (every frame of a
 * stack but the first) at @addr - 1, as the caller is the code before it
 * (a call that ends a function returns to the next one's first byte).
 * Kernel and user frames, addresses and file offsets alike.
 */
static inline uint64_t td_sym_lookup_addr(uint64_t addr, bool return_addr)
{
	return return_addr && addr ? addr - 1 : addr;
}

struct td_symbolizer *td_sym_new(const struct td_sym_config *cfg);
void td_sym_free(struct td_symbolizer *sym);

/*
 * Name a user address of process @pid (pass the thread group id: maps are
 * cached per id, so naming threads by tid would read them once per thread).
 * @return_addr says @addr is a return address (every frame but the first of
 * a stack): the lookup then uses addr - 1 so a call at the end of a function
 * is named correctly; sym_offset and file_offset stay those of @addr.
 * An address in anonymous memory or in a memfd (a JIT's code) is named
 * from the perf map its JIT writes, perfmap_dir/perf-PID.map (in a
 * container, with its pid there), if there is one that covers it: the
 * object is then that file.
 * Returns 0 when the address was found in a mapping, -ENOENT otherwise
 * (out still holds addr).
 */
int td_sym_user(struct td_symbolizer *sym, int pid, uint64_t addr, bool return_addr,
		struct td_frame *out);

/*
 * Name @out's address (a frame of process @pid that @out does not name
 * yet: no symbol) from the process's perf map alone, as JIT code: the
 * process may be gone, its maps with it (a trace.dat read later, with
 * perfmap_saved_dir). @return_addr as for td_sym_user(). Returns 0 when
 * named (symbol, sym_offset, and the map as object), -ENOENT otherwise
 * (@out unchanged).
 */
int td_sym_jit(struct td_symbolizer *sym, int pid, uint64_t addr, bool return_addr,
	       struct td_frame *out);

/*
 * Is @f, named as well as its record and the maps could, still a frame
 * that only its process's perf map may name (JIT code)? Unnamed and in
 * anonymous memory or a memfd (file identity), or unnamed with nothing
 * said of where it was.
 */
bool td_sym_jit_candidate(const struct td_frame *f);

/*
 * Read process @pid's perf map for what the JIT appended, at most once a
 * second per process (the first call at once), and copy it to
 * perfmap_save_dir: for a recording that names no frame, which still
 * wants the maps for reading it later. @pid -1: every map read so far,
 * once more (the end of a recording). 0, or -ENOMEM.
 */
int td_sym_jit_sync(struct td_symbolizer *sym, int pid);

/*
 * Name a kernel address. @return_addr as for td_sym_user(): every frame of
 * a kernel stack but the first is a return address, and one that follows a
 * call to a function that does not return (start_kernel(), do_exit()) is
 * the first byte of the next symbol; the kernel's own backtraces (%pB)
 * look such addresses up at addr - 1 too. sym_offset stays that of @addr.
 * Returns 0 or -ENOENT.
 */
int td_sym_kernel(struct td_symbolizer *sym, uint64_t addr, bool return_addr,
		  struct td_frame *out);

/*
 * Name an address in an ELF file directly (no process): used by the
 * plugin and by offline tools. @file_offset is the offset in the file.
 * Returns 0 when the file could be opened (symbol may still be NULL),
 * -ENOENT otherwise.
 */
int td_sym_file(struct td_symbolizer *sym, const char *path, uint64_t file_offset,
		struct td_frame *out);

struct td_file;
struct td_filetab;
struct td_ufile;

/*
 * Name an address in a file the kernel recorded (path and build-id of a
 * user_unwind_file record) at @file_offset, without any process:
 *  1. the file at its path, if its build-id is the recorded one (a path
 *     ending in " (deleted)" is tried without the suffix too, for a file
 *     with a build-id only); a file whose build-id differs is never used
 *     (files_mismatch). A file recorded without a build-id has nothing to
 *     compare: the file at the path is used if it has no build-id either;
 *  2. DEBUG_DIR/.build-id/xx/rest.debug for the configured debug dir, then
 *     /usr/lib/debug, checked by build-id;
 *  3. only when DEBUGINFOD_URLS is set and not empty: debuginfod (elfutils'
 *     libdebuginfod), the debug file, else the executable, checked by
 *     build-id. Never a network call without DEBUGINFOD_URLS.
 * The outcome is cached per file (on @file, for this symbolizer): a later
 * frame of the file costs a segment walk and a binary search.
 * @out gets addr = @addr, object = the recorded path, file_offset,
 * build_id = the recorded one, file_id and file_kind TD_FILE_IN, and the
 * symbol when one covers the offset (@return_addr: looked up at offset - 1,
 * as td_sym_user()). Returns 0 when a file was found, -ENOENT otherwise.
 */
int td_sym_file_id(struct td_symbolizer *sym, struct td_file *file, uint64_t addr,
		   uint64_t file_offset, bool return_addr, struct td_frame *out);

/*
 * One user frame of a stack record with file identity (@uf, its entry in
 * td_ustack.files), the same way for every reader: a known id through
 * td_sym_file_id() (@sym NULL: path, offset and build-id only, no file
 * opened), an unknown id as such (file_id and file_offset, no object;
 * never guessed), the vDSO as object "[vdso]", anonymous and unrecorded
 * frames as their address. /proc is never read. @ft may be NULL (every id
 * unknown).
 */
void td_sym_ufile(struct td_symbolizer *sym, struct td_filetab *ft, const struct td_ufile *uf,
		  uint64_t addr, bool return_addr, struct td_frame *out);

/*
 * Added later: the same as td_sym_file_id() and td_sym_ufile(), for a
 * stack record of process @pid (0: unknown). A recorded file found
 * nowhere else is looked for once more as /proc/@pid/root/PATH, the path
 * as the process sees it, while it lives: a process in another mount
 * namespace, or files a service's PrivateTmp= hides from the daemon;
 * else, with a recorded build-id, as the process maps it: /proc/@pid/exe
 * or its map_files entry (a binary replaced or deleted while it runs). The
 * build-id must match, as for any recorded file; once found, the file
 * serves every later frame in it. Tried once per file and process.
 * Process @pid gone (a short-lived program in a container), a file with a
 * recorded build-id is looked for through the root of one live process of
 * each other mount namespace (the container's shell or init): /proc is
 * scanned for them at most every 5 s, and each file tried once per scan.
 */
int td_sym_file_id_pid(struct td_symbolizer *sym, struct td_file *file, int pid, uint64_t addr,
		       uint64_t file_offset, bool return_addr, struct td_frame *out);
/*
 * td_sym_ufile_pid() returns 0 when the frame came out as it would for any
 * process (its file found without @pid's root, or nothing to find),
 * -ENOENT when its recorded file was found nowhere, not through @pid's
 * root either: another process's root may still find it, and 1 when a
 * frame in anonymous memory, or in a memfd (/memfd:NAME, where a JIT may
 * map its code twice for W^X), was named from @pid's perf map (a JIT's
 * code, see td_sym_user()): that name holds for @pid alone.
 */
int td_sym_ufile_pid(struct td_symbolizer *sym, struct td_filetab *ft, const struct td_ufile *uf,
		     int pid, uint64_t addr, bool return_addr, struct td_frame *out);

/* The process exited or exec'ed: drop its cached maps. */
void td_sym_forget(struct td_symbolizer *sym, int pid);
/*
 * Added later. Process @pid ran exec at @trace_ns (trace clock): its maps
 * and perf map are another program's from then. The maps read before
 * still name what was written before @trace_ns, asked for through
 * td_sym_set_when(); everything after reads the maps again. Returns
 * whether there were maps to keep so.
 */
bool td_sym_exec(struct td_symbolizer *sym, int pid, uint64_t trace_ns);
/*
 * Added later. Process @parent forked @child at @trace_ns: when every exec
 * is told (td_sym_execs_known()), @child, first met, is named from its
 * parent's maps until its exec, not from /proc, where it may run its next
 * program by then, or be gone (td_procs_fork()).
 */
void td_sym_fork(struct td_symbolizer *sym, int parent, int child, uint64_t trace_ns);
/*
 * Added later. Whether td_sym_exec() is told of every exec (the caller
 * traces them all, unfiltered): then maps read again that show another
 * program before its exec was told are not taken for a second. Default
 * false.
 */
void td_sym_execs_known(struct td_symbolizer *sym, bool known);
/*
 * Added later. The trace time of the event whose user frames are named
 * next through the maps of its process (td_sym_user(), td_sym_maps_gen()):
 * before the process's exec, the maps it had then. 0: now.
 */
void td_sym_set_when(struct td_symbolizer *sym, uint64_t trace_ns);

/*
 * Added later, for callers that keep what they named: generations that
 * change whenever a lookup could give another answer than before.
 * td_sym_maps_gen(): the maps of @pid as cached now (0: none cached; a
 * lookup would read them); td_sym_files_gen(): the recorded files found so
 * far (td_sym_file_id_pid() found one, or met a new one). A lookup that
 * gave no answer (an unmapped address, a file found nowhere) may be tried
 * again later and is not covered.
 */
uint64_t td_sym_maps_gen(struct td_symbolizer *sym, int pid);
uint64_t td_sym_files_gen(const struct td_symbolizer *sym);

/*
 * JIT code: td_sym_jit_gen() changes whenever process @pid's perf map
 * gave new entries (0: no map). A frame of JIT code can be looked up
 * before its process wrote its line (a line half written, a map dumped
 * when asked): the lookup names nothing, and td_sym_user() keeps that
 * answer only while this does not change. td_sym_jit_recheck() reads what
 * was appended to every map a lookup found nothing in: call it now and
 * then (the daemon does so every few seconds) so that such frames get
 * their names.
 */
uint64_t td_sym_jit_gen(const struct td_symbolizer *sym, int pid);
void td_sym_jit_recheck(struct td_symbolizer *sym);

/*
 * Added later. Live: watch perfmap_dir (as init sees it: systemd's
 * PrivateTmp= gives a service a /tmp of its own) for perf maps being
 * written: a thread of the library's opens each the moment it is made,
 * whatever the caller is busy with. A JIT that runs for a moment and
 * removes its map at exit is then named all the same: the map is read
 * through the file opened, kept open. td_sym_jit_watch() starts it and
 * returns a descriptor to poll (non-blocking; the same one each call),
 * or -errno (-EINVAL for a recording's saved maps); td_sym_jit_watched(),
 * when it is readable (and at any time), reads the maps opened since:
 * how many, or -errno (the watch ended: the directory went away).
 */
int td_sym_jit_watch(struct td_symbolizer *sym);
int td_sym_jit_watched(struct td_symbolizer *sym);

void td_sym_get_stats(const struct td_symbolizer *sym, struct td_sym_stats *st);

/*
 * Added later. What a symbolizer learns of files is kept until it is
 * freed: every object, symbol table (32 bytes a symbol, and its name) and name. A
 * machine that keeps building and running new binaries, or JITs that keep
 * naming new code, grow that without end. td_sym_held_bytes() says how
 * much it holds (names, symbol tables, objects; not the per-process maps,
 * which td_sym_forget() frees); td_sym_restart() frees all of it, keeping
 * the configuration, the kernel's symbols and the processes' maps, so
 * that a long-running caller can bound it. Afterwards files are opened and
 * read again when next met. The maps are kept (their paths interned again)
 * because a process that exited cannot be read again: records of it still
 * in flight are named from them, as they would have been without the
 * restart. Every td_frame handed out before is invalid (its strings are freed):
 * the symbolizer's frames carry a new strings_id from then on, and
 * td_sym_files_gen() changes. 0, or -ENOMEM with nothing changed.
 */
uint64_t td_sym_held_bytes(const struct td_symbolizer *sym);
int td_sym_restart(struct td_symbolizer *sym);

/*
 * Added later. Kernel symbols are read once, at the first kernel lookup;
 * modules and BPF programs loaded later are then unnamed, or worse, named
 * after the symbol of another module below them. td_sym_kernel_reload()
 * reads kallsyms again and, if it changed, names kernel addresses from the
 * new table from now on: returns 1 then, 0 when nothing changed (or no
 * kernel lookup was made yet), or -errno. The old table is kept, so
 * frames handed out stay valid (and keep their strings_id): it counts in
 * td_sym_held_bytes() and td_sym_restart() frees it. A caller that keeps
 * kernel frames named by address (a stack cache) drops them on 1. Reading
 * /proc/kallsyms costs the kernel some 50 ms: call it now and then.
 */
int td_sym_kernel_reload(struct td_symbolizer *sym);

/*
 * Added later: a td_frame.strings_id for a caller that names frames with
 * strings of its own and keeps the promise above for them (a trace.dat's
 * kernel symbols, which live as long as its tep): never 0, never one a
 * symbolizer has or another caller got.
 */
uint64_t td_strings_id_new(void);

#endif /* TRACE_DEFER_SYMBOLIZE_H */
