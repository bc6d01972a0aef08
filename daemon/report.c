// SPDX-License-Identifier: GPL-2.0
/*
 * trace-defer report: a trace.dat through the daemon's own pipeline (see
 * report.h). libtracecmd reads each CPU's records from the file; they are
 * merged here in timestamp order and each goes to the parser as a record
 * of a live sub-buffer would. Since nothing older can come after it, its
 * timestamp is also the trace time every CPU has been read up to (what the
 * live loop gets from per_cpu/cpuN/stats).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trace-cmd/trace-cmd.h>

#include <trace-defer/filetab.h>
#include <trace-defer/output.h>
#include <trace-defer/pipeline.h>
#include <trace-defer/task.h>

#include "cliopts.h"
#include "libmsg.h"
#include "config.h"
#include "counters.h"
#include "daemon.h"
#include "kmodules.h"
#include "log.h"
#include "outputs.h"
#include "progress.h"
#include "report.h"

/* Move trace time on (hand on held events, expire waits) at most this often. */
#define ADVANCE_NS	1000000ULL
#define FLUSH_RECORDS	65536	/* records between two flushes of the JSON file */
/* Kernel symbols of the running kernel looked up in the trace's, one per STRIDE. */
#define KSYM_SAMPLES	16
#define KSYM_STRIDE	1000

struct report {
	struct td_config cfg;
	const char *path;
	struct stat path_st;		/* the trace.dat: outputs must not overwrite it */
	const char *buffer;		/* instance buffer to read, NULL: the top level */
	bool text;			/* text on stdout */
	bool json_stdout;		/* --json */
	const char *perf_maps;		/* --perf-maps DIR; NULL: the default, below */
	char *perf_maps_found;		/* that default, when it is a directory */

	struct tracecmd_input *file;
	struct tracecmd_input *input;	/* the buffer read: file, or one of its instances */
	struct tep_handle *tep;
	int nr_cpus;
	unsigned int page_size;		/* sub-buffer size in the file */

	struct td_counters counters;
	struct td_outputs outputs;
	bool outputs_open;
	struct td_pipeline *pl;

	struct trace_seq seq;		/* the text output's event info */
	bool seq_init;
	bool text_broken;		/* the reader of stdout went away */

	struct td_progress progress;
	double progress_secs;		/* --progress; < 0: 1 s on a terminal, else none */
	uint64_t records, bad_cpu, damaged;
	uint64_t total_records;		/* in the file, when first_pass() counted them */
	uint64_t first_ts, last_ts;	/* of the records fed, for the profile's duration */
	uint64_t last_advance;
	int exit_code;

	/* User frames from /proc only for a trace of the running system. */
	bool same_system;
	struct td_task_check *tasks;
	uint64_t kernel_lookups, kernel_unknown;
	uint64_t kernel_strings;	/* td_frame.strings_id of the tep's names */
	struct td_kmodules *kmods;	/* which of them are modules' (NULL: none known) */
};

enum {
	OPT_JSON = 256,
	OPT_TEXT,
	OPT_NO_SYMBOLIZE,
	OPT_DEBUG_DIR,
	OPT_MAX_PENDING,
	OPT_MAX_STACKS,
	OPT_MAX_WAIT_MS,
	OPT_JSON_LAYOUT,
	OPT_PPROF,
	OPT_PROGRESS,
	OPT_PERF_MAPS,
};

static const struct option long_opts[] = {
	{ "output",		required_argument, NULL, 'o' },
	{ "json",		no_argument,	   NULL, OPT_JSON },
	{ "text",		no_argument,	   NULL, OPT_TEXT },
	{ "json-layout",	required_argument, NULL, OPT_JSON_LAYOUT },
	{ "folded",		required_argument, NULL, 'f' },
	{ "flamegraph",		required_argument, NULL, 'F' },
	{ "pprof",		required_argument, NULL, OPT_PPROF },
	{ "buffer",		required_argument, NULL, 'B' },
	{ "pid",		required_argument, NULL, 'p' },
	{ "no-symbolize",	no_argument,	   NULL, OPT_NO_SYMBOLIZE },
	{ "debug-dir",		required_argument, NULL, OPT_DEBUG_DIR },
	{ "perf-maps",		required_argument, NULL, OPT_PERF_MAPS },
	{ "max-pending",	required_argument, NULL, OPT_MAX_PENDING },
	{ "max-stacks",		required_argument, NULL, OPT_MAX_STACKS },
	{ "max-wait-ms",	required_argument, NULL, OPT_MAX_WAIT_MS },
	{ "progress",		required_argument, NULL, OPT_PROGRESS },
	{ "quiet",		no_argument,	   NULL, 'q' },
	{ "verbose",		no_argument,	   NULL, 'v' },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "version",		no_argument,	   NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs(
"Usage: trace-defer report FILE.dat [OPTION]...\n"
"Read a trace.dat (trace-defer record, --record, trace-cmd record) and print\n"
"every event with its kernel stack and its stitched user stack, through the\n"
"same stitching and symbolizing code as the live trace-defer.\n"
"\n"
"Output (text on stdout when no output is given):\n"
"      --text             text on stdout, also when other outputs are given\n"
"      --json             JSON lines on stdout (same as -o -)\n"
"  -o, --output FILE      JSON lines, the live daemon's schema (- for stdout)\n"
"      --json-layout L    interned (default), full or compact, as the live\n"
"                         daemon's\n"
"  -f, --folded FILE      folded stacks for flame graph tools (- for stdout)\n"
"  -F, --flamegraph FILE  flame graph SVG\n"
"      --pprof FILE       pprof profile (gzipped profile.proto, go tool pprof)\n"
"\n"
"Input and naming:\n"
"  -B, --buffer NAME      read the instance buffer NAME (trace-cmd record -B)\n"
"                         instead of the top-level one\n"
"  -p, --pid PID          only events of process PID (repeatable); a trace of\n"
"                         trace-defer record -p or trace-cmd record -P also\n"
"                         holds switches into it from other tasks\n"
"      --no-symbolize     raw addresses only (in JSON; profiles: user frames [unknown])\n"
"      --debug-dir DIR    separate debug files (default /usr/lib/debug)\n"
"      --perf-maps DIR    JITs' perf maps saved with the recording (default\n"
"                         FILE.dat.perf-maps, if there)\n"
"      --max-pending N    events waiting for their user stack\n"
"      --max-stacks N     user stacks waiting for their events\n"
"      --max-wait-ms N    how long an event waits for its stack, in trace time\n"
"                         (default 60000)\n"
"      --progress SEC     a progress line every SEC seconds on stderr (default:\n"
"                         1 on a terminal, none otherwise; 0: none)\n"
"  -q, --quiet            errors only\n"
"  -v, --verbose          a summary of what was read at the end\n"
"  -h, --help             this help\n"
"  -V, --version          version\n"
"\n"
"Kernel frames are named with the kernel symbols saved in FILE.dat. User\n"
"frames are named from the file identity their stack records carry (the\n"
"file at its recorded path if its build-id matches, else a debug file by\n"
"build-id under --debug-dir and /usr/lib/debug, else debuginfod when\n"
"DEBUGINFOD_URLS is set); records without it (older kernels, the in-place\n"
"fallback) through /proc/PID/maps, only if FILE.dat was recorded since this\n"
"system booted and the process still runs (else raw addresses). Frames of\n"
"JIT-compiled code are named from the perf maps the recording saved.\n"
"\n"
"Exit status: 0 ok, 1 FILE.dat cannot be read (truncated, damaged) or an\n"
"output failed, 2 usage error or FILE.dat missing, unreadable or not a\n"
"trace.dat. See trace-defer(8).\n", f);
}

static int apply(struct td_config *cfg, const char *key, const char *value, const char *opt)
{
	char where[64];

	snprintf(where, sizeof(where), "option %s", opt);
	return td_config_set(cfg, key, value, where);
}

static bool is_stdout(const char *path)
{
	return path && !strcmp(path, "-");
}

/*
 * Does standard output reach a person's screen? A terminal, or a pipe: a
 * pager or a filter (less, grep) that draws on the same terminal.
 */
static bool stdout_shown(void)
{
	struct stat st;

	return isatty(STDOUT_FILENO) || (!fstat(STDOUT_FILENO, &st) && S_ISFIFO(st.st_mode));
}

/* Does an output go to standard output? */
static bool to_stdout(const struct report *rp)
{
	return rp->text || is_stdout(rp->cfg.output) || is_stdout(rp->cfg.folded) ||
	       is_stdout(rp->cfg.flamegraph) || is_stdout(rp->cfg.pprof);
}

/* Returns 0, 1 (help printed: exit 0) or -1 (usage error, printed). */
static int parse_options(struct report *rp, int argc, char **argv)
{
	bool quiet = false;
	int c, verbose = 0;

	if (td_cli_exact_long_opts(argc, argv, "o:f:F:B:p:qvhV", long_opts))
		return -1;
	opterr = 1;
	optind = 0;
	while ((c = getopt_long(argc, argv, "o:f:F:B:p:qvhV", long_opts, NULL)) != -1) {
		int ret = 0;

		switch (c) {
		case 'o':
			if (rp->json_stdout || rp->cfg.output) {
				td_err("report: give the JSON output once (-o or --json)");
				return -1;
			}
			ret = apply(&rp->cfg, "output", optarg, "--output");
			break;
		case OPT_JSON:
			if (rp->cfg.output) {
				td_err("report: give the JSON output once (-o or --json)");
				return -1;
			}
			rp->json_stdout = true;
			ret = apply(&rp->cfg, "output", "-", "--json");
			break;
		case OPT_TEXT:
			rp->text = true;
			break;
		case 'p':
			ret = apply(&rp->cfg, "pid", optarg, "--pid");
			break;
		case OPT_JSON_LAYOUT:
			ret = apply(&rp->cfg, "json_layout", optarg, "--json-layout");
			break;
		case 'f':
			ret = td_cli_report_output_name("-f (--folded)", optarg) ?:
			      apply(&rp->cfg, "folded", optarg, "--folded");
			break;
		case 'F':
			ret = td_cli_report_output_name("-F (--flamegraph)", optarg) ?:
			      apply(&rp->cfg, "flamegraph", optarg, "--flamegraph");
			break;
		case OPT_PPROF:
			ret = apply(&rp->cfg, "pprof", optarg, "--pprof");
			break;
		case 'B':
			rp->buffer = optarg;
			break;
		case OPT_NO_SYMBOLIZE:
			rp->cfg.symbolize = false;
			break;
		case OPT_PERF_MAPS:
			rp->perf_maps = optarg;
			break;
		case OPT_DEBUG_DIR:
			ret = apply(&rp->cfg, "debug_dir", optarg, "--debug-dir");
			break;
		case OPT_MAX_PENDING:
			ret = apply(&rp->cfg, "max_pending", optarg, "--max-pending");
			break;
		case OPT_MAX_STACKS:
			ret = apply(&rp->cfg, "max_stacks", optarg, "--max-stacks");
			break;
		case OPT_MAX_WAIT_MS:
			ret = apply(&rp->cfg, "max_wait_ms", optarg, "--max-wait-ms");
			break;
		case OPT_PROGRESS: {
			char *end;

			errno = 0;
			rp->progress_secs = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(rp->progress_secs >= 0) ||
			    rp->progress_secs > 86400) {
				td_err("report: --progress takes seconds between lines, 0 for none "
				       "(got '%s')", optarg);
				return -1;
			}
			break;
		}
		case 'q':
			quiet = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("trace-defer %s\n", TD_VERSION);
			return 1;
		default:
			fputs("Try 'trace-defer report --help'.\n", stderr);
			return -1;
		}
		if (ret)
			return -1;
	}
	td_log_level = (quiet ? TD_LOG_ERR : TD_LOG_WARN) + verbose;
	if (td_log_level > TD_LOG_DEBUG)
		td_log_level = TD_LOG_DEBUG;
	if (optind >= argc) {
		td_err("report: give the trace.dat to read (try 'trace-defer report --help')");
		return -1;
	}
	rp->path = argv[optind++];
	if (optind < argc) {
		td_err("report: unexpected argument '%s' (one trace.dat at a time)", argv[optind]);
		return -1;
	}
	/* Nothing asked for: a person wants to read the events. */
	if (!rp->cfg.output && !rp->cfg.folded && !rp->cfg.flamegraph && !rp->cfg.pprof)
		rp->text = true;
	if (rp->text && ((rp->cfg.output && !strcmp(rp->cfg.output, "-")) ||
			 (rp->cfg.folded && !strcmp(rp->cfg.folded, "-")))) {
		td_err("report: the text and another output cannot both go to stdout");
		return -1;
	}
	/*
	 * Progress on a terminal, unless what is read goes to that terminal
	 * too (the lines would cut into each other): straight, or through a
	 * pipe (a pager, grep); for logs only when asked.
	 */
	if (rp->progress_secs < 0)
		rp->progress_secs = !quiet && isatty(STDERR_FILENO) &&
				    !(stdout_shown() && to_stdout(rp)) ? 1 : 0;
	td_progress_init(&rp->progress, stderr, isatty(STDERR_FILENO),
			 (uint64_t)(rp->progress_secs * 1e9));
	return td_config_check(&rp->cfg) ? -1 : 0;
}

/* ---- input ---- */

static const char *crash_path;
/* 1 while libtracecmd reads, 0 while our code runs (see read_records()). */
static volatile sig_atomic_t in_library;

/*
 * libtraceevent's kbuffer trusts a sub-buffer's header (its commit length)
 * and libtracecmd hands it whatever the file holds: some damaged files make
 * them read out of bounds (stock `trace-cmd report` dies on them as well).
 * While they read the file, a fault ends the report with a message and
 * status 1 instead of a core dump. A fault in our own code (in_library 0)
 * is a bug: the handler, reset by SA_RESETHAND, returns and the fault
 * happens again with the default action.
 */
static void on_fault(int sig)
{
	static const char msg1[] = "trace-defer: report: reading ";
	static const char msg2[] = " crashed libtracecmd/libtraceevent: the file is damaged\n";
	ssize_t ignored;

	if (!in_library)
		return;
	ignored = write(STDERR_FILENO, msg1, sizeof(msg1) - 1);
	ignored = write(STDERR_FILENO, crash_path, strlen(crash_path));
	ignored = write(STDERR_FILENO, msg2, sizeof(msg2) - 1);
	(void)ignored;
	(void)sig;
	_exit(TD_EXIT_RUNTIME);
}

/*
 * libtracecmd meeting a sub-buffer it cannot read says so ("bad page
 * read, ...") and reads no more of that CPU: the events after are lost
 * with no error returned. Its warnings while the records are read
 * (reading_records; not those of the headers) are counted, and end the
 * report with status 1 (see summary()).
 */
static uint64_t lib_warnings;
static bool reading_records;

static void lib_message(const char *lib, enum tep_loglevel level, const char *msg)
{
	if (reading_records && !strcmp(lib, "libtracecmd") && level <= TEP_LOG_WARNING)
		lib_warnings++;
}

static void catch_faults(const char *path, bool on)
{
	struct sigaction sa = { .sa_handler = on ? on_fault : SIG_DFL,
				.sa_flags = SA_RESETHAND };

	crash_path = path;
	in_library = on;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/* Does the top-level buffer of rp->file hold a record? */
static bool top_has_records(struct report *rp)
{
	int cpus = tep_get_cpus(tracecmd_get_tep(rp->file));
	struct tep_record *rec;

	for (int cpu = 0; cpu < cpus; cpu++) {
		rec = tracecmd_read_cpu_first(rp->file, cpu);
		if (rec) {
			tracecmd_free_record(rec);
			return true;
		}
	}
	return false;
}

/*
 * No --buffer: a file whose top-level buffer is empty (trace-cmd record
 * -B, extract -B) is read from its one other buffer, said; with several,
 * which one is the user's to say. Returns an exit code.
 */
static int pick_buffer(struct report *rp)
{
	int nr = tracecmd_buffer_instances(rp->file);
	char names[256] = "";
	size_t len = 0;

	if (nr < 1 || !tracecmd_get_tep(rp->file) || top_has_records(rp))
		return TD_EXIT_OK;
	if (nr == 1 && tracecmd_buffer_instance_name(rp->file, 0)) {
		rp->buffer = tracecmd_buffer_instance_name(rp->file, 0);
		td_notice("report: the top-level buffer of %s is empty: reading its one other "
			  "buffer, '%s' (as --buffer %s)", rp->path, rp->buffer, rp->buffer);
		return TD_EXIT_OK;
	}
	for (int i = 0; i < nr && len < sizeof(names); i++)
		len += snprintf(names + len, sizeof(names) - len, "%s'%s'", i ? ", " : "",
				tracecmd_buffer_instance_name(rp->file, i) ?: "?");
	td_err("report: the top-level buffer of %s is empty; it has %d other buffers, %s%s: "
	       "say which to read with --buffer NAME", rp->path, nr, names,
	       len >= sizeof(names) ? "..." : "");
	return TD_EXIT_USAGE;
}

/*
 * What libtracecmd does not say when it cannot open a file: missing or
 * unreadable (usage), not a trace.dat at all (usage), or a trace.dat it
 * cannot read (truncated, damaged: runtime). Returns an exit status.
 */
static int open_input(struct report *rp)
{
	static const unsigned char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	unsigned char head[sizeof(magic)];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(rp->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		td_err("report: cannot open %s: %s", rp->path, strerror(errno));
		return TD_EXIT_USAGE;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		td_err("report: %s is not a regular file", rp->path);
		close(fd);
		return TD_EXIT_USAGE;
	}
	rp->path_st = st;
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n != (ssize_t)sizeof(head) || memcmp(head, magic, sizeof(magic))) {
		td_err("report: %s is not a trace.dat file (no trace-cmd file header)", rp->path);
		return TD_EXIT_USAGE;
	}
	catch_faults(rp->path, true);
	rp->file = tracecmd_open(rp->path, 0);
	catch_faults(rp->path, false);
	if (!rp->file) {
		td_err("report: cannot read %s: truncated or damaged trace.dat "
		       "(libtracecmd cannot open it)", rp->path);
		return TD_EXIT_RUNTIME;
	}
	rp->input = rp->file;
	if (!rp->buffer) {
		int code = pick_buffer(rp);

		if (code)
			return code;
	}
	if (rp->buffer) {
		int i, nr = tracecmd_buffer_instances(rp->file);

		for (i = 0; i < nr; i++) {
			const char *name = tracecmd_buffer_instance_name(rp->file, i);

			if (name && !strcmp(name, rp->buffer))
				break;
		}
		if (i == nr) {
			td_err("report: %s has no buffer '%s'", rp->path, rp->buffer);
			return TD_EXIT_USAGE;
		}
		rp->input = tracecmd_buffer_instance_handle(rp->file, i);
		if (!rp->input) {
			td_err("report: cannot read buffer '%s' of %s", rp->buffer, rp->path);
			return TD_EXIT_RUNTIME;
		}
	}
	rp->tep = tracecmd_get_tep(rp->input);
	if (!rp->tep) {
		td_err("report: %s holds no event formats", rp->path);
		return TD_EXIT_RUNTIME;
	}
	rp->kernel_strings = td_strings_id_new();
	rp->nr_cpus = tep_get_cpus(rp->tep);
	if (rp->nr_cpus < 1)
		rp->nr_cpus = 1;
	rp->page_size = tep_get_page_size(rp->tep) > 0 ? tep_get_page_size(rp->tep) : 4096;
	return TD_EXIT_OK;
}

/* ---- naming ---- */

/*
 * Was the trace recorded on the system running now, since it booted? Its
 * saved kernel symbols must then start where /proc/kallsyms has them (KASLR
 * moves them at every boot). Sampled over the core kernel's symbols (a
 * module or BPF program loaded since has none in the trace). Without
 * addresses on either side (kptr_restrict, no kallsyms in the trace) nothing
 * can be told, and the answer is no: raw addresses are better than another
 * process's names.
 */
static bool same_system(struct tep_handle *tep)
{
	unsigned long line_nr = 0;
	int tried = 0, matched = 0;
	char line[512];
	FILE *f;

	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return false;
	while (tried < KSYM_SAMPLES && fgets(line, sizeof(line), f)) {
		unsigned long long addr, start;
		const char *name;
		unsigned long size;
		char type;

		if (sscanf(line, "%llx %c", &addr, &type) != 2 || !addr ||
		    (type != 't' && type != 'T') || strchr(line, '['))
			continue;
		if (line_nr++ % KSYM_STRIDE)
			continue;
		tried++;
		if (tep_find_function_info(tep, addr, &name, &start, &size) == 1 && start == addr)
			matched++;
	}
	fclose(f);
	return tried >= 2 && matched == tried;
}

/* Kernel frames: the kallsyms saved in the trace.dat, loaded into its tep. */
static int kernel_sym(uint64_t addr, bool return_addr, struct td_frame *out, void *arg)
{
	uint64_t look = td_sym_lookup_addr(addr, return_addr);
	struct report *rp = arg;
	unsigned long long start;
	unsigned long size;
	const char *name;

	/*
	 * The tep's function names and the literal object stay put while it
	 * lives: writers may cache what they render from them.
	 */
	*out = (struct td_frame){ .addr = addr, .strings_id = rp->kernel_strings };
	rp->kernel_lookups++;
	if (tep_find_function_info(rp->tep, look, &name, &start, &size) != 1 || !name ||
	    look < start) {
		rp->kernel_unknown++;
		return -ENOENT;
	}
	out->symbol = name;
	out->sym_offset = addr - start;
	out->object = td_kmodules_find(rp->kmods, start);
	if (!out->object)
		out->object = "[kernel]";
	return 0;
}

/*
 * Is /proc/@tid still the task the trace calls @comm, started before the
 * trace saw it at @ts? (Thread ids are reused, names too.)
 */
static bool task_live(int tid, const char *comm, uint64_t ts, void *arg)
{
	struct report *rp = arg;

	return rp->same_system && td_task_check(rp->tasks, tid, comm, ts) > 0;
}

/* ---- text output ---- */

static void text_frame(FILE *f, const struct td_frame *fr, bool user)
{
	fprintf(f, "    %#18" PRIx64 " ", fr->addr);
	if (fr->symbol)
		fprintf(f, "%s+%#" PRIx64, fr->symbol, fr->sym_offset);
	else
		fputc('?', f);
	/* A recorded vDSO frame has no offset. */
	if (user && fr->object && (fr->symbol || fr->file_kind == TD_FILE_VDSO))
		fprintf(f, " (%s)", fr->object);
	else if (user && fr->object)
		fprintf(f, " (%s+%#" PRIx64 ")", fr->object, fr->file_offset);
	else if (user && fr->file_kind == TD_FILE_IN)
		fprintf(f, " (unknown file id %" PRIu32 "+%#" PRIx64 ")", fr->file_id,
			fr->file_offset);
	else if (fr->object && strcmp(fr->object, "[kernel]"))
		fprintf(f, " %s", fr->object);
	fputc('\n', f);
}

/*
 * One event: a trace-cmd report style line (the event's own text from its
 * print format or a libtraceevent plugin), its status, then the frames,
 * innermost first; a blank line after each event.
 */
static int text_write(void *arg, const struct td_resolved *res)
{
	struct report *rp = arg;
	const struct td_event *ev = res->ev;
	struct tep_record rec = {
		.ts = ev->ts, .cpu = ev->cpu, .data = ev->raw,
		.size = ev->raw_size, .record_size = ev->raw_size,
	};
	FILE *f = stdout;
	unsigned int i;

	if (rp->text_broken)
		return -EPIPE;
	errno = 0;
	trace_seq_reset(&rp->seq);
	if (ev->tep_event)
		tep_print_event(rp->tep, &rp->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&rp->seq);
	fprintf(f, "%s-%d [%03d] %" PRIu64 ".%09" PRIu64 ": %s: %s\n",
		ev->comm[0] ? ev->comm : "<...>", ev->tid, ev->cpu, ev->ts / 1000000000,
		ev->ts % 1000000000, res->event_name, rp->seq.buffer ? rp->seq.buffer : "");
	fprintf(f, "  status=%s pid=%d", td_status_name(res->status), ev->pid);
	if (res->cookie)
		fprintf(f, " cookie=%#" PRIx64, res->cookie);
	fputc('\n', f);
	if (res->nr_kframes)
		fputs("  kernel stack:\n", f);
	for (i = 0; i < res->nr_kframes; i++)
		text_frame(f, &res->kframes[i], false);
	if (res->nr_uframes)
		fputs("  user stack:\n", f);
	for (i = 0; i < res->nr_uframes; i++)
		text_frame(f, &res->uframes[i], true);
	if (fputc('\n', f) == EOF || ferror(f)) {
		if (errno == EPIPE) {
			rp->text_broken = true;
			return -EPIPE;
		}
		return errno ? -errno : -EIO;
	}
	return 0;
}

/* ---- the pipeline ---- */

/* An output opened for writing would truncate the file being read. */
static bool overwrites_input(const struct report *rp, const char *out)
{
	struct stat st;

	return out && strcmp(out, "-") && !stat(out, &st) &&
	       st.st_dev == rp->path_st.st_dev && st.st_ino == rp->path_st.st_ino;
}

static const struct td_sink_ops text_sink_ops = { .name = "text", .write = text_write };

/*
 * The perf maps saved with the recording (trace-defer --record), named
 * by --perf-maps or found next to the file: 0, or an exit status.
 */
static int find_perf_maps(struct report *rp, const char **dir)
{
	struct stat st;

	*dir = NULL;
	if (rp->perf_maps) {
		if (stat(rp->perf_maps, &st)) {
			td_err("report: --perf-maps %s: %s", rp->perf_maps, strerror(errno));
			return TD_EXIT_USAGE;
		}
		if (!S_ISDIR(st.st_mode)) {
			td_err("report: --perf-maps %s: not a directory", rp->perf_maps);
			return TD_EXIT_USAGE;
		}
		*dir = rp->cfg.symbolize ? rp->perf_maps : NULL;
		return 0;
	}
	if (!rp->cfg.symbolize)
		return 0;
	if (asprintf(&rp->perf_maps_found, "%s.perf-maps", rp->path) < 0) {
		rp->perf_maps_found = NULL;
		td_err("out of memory");
		return TD_EXIT_RUNTIME;
	}
	if (!stat(rp->perf_maps_found, &st) && S_ISDIR(st.st_mode))
		*dir = rp->perf_maps_found;
	return 0;
}

static int setup_pipeline(struct report *rp)
{
	const struct td_config *cfg = &rp->cfg;
	struct td_pipeline_config pc = {
		.nr_cpus = rp->nr_cpus,
		/*
		 * In a file, what follows an event on its CPU is known: the
		 * next record of that CPU, whatever its time stamp (a stalled
		 * vCPU can write the cookie long after its event). So an event
		 * is held until that record or the end, never for a time: at
		 * most one held event per CPU.
		 */
		.hold_ns = UINT64_MAX,
		.symbolize = cfg->symbolize,
		.debug_dir = cfg->debug_dir,
		/*
		 * Not live: a thread's process is looked up when its event is
		 * resolved, and only if task_live() says the tid is still the
		 * task of the file.
		 */
		.hooks = { .kernel_sym = kernel_sym, .task_live = task_live, .arg = rp },
		.pids = cfg->pids,
		.nr_pids = (unsigned int)cfg->nr_pids,
	};
	int ret;

	if (td_counters_init(&rp->counters, rp->nr_cpus)) {
		td_err("out of memory");
		return TD_EXIT_RUNTIME;
	}
	ret = find_perf_maps(rp, &pc.perf_maps_saved);
	if (ret)
		return ret;
	if (overwrites_input(rp, cfg->output) || overwrites_input(rp, cfg->folded) ||
	    overwrites_input(rp, cfg->flamegraph) || overwrites_input(rp, cfg->pprof)) {
		td_err("report: an output names the trace.dat being read, %s", rp->path);
		return TD_EXIT_USAGE;
	}
	if (td_outputs_check(cfg) || td_outputs_open(&rp->outputs, cfg))
		return TD_EXIT_RUNTIME;
	rp->outputs_open = true;
	if (rp->text) {
		trace_seq_init(&rp->seq);
		rp->seq_init = true;
	}
	if (cfg->symbolize) {
		/* Without it kernel frames are still named, their object "[kernel]". */
		rp->kmods = td_kmodules_from_tep(rp->tep);
		if (!rp->kmods)
			td_warn("report: cannot tell module symbols from the kernel's: %s",
				strerror(errno));
		rp->tasks = td_task_check_new(NULL);
		if (!rp->tasks) {
			td_err("out of memory");
			return TD_EXIT_RUNTIME;
		}
		rp->same_system = same_system(rp->tep);
	}
	td_config_stitch(cfg, &pc.stitch);
	rp->pl = td_pipeline_new(rp->tep, &pc);
	if (!rp->pl) {
		if (errno == ENOTSUP)
			td_err("report: %s comes from a 32-bit or big-endian system: not supported",
			       rp->path);
		else if (errno == EPROTO)
			td_err("report: %s: an ftrace stack event has fields trace-defer does not "
			       "know", rp->path);
		else
			td_err("report: cannot set up the pipeline: %s", strerror(errno));
		return TD_EXIT_RUNTIME;
	}
	if (td_outputs_attach(&rp->outputs, rp->pl) ||
	    (rp->text && td_pipeline_add_sink(rp->pl, &text_sink_ops, rp))) {
		td_err("out of memory");
		return TD_EXIT_RUNTIME;
	}
	return TD_EXIT_OK;
}

/*
 * Does the record lie within its sub-buffer? libtracecmd takes a record's
 * length from the file as it is: in a damaged file it can reach far past
 * the sub-buffer it was read from (and past the file's mapping). Sub-buffers
 * sit at multiples of their size in the file's (uncompressed) data, and a
 * record's offset counts from the sub-buffer's start, headers included.
 */
static bool record_sound(const struct report *rp, const struct tep_record *rec)
{
	uint64_t in_page = rec->offset % rp->page_size;

	return rec->size >= 0 && rec->record_size >= rec->size &&
	       in_page + (uint64_t)rec->record_size <= rp->page_size;
}

/* One record: checked, parsed, and trace time moved on. Returns 0, or -1 to stop. */
static int feed(struct report *rp, struct tep_record *rec, int cpu)
{
	rp->records++;
	if (cpu < 0 || cpu >= rp->nr_cpus) {
		rp->bad_cpu++;
		return 0;
	}
	if (!record_sound(rp, rec)) {
		rp->damaged++;
		return 0;
	}
	if (td_pipeline_record(rp->pl, cpu, rec) == -ENOMEM) {
		td_err("out of memory");
		rp->exit_code = TD_EXIT_RUNTIME;
		return -1;
	}
	if (!rp->first_ts)
		rp->first_ts = rec->ts;
	rp->last_ts = rec->ts;
	/* Every record older than this one has been read, on every CPU. */
	if (rec->ts >= rp->last_advance + ADVANCE_NS) {
		td_pipeline_advance(rp->pl, rec->ts);
		rp->last_advance = rec->ts;
	}
	if (rp->text_broken || td_pipeline_broken(rp->pl))
		return -1;
	/*
	 * Now and then, so that a failed write (the disk full) cuts the JSON
	 * file back to a recent whole line, not to nothing; and stops here.
	 */
	if (!(rp->records % FLUSH_RECORDS)) {
		td_outputs_flush(&rp->outputs);
		if (rp->outputs.flush_error) {
			rp->exit_code = TD_EXIT_RUNTIME;
			return -1;
		}
	}
	if (td_progress_due(&rp->progress)) {
		struct td_pipeline_stats st;

		td_pipeline_get_stats(rp->pl, &st);
		td_progress_show(&rp->progress, rec->ts, rp->records, st.resolved);
	}
	return 0;
}

/*
 * A first pass, when asked for: before naming anything, every
 * user_unwind_file record of the file into the file table, so that a stack
 * record is named even when the file record that describes its id lies
 * later in time (on another CPU, or the kernel's refresh after an
 * overrun); ids are never reused within an instance, so an id learnt from
 * anywhere in the buffer is the same file. And for the progress, the
 * records there are and the trace's time span (libtracecmd says neither).
 * Returns 0, or -ENOMEM.
 */
static int first_pass(struct report *rp)
{
	struct tep_event *ev = tep_find_event_by_name(rp->tep, "ftrace", "user_unwind_file");
	struct td_filetab *ft = td_pipeline_filetab(rp->pl);
	uint64_t first = 0, last = 0;
	struct tep_record *rec;
	int cpu, ret = 0;

	if (!ev && !rp->progress.every_ns)
		return 0;
	for (cpu = 0; cpu < rp->nr_cpus && !ret; cpu++) {
		for (rec = tracecmd_read_cpu_first(rp->input, cpu); rec;
		     rec = tracecmd_read_data(rp->input, cpu)) {
			in_library = 0;
			if (!first || rec->ts < first)
				first = rec->ts;
			if (rec->ts > last)
				last = rec->ts;
			rp->total_records++;
			if (ev && record_sound(rp, rec) && rec->size >= 2 &&
			    tep_data_type(rp->tep, rec) == ev->id &&
			    td_filetab_add_record(ft, ev, rec->data, rec->size) == -ENOMEM)
				ret = -ENOMEM;
			in_library = 1;
			tracecmd_free_record(rec);
			if (ret)
				break;
		}
	}
	td_progress_span(&rp->progress, first, last, rp->total_records);
	return ret;
}

/*
 * Every CPU's records merged by timestamp: one record read ahead per CPU,
 * the oldest handed on. tracecmd_iterate_events() does the same, but
 * libtracecmd 3.1.6 frees records it does not own when a callback stops it
 * early (a reader of stdout gone, as with `| head`). Returns 0, or -ENOMEM.
 */
static int read_records(struct report *rp)
{
	struct tep_record **next;
	int cpu, best, ret = 0;

	next = calloc(rp->nr_cpus > 0 ? (size_t)rp->nr_cpus : 1, sizeof(*next));
	if (!next)
		return -ENOMEM;
	/* From the start again: first_pass() may have read every CPU to its end. */
	td_libmsg_hook = lib_message;
	reading_records = true;
	for (cpu = 0; cpu < rp->nr_cpus; cpu++)
		next[cpu] = tracecmd_read_cpu_first(rp->input, cpu);
	while (!ret) {
		best = -1;
		for (cpu = 0; cpu < rp->nr_cpus; cpu++)
			if (next[cpu] && (best < 0 || next[cpu]->ts < next[best]->ts))
				best = cpu;
		if (best < 0)
			break;
		in_library = 0;
		ret = feed(rp, next[best], best);
		in_library = 1;
		tracecmd_free_record(next[best]);
		next[best] = ret ? NULL : tracecmd_read_data(rp->input, best);
	}
	for (cpu = 0; cpu < rp->nr_cpus; cpu++)
		if (next[cpu])
			tracecmd_free_record(next[cpu]);
	reading_records = false;
	td_libmsg_hook = NULL;
	free(next);
	td_progress_done(&rp->progress);
	return 0;
}

static void summary(struct report *rp)
{
	struct td_pipeline_stats st;
	const struct td_parser_stats *ps = &st.parse;
	const struct td_stitch_stats *ss = &st.stitch;
	const char *sink;
	int err;

	td_pipeline_get_stats(rp->pl, &st);
	err = td_pipeline_error(rp->pl, &sink);
	if (rp->outputs.flush_error) {
		/* Its lines dropped were said where they were dropped. */
		td_err("report: the JSON output could not be written whole");
		rp->exit_code = TD_EXIT_RUNTIME;
	} else if (err) {
		td_err("report: cannot write the %s output: %s (%" PRIu64 " events not written)",
		       sink, strerror(-err), st.sink_errors);
		if (rp->exit_code == TD_EXIT_OK)
			rp->exit_code = TD_EXIT_RUNTIME;
	}
	if (ps->missed_pages)
		td_warn("report: %" PRIu64 " sub-buffers of %s follow lost events (the buffer "
			"overran while recording): some stacks may be user_lost", ps->missed_pages,
			rp->path);
	if (rp->bad_cpu)
		td_warn("report: %" PRIu64 " records of a CPU beyond the file's %d skipped",
			rp->bad_cpu, rp->nr_cpus);
	if (rp->damaged) {
		td_err("report: %s is damaged: %" PRIu64 " records reach past their sub-buffer "
		       "(skipped)", rp->path, rp->damaged);
		if (rp->exit_code == TD_EXIT_OK)
			rp->exit_code = TD_EXIT_RUNTIME;
	}
	if (lib_warnings) {
		td_err("report: %s is damaged: libtracecmd could not read all of it (%" PRIu64
		       " warning(s) of it above); the events after a bad sub-buffer of a CPU "
		       "are missing", rp->path, lib_warnings);
		if (rp->exit_code == TD_EXIT_OK)
			rp->exit_code = TD_EXIT_RUNTIME;
	}
	if (rp->kernel_lookups && rp->kernel_unknown == rp->kernel_lookups)
		td_notice("report: %s holds no kernel symbols: kernel frames are not named",
			  rp->path);
	/*
	 * Raw user frames are what a user of a kernel without the series sees
	 * first, in every trace read after its programs exited: say why.
	 */
	if (st.uframes_gone && !ps->file_records && rp->same_system)
		td_notice("report: %s records no file identity (its kernel lacks the "
			  "user_unwind_file event): user frames are named from /proc/PID/maps, "
			  "so those of processes no longer running are not (%" PRIu64 " of %" PRIu64
			  " user frames)", rp->path, st.uframes_gone, st.uframes);
	/* Said once the count is known: none, nothing to say. */
	else if (st.uframes_gone && !rp->same_system)
		td_notice("report: %s was not recorded on the running system (its kernel "
			  "symbols are not where /proc/kallsyms has them): user frames without "
			  "file identity, which only its processes' /proc/PID/maps could name, are "
			  "not named (%" PRIu64 " of %" PRIu64 " user frames)", rp->path,
			  st.uframes_gone, st.uframes);
	/* -p: none of its processes in the file (a mistyped pid, one reused since). */
	if (rp->cfg.nr_pids && ps->events && !st.resolved)
		td_notice("report: %s holds no event of the process%s given with -p (%" PRIu64
			  " events of other processes left out)", rp->path,
			  rp->cfg.nr_pids > 1 ? "es" : "", st.other_pids);
	/*
	 * trace-cmd record -T saves kernel stacks only: every event no_user.
	 * (Those of other processes than -p's are not counted as emitted.)
	 */
	else if (ps->events && !ps->stacks && !ps->cookies && !ss->emitted[TD_STITCHED] &&
		 !ss->emitted[TD_INPLACE] && !st.other_user_stacks)
		td_notice("report: %s holds no user stack records: every event is no_user "
			  "(recorded without user stacks, as by trace-cmd record -T, or only "
			  "kernel threads' events traced; trace-defer record saves user stacks, "
			  "as does trace-cmd record -O userstacktrace)", rp->path);
	td_info("report: %s: records=%" PRIu64 " events=%" PRIu64 " cookies=%" PRIu64
		" stacks=%" PRIu64 " malformed=%" PRIu64 " orphan_records=%" PRIu64
		" interleaved=%" PRIu64,
		rp->path, ps->records, ps->events, ps->cookies, ps->stacks, ps->bad_records,
		ps->orphans, ps->interleaved);
	td_info("report:   emitted: stitched=%" PRIu64 " inplace=%" PRIu64 " no_user=%" PRIu64
		" user_lost=%" PRIu64 " unwind_failed=%" PRIu64 " other_processes=%" PRIu64
		" orphan_stacks=%" PRIu64 " exec_stacks=%" PRIu64 " stacks_cut=%" PRIu64,
		ss->emitted[TD_STITCHED], ss->emitted[TD_INPLACE], ss->emitted[TD_NO_USER],
		ss->emitted[TD_USER_LOST], ss->emitted[TD_UNWIND_FAILED], st.other_pids,
		ss->orphan_stacks, ss->exec_stacks, ps->stacks_cut);
	td_info("report:   stitch: late_events=%" PRIu64 " settled_stacks=%" PRIu64
		" duplicate_stacks=%" PRIu64 " stale_records=%" PRIu64 " superseded=%" PRIu64,
		ss->late_events, ss->settled_stacks, ss->duplicate_stacks, ss->stale_records,
		ss->superseded);
}

static int run(struct report *rp)
{
	int ret, code = open_input(rp);

	if (code)
		return code;
	code = setup_pipeline(rp);
	if (code)
		return code;
	rp->exit_code = TD_EXIT_OK;
	catch_faults(rp->path, true);
	ret = first_pass(rp);
	if (!ret)
		ret = read_records(rp);
	catch_faults(rp->path, false);
	if (ret) {
		td_err("out of memory");
		rp->exit_code = TD_EXIT_RUNTIME;
	}
	/* End of input: what still waits is written, stackless ones as user_lost. */
	td_pipeline_flush(rp->pl);
	td_outputs_flush(&rp->outputs);
	summary(rp);
	return rp->exit_code;
}

int td_report_main(int argc, char **argv)
{
	static char name[] = "trace-defer report";
	struct report rp = { 0 };
	int code;

	argv[0] = name;	/* for getopt's messages */
	/* A closed reader of stdout shows up as EPIPE: stop quietly, like `| head`. */
	signal(SIGPIPE, SIG_IGN);
	td_config_init(&rp.cfg);
	/* A file is finite: its profile and folded stacks keep every stack. */
	rp.cfg.profile_max_mem_kb = 0;
	rp.progress_secs = -1;
	code = parse_options(&rp, argc, argv);
	if (code) {
		td_config_free(&rp.cfg);
		return code > 0 ? TD_EXIT_OK : TD_EXIT_USAGE;
	}
	code = run(&rp);

	if (rp.text && !rp.text_broken && fflush(stdout) && errno != EPIPE) {
		td_err("error writing stdout: %s", strerror(errno));
		if (code == TD_EXIT_OK)
			code = TD_EXIT_RUNTIME;
	}
	if (rp.outputs_open)
		td_outputs_trace_span(&rp.outputs, rp.last_ts - rp.first_ts);
	if (rp.outputs_open && td_outputs_close(&rp.outputs) && code == TD_EXIT_OK)
		code = TD_EXIT_RUNTIME;
	td_pipeline_free(rp.pl);
	if (rp.seq_init)
		trace_seq_destroy(&rp.seq);
	td_task_check_free(rp.tasks);
	td_kmodules_free(rp.kmods);
	if (rp.input && rp.input != rp.file)
		tracecmd_close(rp.input);
	if (rp.file)
		tracecmd_close(rp.file);
	td_counters_free(&rp.counters);
	td_config_free(&rp.cfg);
	free(rp.perf_maps_found);
	return code;
}
