// SPDX-License-Identifier: GPL-2.0
/*
 * Symbolizer tests on real processes: fixture programs built by
 * tests/unit/rules.mk into $(BUILD)/fixtures/ are started, print the
 * addresses of their functions and block on stdin; the test names those
 * addresses and checks symbol, object, file offset and build-id against
 * values read independently (libelf on the unstripped builds, `readelf -n`).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <trace-defer/filetab.h>
#include <trace-defer/symbolize.h>

#include "../../lib/htab.h"
#include "../../lib/kallsyms.h"
#include "../../lib/perfmap.h"
#include "../../lib/procmaps.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static char fxdir[PATH_MAX];

/* ---- fixture processes ------------------------------------------------ */

#define FX_MAX_VALS 32

struct fx {
	pid_t pid;
	int to_child;
	FILE *from_child;
	char path[PATH_MAX];	/* realpath of the executable */
	int nr;
	struct {
		char name[64];
		uint64_t addr;
	} v[FX_MAX_VALS];
};

static struct fx pie, nopie, link_fx, badcrc, bid, cxx;

static void fx_path(char *buf, const char *name)
{
	if (snprintf(buf, PATH_MAX, "%s/%s", fxdir, name) >= PATH_MAX)
		fail_msg("path too long: %s/%s", fxdir, name);
}

/* Read "name=0xADDR" lines up to "ready"; 0 or -1. */
static int fx_read(struct fx *f)
{
	char line[256];

	while (fgets(line, sizeof(line), f->from_child)) {
		char *eq = strchr(line, '=');

		if (!strcmp(line, "ready\n"))
			return 0;
		if (!eq || f->nr == FX_MAX_VALS)
			continue;
		*eq = '\0';
		if (strlen(line) >= sizeof(f->v[f->nr].name))
			continue;
		memcpy(f->v[f->nr].name, line, strlen(line) + 1);
		f->v[f->nr].addr = strtoull(eq + 1, NULL, 16);
		f->nr++;
	}
	return -1;
}

/*
 * Start @dir/@name (@dir NULL: the fixture directory). With @bind_from, the
 * child first enters a mount namespace of its own and bind-mounts @bind_from
 * on @dir, so that its files exist under @dir for it only.
 */
static int fx_spawn(struct fx *f, const char *dir, const char *name, const char *bind_from)
{
	char path[PATH_MAX], real_dir[PATH_MAX];
	pid_t parent = getpid();
	int in[2], out[2];

	memset(f, 0, sizeof(*f));
	if (!realpath(dir ? dir : fxdir, real_dir))
		return -1;
	if (snprintf(path, sizeof(path), "%s/%s", real_dir, name) >= (int)sizeof(path))
		return -1;
	/* Through a bind mount, the path exists only in the child's namespace. */
	if (bind_from)
		strcpy(f->path, path);
	else if (!realpath(path, f->path))
		return -1;
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	f->pid = fork();
	if (f->pid < 0)
		return -1;
	if (!f->pid) {
		/* Never outlive the test, even if it crashes. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		if (bind_from && (unshare(CLONE_NEWNS) ||
				  mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
				  mount(bind_from, real_dir, NULL, MS_BIND, NULL)))
			_exit(2);
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(f->path, f->path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f->to_child = in[1];
	f->from_child = fdopen(out[0], "r");
	if (!f->from_child)
		return -1;
	return fx_read(f);
}

static int fx_start(struct fx *f, const char *name)
{
	return fx_spawn(f, NULL, name, NULL);
}

static void fx_stop(struct fx *f)
{
	if (f->pid <= 0)
		return;
	close(f->to_child);
	if (f->from_child)
		fclose(f->from_child);
	/* EOF on stdin makes the fixture exit; a kill covers a stuck one. */
	if (waitpid(f->pid, NULL, WNOHANG) == 0) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		int i;

		for (i = 0; i < 100 && waitpid(f->pid, NULL, WNOHANG) == 0; i++)
			nanosleep(&ts, NULL);
		if (i == 100) {
			kill(f->pid, SIGKILL);
			waitpid(f->pid, NULL, 0);
		}
	}
	f->pid = 0;
}

static int fx_cmd(struct fx *f, const char *cmd)
{
	if (dprintf(f->to_child, "%s\n", cmd) < 0)
		return -1;
	return fx_read(f);
}

static uint64_t fx_get(const struct fx *f, const char *name)
{
	int i;

	for (i = 0; i < f->nr; i++)
		if (!strcmp(f->v[i].name, name))
			return f->v[i].addr;
	fail_msg("fixture %s did not report %s", f->path, name);
	return 0;
}

/* ---- expected values, computed independently -------------------------- */

struct elf_expect {
	uint64_t vaddr, size, offset;
};

/*
 * @name's value in @path's .symtab, and (unless @path is a debug file, whose
 * segments hold no bytes) its file offset through PT_LOAD.
 */
static void elf_lookup_in(const char *path, const char *name, struct elf_expect *ex,
			  bool need_offset)
{
	Elf_Scn *scn = NULL;
	size_t phnum, i;
	bool found = false;
	int fd = open(path, O_RDONLY);
	Elf *elf;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			n = elf_strptr(elf, sh.sh_link, s.st_name);
			if (n && !strcmp(n, name) && s.st_shndx != SHN_UNDEF) {
				ex->vaddr = s.st_value;
				ex->size = s.st_size;
				found = true;
				break;
			}
		}
	}
	if (!found)
		fail_msg("%s: no symbol %s", path, name);
	found = !need_offset;
	assert_int_equal(elf_getphdrnum(elf, &phnum), 0);
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ex->vaddr >= ph.p_vaddr && ex->vaddr < ph.p_vaddr + ph.p_filesz) {
			ex->offset = ex->vaddr - ph.p_vaddr + ph.p_offset;
			found = true;
		}
	}
	assert_true(found);
	elf_end(elf);
	close(fd);
}

static void elf_lookup(const char *path, const char *name, struct elf_expect *ex)
{
	elf_lookup_in(path, name, ex, true);
}

static bool has_symtab(const char *path)
{
	Elf_Scn *scn = NULL;
	bool ret = false;
	int fd = open(path, O_RDONLY);
	Elf *elf;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			ret = true;
	}
	elf_end(elf);
	close(fd);
	return ret;
}

/* The build-id `readelf -n` prints, or "" when it prints none. */
static void readelf_build_id(const char *path, char *out, size_t len)
{
	char cmd[PATH_MAX + 64], line[512];
	FILE *p;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "Build ID: ");

		if (s) {
			s += strlen("Build ID: ");
			s[strcspn(s, " \n")] = '\0';
			snprintf(out, len, "%s", s);
		}
	}
	assert_int_equal(pclose(p), 0);
}

static struct td_symbolizer *new_sym(unsigned int refresh_us, const char *debug_sub)
{
	char debug_dir[PATH_MAX];
	struct td_sym_config cfg = {
		.debug_dir = debug_dir,
		.maps_refresh_us = refresh_us,
	};
	struct td_symbolizer *sym;

	fx_path(debug_dir, debug_sub);
	sym = td_sym_new(&cfg);
	assert_non_null(sym);
	return sym;
}

/*
 * Name function @name of fixture @f and check everything: the symbol, its
 * offset, the object (the mapped file), the file offset (from @elf_path's
 * .symtab, the unstripped build) and the build-id (readelf on the object).
 */
static void check_function(struct td_symbolizer *sym, const struct fx *f, const char *name,
			   uint64_t addr, const char *object, const char *elf_path,
			   const char *elf_name)
{
	struct elf_expect ex;
	struct td_frame fr;
	char want_bid[256];

	elf_lookup(elf_path, elf_name ? elf_name : name, &ex);
	readelf_build_id(object, want_bid, sizeof(want_bid));

	assert_int_equal(td_sym_user(sym, f->pid, addr, false, &fr), 0);
	assert_int_equal(fr.addr, addr);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, name);
	assert_int_equal(fr.sym_offset, 0);
	assert_non_null(fr.object);
	assert_string_equal(fr.object, object);
	assert_int_equal(fr.file_offset, ex.offset);
	if (want_bid[0]) {
		assert_non_null(fr.build_id);
		assert_string_equal(fr.build_id, want_bid);
	} else {
		assert_null(fr.build_id);
	}

	/* Inside the function, and as a return address there. */
	assert_true(ex.size > 2);
	assert_int_equal(td_sym_user(sym, f->pid, addr + 2, false, &fr), 0);
	assert_string_equal(fr.symbol, name);
	assert_int_equal(fr.sym_offset, 2);
	assert_int_equal(fr.file_offset, ex.offset + 2);
	assert_int_equal(td_sym_user(sym, f->pid, addr + 2, true, &fr), 0);
	assert_string_equal(fr.symbol, name);
	assert_int_equal(fr.sym_offset, 2);
}

static const char *const prog_funcs[] = { "fx_alpha", "fx_beta", "fx_tail_caller", "fx_after",
					  "main" };

static void check_prog(const struct fx *f, const char *elf_name, const char *debug_sub)
{
	struct td_symbolizer *sym = new_sym(0, debug_sub);
	char elf_path[PATH_MAX];
	size_t i;

	fx_path(elf_path, elf_name);
	for (i = 0; i < ARRAY_SIZE(prog_funcs); i++)
		check_function(sym, f, prog_funcs[i], fx_get(f, prog_funcs[i]), f->path, elf_path,
			       NULL);
	td_sym_free(sym);
}

/* ---- tests ------------------------------------------------------------ */

static void test_pie(void **state)
{
	check_prog(&pie, "fx_pie", "debug");
}

static void test_nopie(void **state)
{
	check_prog(&nopie, "fx_nopie", "debug");
}

static void test_shared_lib(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	char lib[PATH_MAX], lib_real[PATH_MAX];
	const struct fx *procs[] = { &pie, &nopie };
	size_t i;

	fx_path(lib, "libfx.so");
	assert_non_null(realpath(lib, lib_real));
	for (i = 0; i < 2; i++) {
		/* The exported name, not the hidden alias at the same address. */
		check_function(sym, procs[i], "fx_lib_global", fx_get(procs[i], "fx_lib_global"),
			       lib_real, lib, NULL);
		check_function(sym, procs[i], "fx_lib_static", fx_get(procs[i], "fx_lib_static"),
			       lib_real, lib, NULL);
		/* Not fx_lib_compat@FX_1, an old version's name at the same address. */
		check_function(sym, procs[i], "fx_lib_current", fx_get(procs[i], "fx_lib_current"),
			       lib_real, lib, NULL);
		/* fx_lib_def@@FX_2, named without its version. */
		check_function(sym, procs[i], "fx_lib_def", fx_get(procs[i], "fx_lib_def"),
			       lib_real, lib, "fx_lib_def@@FX_2");
	}
	td_sym_free(sym);
}

static void test_return_addr(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	const struct fx *procs[] = { &pie, &nopie };
	struct td_frame fr;
	size_t i;

	for (i = 0; i < 2; i++) {
		const struct fx *f = procs[i];
		uint64_t ret = fx_get(f, "ret"), caller = fx_get(f, "fx_tail_caller");
		uint64_t caller_off;

		assert_int_equal(td_sym_user(sym, f->pid, caller, false, &fr), 0);
		caller_off = fr.file_offset;

		/* The fixture's layout: the call is the last instruction of its caller. */
		assert_int_equal(ret, fx_get(f, "fx_after"));

		assert_int_equal(td_sym_user(sym, f->pid, ret, false, &fr), 0);
		assert_string_equal(fr.symbol, "fx_after");
		assert_int_equal(fr.sym_offset, 0);

		assert_int_equal(td_sym_user(sym, f->pid, ret, true, &fr), 0);
		assert_int_equal(fr.addr, ret);
		assert_string_equal(fr.symbol, "fx_tail_caller");
		assert_int_equal(fr.sym_offset, ret - caller);
		/* The file offset is the one of the recorded address. */
		assert_int_equal(fr.file_offset, caller_off + (ret - caller));
	}
	td_sym_free(sym);
}

static void test_debuglink(void **state)
{
	char path[PATH_MAX];

	/* Symbols can only come from fx_link.debug. */
	fx_path(path, "fx_link");
	assert_false(has_symtab(path));
	check_prog(&link_fx, "fx_link.full", "debug");
}

static void test_debuglink_bad_crc(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	struct elf_expect right, stale;
	char path[PATH_MAX];
	struct td_frame fr;
	size_t i;

	fx_path(path, "fx_badcrc");
	assert_false(has_symtab(path));
	/* The debug file next to it is well-formed but would name things wrong. */
	fx_path(path, "fx_badcrc.full");
	elf_lookup(path, "fx_alpha", &right);
	fx_path(path, "fx_badcrc.debug");
	elf_lookup_in(path, "fx_alpha", &stale, false);
	assert_int_not_equal(right.vaddr, stale.vaddr);

	for (i = 0; i < ARRAY_SIZE(prog_funcs); i++) {
		assert_int_equal(td_sym_user(sym, badcrc.pid, fx_get(&badcrc, prog_funcs[i]), false,
					     &fr), 0);
		assert_string_equal(fr.object, badcrc.path);
		assert_null(fr.symbol);
		assert_null(fr.build_id);
	}
	td_sym_free(sym);
}

static void test_build_id_debug_dir(void **state)
{
	struct td_symbolizer *sym;
	char path[PATH_MAX], bid_full[256];
	struct td_frame fr;

	fx_path(path, "fx_bid");
	assert_false(has_symtab(path));
	/* strip keeps the note: the stripped file has the build's id. */
	fx_path(path, "fx_bid.full");
	readelf_build_id(path, bid_full, sizeof(bid_full));
	assert_true(strlen(bid_full) == 40);
	check_prog(&bid, "fx_bid.full", "debug");

	/* Without the debug directory, no name, but still the build-id. */
	sym = new_sym(0, "no-such-debug-dir");
	assert_int_equal(td_sym_user(sym, bid.pid, fx_get(&bid, "fx_alpha"), false, &fr), 0);
	assert_null(fr.symbol);
	assert_string_equal(fr.object, bid.path);
	assert_non_null(fr.build_id);
	assert_string_equal(fr.build_id, bid_full);
	td_sym_free(sym);
}

/* Append @fmt to @path (created). */
static void append_file(const char *path, const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	assert_int_equal(fclose(f), 0);
}

/*
 * JIT code: anonymous executable memory of this process, named by the perf
 * map a JIT writes ("START SIZE NAME", hex). A later line wins at the same
 * start, a malformed one is skipped, a line still being written (no
 * newline) is read once it is done; the name holds for this process only
 * (file identity's TD_FILE_ANON frames too), and is forgotten with it.
 */
static void test_jit_perfmap(void **state)
{
	char dir[] = "/tmp/td-perfmap-XXXXXX", path[PATH_MAX], path2[PATH_MAX];
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *code = mmap(NULL, 4 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	uint64_t a = (uintptr_t)code;
	struct td_sym_config cfg = { .perfmap_dir = dir };
	struct td_ufile anon = { .kind = TD_FILE_ANON };
	struct td_symbolizer *sym;
	struct td_sym_stats st;
	struct td_frame fr;
	int pid = getpid();

	assert_true(code != MAP_FAILED);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, pid);
	append_file(path, "%" PRIx64 " 40 jit_one\n", a);
	append_file(path, "0x%" PRIx64 " 0x20 LazyCompile:*tick /srv/app.js:12\n", a + 0x40);
	append_file(path, "not a perf map line\n");
	append_file(path, "%" PRIx64 " 10 old_code\n%" PRIx64 " 10 new_code\n", a + 0x100, a + 0x100);
	append_file(path, "%" PRIx64 " 10 half_written", a + 0x200);
	sym = td_sym_new(&cfg);
	assert_non_null(sym);

	assert_int_equal(td_sym_user(sym, pid, a + 0x10, false, &fr), 0);
	assert_string_equal(fr.symbol, "jit_one");
	assert_int_equal(fr.sym_offset, 0x10);
	assert_string_equal(fr.object, path);
	/* A return address one past jit_one's end is jit_one's; names with spaces. */
	assert_int_equal(td_sym_user(sym, pid, a + 0x40, true, &fr), 0);
	assert_string_equal(fr.symbol, "jit_one");
	assert_int_equal(fr.sym_offset, 0x40);
	assert_int_equal(td_sym_user(sym, pid, a + 0x41, true, &fr), 0);
	assert_string_equal(fr.symbol, "LazyCompile:*tick /srv/app.js:12");
	assert_int_equal(fr.sym_offset, 1);
	assert_int_equal(td_sym_user(sym, pid, a + 0x104, false, &fr), 0);
	assert_string_equal(fr.symbol, "new_code");
	/* In no entry: the mapping's offset only. */
	assert_int_equal(td_sym_user(sym, pid, a + 0x800, false, &fr), 0);
	assert_null(fr.symbol);
	assert_string_equal(fr.object, "[anon]");
	assert_int_equal(fr.file_offset, 0x800);
	assert_int_equal(td_sym_user(sym, pid, a + 0x204, false, &fr), 0);
	assert_null(fr.symbol);
	/* The JIT finishes the line and compiles more: read again on the miss. */
	append_file(path, "\n%" PRIx64 " 100 later_fn\n", a + 0x400);
	assert_int_equal(td_sym_user(sym, pid, a + 0x208, false, &fr), 0);
	assert_string_equal(fr.symbol, "half_written");
	assert_int_equal(td_sym_user(sym, pid, a + 0x4ff, false, &fr), 0);
	assert_string_equal(fr.symbol, "later_fn");

	/* File identity's frames in anonymous memory: named for this process alone. */
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x14, false, &fr), 1);
	assert_string_equal(fr.symbol, "jit_one");
	assert_int_equal(fr.sym_offset, 0x14);
	assert_string_equal(fr.object, path);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, 0, a + 0x14, false, &fr), 0);
	assert_null(fr.symbol);
	assert_null(fr.object);

	/* Forgotten with the process: another with its pid has a map of its own. */
	td_sym_forget(sym, pid);
	assert_int_equal(unlink(path), 0);
	append_file(path, "%" PRIx64 " 10 next_process_fn\n", a + 0x600);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x14, false, &fr), 0);
	assert_null(fr.symbol);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x608, false, &fr), 1);
	assert_string_equal(fr.symbol, "next_process_fn");
	/*
	 * A process without a map is asked again a second later, not at every
	 * frame: one that writes its map meanwhile is found then. (A pid no
	 * process has: its file is read as this process sees /tmp.)
	 */
	snprintf(path2, sizeof(path2), "%s/perf-%d.map", dir, 999999);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, 999999, a + 0x14, false, &fr), 0);
	append_file(path2, "%" PRIx64 " 40 late_map_fn\n", a);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, 999999, a + 0x14, false, &fr), 0);
	assert_null(fr.symbol);
	nanosleep(&(struct timespec){ 1, 100 * 1000 * 1000 }, NULL);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, 999999, a + 0x14, false, &fr), 1);
	assert_string_equal(fr.symbol, "late_map_fn");
	unlink(path2);

	/* Rewritten shorter (not appended to): read whole again on a miss. */
	assert_int_equal(truncate(path, 0), 0);
	append_file(path, "%" PRIx64 " 8 short\n", a + 0x700);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x704, false, &fr), 1);
	assert_string_equal(fr.symbol, "short");

	td_sym_get_stats(sym, &st);
	assert_int_equal(st.jit_named, 10);
	td_sym_free(sym);
	unlink(path);
	rmdir(dir);
	munmap(code, 4 * page);
}

/*
 * A JIT that removes its map at exit (jit_sleep does, as some agents do)
 * is gone with it before its events are read. Watched, the map is opened
 * when it is made (by the watch's thread, whatever the reader does) and
 * kept open: what the JIT wrote after, and before it removed the file,
 * still names its frames, also when the reader first looks after the
 * file is gone. Unwatched, nothing does. Only perf-PID.map files count.
 */
static void test_jit_perfmap_watched(void **state)
{
	char dir[] = "/tmp/td-perfwatch-XXXXXX", path[PATH_MAX], other[PATH_MAX];
	char save[PATH_MAX / 2], copy[PATH_MAX], text[256] = "";
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t a = (uintptr_t)code;
	struct td_sym_config cfg = { .perfmap_dir = dir, .perfmap_save_dir = save };
	struct td_symbolizer *sym, *unwatched;
	struct td_sym_stats st;
	struct td_frame fr;
	struct pollfd pfd;
	int pid = getpid(), fd;

	assert_true(code != MAP_FAILED);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, pid);
	snprintf(save, sizeof(save), "%s/saved", dir);
	snprintf(copy, sizeof(copy), "%s/perf-%d.map", save, pid);
	sym = td_sym_new(&cfg);
	cfg.perfmap_save_dir = NULL;
	unwatched = td_sym_new(&cfg);
	assert_non_null(sym);
	assert_non_null(unwatched);
	fd = td_sym_jit_watch(sym);
	assert_true(fd >= 0);
	assert_int_equal(td_sym_jit_watch(sym), fd);
	assert_int_equal(td_sym_jit_watched(sym), 0);

	/* Not maps: no map read for them. */
	snprintf(other, sizeof(other), "%s/perf-x1.map", dir);
	append_file(other, "%" PRIx64 " 40 not_this\n", a);
	unlink(other);
	snprintf(other, sizeof(other), "%s/perf-%d.map.tmp", dir, pid);
	append_file(other, "%" PRIx64 " 40 not_this\n", a);
	unlink(other);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 300), 0);
	assert_int_equal(td_sym_jit_watched(sym), 0);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.jit_maps_watched, 0);

	append_file(path, "%" PRIx64 " 40 jit_first\n", a);
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(td_sym_jit_watched(sym), 1);
	assert_int_equal(td_sym_jit_watched(sym), 0);
	/* It compiles more, then removes its map at exit. */
	append_file(path, "%" PRIx64 " 40 jit_later\n", a + 0x100);
	assert_int_equal(unlink(path), 0);
	/* A recording copies the maps its events ask for, not every one made. */
	assert_int_equal(access(copy, F_OK), -1);
	/* Its exec, read after the map was seen made: the map is the new program's. */
	td_sym_exec(sym, pid, 1);

	assert_int_equal(td_sym_user(sym, pid, a + 0x10, false, &fr), 0);
	assert_string_equal(fr.symbol, "jit_first");
	assert_string_equal(fr.object, path);
	assert_int_equal(td_sym_user(sym, pid, a + 0x104, false, &fr), 0);
	assert_string_equal(fr.symbol, "jit_later");
	{
		FILE *f = fopen(copy, "r");

		assert_non_null(f);
		assert_true(fread(text, 1, sizeof(text) - 1, f) > 0);
		fclose(f);
		assert_non_null(strstr(text, " jit_first\n"));
		assert_non_null(strstr(text, " jit_later\n"));
	}
	assert_int_equal(td_sym_user(unwatched, pid, a + 0x10, false, &fr), 0);
	assert_null(fr.symbol);
	/* Asked for, then an exec: the old program's, dropped. */
	td_sym_exec(sym, pid, 2);
	assert_int_equal(td_sym_user(sym, pid, a + 0x10, false, &fr), 0);
	assert_null(fr.symbol);

	/* Made again (another process with the pid, or the JIT anew): that file now. */
	append_file(path, "%" PRIx64 " 40 jit_again\n", a + 0x200);
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(td_sym_jit_watched(sym), 1);
	assert_int_equal(td_sym_user(sym, pid, a + 0x204, false, &fr), 0);
	assert_string_equal(fr.symbol, "jit_again");

	/*
	 * A JIT of a moment: its map made and removed before the reader takes
	 * it (a round of reads takes seconds on a loaded machine). The
	 * thread opened it when it was made: named all the same.
	 */
	td_sym_exec(sym, pid, 3);
	assert_int_equal(unlink(path), 0);
	append_file(path, "%" PRIx64 " 40 jit_brief\n", a + 0x300);
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(td_sym_jit_watched(sym), 1);
	assert_int_equal(td_sym_user(sym, pid, a + 0x304, false, &fr), 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "jit_brief");
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.jit_maps_watched, 3);
	assert_int_equal(st.jit_watch_dropped, 0);

	td_sym_free(sym);
	td_sym_free(unwatched);
	unlink(path);
	unlink(copy);
	rmdir(save);
	rmdir(dir);
	munmap(code, page);
}

/* Set @path's modification time @ago_s seconds back (0: now). */
static void age_file(const char *path, time_t ago_s)
{
	struct timespec t[2];

	assert_int_equal(clock_gettime(CLOCK_REALTIME, &t[0]), 0);
	t[0].tv_sec -= ago_s;
	t[1] = t[0];
	assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* When a perf map is taken for an earlier process's: the rule alone. */
static void test_perfmap_older(void **state)
{
	const uint64_t s = 1000000000ULL, day = 86400 * s, boot = 3600 * s, real = 1700000000 * s;

	(void)state;
	/* Written a day before the process started: another's. */
	assert_true(td_perfmap_older(boot, real, real - day));
	/* Within the minute a clock step may account for, or after the start: its. */
	assert_false(td_perfmap_older(boot, real, real - 59 * s));
	assert_true(td_perfmap_older(boot, real, real - 61 * s));
	assert_false(td_perfmap_older(boot, real, real + 5 * s));
	/* Started in the first ten minutes of boot: the wall clock may be set since. */
	assert_false(td_perfmap_older(599 * s, real, real - day));
	assert_true(td_perfmap_older(600 * s, real, real - day));
	/* A wall clock near its epoch: nothing is older by a minute. */
	assert_false(td_perfmap_older(boot, 30 * s, 0));
}

/* This process's start, in s since boot (/proc/self/stat's starttime). */
static double self_start_s(void)
{
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	assert_non_null(p);
	/* starttime is field 22: the 20th after the comm. */
	for (int field = 2; field < 22; field++) {
		p = strchr(p + 1, ' ');
		assert_non_null(p);
	}
	return strtod(p + 1, NULL) / sysconf(_SC_CLK_TCK);
}

/*
 * A perf map older than the running process it is found for was left by
 * an earlier process with the pid: not read (its names are another
 * program's), counted once, and asked again a second later, when a JIT
 * that wrote its own since is named. A process already gone has no start
 * to compare with: its map is read however old. Run in the first ten
 * minutes after boot (a fresh VM or CI machine), this process's old map is
 * read instead, as the boot window wants: that branch is checked then, and
 * the rule itself, every case of it, by test_perfmap_older().
 */
static void test_jit_perfmap_stale(void **state)
{
	bool early = self_start_s() < 600;
	char dir[] = "/tmp/td-perfmap-XXXXXX", path[PATH_MAX], path2[PATH_MAX];
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t a = (uintptr_t)code;
	struct td_sym_config cfg = { .perfmap_dir = dir };
	struct td_ufile anon = { .kind = TD_FILE_ANON };
	struct td_symbolizer *sym;
	struct td_sym_stats st;
	struct td_frame fr;
	int pid = getpid();

	(void)state;
	assert_true(code != MAP_FAILED);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, pid);
	append_file(path, "%" PRIx64 " 40 earlier_process_fn\n", a);
	/* Written an hour ago: before this process started. */
	age_file(path, 3600);
	sym = td_sym_new(&cfg);
	assert_non_null(sym);

	if (early) {
		assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x10, false, &fr), 1);
		assert_string_equal(fr.symbol, "earlier_process_fn");
		td_sym_get_stats(sym, &st);
		assert_int_equal(st.jit_maps_stale, 0);
		td_sym_forget(sym, pid);
	} else {
		assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x10, false, &fr), 0);
		assert_null(fr.symbol);
		td_sym_get_stats(sym, &st);
		assert_int_equal(st.jit_maps_stale, 1);
		/* Asked again a second later, still stale: not read, not counted again. */
		nanosleep(&(struct timespec){ 1, 100 * 1000 * 1000 }, NULL);
		assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x10, false, &fr), 0);
		assert_null(fr.symbol);
		td_sym_get_stats(sym, &st);
		assert_int_equal(st.jit_maps_stale, 1);
		assert_int_equal(st.jit_named, 0);
	}

	/* The process's own JIT writes the file anew: named once asked again. */
	assert_int_equal(truncate(path, 0), 0);
	append_file(path, "%" PRIx64 " 40 this_process_fn\n", a);
	age_file(path, 0);
	nanosleep(&(struct timespec){ 1, 100 * 1000 * 1000 }, NULL);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x10, false, &fr), 1);
	assert_string_equal(fr.symbol, "this_process_fn");

	/* No such process: no start to compare with, the old map is read. */
	snprintf(path2, sizeof(path2), "%s/perf-%d.map", dir, 999999);
	append_file(path2, "%" PRIx64 " 40 gone_process_fn\n", a);
	age_file(path2, 3600);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, 999999, a + 0x10, false, &fr), 1);
	assert_string_equal(fr.symbol, "gone_process_fn");
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.jit_maps_stale, early ? 0 : 1);
	assert_int_equal(st.jit_named, early ? 3 : 2);

	td_sym_free(sym);
	unlink(path);
	unlink(path2);
	rmdir(dir);
	munmap(code, page);
}

/*
 * A frame of JIT code looked up before its line was written (half written,
 * or a map dumped only when asked): the miss is kept no longer than the
 * perf maps stay as read. Once td_sym_jit_recheck() reads the line, the
 * same address (the lookup cache's) is named, and the generation that
 * callers key their own caches on has moved; a recheck with nothing new
 * leaves it.
 */
static void test_jit_perfmap_late_line(void **state)
{
	char dir[] = "/tmp/td-perfmap-XXXXXX", path[PATH_MAX];
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	uint64_t a = (uintptr_t)code, gen;
	struct td_sym_config cfg = { .perfmap_dir = dir };
	struct td_symbolizer *sym;
	struct td_frame fr;
	int pid = getpid();

	(void)state;
	assert_true(code != MAP_FAILED);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, pid);
	append_file(path, "%" PRIx64 " 40 late_fn", a);	/* no newline yet */
	sym = td_sym_new(&cfg);
	assert_non_null(sym);
	assert_int_equal(td_sym_user(sym, pid, a + 0x10, false, &fr), 0);
	assert_null(fr.symbol);
	gen = td_sym_jit_gen(sym, pid);
	/* A file of no whole line read again (another miss) changes nothing. */
	assert_int_equal(td_sym_user(sym, pid, a + 0x14, false, &fr), 0);
	assert_null(fr.symbol);
	assert_true(td_sym_jit_gen(sym, pid) == gen);
	td_sym_jit_recheck(sym);
	assert_true(td_sym_jit_gen(sym, pid) == gen);
	append_file(path, "\n");
	/* Kept: a miss is not read again at every frame. */
	assert_int_equal(td_sym_user(sym, pid, a + 0x10, false, &fr), 0);
	assert_null(fr.symbol);
	td_sym_jit_recheck(sym);
	assert_true(td_sym_jit_gen(sym, pid) != gen);
	assert_int_equal(td_sym_user(sym, pid, a + 0x10, false, &fr), 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "late_fn");
	assert_int_equal(fr.sym_offset, 0x10);
	gen = td_sym_jit_gen(sym, pid);
	td_sym_jit_recheck(sym);
	assert_true(td_sym_jit_gen(sym, pid) == gen);
	td_sym_free(sym);
	unlink(path);
	rmdir(dir);
	munmap(code, page);
}

/* @path's whole text, or "" if missing (the caller frees it). */
static char *file_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 4096);
	size_t n;

	assert_non_null(buf);
	if (!f)
		return buf;
	n = fread(buf, 1, 4095, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/*
 * A recording keeps the perf maps that named its JIT frames (perfmap_save_dir):
 * what was read, whole lines, appended as the JIT appends, a line being
 * written only once finished. Read later (perfmap_saved_dir), the copy
 * alone names the frames, the process and its map gone: td_sym_jit() for
 * a frame nothing else named, and the copy is the frames' object.
 */
static void test_jit_perfmap_saved(void **state)
{
	char dir[] = "/tmp/td-perfmap-XXXXXX", path[PATH_MAX], save[PATH_MAX + 8];
	char copy[PATH_MAX + 32], none[PATH_MAX + 32], expect[512];
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t a = (uintptr_t)code;
	struct td_sym_config cfg = { .perfmap_dir = dir };
	struct td_ufile anon = { .kind = TD_FILE_ANON };
	struct td_symbolizer *sym;
	struct td_sym_stats st;
	struct td_frame fr;
	int pid = getpid();
	char *text;

	(void)state;
	assert_true(code != MAP_FAILED);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, pid);
	snprintf(save, sizeof(save), "%s/saved", dir);
	snprintf(copy, sizeof(copy), "%s/perf-%d.map", save, pid);
	cfg.perfmap_save_dir = save;
	append_file(path, "%" PRIx64 " 40 jit_one\n%" PRIx64 " 10 half", a, a + 0x40);
	sym = td_sym_new(&cfg);
	assert_non_null(sym);
	/* Nothing read yet: nothing made. */
	assert_int_equal(access(save, F_OK), -1);

	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x10, false, &fr), 1);
	assert_string_equal(fr.symbol, "jit_one");
	snprintf(expect, sizeof(expect), "%" PRIx64 " 40 jit_one\n", a);
	text = file_text(copy);
	assert_string_equal(text, expect);
	free(text);
	/* The line finished and one more: both copied once read, on a miss. */
	append_file(path, "_written\n%" PRIx64 " 20 later_fn\n", a + 0x80);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x84, false, &fr), 1);
	assert_string_equal(fr.symbol, "later_fn");
	snprintf(expect, sizeof(expect),
		 "%" PRIx64 " 40 jit_one\n%" PRIx64 " 10 half_written\n%" PRIx64 " 20 later_fn\n",
		 a, a + 0x40, a + 0x80);
	text = file_text(copy);
	assert_string_equal(text, expect);
	free(text);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.jit_maps_saved, 1);
	assert_int_equal(st.jit_map_save_errors, 0);
	/*
	 * A restart (td_sym_restart()) first copies what the JIT appended
	 * since, and keeps the counts; the map read again afterwards makes
	 * the copy again, whole.
	 */
	append_file(path, "%" PRIx64 " 20 last_fn\n", a + 0xc0);
	assert_int_equal(td_sym_restart(sym), 0);
	snprintf(expect, sizeof(expect),
		 "%" PRIx64 " 40 jit_one\n%" PRIx64 " 10 half_written\n%" PRIx64 " 20 later_fn\n"
		 "%" PRIx64 " 20 last_fn\n", a, a + 0x40, a + 0x80, a + 0xc0);
	text = file_text(copy);
	assert_string_equal(text, expect);
	free(text);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.jit_maps_saved, 1);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0xc4, false, &fr), 1);
	assert_string_equal(fr.symbol, "last_fn");
	text = file_text(copy);
	assert_string_equal(text, expect);
	free(text);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.jit_maps_saved, 2);
	assert_int_equal(st.jit_map_save_errors, 0);
	td_sym_free(sym);

	/* The process's map gone, and its maps with it: the copy names the frames. */
	assert_int_equal(unlink(path), 0);
	sym = td_sym_new(&(struct td_sym_config){ .perfmap_dir = dir, .perfmap_saved_dir = save });
	assert_non_null(sym);
	fr = (struct td_frame){ .addr = a + 0x44 };
	assert_int_equal(td_sym_jit(sym, pid, a + 0x44, false, &fr), 0);
	assert_string_equal(fr.symbol, "half_written");
	assert_int_equal(fr.sym_offset, 4);
	assert_string_equal(fr.object, copy);
	/* A return address just past jit_one is jit_one's. */
	fr = (struct td_frame){ .addr = a + 0x40 };
	assert_int_equal(td_sym_jit(sym, pid, a + 0x40, true, &fr), 0);
	assert_string_equal(fr.symbol, "jit_one");
	/* Not covered, no copy for the pid, no pid, or named already: unchanged. */
	fr = (struct td_frame){ .addr = a + 0x400 };
	assert_int_equal(td_sym_jit(sym, pid, a + 0x400, false, &fr), -ENOENT);
	assert_null(fr.symbol);
	assert_null(fr.object);
	assert_int_equal(td_sym_jit(sym, 999999, a + 0x10, false, &fr), -ENOENT);
	assert_int_equal(td_sym_jit(sym, 0, a + 0x10, false, &fr), -ENOENT);
	fr = (struct td_frame){ .addr = a + 0x10, .symbol = "main", .object = "/bin/x" };
	assert_int_equal(td_sym_jit(sym, pid, a + 0x10, false, &fr), -ENOENT);
	assert_string_equal(fr.symbol, "main");
	assert_string_equal(fr.object, "/bin/x");
	/* Through file identity, as while the process ran: the copy too. */
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x84, false, &fr), 1);
	assert_string_equal(fr.symbol, "later_fn");
	assert_string_equal(fr.object, copy);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.jit_maps_saved, 0);
	td_sym_free(sym);

	/*
	 * A recording that names nothing (trace-defer record): the map is
	 * copied when its process is first met, what is new again a second
	 * later at the earliest.
	 */
	unlink(copy);
	sym = td_sym_new(&(struct td_sym_config){ .perfmap_dir = dir, .perfmap_save_dir = save });
	assert_non_null(sym);
	append_file(path, "%" PRIx64 " 40 jit_one\n", a);
	assert_int_equal(td_sym_jit_sync(sym, pid), 0);
	snprintf(expect, sizeof(expect), "%" PRIx64 " 40 jit_one\n", a);
	text = file_text(copy);
	assert_string_equal(text, expect);
	free(text);
	append_file(path, "%" PRIx64 " 20 later_fn\n", a + 0x80);
	assert_int_equal(td_sym_jit_sync(sym, pid), 0);
	text = file_text(copy);
	assert_string_equal(text, expect);
	free(text);
	nanosleep(&(struct timespec){ 1, 100 * 1000 * 1000 }, NULL);
	assert_int_equal(td_sym_jit_sync(sym, pid), 0);
	snprintf(expect, sizeof(expect), "%" PRIx64 " 40 jit_one\n%" PRIx64 " 20 later_fn\n", a,
		 a + 0x80);
	text = file_text(copy);
	assert_string_equal(text, expect);
	free(text);
	/* No process, no map: nothing made. */
	assert_int_equal(td_sym_jit_sync(sym, 0), 0);
	assert_int_equal(td_sym_jit_sync(sym, 999999), 0);
	snprintf(none, sizeof(none), "%s/perf-999999.map", save);
	assert_int_equal(access(none, F_OK), -1);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.jit_maps_saved, 1);
	td_sym_free(sym);
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, pid);
	unlink(path);

	unlink(copy);
	rmdir(save);
	rmdir(dir);
	munmap(code, page);
}

/*
 * A JIT gone before its frames are named leaves its map in the system's
 * /tmp, which the daemon may not see as its own (the service's
 * PrivateTmp=): it is read as init sees it, through PROC_ROOT/1/root.
 * Here a PROC_ROOT of our own: no process 999998 in it, and init's root a
 * directory holding DIR/perf-999998.map, which our own view lacks.
 */
static void test_jit_perfmap_init_root(void **state)
{
	char proc[] = "/tmp/td-proc-XXXXXX", dir[] = "/tmp/td-perfmap-XXXXXX";
	char root[PATH_MAX], path[3 * PATH_MAX];
	struct td_ufile anon = { .kind = TD_FILE_ANON };
	struct td_symbolizer *sym;
	struct td_frame fr;

	(void)state;
	assert_non_null(mkdtemp(proc));
	assert_non_null(mkdtemp(dir));
	snprintf(root, sizeof(root), "%s/1", proc);
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(root, sizeof(root), "%s/1/root", proc);
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(path, sizeof(path), "%s/tmp", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s%s", root, dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s%s/perf-999998.map", root, dir);
	append_file(path, "7f0000001000 40 left_behind\n");
	sym = td_sym_new(&(struct td_sym_config){ .perfmap_dir = dir, .proc_root = proc });
	assert_non_null(sym);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, 999998, 0x7f0000001010, false, &fr), 1);
	assert_string_equal(fr.symbol, "left_behind");
	assert_int_equal(fr.sym_offset, 0x10);
	snprintf(path, sizeof(path), "%s/perf-999998.map", dir);
	assert_string_equal(fr.object, path);
	td_sym_free(sym);

	snprintf(path, sizeof(path), "%s%s/perf-999998.map", root, dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s%s", root, dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/tmp", root);
	rmdir(path);
	rmdir(root);
	snprintf(root, sizeof(root), "%s/1", proc);
	rmdir(root);
	rmdir(proc);
	rmdir(dir);
}

/*
 * A JIT in a container names its map with its pid there: a process in a
 * pid namespace of its own (pid 1 in it) writes DIR/perf-1.map, and its
 * frames, asked for by its pid here, are named from that file, reached
 * through its root, the path the frames name being the one it wrote.
 */
static void test_jit_perfmap_pidns(void **state)
{
	char dir[] = "/tmp/td-perfmap-ns-XXXXXX", path[PATH_MAX], hostpath[PATH_MAX];
	struct td_sym_config cfg = { .perfmap_dir = dir };
	struct td_ufile anon = { .kind = TD_FILE_ANON };
	struct td_symbolizer *sym;
	struct td_frame fr;
	uint64_t a = 0;
	int fds[2], hold[2], status;
	char c;
	pid_t pid;

	if (geteuid())
		skip();	/* CLONE_NEWPID needs CAP_SYS_ADMIN */
	assert_non_null(mkdtemp(dir));
	/*
	 * The child waits on @hold until we close it, or exit on a failed
	 * assertion: it never outlives the test.
	 */
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	/* fork() into a new pid namespace: the child is its pid 1. */
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
	assert_true(pid >= 0);
	if (!pid) {
		void *code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
		uint64_t at = (uintptr_t)code;
		char map[PATH_MAX];
		FILE *f;

		close(fds[0]);
		close(hold[1]);
		snprintf(map, sizeof(map), "%s/perf-%d.map", dir, (int)getpid());
		f = fopen(map, "w");
		if (code == MAP_FAILED || getpid() != 1 || !f ||
		    fprintf(f, "%" PRIx64 " 40 ns_jit_fn\n", at) < 0 || fclose(f))
			_exit(1);
		if (write(fds[1], &at, sizeof(at)) != sizeof(at))
			_exit(1);
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(fds[1]);
	close(hold[0]);
	assert_int_equal(read(fds[0], &a, sizeof(a)), sizeof(a));
	close(fds[0]);
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	snprintf(hostpath, sizeof(hostpath), "%s/perf-%d.map", dir, (int)pid);
	assert_int_equal(access(hostpath, F_OK), -1);
	sym = td_sym_new(&cfg);
	assert_non_null(sym);

	/* Through its maps (an unpatched kernel) and file identity alike. */
	assert_int_equal(td_sym_user(sym, pid, a + 0x10, false, &fr), 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "ns_jit_fn");
	assert_int_equal(fr.sym_offset, 0x10);
	assert_string_equal(fr.object, path);
	assert_int_equal(td_sym_ufile_pid(sym, NULL, &anon, pid, a + 0x14, false, &fr), 1);
	assert_string_equal(fr.symbol, "ns_jit_fn");
	assert_string_equal(fr.object, path);

	close(hold[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	td_sym_free(sym);
	unlink(path);
	rmdir(dir);
}

static struct td_file *record_file(struct td_filetab *ft, uint32_t id, const char *path,
				   const char *hex);

/*
 * JIT code mapped from a memfd, written through one view and run from the
 * other (.NET's W^X): the memfd is a file but no ELF file; the perf map
 * names the code, through the maps and through file identity (the kernel
 * records the memfd's path), for this process alone. Code in a memfd that
 * no map covers stays unnamed, in its memfd.
 */
static void test_jit_perfmap_memfd(void **state)
{
	char dir[] = "/tmp/td-perfmap-memfd-XXXXXX", path[PATH_MAX];
	struct td_sym_config cfg = { .perfmap_dir = dir };
	struct td_filetab *ft = td_filetab_new(0);
	struct td_ufile uf = { .kind = TD_FILE_IN, .id = 7 };
	struct td_symbolizer *sym;
	struct td_frame fr;
	uint8_t *rw, *rx;
	uint64_t a;
	int fd;

	assert_non_null(ft);
	assert_non_null(mkdtemp(dir));
	fd = memfd_create("td-jit", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 2 * 4096), 0);
	rw = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	rx = mmap(NULL, 2 * 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	assert_true(rw != MAP_FAILED && rx != MAP_FAILED);
	rw[0] = 0xc3;
	a = (uintptr_t)rx;
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)getpid());
	append_file(path, "%" PRIx64 " 40 memfd_jit_fn\n", a);
	sym = td_sym_new(&cfg);
	assert_non_null(sym);

	assert_int_equal(td_sym_user(sym, getpid(), a + 0x10, false, &fr), 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "memfd_jit_fn");
	assert_int_equal(fr.sym_offset, 0x10);
	assert_string_equal(fr.object, path);
	/* Beyond what the map covers: the memfd, unnamed. */
	assert_int_equal(td_sym_user(sym, getpid(), a + 0x1010, false, &fr), 0);
	assert_null(fr.symbol);
	assert_string_equal(fr.object, "/memfd:td-jit");
	assert_int_equal(fr.file_offset, 0x1010);

	/* File identity: the path the kernel records for a memfd. */
	record_file(ft, 7, "/memfd:td-jit (deleted)", NULL);
	uf.offset = 0x14;
	assert_int_equal(td_sym_ufile_pid(sym, ft, &uf, getpid(), a + 0x14, false, &fr), 1);
	assert_string_equal(fr.symbol, "memfd_jit_fn");
	assert_int_equal(fr.sym_offset, 0x14);
	assert_string_equal(fr.object, path);
	/* No process to ask: the recorded file, unnamed. */
	assert_true(td_sym_ufile_pid(sym, ft, &uf, 0, a + 0x14, false, &fr) <= 0);
	assert_null(fr.symbol);

	td_sym_free(sym);
	td_filetab_free(ft);
	munmap(rw, 2 * 4096);
	munmap(rx, 2 * 4096);
	close(fd);
	unlink(path);
	rmdir(dir);
}

static void test_cxx_demangle(void **state)
{
	static const struct {
		const char *key, *name;
	} want[] = {
		{ "frob", "fxns::frob(int, char const*)" },
		{ "make", "fxns::Widget::make(int)" },
		{ "twice", "long fxns::twice<long>(long)" },
		/* Rust: the legacy hash left out, as rustfilt does; v0 too. */
		{ "rs_legacy", "mycrt::worker" },
		{ "rs_v0", "mycrt::main" },
		{ "rs_v0_impl", "<std::thread::thread::Thread>::park_timeout" },
	};
	struct td_symbolizer *sym = new_sym(0, "debug");
	struct td_frame fr;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		uint64_t addr = fx_get(&cxx, want[i].key);

		assert_int_equal(td_sym_user(sym, cxx.pid, addr, false, &fr), 0);
		assert_non_null(fr.symbol);
		assert_string_equal(fr.symbol, want[i].name);
		assert_int_equal(fr.sym_offset, 0);
		assert_string_equal(fr.object, cxx.path);
		/* Demangled once, then the same string. */
		{
			const char *first = fr.symbol;

			assert_int_equal(td_sym_user(sym, cxx.pid, addr + 1, false, &fr), 0);
			assert_ptr_equal(fr.symbol, first);
			assert_int_equal(fr.sym_offset, 1);
		}
	}
	td_sym_free(sym);
}

/* Range of the first mapping named @name in @pid's maps; start 0 if none. */
static uint64_t maps_range(pid_t pid, const char *name, uint64_t *end)
{
	char path[64], line[512];
	uint64_t start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if (!strstr(line, name) || start)
			continue;
		start = strtoull(line, &p, 16);
		if (end)
			*end = strtoull(p + 1, NULL, 16);
	}
	fclose(f);
	return start;
}

static uint64_t maps_start(pid_t pid, const char *name)
{
	return maps_range(pid, name, NULL);
}

static void test_special_mappings(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	uint64_t vdso = maps_start(pie.pid, "[vdso]");
	struct td_frame fr;

	assert_int_equal(td_sym_user(sym, pie.pid, fx_get(&pie, "stack"), false, &fr), 0);
	assert_string_equal(fr.object, "[stack]");
	assert_null(fr.symbol);
	assert_null(fr.build_id);

	assert_int_equal(td_sym_user(sym, pie.pid, fx_get(&pie, "anon") + 16, false, &fr), 0);
	assert_string_equal(fr.object, "[anon]");
	assert_null(fr.symbol);
	assert_int_equal(fr.file_offset, 16);

	assert_true(vdso != 0);
	assert_int_equal(td_sym_user(sym, pie.pid, vdso + 0x10, false, &fr), 0);
	assert_string_equal(fr.object, "[vdso]");
	assert_null(fr.symbol);
	assert_int_equal(fr.file_offset, 0x10);
	td_sym_free(sym);
}

/* (A long refresh interval: a slow machine must not turn a miss into a re-read.) */
static void test_unmapped(void **state)
{
	struct td_symbolizer *sym = new_sym(60u * 1000 * 1000, "debug");
	struct td_sym_stats st;
	struct td_frame fr;
	long pid_max = 4194304;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");

	if (f) {
		assert_int_equal(fscanf(f, "%ld", &pid_max), 1);
		fclose(f);
	}
	assert_int_equal(td_sym_user(sym, pie.pid, 0x1000, false, &fr), -ENOENT);
	assert_int_equal(fr.addr, 0x1000);
	assert_null(fr.symbol);
	assert_null(fr.object);
	assert_null(fr.build_id);

	/* A process that cannot exist. */
	assert_int_equal(td_sym_user(sym, (int)pid_max + 1, fx_get(&pie, "fx_alpha"), false, &fr),
			 -ENOENT);
	assert_int_equal(fr.addr, fx_get(&pie, "fx_alpha"));
	assert_null(fr.object);

	td_sym_get_stats(sym, &st);
	assert_int_equal(st.user_lookups, 2);
	assert_int_equal(st.user_unmapped, 2);
	assert_int_equal(st.maps_read_errors, 1);
	assert_int_equal(st.maps_gone, 1);
	td_sym_free(sym);
}

static void *wait_thread(void *arg)
{
	int *tid = arg;

	__atomic_store_n(tid, gettid(), __ATOMIC_SEQ_CST);
	while (__atomic_load_n(tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	return NULL;
}

/*
 * A process gone before its maps are read (the common short-lived case) is
 * known gone without a lookup in /proc; a thread that is not its process's
 * leader is not taken for gone; a made-up proc root is always read.
 */
static void test_gone_without_proc(void **state)
{
	struct td_symbolizer *sym = new_sym(60u * 1000 * 1000, "debug");
	struct td_sym_config cfg = { .proc_root = "/nonexistent-proc" };
	struct td_sym_stats st;
	struct td_frame fr;
	pthread_t thread;
	int status, tid = 0;
	pid_t child;

	child = fork();
	assert_true(child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(td_sym_user(sym, child, 0x1000, false, &fr), -ENOENT);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.maps_read_errors, 1);
	assert_int_equal(st.maps_gone, 1);

	assert_int_equal(pthread_create(&thread, NULL, wait_thread, &tid), 0);
	while (!__atomic_load_n(&tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	assert_int_equal(td_sym_user(sym, tid, (uint64_t)(uintptr_t)&wait_thread, false, &fr),
			 0);
	assert_non_null(fr.object);
	__atomic_store_n(&tid, 0, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_join(thread, NULL), 0);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.maps_reads, 2);
	assert_int_equal(st.maps_read_errors, 1);
	assert_int_equal(st.maps_gone, 1);
	td_sym_free(sym);

	sym = td_sym_new(&cfg);
	assert_non_null(sym);
	assert_int_equal(td_sym_user(sym, child, 0x1000, false, &fr), -ENOENT);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.maps_read_errors, 1);
	assert_int_equal(st.maps_gone, 0);
	td_sym_free(sym);
}

/* A miss re-reads the maps: a library loaded after the first read is found. */
static void test_refresh_on_miss(void **state)
{
	struct td_symbolizer *sym = new_sym(1, "debug");
	char lib[PATH_MAX], lib_real[PATH_MAX], cmd[PATH_MAX + 16];
	struct td_sym_stats st;
	struct td_frame fr;
	struct fx f;

	fx_path(lib, "libfx_dl.so");
	assert_non_null(realpath(lib, lib_real));
	assert_int_equal(fx_start(&f, "fx_pie"), 0);
	assert_int_equal(td_sym_user(sym, f.pid, fx_get(&f, "fx_alpha"), false, &fr), 0);
	assert_string_equal(fr.symbol, "fx_alpha");

	snprintf(cmd, sizeof(cmd), "dlopen %s", lib_real);
	assert_int_equal(fx_cmd(&f, cmd), 0);
	assert_true(fx_get(&f, "fx_dl_func") != 0);
	/* Make sure the 1 us refresh interval has passed. */
	usleep(1000);
	assert_int_equal(td_sym_user(sym, f.pid, fx_get(&f, "fx_dl_func"), false, &fr), 0);
	assert_string_equal(fr.symbol, "fx_dl_func");
	assert_string_equal(fr.object, lib_real);

	td_sym_get_stats(sym, &st);
	assert_int_equal(st.maps_reads, 2);
	assert_int_equal(st.processes, 1);
	fx_stop(&f);
	td_sym_free(sym);
}

/* Misses within the refresh interval do not re-read; forget() does. */
static void test_refresh_throttle_and_forget(void **state)
{
	struct td_symbolizer *sym = new_sym(60u * 1000 * 1000, "debug");
	char lib[PATH_MAX], cmd[PATH_MAX + 16];
	const char *obj_before, *sym_before;
	struct td_sym_stats st;
	struct td_frame fr;
	struct fx f;

	fx_path(lib, "libfx_dl.so");
	assert_int_equal(fx_start(&f, "fx_pie"), 0);
	assert_int_equal(td_sym_user(sym, f.pid, fx_get(&f, "fx_alpha"), false, &fr), 0);
	obj_before = fr.object;
	sym_before = fr.symbol;

	snprintf(cmd, sizeof(cmd), "dlopen %s", lib);
	assert_int_equal(fx_cmd(&f, cmd), 0);
	assert_int_equal(td_sym_user(sym, f.pid, fx_get(&f, "fx_dl_func"), false, &fr), -ENOENT);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.maps_reads, 1);

	td_sym_forget(sym, f.pid);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.processes, 0);
	/* Strings handed out before stay valid (ASan checks this too). */
	assert_string_equal(obj_before, f.path);
	assert_string_equal(sym_before, "fx_alpha");

	assert_int_equal(td_sym_user(sym, f.pid, fx_get(&f, "fx_dl_func"), false, &fr), 0);
	assert_string_equal(fr.symbol, "fx_dl_func");
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.maps_reads, 2);
	/* The executable's object survived forget(): no second load. */
	assert_int_equal(td_sym_user(sym, f.pid, fx_get(&f, "fx_alpha"), false, &fr), 0);
	assert_ptr_equal(fr.object, obj_before);
	assert_ptr_equal(fr.symbol, sym_before);
	fx_stop(&f);
	td_sym_free(sym);
}

static void test_sym_file(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	char lib[PATH_MAX], stripped[PATH_MAX], prog[PATH_MAX], lib_bid[256];
	struct elf_expect glob, stat_fn, alpha;
	struct td_frame fr;

	fx_path(lib, "libfx.so");
	fx_path(stripped, "libfx_stripped.so");
	fx_path(prog, "fx_nopie");
	elf_lookup(lib, "fx_lib_global", &glob);
	elf_lookup(lib, "fx_lib_static", &stat_fn);
	elf_lookup(prog, "fx_alpha", &alpha);
	readelf_build_id(lib, lib_bid, sizeof(lib_bid));
	assert_false(has_symtab(stripped));

	/* .dynsym only: the exported function is named... */
	assert_int_equal(td_sym_file(sym, stripped, glob.offset + 1, &fr), 0);
	assert_string_equal(fr.symbol, "fx_lib_global");
	assert_int_equal(fr.sym_offset, 1);
	assert_string_equal(fr.object, stripped);
	assert_int_equal(fr.file_offset, glob.offset + 1);
	assert_string_equal(fr.build_id, lib_bid);
	/* ...the static one is not, and not given its neighbour's name. */
	assert_int_equal(td_sym_file(sym, stripped, stat_fn.offset, &fr), 0);
	assert_null(fr.symbol);
	assert_int_equal(td_sym_file(sym, lib, stat_fn.offset, &fr), 0);
	assert_string_equal(fr.symbol, "fx_lib_static");

	assert_int_equal(td_sym_file(sym, prog, alpha.offset + 3, &fr), 0);
	assert_string_equal(fr.symbol, "fx_alpha");
	assert_int_equal(fr.sym_offset, 3);

	/* Not a mapped part of the file. */
	assert_int_equal(td_sym_file(sym, prog, 1ull << 40, &fr), 0);
	assert_null(fr.symbol);

	assert_int_equal(td_sym_file(sym, "/nonexistent/libnothing.so", 0x1000, &fr), -ENOENT);
	assert_null(fr.symbol);
	assert_null(fr.object);
	td_sym_free(sym);
}


/* ---- files the symbolizer cannot reach by path ------------------------ */

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	assert_true(in >= 0);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	close(out);
}

/* The executable was deleted after it started: only map_files reaches it. */
static void test_deleted_file(void **state)
{
	char dir[] = "/tmp/td-test-deleted-XXXXXX", exe[PATH_MAX], lib[PATH_MAX];
	char orig[PATH_MAX], want_bid[256];
	struct td_symbolizer *sym;
	struct td_frame fr;
	struct fx f;

	if (geteuid())
		skip();	/* map_files needs CAP_SYS_ADMIN */
	assert_non_null(mkdtemp(dir));
	snprintf(exe, sizeof(exe), "%s/fx_pie", dir);
	snprintf(lib, sizeof(lib), "%s/libfx.so", dir);
	fx_path(orig, "fx_pie");
	readelf_build_id(orig, want_bid, sizeof(want_bid));
	copy_file(orig, exe);
	fx_path(orig, "libfx.so");
	copy_file(orig, lib);

	assert_int_equal(fx_spawn(&f, dir, "fx_pie", NULL), 0);
	assert_int_equal(unlink(exe), 0);
	assert_true(maps_start(f.pid, "(deleted)") != 0);

	sym = new_sym(0, "debug");
	assert_int_equal(td_sym_user(sym, f.pid, fx_get(&f, "fx_alpha"), false, &fr), 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "fx_alpha");
	assert_string_equal(fr.object, f.path);
	assert_string_equal(fr.build_id, want_bid);
	td_sym_free(sym);
	fx_stop(&f);
	unlink(lib);
	rmdir(dir);
}

/* Raise or drop @cap in our effective set (kept in the permitted set). */
static int set_cap(int cap, bool on)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	if (on)
		d[cap / 32].effective |= 1u << (cap % 32);
	else
		d[cap / 32].effective &= ~(1u << (cap % 32));
	return (int)syscall(SYS_capset, &h, d);
}

/* Write fake/PID/maps (a copy of the real one) and fake/PID/root (a link). */
static void make_fake_proc(const char *fake, pid_t pid)
{
	char path[PATH_MAX], target[64], *maps;
	size_t len;
	FILE *in;
	int fd;

	snprintf(path, sizeof(path), "%s/%d", fake, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	in = fopen(path, "r");
	assert_non_null(in);
	maps = malloc(1 << 20);
	assert_non_null(maps);
	len = fread(maps, 1, 1 << 20, in);
	fclose(in);
	snprintf(path, sizeof(path), "%s/%d/maps", fake, pid);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, maps, len), (ssize_t)len);
	close(fd);
	free(maps);
	snprintf(target, sizeof(target), "/proc/%d/root", pid);
	snprintf(path, sizeof(path), "%s/%d/root", fake, pid);
	assert_int_equal(symlink(target, path), 0);
}

static void remove_fake_proc(const char *fake, pid_t pid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/root", fake, pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d/maps", fake, pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d", fake, pid);
	rmdir(path);
	rmdir(fake);
}

/*
 * The fixture runs from a bind mount that exists only in its own mount
 * namespace, so its paths mean nothing here. The symbolizer must reach its
 * files through /proc/PID/map_files, or, without the privilege map_files
 * needs, through /proc/PID/root (which reads "/" like ours: only the
 * namespace tells them apart), or through a proc_root whose PID/root links
 * there.
 */
static void test_mount_namespace(void **state)
{
	char dir[] = "/tmp/td-test-mntns-XXXXXX", fake[] = "/tmp/td-test-proc-XXXXXX";
	enum { MAP_FILES, ROOT_LINK, FAKE_PROC, NR_WAYS };
	struct td_frame alpha[NR_WAYS], lib[NR_WAYS];
	int ret_alpha[NR_WAYS], ret_lib[NR_WAYS], map_files_fd = -1, way, fd;
	struct td_symbolizer *sym[NR_WAYS];
	uint64_t start, end;
	char path[PATH_MAX];
	struct fx f;
	pid_t pid;

	if (geteuid())
		skip();	/* unshare(CLONE_NEWNS) needs CAP_SYS_ADMIN */
	assert_non_null(mkdtemp(dir));
	assert_non_null(mkdtemp(fake));
	assert_int_equal(fx_spawn(&f, dir, "fx_pie", fxdir), 0);
	pid = f.pid;
	/* Not reachable by its path from here. */
	assert_int_equal(access(f.path, F_OK), -1);
	make_fake_proc(fake, pid);
	start = maps_range(pid, "fx_pie", &end);
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	close(fd);

	for (way = 0; way < NR_WAYS; way++) {
		struct td_sym_config cfg = { .proc_root = way == FAKE_PROC ? fake : "/proc" };

		sym[way] = td_sym_new(&cfg);
		assert_non_null(sym[way]);
		if (way == ROOT_LINK) {
			assert_int_equal(set_cap(CAP_SYS_ADMIN, false), 0);
			assert_int_equal(set_cap(CAP_CHECKPOINT_RESTORE, false), 0);
			map_files_fd = open(path, O_RDONLY);
		}
		ret_alpha[way] = td_sym_user(sym[way], pid, fx_get(&f, "fx_alpha"), false,
					     &alpha[way]);
		ret_lib[way] = td_sym_user(sym[way], pid, fx_get(&f, "fx_lib_global"), false,
					   &lib[way]);
		if (way == ROOT_LINK) {
			assert_int_equal(set_cap(CAP_SYS_ADMIN, true), 0);
			assert_int_equal(set_cap(CAP_CHECKPOINT_RESTORE, true), 0);
		}
	}
	/* Without the capabilities map_files really was closed. */
	assert_int_equal(map_files_fd, -1);
	for (way = 0; way < NR_WAYS; way++) {
		assert_int_equal(ret_alpha[way], 0);
		assert_string_equal(alpha[way].object, f.path);
		assert_non_null(alpha[way].symbol);
		assert_string_equal(alpha[way].symbol, "fx_alpha");
		assert_int_equal(ret_lib[way], 0);
		assert_non_null(lib[way].symbol);
		assert_string_equal(lib[way].symbol, "fx_lib_global");
		td_sym_free(sym[way]);
	}
	fx_stop(&f);
	remove_fake_proc(fake, pid);
	rmdir(dir);
}

/*
 * A process that exited but is not reaped yet reads as empty maps: a
 * re-read must not forget what was known of it.
 */
static void test_exited_keeps_maps(void **state)
{
	char fake[] = "/tmp/td-test-proc-XXXXXX", path[PATH_MAX];
	struct td_sym_config cfg = { .maps_refresh_us = 1 };
	struct td_symbolizer *sym;
	struct td_frame fr;
	struct fx f;
	int fd;

	assert_non_null(mkdtemp(fake));
	assert_int_equal(fx_spawn(&f, NULL, "fx_nopie", NULL), 0);
	make_fake_proc(fake, f.pid);
	cfg.proc_root = fake;
	sym = td_sym_new(&cfg);
	assert_non_null(sym);
	assert_int_equal(td_sym_user(sym, f.pid, fx_get(&f, "fx_alpha"), false, &fr), 0);
	assert_string_equal(fr.symbol, "fx_alpha");

	/* The zombie's maps: empty. A miss forces a re-read. */
	snprintf(path, sizeof(path), "%s/%d/maps", fake, f.pid);
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	close(fd);
	usleep(2000);
	assert_int_equal(td_sym_user(sym, f.pid, 0x10, false, &fr), -ENOENT);
	assert_int_equal(td_sym_user(sym, f.pid, fx_get(&f, "fx_alpha"), false, &fr), 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "fx_alpha");

	td_sym_free(sym);
	remove_fake_proc(fake, f.pid);
	fx_stop(&f);
}

/* ---- the user lookup cache -------------------------------------------- */

static void same_str(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

/*
 * Every address of @f (and one past it), as a first frame and as a return
 * address, named twice by @sym (the second answer from its cache) and once
 * by a new symbolizer reading the same maps: the same answers, the same
 * counts.
 */
static void check_user_cached(struct td_symbolizer *sym, const char *proc_root,
			      const struct fx *f)
{
	struct td_sym_config cfg = { .proc_root = proc_root, .maps_refresh_us = 1 };
	struct td_symbolizer *ref = td_sym_new(&cfg);
	struct td_sym_stats s0, s1, r0, r1;
	int i, k, round, found = 0;

	assert_non_null(ref);
	td_sym_get_stats(sym, &s0);
	td_sym_get_stats(ref, &r0);
	for (i = 0; i < f->nr; i++) {
		for (k = 0; k < 4; k++) {
			uint64_t addr = f->v[i].addr + (k & 1);
			bool ret_addr = k & 2;
			struct td_frame want, got;
			int wret = td_sym_user(ref, f->pid, addr, ret_addr, &want);

			found += !wret;
			for (round = 0; round < 2; round++) {
				assert_int_equal(td_sym_user(sym, f->pid, addr, ret_addr, &got), wret);
				assert_int_equal(got.addr, want.addr);
				same_str(got.symbol, want.symbol);
				assert_int_equal(got.sym_offset, want.sym_offset);
				same_str(got.object, want.object);
				assert_int_equal(got.file_offset, want.file_offset);
				same_str(got.build_id, want.build_id);
			}
		}
	}
	assert_true(found > 0);
	td_sym_get_stats(sym, &s1);
	td_sym_get_stats(ref, &r1);
	assert_int_equal(s1.user_lookups - s0.user_lookups, 2 * (r1.user_lookups - r0.user_lookups));
	assert_int_equal(s1.user_no_symbol - s0.user_no_symbol,
			 2 * (r1.user_no_symbol - r0.user_no_symbol));
	assert_int_equal(s1.user_unmapped - s0.user_unmapped,
			 2 * (r1.user_unmapped - r0.user_unmapped));
	td_sym_free(ref);
}

/* Move the file offset of @f's executable text mapping by @delta in @maps. */
static void shift_text_pgoff(const char *maps, const struct fx *f, int64_t delta)
{
	char *text = malloc(1 << 20), *out = malloc(1 << 20), *line, *save = NULL;
	size_t len, o = 0;
	bool done = false;
	FILE *in;
	int fd;

	assert_non_null(text);
	assert_non_null(out);
	in = fopen(maps, "r");
	assert_non_null(in);
	len = fread(text, 1, (1 << 20) - 1, in);
	fclose(in);
	text[len] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *perms = strchr(line, ' '), *pg, *end;

		if (!done && perms && !strncmp(perms, " r-xp ", 6) && strstr(line, f->path)) {
			uint64_t pgoff;

			pg = perms + 6;
			pgoff = strtoull(pg, &end, 16);
			*pg = '\0';
			o += sprintf(out + o, "%s%08" PRIx64 "%s\n", line, pgoff + delta, end);
			done = true;
			continue;
		}
		o += sprintf(out + o, "%s\n", line);
	}
	assert_true(done);
	fd = open(maps, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, out, o), (ssize_t)o);
	close(fd);
	free(text);
	free(out);
}

/*
 * Cached user lookups answer as uncached ones: at first, after the maps
 * changed and were re-read (same addresses, other file offsets), and after
 * td_sym_forget() with maps changed back (read anew without a miss).
 */
static void test_user_cache(void **state)
{
	char fake[] = "/tmp/td-test-proc-XXXXXX", maps[PATH_MAX];
	struct td_sym_config cfg = { .maps_refresh_us = 1 };
	struct td_symbolizer *sym;
	struct td_sym_stats st, st0;
	struct td_frame fr, before;
	uint64_t alpha;
	struct fx f;

	assert_non_null(mkdtemp(fake));
	assert_int_equal(fx_spawn(&f, NULL, "fx_nopie", NULL), 0);
	make_fake_proc(fake, f.pid);
	snprintf(maps, sizeof(maps), "%s/%d/maps", fake, f.pid);
	cfg.proc_root = fake;
	sym = td_sym_new(&cfg);
	assert_non_null(sym);
	alpha = fx_get(&f, "fx_alpha");

	check_user_cached(sym, fake, &f);
	assert_int_equal(td_sym_user(sym, f.pid, alpha, false, &before), 0);
	assert_string_equal(before.symbol, "fx_alpha");

	/* The text now maps another part of the file; a miss re-reads. */
	shift_text_pgoff(maps, &f, 0x1000);
	usleep(2000);
	td_sym_get_stats(sym, &st0);
	assert_int_equal(td_sym_user(sym, f.pid, 0x10, false, &fr), -ENOENT);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.maps_reads, st0.maps_reads + 1);
	assert_int_equal(td_sym_user(sym, f.pid, alpha, false, &fr), 0);
	assert_int_equal(fr.file_offset, before.file_offset + 0x1000);
	check_user_cached(sym, fake, &f);

	/* Back as it was, then forget: read anew on the next lookup, no miss needed. */
	shift_text_pgoff(maps, &f, -0x1000);
	td_sym_forget(sym, f.pid);
	td_sym_get_stats(sym, &st0);
	assert_int_equal(td_sym_user(sym, f.pid, alpha, false, &fr), 0);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.maps_reads, st0.maps_reads + 1);
	assert_string_equal(fr.symbol, "fx_alpha");
	assert_int_equal(fr.file_offset, before.file_offset);
	check_user_cached(sym, fake, &f);

	td_sym_free(sym);
	remove_fake_proc(fake, f.pid);
	fx_stop(&f);
}

/* ---- kallsyms --------------------------------------------------------- */

static void write_file(char *path, const char *text)
{
	int fd;

	snprintf(path, 64, "/tmp/td-test-kallsyms-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static struct td_symbolizer *kallsyms_sym(const char *path)
{
	struct td_sym_config cfg = { .kallsyms = path };
	struct td_symbolizer *sym = td_sym_new(&cfg);

	assert_non_null(sym);
	return sym;
}

static void test_kallsyms(void **state)
{
	/* Unsorted, as the real file is past the core kernel; data in between. */
	static const char text[] =
		"ffffffffc0001000 t mod_helper\t[mymod]\n"
		"ffffffff81002000 T second_func\n"
		"ffffffff81000000 t alias_local\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81001000 t first_func\n"
		"ffffffff81001800 D some_data\n"
		"ffffffff81001900 r some_rodata\n"
		"0000000000000000 A fixed_percpu_data\n"
		"ffffffffc0000000 T mod_init\t[mymod]\n"
		"ffffffff81003000 W weak_func\n"
		"ffffffffc0100000 t other_fn\t[other_mod]\n"
		"this is not a kallsyms line\n";
	char path[64];
	struct td_symbolizer *sym;
	struct td_sym_stats st;
	struct td_frame fr;

	write_file(path, text);
	sym = kallsyms_sym(path);

	assert_int_equal(td_sym_kernel(sym, 0xffffffff81000010ull, false, &fr), 0);
	assert_int_equal(fr.addr, 0xffffffff81000010ull);
	assert_string_equal(fr.symbol, "_stext");
	assert_int_equal(fr.sym_offset, 0x10);
	assert_string_equal(fr.object, "[kernel]");
	assert_null(fr.build_id);

	/* Data symbols do not cut a function short. */
	assert_int_equal(td_sym_kernel(sym, 0xffffffff81001950ull, false, &fr), 0);
	assert_string_equal(fr.symbol, "first_func");
	assert_int_equal(fr.sym_offset, 0x950);

	assert_int_equal(td_sym_kernel(sym, 0xffffffff81002000ull, false, &fr), 0);
	assert_string_equal(fr.symbol, "second_func");
	assert_int_equal(fr.sym_offset, 0);

	/*
	 * The same address as the return of a call that ends first_func
	 * (a function that does not return): first_func's, its offset that
	 * of the address; then as the cache has both, each answer again.
	 */
	for (int round = 0; round < 2; round++) {
		assert_int_equal(td_sym_kernel(sym, 0xffffffff81002000ull, true, &fr), 0);
		assert_int_equal(fr.addr, 0xffffffff81002000ull);
		assert_string_equal(fr.symbol, "first_func");
		assert_int_equal(fr.sym_offset, 0x1000);
		assert_int_equal(td_sym_kernel(sym, 0xffffffff81002000ull, false, &fr), 0);
		assert_string_equal(fr.symbol, "second_func");
		assert_int_equal(fr.sym_offset, 0);
	}
	/* Inside a function a return address is named as any other. */
	assert_int_equal(td_sym_kernel(sym, 0xffffffff81002010ull, true, &fr), 0);
	assert_string_equal(fr.symbol, "second_func");
	assert_int_equal(fr.sym_offset, 0x10);
	/* One past the first symbol: its start, not below everything. */
	assert_int_equal(td_sym_kernel(sym, 0xffffffff81000001ull, true, &fr), 0);
	assert_string_equal(fr.symbol, "_stext");
	assert_int_equal(fr.sym_offset, 1);

	assert_int_equal(td_sym_kernel(sym, 0xffffffff81003004ull, false, &fr), 0);
	assert_string_equal(fr.symbol, "weak_func");

	assert_int_equal(td_sym_kernel(sym, 0xffffffffc0001024ull, false, &fr), 0);
	assert_string_equal(fr.symbol, "mod_helper");
	assert_int_equal(fr.sym_offset, 0x24);
	assert_string_equal(fr.object, "[mymod]");

	assert_int_equal(td_sym_kernel(sym, 0xffffffffc0000008ull, false, &fr), 0);
	assert_string_equal(fr.symbol, "mod_init");
	assert_string_equal(fr.object, "[mymod]");

	assert_int_equal(td_sym_kernel(sym, 0xffffffffc0100001ull, false, &fr), 0);
	assert_string_equal(fr.object, "[other_mod]");

	/* Below everything, and far past the last symbol. */
	assert_int_equal(td_sym_kernel(sym, 0xffffffff80000000ull, false, &fr), -ENOENT);
	assert_int_equal(fr.addr, 0xffffffff80000000ull);
	assert_null(fr.symbol);
	assert_int_equal(td_sym_kernel(sym, 0xffffffffc0100000ull + (4u << 20), false, &fr), -ENOENT);
	assert_int_equal(td_sym_kernel(sym, 0x401000, false, &fr), -ENOENT);

	td_sym_get_stats(sym, &st);
	assert_int_equal(st.kernel_lookups, 16);
	assert_int_equal(st.kernel_unknown, 3);
	td_sym_free(sym);
	unlink(path);
}

/*
 * Kernel lookups are cached by address: the answers are those of the
 * table itself, whatever the order, over more addresses than the cache
 * holds (so entries are replaced), known and unknown alike.
 */
static void test_kallsyms_cache(void **state)
{
	char path[64], text[64 * 1024], *p = text;
	struct td_symbolizer *sym;
	struct td_kallsyms *ks;
	struct td_sym_stats st;
	uint64_t base = 0xffffffff81000000ull, lookups = 0, unknown = 0;
	unsigned int i, round;

	/* 1000 functions 0x100 apart, then a gap, then a module. */
	for (i = 0; i < 1000; i++)
		p += sprintf(p, "%016" PRIx64 " t fn_%u\n", base + 0x100 * i, i);
	p += sprintf(p, "ffffffffc0000000 t mod_fn\t[mod]\n");
	write_file(path, text);
	ks = td_kallsyms_load(path);
	assert_non_null(ks);
	sym = kallsyms_sym(path);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 12000; i++) {
			/* Below, inside, in the gap, in the module; a different walk each round. */
			uint64_t addr = i % 7 == 0 ? base - 1 - i :
					i % 7 == 1 ? 0xffffffffb0000000ull + i :
					i % 7 == 2 ? 0xffffffffc0000000ull + i :
					base + (uint64_t)((i * (round + 1) * 2654435761u) % 0x20000);
			const char *name, *object;
			struct td_frame fr;
			uint64_t off;
			int want = td_kallsyms_find(ks, addr, &name, &off, &object);

			lookups++;
			assert_int_equal(td_sym_kernel(sym, addr, false, &fr), want);
			assert_int_equal(fr.addr, addr);
			assert_null(fr.build_id);
			assert_int_equal(fr.file_offset, 0);
			if (want) {
				unknown++;
				assert_null(fr.symbol);
				assert_null(fr.object);
				assert_int_equal(fr.sym_offset, 0);
				continue;
			}
			assert_non_null(fr.symbol);
			assert_string_equal(fr.symbol, name);
			assert_string_equal(fr.object, object);
			assert_int_equal(fr.sym_offset, off);
		}
	}
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.kernel_lookups, lookups);
	assert_int_equal(st.kernel_unknown, unknown);
	assert_true(unknown > 0 && unknown < lookups);
	td_sym_free(sym);
	td_kallsyms_free(ks);
	unlink(path);
}

/* The name td_kallsyms_load(@text) gives @addr. */
static void check_ksym(const char *text, uint64_t addr, const char *want)
{
	const char *name, *object;
	struct td_kallsyms *ks;
	char path[64];
	uint64_t off;

	write_file(path, text);
	ks = td_kallsyms_load(path);
	unlink(path);
	assert_non_null(ks);
	assert_int_equal(td_kallsyms_find(ks, addr, &name, &off, &object), 0);
	assert_string_equal(name, want);
	assert_int_equal(off, 0);
	td_kallsyms_free(ks);
}

/*
 * Aliases at one address: the native name wins over a compat-ABI one
 * (__ia32_, __x32_, compat_) whatever their order in the file, as the
 * x86_64 syscall wrappers (/proc/kallsyms lists __ia32_ first); the
 * binding still comes first, so a compat-only global is not given up for
 * its local body.
 */
static void test_kallsyms_aliases(void **state)
{
	static const char *const texts[][2] = {
		{ "ffffffff81358d20 T __ia32_sys_vfork\n"
		  "ffffffff81358d20 T __x64_sys_vfork\n",
		  "__x64_sys_vfork" },
		{ "ffffffff81358d20 T __x64_sys_vfork\n"
		  "ffffffff81358d20 T __ia32_sys_vfork\n",
		  "__x64_sys_vfork" },
		/* As the real file: the local body first, then both wrappers. */
		{ "ffffffff81358d20 t __do_sys_vfork\n"
		  "ffffffff81358d20 T __ia32_sys_vfork\n"
		  "ffffffff81358d20 T __x64_sys_vfork\n",
		  "__x64_sys_vfork" },
		{ "ffffffff81358d20 T __x32_compat_sys_foo\n"
		  "ffffffff81358d20 T __x64_sys_foo\n",
		  "__x64_sys_foo" },
		{ "ffffffff81358d20 T compat_foo\n"
		  "ffffffff81358d20 T foo\n",
		  "foo" },
		{ "ffffffff81358d20 T foo\n"
		  "ffffffff81358d20 T compat_foo\n",
		  "foo" },
		{ "ffffffff81358d20 t __do_compat_sys_sigreturn\n"
		  "ffffffff81358d20 T __ia32_compat_sys_sigreturn\n",
		  "__ia32_compat_sys_sigreturn" },
		{ "ffffffff81358d20 T __ia32_compat_sys_sigreturn\n"
		  "ffffffff81358d20 t __do_compat_sys_sigreturn\n",
		  "__ia32_compat_sys_sigreturn" },
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		check_ksym(texts[i][0], 0xffffffff81358d20ull, texts[i][1]);
}

static void test_kallsyms_unusable(void **state)
{
	/* kptr_restrict: every address reads as zero. */
	static const char zeros[] = "0000000000000000 T _stext\n"
				    "0000000000000000 t first_func\n";
	struct td_symbolizer *sym;
	struct td_frame fr;
	char path[64];

	write_file(path, zeros);
	sym = kallsyms_sym(path);
	assert_int_equal(td_sym_kernel(sym, 0xffffffff81000010ull, false, &fr), -ENOENT);
	assert_null(fr.symbol);
	td_sym_free(sym);
	unlink(path);

	sym = kallsyms_sym("/nonexistent/kallsyms");
	assert_int_equal(td_sym_kernel(sym, 0xffffffff81000010ull, false, &fr), -ENOENT);
	assert_int_equal(td_sym_kernel(sym, 0xffffffff81000010ull, false, &fr), -ENOENT);
	td_sym_free(sym);
}

/* ---- maps parsing ----------------------------------------------------- */

static char *interned[16];
static int nr_interned;

static const char *test_intern(void *ctx, const char *s, size_t len)
{
	int i;

	for (i = 0; i < nr_interned; i++)
		if (strlen(interned[i]) == len && !memcmp(interned[i], s, len))
			return interned[i];
	if (nr_interned == 16)
		return NULL;
	interned[nr_interned] = strndup(s, len);
	return interned[nr_interned++];
}

static void test_maps_parse(void **state)
{
	static const char text[] =
		"7f0000002000-7f0000003000 r-xp 00001000 08:01 1234    "
		"/usr/lib/lib with space.so (deleted)\n"
		"7f0000000000-7f0000001000 r--p 00000000 08:01 1234    "
		"/usr/lib/lib with space.so (deleted)\n"
		"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                  [stack]\n"
		"garbage line\n"
		"7f0000004000-7f0000005000 rw-s 00000000 fd:1a 99\n"
		"7f0000006000-7f0000007000 r-xp 00000000 00:00 0   [anon:jit code]";
	static const char overlap[] = "1000-3000 r-xp 0 0:0 0\n2000-4000 r-xp 0 0:0 0\n";
	struct td_mapping *m;
	size_t n;
	int i;

	assert_int_equal(td_maps_parse(text, strlen(text), test_intern, NULL, &m, &n), 0);
	assert_int_equal(n, 5);
	/* Sorted by address whatever the input order. */
	assert_int_equal(m[0].start, 0x7f0000000000ull);
	assert_int_equal(m[1].start, 0x7f0000002000ull);
	assert_int_equal(m[1].end, 0x7f0000003000ull);
	assert_int_equal(m[1].pgoff, 0x1000);
	assert_int_equal(m[1].inode, 1234);
	assert_int_equal(m[1].dev_major, 8);
	assert_int_equal(m[1].dev_minor, 1);
	assert_int_equal(m[1].flags, TD_MAP_R | TD_MAP_X);
	assert_true(m[1].is_file);
	assert_true(m[1].deleted);
	assert_string_equal(m[1].path, "/usr/lib/lib with space.so");
	assert_ptr_equal(m[0].path, m[1].path);
	assert_null(m[1].obj);

	assert_string_equal(m[2].path, "[anon]");
	assert_false(m[2].is_file);
	assert_int_equal(m[2].flags, TD_MAP_R | TD_MAP_W | TD_MAP_SHARED);
	assert_int_equal(m[2].dev_major, 0xfd);
	assert_int_equal(m[2].dev_minor, 0x1a);
	assert_string_equal(m[3].path, "[anon:jit code]");
	assert_false(m[3].is_file);
	assert_string_equal(m[4].path, "[stack]");
	assert_false(m[4].deleted);
	free(m);

	/* Overlapping mappings are refused. */
	assert_int_equal(td_maps_parse(overlap, strlen(overlap), test_intern, NULL, &m, &n),
			 -EINVAL);
	for (i = 0; i < nr_interned; i++)
		free(interned[i]);
	nr_interned = 0;
}

/*
 * Interns into a table of its own, from @base on (a "new table" is the
 * strings made after @base was set); fails once, when @fail_at were made.
 */
struct rebase_strings {
	char *s[128];
	int nr, base, fail_at;
};

static const char *rebase_intern(void *ctx, const char *s, size_t len)
{
	struct rebase_strings *t = ctx;

	for (int i = t->base; i < t->nr; i++)
		if (strlen(t->s[i]) == len && !memcmp(t->s[i], s, len))
			return t->s[i];
	if (t->nr == t->fail_at) {
		t->fail_at = -1;
		return NULL;
	}
	if (t->nr == 128)
		return NULL;
	t->s[t->nr] = strndup(s, len);
	return t->s[t->nr++];
}

static void rebase_strings_free(struct rebase_strings *t)
{
	while (t->nr)
		free(t->s[--t->nr]);
}

/*
 * td_procs_rebase(): every process keeps its maps, its paths now the new
 * table's and its objects unset, under a new generation; one whose paths
 * cannot be interned is dropped, and the table (its chain unlinked around
 * the removal) still finds every other. Tried with the failing intern at
 * every position of the walk, with pids that share a bucket (the failing
 * one first, inside and last in its chain); a process never read is
 * dropped too.
 */
static void test_procs_rebase(void **state)
{
	static const int pids[] = { 17, 145, 273, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 };
	enum { NR = sizeof(pids) / sizeof(pids[0]) };
	char root[] = "/tmp/td-test-rebase-XXXXXX", path[PATH_MAX];
	uint64_t bucket = htab_hash_u64(HTAB_SEED, 1000) & 63;
	int chain[3], nchain = 0;
	FILE *f;

	(void)state;
	/* And three that share a bucket of the table (64 of them): one chain. */
	for (int pid = 1000; nchain < 3; pid++)
		if ((htab_hash_u64(HTAB_SEED, (uint32_t)pid) & 63) == bucket)
			chain[nchain++] = pid;
	assert_non_null(mkdtemp(root));
	for (int i = 0; i < NR + 3; i++) {
		int pid = i < NR ? pids[i] : chain[i - NR];

		snprintf(path, sizeof(path), "%s/%d", root, pid);
		assert_int_equal(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/%d/maps", root, pid);
		f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, "1000-2000 r-xp 00000000 08:01 %d /x/lib%d.so\n", pid, pid);
		fclose(f);
	}
	for (int fail = 0; fail <= NR + 3; fail++) {
		struct rebase_strings strings = { .fail_at = -1 };
		uint64_t gen[NR + 3];
		struct td_procs *procs;
		struct td_mapping *m;
		struct td_proc *proc;
		int lost = 0;

		procs = td_procs_new(root, 1000 * 1000 * 1000ULL, rebase_intern, &strings);
		assert_non_null(procs);
		for (int i = 0; i < NR + 3; i++) {
			int pid = i < NR ? pids[i] : chain[i - NR];

			m = td_procs_find(procs, pid, 0x1800, &proc);
			assert_non_null(m);
			m->obj = &strings;
			gen[i] = td_procs_gen(procs, pid);
		}
		/* Asked of a process that is not there: an entry with nothing read. */
		assert_null(td_procs_find(procs, 99999, 0x1800, &proc));
		assert_int_equal(strings.nr, NR + 3);
		/* All interned again into a new table, failing at the fail-th (none: past the end). */
		strings.base = strings.nr;
		strings.fail_at = strings.nr + fail;
		assert_int_equal(td_procs_rebase(procs), 1 + (fail < NR + 3));
		assert_int_equal(td_procs_gen(procs, 99999), 0);
		for (int i = 0; i < NR + 3; i++) {
			int pid = i < NR ? pids[i] : chain[i - NR];
			char want[32];

			if (!td_procs_gen(procs, pid)) {
				lost++;
				continue;
			}
			assert_int_not_equal(td_procs_gen(procs, pid), gen[i]);
			m = td_procs_find(procs, pid, 0x1800, &proc);
			assert_non_null(m);
			assert_null(m->obj);
			snprintf(want, sizeof(want), "/x/lib%d.so", pid);
			assert_string_equal(m->path, want);
			/* The new table's string, not the old one. */
			assert_ptr_not_equal(m->path, strings.s[i]);
		}
		assert_int_equal(lost, fail < NR + 3);
		td_procs_free(procs);
		rebase_strings_free(&strings);
	}
	for (int i = 0; i < NR + 3; i++) {
		int pid = i < NR ? pids[i] : chain[i - NR];

		snprintf(path, sizeof(path), "%s/%d/maps", root, pid);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%d", root, pid);
		rmdir(path);
	}
	rmdir(root);
}

static void write_maps(const char *root, int pid, const char *text, const char *exe)
{
	char path[PATH_MAX], target[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", root, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	/* /proc/PID/exe: the program it runs, a file of its own per program here */
	snprintf(path, sizeof(path), "%s/%d/exe", root, pid);
	snprintf(target, sizeof(target), "%s/%s", root, exe);
	f = fopen(target, "a");
	assert_non_null(f);
	fclose(f);
	unlink(path);
	assert_int_equal(symlink(target, path), 0);
}

/*
 * A process that execs another program keeps its pid. Its maps as read
 * before the exec keep naming what was written before it
 * (td_procs_exec(), td_procs_set_when()); told of an exec older than the
 * one it knows, nothing changes. When every exec is told
 * (td_procs_execs_known()), a re-read that finds another program
 * (/proc/PID/exe) before the exec is told keeps the old maps a second,
 * then takes the new ones; when not, it takes them at once.
 */
static void test_procs_exec(void **state)
{
	const char *old_maps = "400000-402000 r-xp 00000000 08:01 11 /x/old\n";
	const char *new_maps = "400000-402000 r-xp 00000000 08:01 22 /x/new\n"
			       "500000-501000 r-xp 00000000 08:01 23 /x/lib.so\n";
	struct rebase_strings strings = { .fail_at = -1 };
	char root[] = "/tmp/td-test-exec-XXXXXX", path[PATH_MAX];
	struct td_procs_stats st;
	struct td_procs *procs;
	struct td_mapping *m;
	struct td_proc *proc;
	uint64_t gen_old, gen_new;
	const int pid = 77;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/%d", root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	write_maps(root, pid, old_maps, "old");
	/* Re-read on a miss at once (a refresh period of 1 ns). */
	procs = td_procs_new(root, 1, rebase_intern, &strings);
	assert_non_null(procs);
	td_procs_execs_known(procs, true);
	m = td_procs_find(procs, pid, 0x401000, &proc);
	assert_non_null(m);
	assert_string_equal(m->path, "/x/old");
	gen_old = td_procs_gen(procs, pid);

	/* It execs; a miss reads the maps again before the exec is told. */
	write_maps(root, pid, new_maps, "new");
	assert_null(td_procs_find(procs, pid, 0x500800, &proc));
	m = td_procs_find(procs, pid, 0x401000, &proc);
	assert_non_null(m);
	assert_string_equal(m->path, "/x/old");
	assert_int_equal(td_procs_gen(procs, pid), gen_old);
	td_procs_get_stats(procs, &st);
	assert_true(st.exec_kept >= 1);

	/* The exec, at 1000: before it the old maps, from it the new ones. */
	assert_true(td_procs_exec(procs, pid, 1000));
	td_procs_set_when(procs, 999);
	m = td_procs_find(procs, pid, 0x401000, &proc);
	assert_non_null(m);
	assert_string_equal(m->path, "/x/old");
	assert_int_equal(td_procs_gen(procs, pid), gen_old);
	assert_null(td_procs_find(procs, pid, 0x500800, &proc));
	td_procs_set_when(procs, 1000);
	m = td_procs_find(procs, pid, 0x401000, &proc);
	assert_non_null(m);
	assert_string_equal(m->path, "/x/new");
	gen_new = td_procs_gen(procs, pid);
	assert_int_not_equal(gen_new, gen_old);
	m = td_procs_find(procs, pid, 0x500800, &proc);
	assert_non_null(m);
	assert_string_equal(m->path, "/x/lib.so");
	/* Asked for now (0): the new maps. And before the exec again: the old. */
	td_procs_set_when(procs, 0);
	assert_string_equal(td_procs_find(procs, pid, 0x401000, &proc)->path, "/x/new");
	td_procs_set_when(procs, 5);
	assert_string_equal(td_procs_find(procs, pid, 0x401000, &proc)->path, "/x/old");
	/* An older exec told late (another CPU's records): nothing changes. */
	assert_false(td_procs_exec(procs, pid, 900));
	td_procs_set_when(procs, 0);
	assert_string_equal(td_procs_find(procs, pid, 0x401000, &proc)->path, "/x/new");
	assert_int_equal(td_procs_gen(procs, pid), gen_new);
	td_procs_get_stats(procs, &st);
	assert_int_equal(st.execs, 1);
	/* Of a process never looked up: nothing to keep. */
	assert_false(td_procs_exec(procs, 78, 1000));

	/* Forgotten: no old maps either. */
	td_procs_forget(procs, pid);
	td_procs_set_when(procs, 5);
	assert_string_equal(td_procs_find(procs, pid, 0x401000, &proc)->path, "/x/new");

	/* No exec told: the other program's maps are taken after a second. */
	td_procs_set_when(procs, 0);
	write_maps(root, pid, old_maps, "old");
	assert_null(td_procs_find(procs, pid, 0x600000, &proc));
	assert_string_equal(td_procs_find(procs, pid, 0x401000, &proc)->path, "/x/new");
	usleep(1100 * 1000);
	assert_null(td_procs_find(procs, pid, 0x600000, &proc));
	assert_string_equal(td_procs_find(procs, pid, 0x401000, &proc)->path, "/x/old");

	/* Execs not all told: another program's maps are taken at once. */
	td_procs_execs_known(procs, false);
	write_maps(root, pid, new_maps, "new");
	assert_null(td_procs_find(procs, pid, 0x600000, &proc));
	assert_string_equal(td_procs_find(procs, pid, 0x401000, &proc)->path, "/x/new");

	td_procs_free(procs);
	rebase_strings_free(&strings);
	for (const char *f = "maps"; f; f = strcmp(f, "maps") ? NULL : "exe") {
		snprintf(path, sizeof(path), "%s/%d/%s", root, pid, f);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/old", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/new", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d", root, pid);
	rmdir(path);
	rmdir(root);
}

/*
 * A child forked by a known process and first met after its exec (a
 * shell's child): before the exec, its parent's maps; from it, its own.
 */
static void test_procs_fork(void **state)
{
	const char *shell_maps = "400000-402000 r-xp 00000000 08:01 11 /x/shell\n";
	const char *prog_maps = "400000-402000 r-xp 00000000 08:01 22 /x/prog\n";
	struct rebase_strings strings = { .fail_at = -1 };
	char root[] = "/tmp/td-test-fork-XXXXXX", path[PATH_MAX];
	const int shell = 80, child = 81, other = 82, thread = 83, gone = 84, late = 85, lost = 86;
	const int pids[] = { shell, child, other, late, lost };
	struct td_procs_stats st;
	struct td_procs *procs;
	struct td_proc *proc;
	struct td_mapping *m;

	(void)state;
	assert_non_null(mkdtemp(root));
	for (unsigned int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/%d", root, pids[i]);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	write_maps(root, shell, shell_maps, "shell");
	/* By the time their records are read, the children run the program. */
	write_maps(root, child, prog_maps, "prog");
	write_maps(root, other, prog_maps, "prog");
	procs = td_procs_new(root, 1, rebase_intern, &strings);
	assert_non_null(procs);

	/* Not every exec told: a fork changes nothing (/proc is read). */
	td_procs_fork(procs, shell, other, 100);
	assert_string_equal(td_procs_find(procs, other, 0x401000, &proc)->path, "/x/prog");
	td_procs_forget(procs, other);
	td_procs_execs_known(procs, true);

	/* The fork at 100, the exec at 300, told as their records are read. */
	td_procs_fork(procs, shell, child, 100);
	td_procs_fork(procs, shell, thread, 110);	/* a thread's: never asked for */
	assert_true(td_procs_exec(procs, child, 300));
	td_procs_set_when(procs, 200);
	m = td_procs_find(procs, child, 0x401000, &proc);
	assert_non_null(m);
	assert_string_equal(m->path, "/x/shell");
	assert_non_null(proc);
	td_procs_set_when(procs, 300);
	m = td_procs_find(procs, child, 0x401000, &proc);
	assert_non_null(m);
	assert_string_equal(m->path, "/x/prog");

	/* Met before its exec: the parent's maps until the exec is told. */
	td_procs_fork(procs, shell, other, 400);
	td_procs_set_when(procs, 450);
	assert_string_equal(td_procs_find(procs, other, 0x401000, &proc)->path, "/x/shell");
	assert_true(td_procs_exec(procs, other, 500));
	td_procs_set_when(procs, 450);
	assert_string_equal(td_procs_find(procs, other, 0x401000, &proc)->path, "/x/shell");
	td_procs_set_when(procs, 600);
	assert_string_equal(td_procs_find(procs, other, 0x401000, &proc)->path, "/x/prog");

	/* A known child, or one of a parent gone from /proc: nothing to copy. */
	td_procs_fork(procs, shell, other, 700);
	td_procs_fork(procs, 99, gone, 700);
	assert_false(td_procs_exec(procs, gone, 800));
	td_procs_set_when(procs, 0);
	assert_null(td_procs_find(procs, gone, 0x401000, &proc));
	td_procs_get_stats(procs, &st);
	assert_int_equal(st.fork_copies, 2);
	assert_int_equal(st.execs, 2);

	/* Its exec's record lost: the copy gives way to /proc after a second. */
	write_maps(root, lost, prog_maps, "prog");
	td_procs_fork(procs, shell, lost, 850);
	td_procs_set_when(procs, 0);
	assert_string_equal(td_procs_find(procs, lost, 0x401000, &proc)->path, "/x/shell");
	usleep(1100 * 1000);
	assert_string_equal(td_procs_find(procs, lost, 0x401000, &proc)->path, "/x/prog");

	/* The parent exec'd after the fork: the child has what it ran then. */
	write_maps(root, late, prog_maps, "prog");
	td_procs_fork(procs, shell, late, 900);
	write_maps(root, shell, prog_maps, "prog");
	assert_true(td_procs_exec(procs, shell, 950));
	assert_string_equal(td_procs_find(procs, late, 0x401000, &proc)->path, "/x/shell");
	assert_string_equal(td_procs_find(procs, shell, 0x401000, &proc)->path, "/x/prog");
	td_procs_get_stats(procs, &st);
	assert_int_equal(st.fork_copies, 4);

	td_procs_free(procs);
	rebase_strings_free(&strings);
	for (unsigned int i = 0; i < 5; i++) {
		for (const char *f = "maps"; f; f = strcmp(f, "maps") ? NULL : "exe") {
			snprintf(path, sizeof(path), "%s/%d/%s", root, pids[i], f);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s/%d", root, pids[i]);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/shell", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/prog", root);
	unlink(path);
	rmdir(root);
}

/* ---- cost of a cached lookup ------------------------------------------ */

struct lookup {
	int pid;
	uint64_t addr;
	const char *name;
};

static double time_lookups(struct td_symbolizer *sym, const struct lookup *l, size_t nr,
			   size_t rounds)
{
	struct timespec a, b;
	struct td_frame fr;
	size_t r, i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (r = 0; r < rounds; r++)
		for (i = 0; i < nr; i++)
			if (td_sym_user(sym, l[i].pid, l[i].addr + (r & 1), true, &fr) ||
			    !fr.symbol || strcmp(fr.symbol, l[i].name))
				fail_msg("%s: got %s", l[i].name, fr.symbol ? fr.symbol : "NULL");
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)(rounds * nr);
}

static void test_cached_lookup_cost(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	const struct lookup same_pid[] = {
		{ pie.pid, fx_get(&pie, "fx_alpha") + 1, "fx_alpha" },
		{ pie.pid, fx_get(&pie, "fx_beta") + 1, "fx_beta" },
		{ pie.pid, fx_get(&pie, "fx_lib_global") + 1, "fx_lib_global" },
		{ pie.pid, fx_get(&pie, "printf") + 1, "printf" },	/* libc, .dynsym */
		{ pie.pid, fx_get(&pie, "main") + 1, "main" },
	};
	const struct lookup mixed[] = {
		{ pie.pid, fx_get(&pie, "fx_alpha") + 1, "fx_alpha" },
		{ nopie.pid, fx_get(&nopie, "fx_beta") + 1, "fx_beta" },
		{ cxx.pid, fx_get(&cxx, "frob") + 1, "fxns::frob(int, char const*)" },
		{ pie.pid, fx_get(&pie, "printf") + 1, "printf" },
		{ link_fx.pid, fx_get(&link_fx, "main") + 1, "main" },
		{ nopie.pid, fx_get(&nopie, "fx_lib_global") + 1, "fx_lib_global" },
	};
	struct td_sym_stats before, after;
	double same, mix;

	/* Warm up: read maps, open objects, demangle. */
	time_lookups(sym, same_pid, 5, 1);
	time_lookups(sym, mixed, 6, 1);
	td_sym_get_stats(sym, &before);
	same = time_lookups(sym, same_pid, 5, 200000);
	mix = time_lookups(sym, mixed, 6, 200000);
	td_sym_get_stats(sym, &after);
	print_message("cached lookup: %.0f ns (same process), %.0f ns (alternating processes)\n",
		      same, mix);

	/* Nothing was read again... */
	assert_int_equal(after.maps_reads, before.maps_reads);
	assert_int_equal(after.objects, before.objects);
	assert_int_equal(after.symtabs, before.symtabs);
	assert_int_equal(after.user_unmapped, 0);
	/* ...and no lookup came near the cost of a maps read (tens of us). */
	assert_true(same < 10000);
	assert_true(mix < 10000);
	td_sym_free(sym);
}

/* ---- file identity: no process, only what the records say ------------ */

static const char bid_a_hex[] = "1111111111111111111111111111111111111111";

/* Build-id bytes from hex. */
static unsigned int bid_bytes(const char *hex, uint8_t *out)
{
	unsigned int n = 0;

	while (hex[0] && hex[1] && n < TD_FILE_BUILD_ID_MAX) {
		unsigned int b;

		assert_int_equal(sscanf(hex, "%2x", &b), 1);
		out[n++] = (uint8_t)b;
		hex += 2;
	}
	return n;
}

/* What a user_unwind_file record of @path and @hex would put in @ft as @id. */
static struct td_file *record_file(struct td_filetab *ft, uint32_t id, const char *path,
				   const char *hex)
{
	uint8_t bytes[TD_FILE_BUILD_ID_MAX];
	unsigned int n = hex ? bid_bytes(hex, bytes) : 0;

	assert_int_equal(td_filetab_add(ft, id, bytes, n, path, strlen(path)), 0);
	return td_filetab_get(ft, id);
}

/* The address `nm` gives @name in @path (the binary's own symbol table). */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[PATH_MAX + 64], line[512], sym[256], type;
	unsigned long long addr;
	uint64_t found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	assert_int_equal(pclose(p), 0);
	assert_true(found != 0);
	return found;
}

/*
 * A recorded path the daemon cannot see (the traced process's mount
 * namespace, a service's PrivateTmp) is found through /proc/PID/root of the
 * process that recorded it, and only then: here a fake proc root whose
 * 4242/root holds "ns" -> "/", the record saying "/ns/<fixture>".
 */
static void test_file_id_through_proc_root(void **state)
{
	char proc[] = "/tmp/td-procroot.XXXXXX", dir[PATH_MAX], link[PATH_MAX];
	char path[PATH_MAX], recorded[PATH_MAX + 8];
	struct td_sym_config cfg = { .proc_root = proc };
	struct td_filetab *ft = td_filetab_new(0);
	struct td_symbolizer *sym;
	struct td_sym_stats st;
	struct elf_expect ex;
	struct td_frame fr;
	struct td_file *f;

	assert_non_null(mkdtemp(proc));
	snprintf(dir, sizeof(dir), "%s/rootfs", proc);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(link, sizeof(link), "%s/rootfs/ns", proc);
	assert_int_equal(symlink("/", link), 0);
	snprintf(dir, sizeof(dir), "%s/4242", proc);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(link, sizeof(link), "%s/4242/root", proc);
	assert_int_equal(symlink("../rootfs", link), 0);
	sym = td_sym_new(&cfg);
	assert_non_null(sym);
	assert_non_null(ft);
	fx_path(path, "fx_fid_a");
	snprintf(recorded, sizeof(recorded), "/ns%s", path);
	f = record_file(ft, 3, recorded, bid_a_hex);
	elf_lookup(path, prog_funcs[0], &ex);

	/* No process: not at its path, nowhere else. */
	assert_int_equal(td_sym_file_id(sym, f, 0x10, ex.offset + 1, false, &fr), -ENOENT);
	assert_null(fr.symbol);
	/* Another process, whose root does not hold it */
	assert_int_equal(td_sym_file_id_pid(sym, f, 77, 0x10, ex.offset + 1, false, &fr),
			 -ENOENT);
	/* The recording process: found through its root, named */
	assert_int_equal(td_sym_file_id_pid(sym, f, 4242, 0x10, ex.offset + 1, false, &fr), 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, prog_funcs[0]);
	assert_string_equal(fr.object, recorded);	/* the path as recorded */
	assert_string_equal(fr.build_id, bid_a_hex);
	/* ... and from then on without a process too */
	assert_int_equal(td_sym_file_id(sym, f, 0x10, ex.offset + 1, false, &fr), 0);
	assert_string_equal(fr.symbol, prog_funcs[0]);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.files_proc_root, 1);
	assert_int_equal(st.files_resolved, 1);
	td_filetab_free(ft);
	td_sym_free(sym);

	/* Another build at the path seen through the root: never used. */
	sym = td_sym_new(&cfg);
	ft = td_filetab_new(0);
	assert_non_null(sym);
	assert_non_null(ft);
	f = record_file(ft, 3, recorded, "2222222222222222222222222222222222222222");
	assert_int_equal(td_sym_file_id_pid(sym, f, 4242, 0x10, ex.offset + 1, false, &fr),
			 -ENOENT);
	assert_null(fr.symbol);
	td_filetab_free(ft);
	td_sym_free(sym);

	snprintf(link, sizeof(link), "rm -rf '%s'", proc);
	assert_int_equal(system(link), 0);
}

/*
 * Recorded file id 3 at @path with build-id @hex (NULL: none), named once
 * by a new symbolizer on @cfg at file offset @off for process @pid (0:
 * td_sym_file_id()): its result, the symbol in @name ("" if none), the
 * symbolizer's counters in @st.
 */
static int name_once(const struct td_sym_config *cfg, const char *path, const char *hex,
		     int pid, uint64_t off, char name[128], struct td_sym_stats *st)
{
	struct td_symbolizer *sym = td_sym_new(cfg);
	struct td_filetab *ft = td_filetab_new(0);
	struct td_frame fr;
	struct td_file *f;
	int ret;

	assert_non_null(sym);
	assert_non_null(ft);
	f = record_file(ft, 3, path, hex);
	ret = pid ? td_sym_file_id_pid(sym, f, pid, 0x10, off, false, &fr)
		  : td_sym_file_id(sym, f, 0x10, off, false, &fr);
	snprintf(name, 128, "%s", fr.symbol ? fr.symbol : "");
	td_sym_get_stats(sym, st);
	td_filetab_free(ft);
	td_sym_free(sym);
	return ret;
}

/*
 * The same path, the recording process gone (a short-lived program in a
 * container): found through the root of a live process of another mount
 * namespace, and only with the recorded build-id. A fake proc root:
 * "self" and 100 share our namespace (one nsfs file, hard-linked), 200 is
 * in a namespace whose root lacks the file, 300 in one whose root has it
 * ("ns" -> "/"), 301 in that one too; 4242,
 * the recording process, has no entry.
 */
static void test_file_id_through_other_namespace(void **state)
{
	char proc[] = "/tmp/td-procns.XXXXXX", path[PATH_MAX], recorded[PATH_MAX + 8];
	char p1[PATH_MAX], p2[PATH_MAX];
	struct td_sym_config cfg = { .proc_root = proc };
	static const char *const procs[] = { "self", "100", "200", "300", "301" };
	/* Each process's namespace file (by index) and root. */
	static const int ns_file[] = { 0, 0, 1, 2, 2 };
	static const char *const roots[] = { "../empty", "../empty", "../empty", "../rootfs",
					     "../rootfs" };
	struct td_sym_stats st;
	struct elf_expect ex;
	char name[128];
	size_t i;

	assert_non_null(mkdtemp(proc));
	snprintf(p1, sizeof(p1), "%s/empty", proc);
	assert_int_equal(mkdir(p1, 0755), 0);
	snprintf(p1, sizeof(p1), "%s/rootfs", proc);
	assert_int_equal(mkdir(p1, 0755), 0);
	snprintf(p1, sizeof(p1), "%s/rootfs/ns", proc);
	assert_int_equal(symlink("/", p1), 0);
	for (i = 0; i < 3; i++) {
		snprintf(p1, sizeof(p1), "%s/nsfile%zu", proc, i);
		assert_int_equal(close(open(p1, O_CREAT | O_WRONLY, 0644)), 0);
	}
	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		snprintf(p1, sizeof(p1), "%s/%s", proc, procs[i]);
		assert_int_equal(mkdir(p1, 0755), 0);
		snprintf(p1, sizeof(p1), "%s/%s/ns", proc, procs[i]);
		assert_int_equal(mkdir(p1, 0755), 0);
		snprintf(p1, sizeof(p1), "%s/nsfile%d", proc, ns_file[i]);
		snprintf(p2, sizeof(p2), "%s/%s/ns/mnt", proc, procs[i]);
		assert_int_equal(link(p1, p2), 0);
		snprintf(p2, sizeof(p2), "%s/%s/root", proc, procs[i]);
		assert_int_equal(symlink(roots[i], p2), 0);
	}
	fx_path(path, "fx_fid_a");
	snprintf(recorded, sizeof(recorded), "/ns%s", path);
	elf_lookup(path, prog_funcs[0], &ex);

	/* Through 300's root (or 301's: the same namespace), named. */
	assert_int_equal(name_once(&cfg, recorded, bid_a_hex, 4242, ex.offset + 1, name, &st), 0);
	assert_string_equal(name, prog_funcs[0]);
	assert_int_equal(st.files_other_ns, 1);
	assert_int_equal(st.files_proc_root, 0);
	/* No process given (a recording read later): /proc is not asked. */
	assert_int_equal(name_once(&cfg, recorded, bid_a_hex, 0, ex.offset + 1, name, &st),
			 -ENOENT);
	assert_string_equal(name, "");
	/* No build-id recorded: a path alone could name another file. */
	assert_int_equal(name_once(&cfg, recorded, NULL, 4242, ex.offset + 1, name, &st), -ENOENT);
	assert_string_equal(name, "");
	/* Another build at the path there: never used. */
	assert_int_equal(name_once(&cfg, recorded, "2222222222222222222222222222222222222222",
				   4242, ex.offset + 1, name, &st), -ENOENT);
	assert_string_equal(name, "");
	assert_int_equal(st.files_other_ns, 0);

	snprintf(p1, sizeof(p1), "rm -rf '%s'", proc);
	assert_int_equal(system(p1), 0);
}

/*
 * fx_pie's fx_alpha at file offset @off of @file, named through process
 * @pid without CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE (as the service
 * runs: /proc/PID/exe, no map_files), its object the recorded @object.
 */
static void assert_program_named_as_service(struct td_symbolizer *sym, struct td_file *file,
					    int pid, uint64_t off, const char *object)
{
	struct td_frame fr;
	int ret;

	assert_int_equal(set_cap(CAP_SYS_ADMIN, false), 0);
	assert_int_equal(set_cap(CAP_CHECKPOINT_RESTORE, false), 0);
	ret = td_sym_file_id_pid(sym, file, pid, 0x10, off, false, &fr);
	assert_int_equal(set_cap(CAP_SYS_ADMIN, true), 0);
	assert_int_equal(set_cap(CAP_CHECKPOINT_RESTORE, true), 0);
	assert_int_equal(ret, 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "fx_alpha");
	assert_string_equal(fr.object, object);
}

/*
 * Files replaced while their process runs (an upgrade): the records say
 * "PATH (deleted)", another build is at PATH now. The program is named
 * through /proc/PID/exe, which needs no CAP_SYS_ADMIN (dropped for it),
 * its library through map_files; the build-id is checked, and another
 * process (not mapping them) does not find them.
 */
static void test_file_id_replaced_while_running(void **state)
{
	char dir[] = "/tmp/td-test-upgrade-XXXXXX", exe[PATH_MAX], lib[PATH_MAX];
	char orig[PATH_MAX], other[PATH_MAX], rec_exe[PATH_MAX + 16], rec_lib[PATH_MAX + 16];
	char bid_exe[256], bid_lib[256];
	struct td_filetab *ft = td_filetab_new(0);
	struct td_symbolizer *sym;
	struct elf_expect ex_exe, ex_lib;
	struct td_file *fe, *fl;
	struct td_frame fr;
	struct fx f;

	if (geteuid())
		skip();	/* map_files needs CAP_SYS_ADMIN */
	assert_non_null(ft);
	assert_non_null(mkdtemp(dir));
	snprintf(exe, sizeof(exe), "%s/fx_pie", dir);
	snprintf(lib, sizeof(lib), "%s/libfx.so", dir);
	fx_path(orig, "fx_pie");
	readelf_build_id(orig, bid_exe, sizeof(bid_exe));
	elf_lookup(orig, "fx_alpha", &ex_exe);
	copy_file(orig, exe);
	fx_path(orig, "libfx.so");
	readelf_build_id(orig, bid_lib, sizeof(bid_lib));
	elf_lookup(orig, "fx_lib_global", &ex_lib);
	copy_file(orig, lib);
	assert_true(bid_exe[0] && bid_lib[0]);

	assert_int_equal(fx_spawn(&f, dir, "fx_pie", NULL), 0);
	/* The upgrade: other builds renamed over both. */
	fx_path(orig, "fx_nopie");
	snprintf(other, sizeof(other), "%s/new", dir);
	copy_file(orig, other);
	assert_int_equal(rename(other, exe), 0);
	fx_path(orig, "libfx_dl.so");
	copy_file(orig, other);
	assert_int_equal(rename(other, lib), 0);
	snprintf(rec_exe, sizeof(rec_exe), "%s (deleted)", exe);
	snprintf(rec_lib, sizeof(rec_lib), "%s (deleted)", lib);
	fe = record_file(ft, 1, rec_exe, bid_exe);
	fl = record_file(ft, 2, rec_lib, bid_lib);

	/*
	 * No debug directory holds them: not at the path (another build), nor
	 * for a process that does not map them.
	 */
	sym = new_sym(0, "no-debug-dir");
	assert_int_equal(td_sym_file_id_pid(sym, fe, getpid(), 0x10, ex_exe.offset + 1, false,
					    &fr), -ENOENT);
	assert_int_equal(td_sym_file_id_pid(sym, fl, getpid(), 0x10, ex_lib.offset + 1, false,
					    &fr), -ENOENT);
	td_sym_free(sym);

	sym = new_sym(0, "no-debug-dir");
	assert_program_named_as_service(sym, fe, f.pid, ex_exe.offset + 1, rec_exe);
	assert_int_equal(td_sym_file_id_pid(sym, fl, f.pid, 0x10, ex_lib.offset + 1, false, &fr),
			 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "fx_lib_global");
	assert_string_equal(fr.object, rec_lib);
	/* Recorded before the upgrade (no " (deleted)"), read after it: the same file. */
	fl = record_file(ft, 3, lib, bid_lib);
	assert_int_equal(td_sym_file_id_pid(sym, fl, f.pid, 0x10, ex_lib.offset + 1, false, &fr),
			 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "fx_lib_global");
	assert_string_equal(fr.object, lib);
	/* And the program, by the service (no CAP_SYS_ADMIN): through exe alone. */
	fe = record_file(ft, 4, exe, bid_exe);
	assert_program_named_as_service(sym, fe, f.pid, ex_exe.offset + 1, exe);
	td_sym_free(sym);

	fx_stop(&f);
	td_filetab_free(ft);
	unlink(exe);
	unlink(lib);
	rmdir(dir);
}

/* fx_fid_a never ran: its frames are named from path + build-id + offset alone. */
static void test_file_id_named(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	struct td_filetab *ft = td_filetab_new(0);
	char path[PATH_MAX];
	struct td_sym_stats st;
	struct elf_expect ex;
	struct td_frame fr;
	struct td_file *f;
	size_t i;

	assert_non_null(ft);
	fx_path(path, "fx_fid_a");
	f = record_file(ft, 3, path, bid_a_hex);
	for (i = 0; i < ARRAY_SIZE(prog_funcs); i++) {
		elf_lookup(path, prog_funcs[i], &ex);
		assert_int_equal(ex.vaddr, nm_addr(path, prog_funcs[i]));
		assert_int_equal(td_sym_file_id(sym, f, 0x5000 + ex.offset, ex.offset + 1, false,
						&fr), 0);
		assert_int_equal(fr.addr, 0x5000 + ex.offset);
		assert_non_null(fr.symbol);
		assert_string_equal(fr.symbol, prog_funcs[i]);
		assert_int_equal(fr.sym_offset, 1);
		assert_string_equal(fr.object, path);
		assert_int_equal(fr.file_offset, ex.offset + 1);
		assert_string_equal(fr.build_id, bid_a_hex);
		assert_int_equal(fr.file_id, 3);
		assert_int_equal(fr.file_kind, TD_FILE_IN);
		/* A return address at the function's start belongs to its caller. */
		assert_int_equal(td_sym_file_id(sym, f, 0, ex.offset, true, &fr), 0);
		assert_true(!fr.symbol || strcmp(fr.symbol, prog_funcs[i]));
	}
	td_sym_get_stats(sym, &st);
	/* Resolved once, however many frames. */
	assert_int_equal(st.files_resolved, 1);
	assert_int_equal(st.files_at_path, 1);
	assert_int_equal(st.files_mismatch, 0);
	assert_int_equal(st.fileid_lookups, 2 * ARRAY_SIZE(prog_funcs));
	assert_int_equal(st.maps_reads, 0);
	td_filetab_free(ft);
	td_sym_free(sym);
}

/* The path now holds another build (other build-id): never used to name. */
static void test_file_id_build_id_mismatch(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	struct td_filetab *ft = td_filetab_new(0);
	char path_a[PATH_MAX], path_b[PATH_MAX];
	struct elf_expect ex_a, ex_b;
	struct td_sym_stats st;
	struct td_frame fr;
	struct td_file *f;

	assert_non_null(ft);
	fx_path(path_a, "fx_fid_a");
	fx_path(path_b, "fx_fid_b");
	elf_lookup(path_a, "fx_beta", &ex_a);
	elf_lookup(path_b, "fx_beta", &ex_b);
	/* fx_fid_b has its functions elsewhere: its names at a's offsets would be wrong. */
	assert_true(ex_a.offset != ex_b.offset);
	f = record_file(ft, 1, path_b, bid_a_hex);
	assert_int_equal(td_sym_file_id(sym, f, 0x1234, ex_a.offset, false, &fr), -ENOENT);
	assert_null(fr.symbol);
	assert_int_equal(fr.addr, 0x1234);
	assert_string_equal(fr.object, path_b);
	assert_int_equal(fr.file_offset, ex_a.offset);
	assert_string_equal(fr.build_id, bid_a_hex);
	assert_int_equal(fr.file_id, 1);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.files_mismatch, 1);
	assert_int_equal(st.files_missing, 1);

	/* Recorded without a build-id: a file that has one is not that file either. */
	f = record_file(ft, 2, path_b, NULL);
	assert_int_equal(td_sym_file_id(sym, f, 0x1234, ex_b.offset, false, &fr), -ENOENT);
	assert_null(fr.symbol);
	assert_null(fr.build_id);
	td_filetab_free(ft);
	td_sym_free(sym);
}

/* The binary moved away, its debug file kept by build-id: that names it. */
static void test_file_id_debug_dir(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	struct td_filetab *ft = td_filetab_new(0);
	char full[PATH_MAX], gone[PATH_MAX], bid_hex[256];
	struct td_sym_stats st;
	struct elf_expect ex;
	struct td_frame fr;
	struct td_file *f;
	size_t i;

	assert_non_null(ft);
	fx_path(full, "fx_bid.full");
	fx_path(gone, "moved-away/fx_bid");
	assert_true(access(gone, F_OK));
	readelf_build_id(full, bid_hex, sizeof(bid_hex));
	assert_true(strlen(bid_hex) == 40);
	f = record_file(ft, 12, gone, bid_hex);
	/* The debug file has no code: file offsets come from its program headers' layout. */
	for (i = 0; i < ARRAY_SIZE(prog_funcs); i++) {
		elf_lookup(full, prog_funcs[i], &ex);
		assert_int_equal(ex.vaddr, nm_addr(full, prog_funcs[i]));
		assert_int_equal(td_sym_file_id(sym, f, 0x7000, ex.offset + 2, false, &fr), 0);
		assert_non_null(fr.symbol);
		assert_string_equal(fr.symbol, prog_funcs[i]);
		assert_int_equal(fr.sym_offset, 2);
		assert_string_equal(fr.object, gone);
		assert_string_equal(fr.build_id, bid_hex);
	}
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.files_debug_dir, 1);
	assert_int_equal(st.files_mismatch, 0);
	td_filetab_free(ft);
	td_sym_free(sym);
}

/* After a test that set DEBUGINFOD_*: the URLs it found (@saved, freed), its cache gone. */
static void dbgd_env_restore(char *saved)
{
	if (saved)
		setenv("DEBUGINFOD_URLS", saved, 1);
	else
		unsetenv("DEBUGINFOD_URLS");
	free(saved);
	unsetenv("DEBUGINFOD_CACHE_PATH");
	unsetenv("DEBUGINFOD_TIMEOUT");
	assert_int_equal(system("rm -rf /tmp/td-dbgd-[0-9]*"), 0);
}

/* Found nowhere: debuginfod only with DEBUGINFOD_URLS, never without. */
static void test_file_id_debuginfod_opt_in(void **state)
{
	static const char nowhere_bid[] = "3333333333333333333333333333333333333333";
	char *saved = getenv("DEBUGINFOD_URLS") ? strdup(getenv("DEBUGINFOD_URLS")) : NULL;
	char cache[PATH_MAX];
	struct td_symbolizer *sym;
	struct td_filetab *ft = td_filetab_new(0);
	struct td_sym_stats st;
	struct td_frame fr;
	struct td_file *f;

	assert_non_null(ft);
	f = record_file(ft, 1, "/nonexistent/libgone.so", nowhere_bid);
	unsetenv("DEBUGINFOD_URLS");
	sym = new_sym(0, "debug");
	assert_int_equal(td_sym_file_id(sym, f, 0x10, 0x10, false, &fr), -ENOENT);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.debuginfod_queries, 0);
	assert_int_equal(st.files_missing, 1);
	td_sym_free(sym);

	setenv("DEBUGINFOD_URLS", "", 1);
	sym = new_sym(0, "debug");
	assert_int_equal(td_sym_file_id(sym, f, 0x10, 0x10, false, &fr), -ENOENT);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.debuginfod_queries, 0);
	td_sym_free(sym);

	/* Set: asked (a port nothing listens on, a private cache), and still no name. */
	snprintf(cache, sizeof(cache), "/tmp/td-dbgd-%d", (int)getpid());
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_TIMEOUT", "2", 1);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:9", 1);
	sym = new_sym(0, "debug");
	assert_int_equal(td_sym_file_id(sym, f, 0x10, 0x10, false, &fr), -ENOENT);
	assert_null(fr.symbol);
	/* Cached: a second frame of the file does not ask again. */
	assert_int_equal(td_sym_file_id(sym, f, 0x20, 0x20, false, &fr), -ENOENT);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.debuginfod_queries, 1);
	td_sym_free(sym);

	dbgd_env_restore(saved);
	td_filetab_free(ft);
}

/*
 * A debuginfod server of one file, for test_file_id_debuginfod_served():
 * GET /buildid/@hex/debuginfo answers @file, anything else 404, one
 * request per connection, in a child process until killed. Returns its
 * pid and sets *@port.
 */
static pid_t serve_debuginfo(const char *hex, const char *file, int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	pid_t pid, parent;
	char want[128];
	int ls, fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(ls >= 0);
	assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(ls, 4), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	snprintf(want, sizeof(want), "GET /buildid/%s/debuginfo ", hex);
	parent = getpid();
	pid = fork();
	assert_true(pid >= 0);
	if (pid) {
		close(ls);
		return pid;
	}
	/*
	 * Gone with the test, should an assertion end it first; and never
	 * holding the output the test runner reads to its end.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	alarm(120);
	fd = open("/dev/null", O_RDWR);
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(1);
	close(fd);
	for (;;) {
		char req[4096], head[128], body[65536];
		int c = accept(ls, NULL, NULL);
		ssize_t n, got = 0;
		struct stat st;

		if (c < 0)
			_exit(1);
		/* The request line is all that matters; its headers end it. */
		while (got < (ssize_t)sizeof(req) - 1 &&
		       (n = read(c, req + got, sizeof(req) - 1 - got)) > 0) {
			got += n;
			req[got] = '\0';
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		req[got > 0 ? got : 0] = '\0';
		fd = strncmp(req, want, strlen(want)) ? -1 : open(file, O_RDONLY);
		if (fd < 0 || fstat(fd, &st)) {
			dprintf(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
				   "Connection: close\r\n\r\n");
		} else {
			snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %lld\r\n"
				 "Connection: close\r\n\r\n", (long long)st.st_size);
			if (write(c, head, strlen(head)) < 0)
				_exit(1);
			while ((n = read(fd, body, sizeof(body))) > 0)
				if (write(c, body, n) != n)
					_exit(1);
		}
		if (fd >= 0)
			close(fd);
		close(c);
	}
}

/*
 * The binary moved away, no debug file here: a debuginfod server has it
 * (libdebuginfod, loaded when first asked for), and names the frames.
 */
static void test_file_id_debuginfod_served(void **state)
{
	char full[PATH_MAX], gone[PATH_MAX], debug[PATH_MAX], bid_hex[256], url[64], cache[64];
	char *saved = getenv("DEBUGINFOD_URLS") ? strdup(getenv("DEBUGINFOD_URLS")) : NULL;
	struct td_symbolizer *sym;
	struct td_filetab *ft = td_filetab_new(0);
	struct td_sym_stats st;
	struct elf_expect ex;
	struct td_frame fr;
	struct td_file *f;
	int port, status;
	pid_t server;

	assert_non_null(ft);
	fx_path(full, "fx_bid.full");
	fx_path(gone, "moved-away/fx_bid");
	readelf_build_id(full, bid_hex, sizeof(bid_hex));
	assert_true(strlen(bid_hex) == 40);
	/* Where the fixtures keep it by build-id: served, not found here (no debug dir). */
	snprintf(debug, sizeof(debug), "%.*s/debug/.build-id/%.2s/%s.debug",
		 (int)(strrchr(full, '/') - full), full, bid_hex, bid_hex + 2);
	assert_int_equal(access(debug, R_OK), 0);
	server = serve_debuginfo(bid_hex, debug, &port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	snprintf(cache, sizeof(cache), "/tmp/td-dbgd-%d", (int)getpid());
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_TIMEOUT", "10", 1);
	setenv("DEBUGINFOD_URLS", url, 1);

	sym = new_sym(0, "no-debug-dir");
	f = record_file(ft, 12, gone, bid_hex);
	elf_lookup(full, prog_funcs[0], &ex);
	assert_int_equal(td_sym_file_id(sym, f, 0x7000, ex.offset + 2, false, &fr), 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, prog_funcs[0]);
	assert_int_equal(fr.sym_offset, 2);
	assert_string_equal(fr.object, gone);
	/* Another function of the file: no second question. */
	elf_lookup(full, prog_funcs[1], &ex);
	assert_int_equal(td_sym_file_id(sym, f, 0x7000, ex.offset, false, &fr), 0);
	assert_string_equal(fr.symbol, prog_funcs[1]);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.debuginfod_queries, 1);
	assert_int_equal(st.files_debuginfod, 1);
	assert_int_equal(st.files_debug_dir, 0);
	td_sym_free(sym);

	kill(server, SIGKILL);
	assert_int_equal(waitpid(server, &status, 0), server);
	dbgd_env_restore(saved);
	td_filetab_free(ft);
}

/* td_sym_ufile: every kind of frame, an unknown id never named. */
static void test_file_id_frames(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	struct td_filetab *ft = td_filetab_new(0);
	char path[PATH_MAX];
	struct td_sym_stats st;
	struct elf_expect ex;
	struct td_ufile uf;
	struct td_frame fr;

	assert_non_null(ft);
	fx_path(path, "fx_fid_a");
	elf_lookup(path, "fx_alpha", &ex);
	record_file(ft, 5, path, bid_a_hex);

	uf = (struct td_ufile){ .kind = TD_FILE_IN, .id = 5, .offset = ex.offset };
	td_sym_ufile(sym, ft, &uf, 0xaaaa, false, &fr);
	assert_string_equal(fr.symbol, "fx_alpha");
	assert_int_equal(fr.addr, 0xaaaa);
	/* The same without symbolizing: what the record says, nothing opened. */
	td_sym_ufile(NULL, ft, &uf, 0xaaaa, false, &fr);
	assert_null(fr.symbol);
	assert_string_equal(fr.object, path);
	assert_string_equal(fr.build_id, bid_a_hex);
	assert_int_equal(fr.file_offset, ex.offset);

	/* Id 6 was never described: unknown, even though 5 is known. */
	uf.id = 6;
	td_sym_ufile(sym, ft, &uf, 0xaaaa, false, &fr);
	assert_null(fr.symbol);
	assert_null(fr.object);
	assert_null(fr.build_id);
	assert_int_equal(fr.file_id, 6);
	assert_int_equal(fr.file_kind, TD_FILE_IN);
	assert_int_equal(fr.file_offset, ex.offset);
	td_sym_ufile(sym, NULL, &uf, 0xaaaa, false, &fr);
	assert_null(fr.object);

	uf = (struct td_ufile){ .kind = TD_FILE_VDSO };
	td_sym_ufile(sym, ft, &uf, 0xbbbb, true, &fr);
	assert_string_equal(fr.object, "[vdso]");
	assert_null(fr.symbol);
	assert_int_equal(fr.file_kind, TD_FILE_VDSO);
	uf = (struct td_ufile){ .kind = TD_FILE_ANON };
	td_sym_ufile(sym, ft, &uf, 0xcccc, true, &fr);
	assert_null(fr.object);
	assert_int_equal(fr.addr, 0xcccc);
	assert_int_equal(fr.file_kind, TD_FILE_ANON);
	uf = (struct td_ufile){ .kind = TD_FILE_UNRECORDED };
	td_sym_ufile(sym, ft, &uf, 0xdddd, true, &fr);
	assert_null(fr.object);
	assert_int_equal(fr.file_kind, TD_FILE_UNRECORDED);

	td_sym_get_stats(sym, &st);
	assert_int_equal(st.fileid_unknown, 2);
	assert_int_equal(st.fileid_named, 1);
	assert_int_equal(st.maps_reads, 0);
	td_filetab_free(ft);
	td_sym_free(sym);
}

/* ---- setup ------------------------------------------------------------ */

static int group_setup(void **state)
{
	char exe[PATH_MAX], dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -1;
	exe[n] = '\0';
	/* $(BUILD)/tests/test_symbolize -> $(BUILD)/fixtures */
	if (snprintf(dir, sizeof(dir), "%s/../fixtures", dirname(exe)) >= (int)sizeof(dir))
		return -1;
	if (!realpath(dir, fxdir)) {
		fprintf(stderr, "no fixtures in %s\n", dir);
		return -1;
	}
	if (fx_start(&pie, "fx_pie") || fx_start(&nopie, "fx_nopie") ||
	    fx_start(&link_fx, "fx_link") || fx_start(&badcrc, "fx_badcrc") ||
	    fx_start(&bid, "fx_bid") || fx_start(&cxx, "fx_cxx")) {
		fprintf(stderr, "cannot start the fixtures in %s\n", fxdir);
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	fx_stop(&pie);
	fx_stop(&nopie);
	fx_stop(&link_fx);
	fx_stop(&badcrc);
	fx_stop(&bid);
	fx_stop(&cxx);
	return 0;
}

/*
 * A path from a trace may name a FIFO or a device: refused without
 * blocking (a FIFO with no writer would block open() forever; the alarm
 * turns such a hang into a failure), and never opened: opening a device
 * is an action (a watchdog armed). A writer waiting on the FIFO would be
 * let through by any open for reading; it must still wait after.
 */
static void test_file_not_regular(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	struct td_filetab *ft = td_filetab_new(0);
	char fifo[64];
	struct td_frame fr;
	struct td_file *f;
	pid_t writer;
	int status;

	assert_non_null(ft);
	snprintf(fifo, sizeof(fifo), "/tmp/td-fifo-%d", (int)getpid());
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	writer = fork();
	assert_true(writer >= 0);
	if (!writer) {
		int fd = open(fifo, O_WRONLY);	/* waits for a reader */

		_exit(fd >= 0 ? 3 : 4);
	}
	/* The writer in its open() first: a reader that came and went before lets none through. */
	nanosleep(&(struct timespec){ 0, 200 * 1000 * 1000 }, NULL);
	alarm(10);
	assert_int_equal(td_sym_file(sym, fifo, 0x1000, &fr), -ENOENT);
	assert_null(fr.symbol);
	assert_int_equal(td_sym_file(sym, "/dev/zero", 0x1000, &fr), -ENOENT);
	f = record_file(ft, 3, fifo, "4444444444444444444444444444444444444444");
	assert_int_equal(td_sym_file_id(sym, f, 0x10, 0x10, false, &fr), -ENOENT);
	assert_null(fr.symbol);
	alarm(0);
	nanosleep(&(struct timespec){ 0, 200 * 1000 * 1000 }, NULL);
	assert_int_equal(waitpid(writer, &status, WNOHANG), 0);	/* nobody opened it */
	kill(writer, SIGKILL);
	assert_int_equal(waitpid(writer, &status, 0), writer);
	unlink(fifo);
	td_filetab_free(ft);
	td_sym_free(sym);
}

/*
 * A caller naming frames with strings of its own (trace-defer report, the
 * tep's kernel symbols) gets a strings_id no symbolizer and no other
 * caller has: writers' caches keyed by it never mix the two.
 */
static void test_strings_id_new(void **state)
{
	struct td_symbolizer *sym = new_sym(0, "debug");
	uint64_t a = td_strings_id_new(), b = td_strings_id_new();
	struct td_frame fr;

	(void)state;
	td_sym_kernel(sym, 0xffffffff81000000ULL, false, &fr);
	assert_int_not_equal(fr.strings_id, 0);
	assert_int_not_equal(a, 0);
	assert_int_not_equal(b, 0);
	assert_int_not_equal(a, b);
	assert_int_not_equal(a, fr.strings_id);
	assert_int_not_equal(b, fr.strings_id);
	td_sym_free(sym);
	/* Nor one a symbolizer made later gets. */
	sym = new_sym(0, "debug");
	td_sym_kernel(sym, 0xffffffff81000000ULL, false, &fr);
	assert_int_not_equal(fr.strings_id, a);
	assert_int_not_equal(fr.strings_id, b);
	td_sym_free(sym);
}

/*
 * td_sym_restart(): everything learnt of files and JIT maps is freed
 * (held_bytes back to the kept maps' paths), the kernel's symbols and the
 * processes' maps stay, frames come out named as before with a new
 * strings_id, and the maps generation never repeats one handed out before
 * the restart.
 */
static void test_restart(void **state)
{
	char dir[] = "/tmp/td-perfmap-XXXXXX", path[PATH_MAX], ksyms[64];
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	struct td_sym_config cfg = { .perfmap_dir = dir, .kallsyms = ksyms };
	uint64_t alpha = fx_get(&pie, "fx_alpha"), gen, sid, reads, procs;
	struct td_symbolizer *sym;
	struct td_sym_stats st;
	struct td_frame fr;
	int round;

	(void)state;
	assert_true(code != MAP_FAILED);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, getpid());
	append_file(path, "%" PRIx64 " 40 jit_fn\n", (uint64_t)(uintptr_t)code);
	write_file(ksyms, "ffffffff81000000 T _stext\nffffffff81001000 t first_func\n");
	sym = td_sym_new(&cfg);
	assert_non_null(sym);
	gen = sid = 0;
	for (round = 0; round < 2; round++) {
		assert_int_equal(td_sym_user(sym, pie.pid, alpha, false, &fr), 0);
		assert_string_equal(fr.symbol, "fx_alpha");
		assert_string_equal(fr.object, pie.path);
		assert_int_not_equal(fr.strings_id, sid);
		sid = fr.strings_id;
		assert_int_not_equal(td_sym_maps_gen(sym, pie.pid), 0);
		assert_int_not_equal(td_sym_maps_gen(sym, pie.pid), gen);
		gen = td_sym_maps_gen(sym, pie.pid);
		assert_int_equal(td_sym_user(sym, getpid(), (uintptr_t)code + 8, false, &fr), 0);
		assert_string_equal(fr.symbol, "jit_fn");
		assert_int_equal(fr.strings_id, sid);
		assert_int_equal(td_sym_kernel(sym, 0xffffffff81001010ULL, false, &fr), 0);
		assert_string_equal(fr.symbol, "first_func");
		assert_int_equal(fr.strings_id, sid);

		td_sym_get_stats(sym, &st);
		assert_int_equal(st.restarts, round);
		/* Counted since td_sym_new(), across restarts. */
		assert_true(st.maps_reads >= (uint64_t)round + 1);
		reads = st.maps_reads;
		assert_true(st.objects >= 1);
		assert_true(st.symtabs >= 1);
		assert_true(st.strings >= 3);
		/* The fixture's symbol table alone is more than its names. */
		assert_true(st.held_bytes > st.string_bytes);
		assert_int_equal(st.held_bytes, td_sym_held_bytes(sym));
		procs = st.processes;
		assert_int_equal(procs, 2);

		assert_int_equal(td_sym_restart(sym), 0);
		td_sym_get_stats(sym, &st);
		assert_int_equal(st.restarts, round + 1);
		assert_int_equal(st.maps_reads, reads);
		/* Only the kept maps' paths, interned again. */
		assert_true(st.strings >= 1);
		assert_int_equal(st.held_bytes, st.string_bytes);
		assert_int_equal(st.objects, 0);
		assert_int_equal(st.symtabs, 0);
		assert_int_equal(st.processes, procs);
		assert_int_not_equal(td_sym_maps_gen(sym, pie.pid), 0);
		assert_int_not_equal(td_sym_maps_gen(sym, pie.pid), gen);
	}
	/* The kept maps were enough: not read again. */
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.maps_reads, reads);
	td_sym_free(sym);
	unlink(ksyms);
	unlink(path);
	rmdir(dir);
	munmap(code, page);
}

/*
 * A process that exited (reaped: its /proc entry is gone) after its maps
 * were read, and before all its records were named: a restart in between
 * must not leave them unnamed.
 */
static void test_restart_exited(void **state)
{
	struct td_symbolizer *sym = td_sym_new(NULL);
	uint64_t alpha;
	struct td_frame fr;
	struct fx f;
	pid_t pid;

	(void)state;
	assert_non_null(sym);
	assert_int_equal(fx_spawn(&f, NULL, "fx_nopie", NULL), 0);
	alpha = fx_get(&f, "fx_alpha");
	pid = f.pid;
	assert_int_equal(td_sym_user(sym, pid, alpha, false, &fr), 0);
	assert_string_equal(fr.symbol, "fx_alpha");
	fx_stop(&f);
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(td_sym_restart(sym), 0);
	assert_int_equal(td_sym_user(sym, pid, alpha, false, &fr), 0);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "fx_alpha");
	assert_non_null(strstr(fr.object, "fx_nopie"));
	td_sym_free(sym);
}

/*
 * td_sym_kernel_reload(): kallsyms read again names a module loaded since
 * (before, its address took the name of the module below it); the frames
 * handed out before stay readable (the old table is kept until a
 * restart); an unchanged kallsyms changes nothing.
 */
static void test_kernel_reload(void **state)
{
	static const char before[] = "ffffffff81000000 T _stext\n"
				     "ffffffff81001000 t first_func\n"
				     "ffffffffc0000000 t old_mod_fn\t[oldmod]\n";
	struct td_sym_stats st;
	struct td_symbolizer *sym;
	struct td_frame old, fr;
	uint64_t held;
	char path[64];
	FILE *f;

	(void)state;
	write_file(path, before);
	sym = kallsyms_sym(path);
	assert_int_equal(td_sym_kernel_reload(sym), 0);	/* nothing read yet */
	assert_int_equal(td_sym_kernel(sym, 0xffffffffc0002010ULL, false, &old), 0);
	assert_string_equal(old.symbol, "old_mod_fn");
	held = td_sym_held_bytes(sym);
	assert_int_equal(td_sym_kernel_reload(sym), 0);
	assert_int_equal(td_sym_held_bytes(sym), held);

	/* newmod is loaded right above oldmod. */
	f = fopen(path, "a");
	assert_non_null(f);
	fputs("ffffffffc0002000 t new_mod_fn\t[newmod]\n", f);
	fclose(f);
	assert_int_equal(td_sym_kernel_reload(sym), 1);
	assert_int_equal(td_sym_kernel(sym, 0xffffffffc0002010ULL, false, &fr), 0);
	assert_string_equal(fr.symbol, "new_mod_fn");
	assert_string_equal(fr.object, "[newmod]");
	assert_int_equal(fr.sym_offset, 0x10);
	assert_int_equal(fr.strings_id, old.strings_id);
	assert_string_equal(old.symbol, "old_mod_fn");
	assert_string_equal(old.object, "[oldmod]");
	assert_true(td_sym_held_bytes(sym) > held);
	td_sym_get_stats(sym, &st);
	assert_int_equal(st.kernel_reloads, 1);
	assert_int_equal(td_sym_kernel_reload(sym), 0);

	/* A restart frees the old table; the current one names on. */
	assert_int_equal(td_sym_restart(sym), 0);
	assert_int_equal(td_sym_held_bytes(sym), 0);
	assert_int_equal(td_sym_kernel(sym, 0xffffffff81001004ULL, false, &fr), 0);
	assert_string_equal(fr.symbol, "first_func");
	td_sym_free(sym);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings_id_new),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_restart_exited),
		cmocka_unit_test(test_kernel_reload),
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_shared_lib),
		cmocka_unit_test(test_return_addr),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_debuglink_bad_crc),
		cmocka_unit_test(test_build_id_debug_dir),
		cmocka_unit_test(test_cxx_demangle),
		cmocka_unit_test(test_jit_perfmap),
		cmocka_unit_test(test_jit_perfmap_watched),
		cmocka_unit_test(test_jit_perfmap_late_line),
		cmocka_unit_test(test_perfmap_older),
		cmocka_unit_test(test_jit_perfmap_stale),
		cmocka_unit_test(test_jit_perfmap_saved),
		cmocka_unit_test(test_jit_perfmap_init_root),
		cmocka_unit_test(test_jit_perfmap_pidns),
		cmocka_unit_test(test_jit_perfmap_memfd),
		cmocka_unit_test(test_special_mappings),
		cmocka_unit_test(test_unmapped),
		cmocka_unit_test(test_gone_without_proc),
		cmocka_unit_test(test_refresh_on_miss),
		cmocka_unit_test(test_refresh_throttle_and_forget),
		cmocka_unit_test(test_sym_file),
		cmocka_unit_test(test_deleted_file),
		cmocka_unit_test(test_mount_namespace),
		cmocka_unit_test(test_exited_keeps_maps),
		cmocka_unit_test(test_user_cache),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_kallsyms_unusable),
		cmocka_unit_test(test_kallsyms_cache),
		cmocka_unit_test(test_kallsyms_aliases),
		cmocka_unit_test(test_maps_parse),
		cmocka_unit_test(test_procs_rebase),
		cmocka_unit_test(test_procs_exec),
		cmocka_unit_test(test_procs_fork),
		cmocka_unit_test(test_cached_lookup_cost),
		cmocka_unit_test(test_file_id_named),
		cmocka_unit_test(test_file_id_through_proc_root),
		cmocka_unit_test(test_file_id_through_other_namespace),
		cmocka_unit_test(test_file_id_replaced_while_running),
		cmocka_unit_test(test_file_id_build_id_mismatch),
		cmocka_unit_test(test_file_id_debug_dir),
		cmocka_unit_test(test_file_id_debuginfod_opt_in),
		cmocka_unit_test(test_file_id_debuginfod_served),
		cmocka_unit_test(test_file_id_frames),
		cmocka_unit_test(test_file_not_regular),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
