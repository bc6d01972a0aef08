// SPDX-License-Identifier: GPL-2.0
/*
 * plugin_user_unwind: a libtraceevent plugin that prints the deferred user
 * stack events of trace-defer readably in `trace-cmd report` and in
 * KernelShark's Info column.
 *
 *   ftrace:user_unwind_cookie  cookie=0x500000002 cpu=1 seq=5
 *   ftrace:user_unwind_stack   cookie=0x500000002 cpu=1 seq=5 frames=3
 *                              0x401136 c+0x19 <- 0x4012cb b+0x12 <- 0x401300 main+0x20
 *   ftrace:user_unwind_file    id=3 path=/usr/bin/prog build_id=1f2e...
 *
 * (the stack record is printed on one line; it is cut here to fit).
 *
 * Promises:
 *  - one line per record, no control characters (names and paths that hold
 *    them are printed with '?' in their place);
 *  - never reads outside the record: a field that lies (partly) outside it
 *    is not read, what is sound is printed and a marker says what was not:
 *    "[bad record]" (no readable cookie), "[bad cookie]" (its CPU part is 0,
 *    which the kernel never writes), "[bad stack]" (no stack field, a
 *    data_loc outside the record, or a length that is not whole entries);
 *  - a stack record with file identity (kernels that record it) is named
 *    from it, whether or not the task still runs: the file records are
 *    gathered as they are printed (trace-cmd report prints in time order,
 *    and the kernel writes a file record before the first stack that uses
 *    it) into one file table per tep, and frames are named as
 *    td_sym_ufile() names them (the recorded file if its build-id matches,
 *    else a debug file by build-id; a file id not described yet is printed
 *    as unknown, never guessed). A tep holding several instances' buffers
 *    could see one id for two files: such an id is never used again;
 *  - frames of records without file identity are named only when the task
 *    can be proven to be the one that was traced: /proc/TID/comm must
 *    equal the comm the trace file knows for TID (a pid reused by another
 *    program, or an exec since, gives raw addresses, never wrong names);
 *    names come from the project's symbolizer through /proc/TGID/maps,
 *    cached for the plugin's lifetime;
 *  - frames of JIT-compiled code (anonymous memory, a memfd) of a record
 *    with file identity and its process id are named from the perf maps a
 *    recording saved (trace-defer --record: FILE.dat.perf-maps), when told
 *    where they are: trace-cmd report -O user_unwind:perf_maps=DIR, or
 *    TRACE_DEFER_PLUGIN_PERF_MAPS=DIR (KernelShark), read when the
 *    symbolizer starts;
 *  - symbolization is off when TRACE_DEFER_PLUGIN_SYMS is 0/no/off/false when
 *    the plugin is last loaded, or with the plugin option user_unwind:sym=0
 *    (trace-cmd report -O user_unwind:sym=0); it never asks a debuginfod
 *    server (DEBUGINFOD_URLS is unset when the symbolizer starts) unless
 *    TRACE_DEFER_PLUGIN_DEBUGINFOD=1;
 *  - no other event is touched: only these three handlers are registered,
 *    and removed again when the plugin is unloaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-seq.h>

#include <trace-defer/filetab.h>
#include <trace-defer/symbolize.h>
#include <trace-defer/task.h>
#include <trace-defer/types.h>

#define UU_SYSTEM	"ftrace"
#define UU_COOKIE	"user_unwind_cookie"
#define UU_STACK	"user_unwind_stack"
#define UU_FILE		"user_unwind_file"
#define UU_ALIAS	"user_unwind"

#define ENV_SYMS	"TRACE_DEFER_PLUGIN_SYMS"
#define ENV_DEBUGINFOD	"TRACE_DEFER_PLUGIN_DEBUGINFOD"
#define ENV_PERF_MAPS	"TRACE_DEFER_PLUGIN_PERF_MAPS"

/* Longer names (C++ templates) are cut: the line must stay readable. */
#define NAME_MAX_PRINT	160
#define PATH_MAX_PRINT	1024
/* Entries of the stack array: unsigned long of a 64-bit kernel. */
#define IP_SIZE		8

static struct tep_plugin_option plugin_options[] = {
	{
		.name = "sym",
		.plugin_alias = UU_ALIAS,
		.description = "name user frames from the files the records name, else "
			       "through /proc/PID/maps when the task still runs",
		.set = 1,
	},
	{
		.name = "perf_maps",
		.plugin_alias = UU_ALIAS,
		.description = "the JITs' perf maps saved with the recording (FILE.dat.perf-maps)",
		/* Not NULL: libtraceevent then takes the option as a string, not a boolean. */
		.value = "",
	},
	{ .name = NULL },
};

#define OPT_SYM (&plugin_options[0])
#define OPT_PERF_MAPS (&plugin_options[1])

/* The file table of one tep (one trace file, in KernelShark one of several). */
struct tep_files {
	struct tep_files *next;
	struct tep_handle *tep;
	struct td_filetab *ft;
};

/*
 * State shared by every tep the plugin is loaded into (KernelShark may
 * open several files): the symbolizer is not thread-safe and printing may
 * happen from more than one thread, so everything below is under @lock.
 */
static struct {
	pthread_mutex_t lock;
	unsigned int users;		/* loader calls not yet unloaded */
	bool env_off;			/* TRACE_DEFER_PLUGIN_SYMS said no */
	bool sym_failed;		/* td_sym_new() failed: do not retry per record */
	bool jit_saved;			/* sym names JIT frames from saved perf maps */
	struct td_symbolizer *sym;
	struct td_task_check *tasks;	/* allocated with sym */
	struct tep_files *files;	/* one per loaded tep */
} uu = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Called with uu.lock held: @tep's file table, NULL if it has none. */
static struct td_filetab *files_of(struct tep_handle *tep)
{
	struct tep_files *tf;

	for (tf = uu.files; tf; tf = tf->next)
		if (tf->tep == tep)
			return tf->ft;
	return NULL;
}

/* ---- record access, bounded -------------------------------------------- */

/* Read the @size-byte field @f of @rec; false when it is not inside the record. */
static bool read_field(struct tep_handle *tep, struct tep_record *rec,
		       const struct tep_format_field *f, int size, uint64_t *val)
{
	if (!f || f->size != size || f->offset < 0 || rec->size < 0 || !rec->data ||
	    (uint64_t)f->offset + (uint64_t)size > (uint64_t)rec->size)
		return false;
	*val = tep_read_number(tep, (const char *)rec->data + f->offset, size);
	return true;
}

/* Print the cookie of @rec; false (and a marker printed) when it cannot be read. */
static bool print_cookie(struct trace_seq *s, struct tep_record *rec, struct tep_event *ev)
{
	uint64_t cookie;
	uint32_t cpu_part;

	if (!read_field(ev->tep, rec, tep_find_field(ev, "cookie"), 8, &cookie)) {
		trace_seq_puts(s, "[bad record]");
		return false;
	}
	cpu_part = (uint32_t)cookie;
	if (!cpu_part) {
		trace_seq_printf(s, "cookie=0x%" PRIx64 " [bad cookie]", cookie);
		return true;
	}
	trace_seq_printf(s, "cookie=0x%" PRIx64 " cpu=%d seq=%" PRIu32, cookie,
			 td_cookie_cpu(cookie), td_cookie_seq(cookie));
	return true;
}

/* ---- names, when the task is at hand ------------------------------------ */

static bool env_says_no(const char *name)
{
	const char *v = getenv(name);

	return v && (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off") ||
		     !strcasecmp(v, "false"));
}

static bool env_says_yes(const char *name)
{
	const char *v = getenv(name);

	return v && (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") ||
		     !strcasecmp(v, "true"));
}

/* Called with uu.lock held: the symbolizer, created on first use. */
static struct td_symbolizer *get_symbolizer(void)
{
	struct td_sym_config sc = { 0 };
	const char *maps;

	if (uu.sym || uu.sym_failed)
		return uu.sym;
	/* A network fetch per unknown object would stall the report for minutes. */
	if (!env_says_yes(ENV_DEBUGINFOD))
		unsetenv("DEBUGINFOD_URLS");
	maps = OPT_PERF_MAPS->value && *OPT_PERF_MAPS->value ? OPT_PERF_MAPS->value :
							       getenv(ENV_PERF_MAPS);
	if (maps && *maps)
		sc.perfmap_saved_dir = maps;
	uu.tasks = td_task_check_new(NULL);
	uu.sym = uu.tasks ? td_sym_new(&sc) : NULL;
	uu.jit_saved = uu.sym && sc.perfmap_saved_dir;
	if (!uu.sym) {
		td_task_check_free(uu.tasks);
		uu.tasks = NULL;
		uu.sym_failed = true;
	}
	return uu.sym;
}

/* Called with uu.lock held: the tgid to name @tid's frames (seen at @ts) with, or 0. */
static int task_for_names(struct tep_handle *tep, int tid, uint64_t ts)
{
	if (tid <= 0 || !uu.tasks)
		return 0;
	/* "<...>" (the trace does not know the task) proves nothing: 0. */
	return td_task_check(uu.tasks, tid, tep_data_comm_from_pid(tep, tid), ts);
}

/* Print @str, cut at @max bytes, with control characters replaced. */
static void put_clean(struct trace_seq *s, const char *str, size_t max)
{
	size_t i;

	for (i = 0; i < max && str[i]; i++) {
		unsigned char c = (unsigned char)str[i];

		trace_seq_putc(s, c < 0x20 || c == 0x7f ? '?' : c);
	}
	if (str[i])
		trace_seq_puts(s, "...");
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/*
 * What follows a frame's address: " sym+0xOFF", " (object+0xFILEOFF)",
 * " [vdso]", " (unknown file id N+0xFILEOFF)", or nothing.
 */
static void print_name(struct trace_seq *s, const struct td_frame *fr)
{
	if (fr->symbol) {
		trace_seq_putc(s, ' ');
		put_clean(s, fr->symbol, NAME_MAX_PRINT);
		trace_seq_printf(s, "+0x%" PRIx64, fr->sym_offset);
	} else if (fr->file_kind == TD_FILE_VDSO) {
		trace_seq_puts(s, " [vdso]");
	} else if (fr->object) {
		trace_seq_puts(s, " (");
		put_clean(s, base_name(fr->object), NAME_MAX_PRINT);
		trace_seq_printf(s, "+0x%" PRIx64 ")", fr->file_offset);
	} else if (fr->file_kind == TD_FILE_IN) {
		trace_seq_printf(s, " (unknown file id %" PRIu32 "+0x%" PRIx64 ")", fr->file_id,
				 fr->file_offset);
	}
}

/* One frame of a record without file identity, through /proc/TGID/maps. */
static void print_frame(struct trace_seq *s, struct td_symbolizer *sym, int tgid, uint64_t ip,
			bool return_addr)
{
	struct td_frame fr;

	trace_seq_printf(s, "0x%" PRIx64, ip);
	if (!sym || !tgid || !ip || td_sym_user(sym, tgid, ip, return_addr, &fr))
		return;
	print_name(s, &fr);
}

/* ---- handlers ------------------------------------------------------------ */

static int cookie_handler(struct trace_seq *s, struct tep_record *rec, struct tep_event *ev,
			  void *context)
{
	print_cookie(s, rec, ev);
	/* 0: libtraceevent must not append the print fmt's output. */
	return 0;
}

/* The symbolizer when names are wanted (option, environment), else NULL; uu.lock held. */
static struct td_symbolizer *wanted_symbolizer(void)
{
	return OPT_SYM->set && !uu.env_off ? get_symbolizer() : NULL;
}

/*
 * The frames of a record with file identity, named from it. Returns false
 * (nothing printed) when out of memory: the caller prints them raw.
 */
static bool print_file_frames(struct trace_seq *s, struct tep_handle *tep,
			      struct tep_record *rec, const struct td_ustack_fields *uf,
			      uint32_t off, uint32_t nr)
{
	struct td_symbolizer *sym;
	struct td_ufile *files;
	struct td_filetab *ft;
	unsigned int bad;
	struct td_frame fr;
	uint64_t *ips, tgid;
	uint32_t i;

	ips = malloc(nr * (sizeof(*ips) + sizeof(*files)));
	if (!ips)
		return false;
	files = (struct td_ufile *)(ips + nr);
	for (i = 0; i < nr; i++)
		ips[i] = tep_read_number(tep, (const char *)rec->data + off + (size_t)i * IP_SIZE,
					 IP_SIZE);
	bad = td_ustack_decode_files(uf, rec->data, rec->size, tep_is_file_bigendian(tep), ips,
				     nr, files);

	/* Kernels whose records say the process: its saved perf map names JIT code. */
	if (!read_field(tep, rec, uf->tgid, 4, &tgid))
		tgid = 0;
	pthread_mutex_lock(&uu.lock);
	sym = wanted_symbolizer();
	ft = files_of(tep);
	for (i = 0; i < nr; i++) {
		td_sym_ufile(sym, ft, &files[i], ips[i], i > 0, &fr);
		if (sym && uu.jit_saved && (int32_t)tgid > 0 && td_sym_jit_candidate(&fr))
			td_sym_jit(sym, (int32_t)tgid, ips[i], i > 0, &fr);
		trace_seq_printf(s, "%s0x%" PRIx64, i ? " <- " : " ", ips[i]);
		print_name(s, &fr);
	}
	pthread_mutex_unlock(&uu.lock);
	if (bad)
		trace_seq_puts(s, " [bad file info]");
	free(ips);
	return true;
}

static int stack_handler(struct trace_seq *s, struct tep_record *rec, struct tep_event *ev,
			 void *context)
{
	struct tep_handle *tep = ev->tep;
	struct td_symbolizer *sym = NULL;
	struct td_ustack_fields uf;
	unsigned int off, len;
	uint32_t nr, i;
	uint64_t tid = 0, val;
	bool have_uf;
	int tgid = 0;

	if (!print_cookie(s, rec, ev))
		return 0;
	if (!td_dyn_field(tep_find_field(ev, "stack"), rec->data, rec->size,
			  tep_is_file_bigendian(tep), &off, &len)) {
		trace_seq_puts(s, " [bad stack]");
		return 0;
	}
	nr = len / IP_SIZE;
	trace_seq_printf(s, " frames=%" PRIu32, nr);
	have_uf = !td_ustack_fields_init(&uf, ev);
	/*
	 * What the kernel's own text says too: the outermost frames cut for
	 * the record to fit, and a stack of the program execve() loaded, not
	 * of the one the events before it ran.
	 */
	if (have_uf && read_field(tep, rec, uf.dropped, 2, &val) && val)
		trace_seq_printf(s, " dropped=%" PRIu64, val);
	if (have_uf && read_field(tep, rec, uf.flags, 2, &val) && (val & TD_USTACK_EXEC))
		trace_seq_puts(s, " exec");
	if (nr && have_uf && uf.has_files) {
		if (print_file_frames(s, tep, rec, &uf, off, nr))
			goto out;
	}

	/* Held for the whole record: the frames of one stack are named together. */
	pthread_mutex_lock(&uu.lock);
	if (nr && read_field(tep, rec, tep_find_common_field(ev, "common_pid"), 4, &tid)) {
		sym = wanted_symbolizer();
		tgid = sym ? task_for_names(tep, (int)(int32_t)tid, rec->ts) : 0;
	}
	for (i = 0; i < nr; i++) {
		const char *p = (const char *)rec->data + off + (size_t)i * IP_SIZE;

		trace_seq_puts(s, i ? " <- " : " ");
		print_frame(s, sym, tgid, tep_read_number(tep, p, IP_SIZE), i > 0);
	}
	pthread_mutex_unlock(&uu.lock);
out:
	if (len % IP_SIZE)
		trace_seq_puts(s, " [bad stack]");
	return 0;
}

/* "id=N path=PATH build_id=HEX" (or "build_id=none"), and the file learnt. */
static int file_handler(struct trace_seq *s, struct tep_record *rec, struct tep_event *ev,
			void *context)
{
	static const char hex[] = "0123456789abcdef";
	struct td_filetab *ft;
	struct td_file_rec fr;
	char path[PATH_MAX_PRINT + 1];
	unsigned int i;
	int ret = 0;

	if (!rec->data || td_file_rec_decode(ev, rec->data, rec->size,
						tep_is_file_bigendian(ev->tep), &fr)) {
		trace_seq_puts(s, "[bad record]");
		return 0;
	}
	pthread_mutex_lock(&uu.lock);
	ft = files_of(ev->tep);
	if (ft)
		ret = td_filetab_add(ft, fr.id, fr.build_id, fr.build_id_len, fr.path,
				     fr.path_len);
	pthread_mutex_unlock(&uu.lock);

	trace_seq_printf(s, "id=%" PRIu32 " path=", fr.id);
	i = fr.path_len < PATH_MAX_PRINT ? (unsigned int)fr.path_len : PATH_MAX_PRINT;
	memcpy(path, fr.path, i);
	path[i] = '\0';
	put_clean(s, path, PATH_MAX_PRINT);
	if (fr.path_len > PATH_MAX_PRINT)
		trace_seq_puts(s, "...");
	trace_seq_puts(s, " build_id=");
	for (i = 0; i < fr.build_id_len; i++) {
		trace_seq_putc(s, hex[fr.build_id[i] >> 4]);
		trace_seq_putc(s, hex[fr.build_id[i] & 0xf]);
	}
	if (!fr.build_id_len)
		trace_seq_puts(s, "none");
	if (ret == -EEXIST)
		trace_seq_puts(s, " [id reused: not used]");
	return 0;
}

/* ---- plugin entry points ------------------------------------------------- */

int TEP_PLUGIN_LOADER(struct tep_handle *tep);
void TEP_PLUGIN_UNLOADER(struct tep_handle *tep);

int TEP_PLUGIN_LOADER(struct tep_handle *tep)
{
	struct tep_files *tf;
	int ret;

	pthread_mutex_lock(&uu.lock);
	/* The latest load decides, for every tep (a process has one environment). */
	uu.env_off = env_says_no(ENV_SYMS);
	/* Applies options given before loading (trace-cmd report -O). */
	if (!uu.users++)
		tep_plugin_add_options(UU_ALIAS, plugin_options);
	pthread_mutex_unlock(&uu.lock);

	pthread_mutex_lock(&uu.lock);
	tf = calloc(1, sizeof(*tf));
	if (tf) {
		tf->tep = tep;
		tf->ft = td_filetab_new(0);
		if (tf->ft) {
			tf->next = uu.files;
			uu.files = tf;
		} else {
			free(tf);
			tf = NULL;
		}
	}
	pthread_mutex_unlock(&uu.lock);
	/* Without a table the records print; their file ids stay unknown. */

	/* Events the file lacks are kept pending by libtraceevent: harmless. */
	ret = tep_register_event_handler(tep, -1, UU_SYSTEM, UU_COOKIE, cookie_handler, NULL);
	if (ret >= 0)
		ret = tep_register_event_handler(tep, -1, UU_SYSTEM, UU_STACK, stack_handler,
						 NULL);
	if (ret >= 0)
		ret = tep_register_event_handler(tep, -1, UU_SYSTEM, UU_FILE, file_handler, NULL);
	return ret < 0 ? -1 : 0;
}

void TEP_PLUGIN_UNLOADER(struct tep_handle *tep)
{
	tep_unregister_event_handler(tep, -1, UU_SYSTEM, UU_COOKIE, cookie_handler, NULL);
	tep_unregister_event_handler(tep, -1, UU_SYSTEM, UU_STACK, stack_handler, NULL);
	tep_unregister_event_handler(tep, -1, UU_SYSTEM, UU_FILE, file_handler, NULL);

	pthread_mutex_lock(&uu.lock);
	for (struct tep_files **pp = &uu.files; *pp; pp = &(*pp)->next) {
		struct tep_files *tf = *pp;

		if (tf->tep == tep) {
			*pp = tf->next;
			td_filetab_free(tf->ft);
			free(tf);
			break;
		}
	}
	if (uu.users && !--uu.users) {
		tep_plugin_remove_options(plugin_options);
		td_sym_free(uu.sym);
		td_task_check_free(uu.tasks);
		uu.sym = NULL;
		uu.tasks = NULL;
		uu.sym_failed = false;
	}
	pthread_mutex_unlock(&uu.lock);
}
