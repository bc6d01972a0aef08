// SPDX-License-Identifier: GPL-2.0
/*
 * trace-defer: command line, --help, exit statuses. Everything else lives
 * in daemon.c (one capture) and instance.c (--cleanup).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopts.h"
#include "config.h"
#include "daemon.h"
#include "instance.h"
#include "log.h"
#include "names.h"
#include "record.h"
#include "report.h"
#include "service.h"

#ifndef TD_VERSION
#define TD_VERSION "0.1"
#endif

enum {
	OPT_COMM = 256,
	OPT_STATS_INTERVAL,
	OPT_MAX_PENDING,
	OPT_MAX_STACKS,
	OPT_MAX_WAIT_MS,
	OPT_BUFFER_PERCENT,
	OPT_CLOCK,
	OPT_NO_KSTACK,
	OPT_KSTACK,
	OPT_NO_SYMBOLIZE,
	OPT_SYMBOLIZE,
	OPT_NO_APPEND,
	OPT_NO_PROFILE_FOLDED,
	OPT_DEBUG_DIR,
	OPT_RUN_DIR,
	OPT_CLEANUP,
	OPT_FORCE,
	OPT_PRINT_CONFIG,
	OPT_RECORD,
	OPT_JSON_LAYOUT,
	OPT_PPROF,
	OPT_PROFILE_DIR,
	OPT_PROFILE_INTERVAL,
	OPT_PROFILE_FOLDED,
	OPT_PROFILE_KEEP,
	OPT_PROFILE_MAX_KB,
	OPT_PROFILE_MAX_MEM_KB,
	OPT_SYMBOLS_MAX_MB,
	OPT_RECOVER,
};

static const struct option long_opts[] = {
	{ "config",		required_argument, NULL, 'c' },
	{ "event",		required_argument, NULL, 'e' },
	{ "mode",		required_argument, NULL, 'm' },
	{ "instance",		required_argument, NULL, 'i' },
	{ "buffer-kb",		required_argument, NULL, 'b' },
	{ "output",		required_argument, NULL, 'o' },
	{ "append",		no_argument,	   NULL, 'a' },
	{ "no-append",		no_argument,	   NULL, OPT_NO_APPEND },
	{ "json-layout",	required_argument, NULL, OPT_JSON_LAYOUT },
	{ "folded",		required_argument, NULL, 'f' },
	{ "flamegraph",		required_argument, NULL, 'F' },
	{ "record",		required_argument, NULL, OPT_RECORD },
	{ "pprof",		required_argument, NULL, OPT_PPROF },
	{ "profile-dir",	required_argument, NULL, OPT_PROFILE_DIR },
	{ "profile-interval",	required_argument, NULL, OPT_PROFILE_INTERVAL },
	{ "profile-folded",	no_argument,	   NULL, OPT_PROFILE_FOLDED },
	{ "no-profile-folded",	no_argument,	   NULL, OPT_NO_PROFILE_FOLDED },
	{ "profile-keep",	required_argument, NULL, OPT_PROFILE_KEEP },
	{ "profile-max-kb",	required_argument, NULL, OPT_PROFILE_MAX_KB },
	{ "profile-max-mem-kb",	required_argument, NULL, OPT_PROFILE_MAX_MEM_KB },
	{ "symbols-max-mb",	required_argument, NULL, OPT_SYMBOLS_MAX_MB },
	{ "pid",		required_argument, NULL, 'p' },
	{ "comm",		required_argument, NULL, OPT_COMM },
	{ "duration",		required_argument, NULL, 'd' },
	{ "stats-interval",	required_argument, NULL, OPT_STATS_INTERVAL },
	{ "max-pending",	required_argument, NULL, OPT_MAX_PENDING },
	{ "max-stacks",		required_argument, NULL, OPT_MAX_STACKS },
	{ "max-wait-ms",	required_argument, NULL, OPT_MAX_WAIT_MS },
	{ "buffer-percent",	required_argument, NULL, OPT_BUFFER_PERCENT },
	{ "clock",		required_argument, NULL, OPT_CLOCK },
	{ "no-kernel-stack",	no_argument,	   NULL, OPT_NO_KSTACK },
	{ "kernel-stack",	no_argument,	   NULL, OPT_KSTACK },
	{ "no-symbolize",	no_argument,	   NULL, OPT_NO_SYMBOLIZE },
	{ "symbolize",		no_argument,	   NULL, OPT_SYMBOLIZE },
	{ "debug-dir",		required_argument, NULL, OPT_DEBUG_DIR },
	{ "run-dir",		required_argument, NULL, OPT_RUN_DIR },
	{ "cleanup",		no_argument,	   NULL, OPT_CLEANUP },
	{ "force",		no_argument,	   NULL, OPT_FORCE },
	{ "recover",		required_argument, NULL, OPT_RECOVER },
	{ "print-config",	no_argument,	   NULL, OPT_PRINT_CONFIG },
	{ "quiet",		no_argument,	   NULL, 'q' },
	{ "verbose",		no_argument,	   NULL, 'v' },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "version",		no_argument,	   NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static const char short_opts[] = "c:e:m:i:b:o:af:F:p:d:qvhV";

static void usage(FILE *f)
{
	fputs(
"Usage: trace-defer [OPTION]...\n"
"       trace-defer record -o FILE.dat [OPTION]...\n"
"       trace-defer record --recover DIR [-o FILE.dat]\n"
"       trace-defer report FILE.dat [--text|--json|-o FILE.jsonl] [OPTION]...\n"
"Trace kernel events with their kernel and user-space stacks: ftrace deferred\n"
"user stacks stitched to their events, symbolized, written as JSON lines,\n"
"folded stacks, flame graphs and pprof profiles. Runs until SIGINT/SIGTERM or --duration.\n"
"\n"
"Capture:\n"
"  -e, --event SYS:NAME[:FILTER]  event to trace, with an optional ftrace filter\n"
"                                 (repeatable; default sched:sched_switch);\n"
"                                 SYS and NAME may be patterns (sched:sched_wak*),\n"
"                                 a bare SYS is all its events, a bare NAME that\n"
"                                 event in whichever system has it\n"
"  -p, --pid PID          only events of process PID, threads started later\n"
"                         too (repeatable)\n"
"      --comm NAME        only tasks named NAME (a glob if it has * ? [)\n"
"  -m, --mode MODE        auto (default), option, trigger or inplace\n"
"      --no-kernel-stack  do not record kernel stacks (--kernel-stack: do)\n"
"  -b, --buffer-kb N      ring buffer size per CPU, KiB\n"
"      --buffer-percent N reader wake-up watermark, 0-100 (default 10)\n"
"      --clock NAME       trace clock: local, global, mono, mono_raw, boot, tai, perf\n"
"  -i, --instance NAME    tracefs instance name (default trace-defer)\n"
"      --run-dir DIR      where the instance lock lives (default /run/trace-defer)\n"
"  -d, --duration SEC     stop after SEC seconds\n"
"\n"
"Output:\n"
"  -o, --output FILE      JSON lines (- for stdout, the default when no output\n"
"                         of any kind is given)\n"
"  -a, --append           append to FILE instead of truncating it\n"
"                         (--no-append: truncate it)\n"
"      --json-layout L    interned (default: each distinct stack once, as a\n"
"                         \"stack\" line, events refer to it by id), full\n"
"                         (every event line holds its stacks, schema 1) or\n"
"                         compact (interned, and event lines are arrays of\n"
"                         values whose names a \"format\" line gives, schema 3)\n"
"  -f, --folded FILE      folded stacks for flame graph tools (- for stdout)\n"
"  -F, --flamegraph FILE  flame graph SVG\n"
"      --pprof FILE       pprof profile of the whole run (gzipped profile.proto,\n"
"                         for go tool pprof), written at exit and on SIGHUP\n"
"      --profile-dir DIR  a pprof profile per interval, DIR/profile-TIME.pb.gz\n"
"      --profile-interval SEC  its length (default 60)\n"
"      --profile-folded   folded stacks per interval too (profile-TIME.folded;\n"
"                         --no-profile-folded: not)\n"
"      --profile-keep N   keep at most N intervals (default 60, 0: no bound)\n"
"      --profile-max-kb K and at most K KiB of them (default 65536, 0: no bound)\n"
"      --profile-max-mem-kb K  cut an interval early when its tables take K KiB\n"
"                         (default 65536, 0: no bound)\n"
"      --record FILE.dat  also save the raw buffers as a trace.dat (trace-cmd\n"
"                         report, KernelShark), built at exit with trace-cmd\n"
"      --no-symbolize     raw addresses only (in JSON; profiles: user frames [unknown])\n"
"      --symbolize        name frames (the default)\n"
"      --debug-dir DIR    separate debug files (default /usr/lib/debug)\n"
"      --symbols-max-mb M  forget the files named so far when their symbols and\n"
"                         names take M MiB (default 256, 0: no bound)\n"
"      --stats-interval SEC  print counters every SEC seconds\n"
"\n"
"Stitching bounds:\n"
"      --max-pending N    events waiting for their user stack\n"
"      --max-stacks N     user stacks waiting for their events\n"
"      --max-wait-ms N    how long an event waits for its stack, in trace time\n"
"                         (default 60000)\n"
"\n"
"Other:\n"
"  -c, --config FILE      read settings from FILE (key = value lines); options\n"
"                         given on the command line override it (the\n"
"                         negative options above undo its yes and no)\n"
"      --cleanup          remove the instance left by a crashed run, then exit\n"
"      --force            with --cleanup: also an instance another program made\n"
"      --print-config     print the effective settings and exit\n"
"  -q, --quiet            errors only (counters too with --stats-interval)\n"
"  -v, --verbose          more messages (twice: debug)\n"
"  -h, --help             this help\n"
"  -V, --version          version\n"
"\n"
"'trace-defer record' writes only a trace.dat: -o names it (same as --record\n"
"FILE.dat with no JSON output), on the command line only: a config file's\n"
"output is JSON lines, not written by record. 'trace-defer report' reads one\n"
"back and prints its events with their stitched stacks (see 'trace-defer\n"
"report --help').\n"
"A recording that never reached its end (killed, out of memory, power lost)\n"
"leaves its sub-buffers in FILE.dat.raw.XXXXXX: 'trace-defer record --recover\n"
"FILE.dat.raw.XXXXXX' makes FILE.dat of them (or the file -o names).\n"
"\n"
"Signals: SIGINT/SIGTERM drain and stop, SIGHUP reopens outputs, SIGUSR1\n"
"prints counters; SIGINT/SIGTERM while the trace.dat is built (at exit, or by\n"
"--recover) stop trace-cmd, keeping the raw files (status 1). Without the\n"
"kernel's deferred stack events, mode auto falls back to the in-place\n"
"userstacktrace option (status \"inplace\", 8 frames).\n"
"\n"
"Exit status: 0 ok, 1 runtime error (outputs, memory), 2 usage or config\n"
"error, 3 tracefs error (not root, no tracefs, unknown event, bad filter,\n"
"instance busy). See trace-defer(8).\n", f);
}

struct cli {
	bool record_cmd;	/* "trace-defer record": -o is the trace.dat */
	const char *recover;	/* "trace-defer record --recover DIR" */
	const char *config;
	bool cleanup;
	bool force;		/* --cleanup removes an instance trace-defer did not make */
	bool print_config;
	bool events_seen;
	bool pids_seen;
	bool record_seen;	/* --record given */
	bool output_seen;	/* -o given on the command line (record: the trace.dat) */
	char other[40];		/* the first option that is not -o, -c, -v or -q */
	int verbose;
	bool quiet;
};

/*
 * First pass: only what decides how to read the rest (config file, help).
 * Returns 1 (help or version said), 0, or -1 (a long option abbreviated).
 */
static int pre_scan(int argc, char **argv, struct cli *cli)
{
	int c;

	if (td_cli_exact_long_opts(argc, argv, short_opts, long_opts))
		return -1;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cli->config = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("trace-defer %s\n", TD_VERSION);
			return 1;
		default:
			break;
		}
	}
	return 0;
}

/*
 * An option given twice with two values: the later wins, as in the
 * configuration file, and is said so there too (--comm a --comm b is
 * not a or b). Options that add to a list (-e, -p) excepted.
 */
static void note_option(struct td_config *cfg, const char *key, const char *value,
			const char *opt)
{
	static struct {
		const char *key;
		char value[256];
	} given[64];
	static size_t nr;
	size_t i;

	if (td_config_repeatable(key))
		return;
	for (i = 0; i < nr && strcmp(given[i].key, key); i++)
		;
	if (i < nr && strncmp(given[i].value, value, sizeof(given[i].value) - 1))
		td_config_note(cfg, "%s given again: '%s' is used, not '%s'", opt, value,
			       given[i].value);
	if (i == nr) {
		if (nr == sizeof(given) / sizeof(given[0]))
			return;
		given[nr++].key = key;
	}
	snprintf(given[i].value, sizeof(given[i].value), "%s", value);
}

static int apply(struct td_config *cfg, const char *key, const char *value, const char *opt)
{
	char where[64];

	note_option(cfg, key, value, opt);
	snprintf(where, sizeof(where), "option %s", opt);
	return td_config_set(cfg, key, value, where);
}

/* Second pass: every option, over what the config file set. */
static int parse_options(int argc, char **argv, struct td_config *cfg, struct cli *cli)
{
	int c, idx;

	opterr = 1;
	optind = 0;
	for (idx = -1; (c = getopt_long(argc, argv, short_opts, long_opts, &idx)) != -1;
	     idx = -1) {
		int ret = 0;

		/* For 'record --recover', which takes none of them; as it was given. */
		if (!cli->other[0] && c != 'o' && c != 'c' && c != 'v' && c != 'q' &&
		    c != OPT_RECOVER && c != '?') {
			size_t n = sizeof(cli->other);

			if (idx >= 0)
				snprintf(cli->other, n, "--%s", long_opts[idx].name);
			else
				snprintf(cli->other, n, "-%c", c);
		}
		switch (c) {
		case 'c':
			/* Read by pre_scan(): the last one given. */
			note_option(cfg, "config", optarg, "--config");
			break;
		case 'h':
		case 'V':
			break;
		case 'e':
			if (!cli->events_seen)
				td_config_clear_events(cfg);
			cli->events_seen = true;
			ret = apply(cfg, "event", optarg, "--event");
			break;
		case 'p':
			if (!cli->pids_seen)
				td_config_clear_pids(cfg);
			cli->pids_seen = true;
			ret = apply(cfg, "pid", optarg, "--pid");
			break;
		case 'm':
			ret = apply(cfg, "mode", optarg, "--mode");
			break;
		case 'i':
			ret = apply(cfg, "instance", optarg, "--instance");
			break;
		case 'b':
			ret = apply(cfg, "buffer_kb", optarg, "--buffer-kb");
			break;
		case 'o':
			cli->output_seen = true;
			ret = apply(cfg, "output", optarg, "--output");
			break;
		case 'a':
			cfg->output_append = true;
			break;
		case OPT_NO_APPEND:
			cfg->output_append = false;
			break;
		case 'f':
			ret = td_cli_output_name("-f (--folded)", optarg) ?:
			      apply(cfg, "folded", optarg, "--folded");
			break;
		case 'F':
			ret = td_cli_output_name("-F (--flamegraph)", optarg) ?:
			      apply(cfg, "flamegraph", optarg, "--flamegraph");
			break;
		case 'd':
			ret = apply(cfg, "duration", optarg, "--duration");
			break;
		case OPT_COMM:
			ret = apply(cfg, "comm", optarg, "--comm");
			break;
		case OPT_STATS_INTERVAL:
			ret = apply(cfg, "stats_interval", optarg, "--stats-interval");
			break;
		case OPT_MAX_PENDING:
			ret = apply(cfg, "max_pending", optarg, "--max-pending");
			break;
		case OPT_MAX_STACKS:
			ret = apply(cfg, "max_stacks", optarg, "--max-stacks");
			break;
		case OPT_MAX_WAIT_MS:
			ret = apply(cfg, "max_wait_ms", optarg, "--max-wait-ms");
			break;
		case OPT_BUFFER_PERCENT:
			ret = apply(cfg, "buffer_percent", optarg, "--buffer-percent");
			break;
		case OPT_CLOCK:
			ret = apply(cfg, "trace_clock", optarg, "--clock");
			break;
		case OPT_NO_KSTACK:
			cfg->kernel_stack = false;
			break;
		case OPT_KSTACK:
			cfg->kernel_stack = true;
			break;
		case OPT_NO_SYMBOLIZE:
			cfg->symbolize = false;
			break;
		case OPT_SYMBOLIZE:
			cfg->symbolize = true;
			break;
		case OPT_RECORD:
			cli->record_seen = true;
			ret = apply(cfg, "record", optarg, "--record");
			break;
		case OPT_JSON_LAYOUT:
			ret = apply(cfg, "json_layout", optarg, "--json-layout");
			break;
		case OPT_PPROF:
			ret = apply(cfg, "pprof", optarg, "--pprof");
			break;
		case OPT_PROFILE_DIR:
			ret = apply(cfg, "profile_dir", optarg, "--profile-dir");
			break;
		case OPT_PROFILE_INTERVAL:
			ret = apply(cfg, "profile_interval", optarg, "--profile-interval");
			break;
		case OPT_PROFILE_FOLDED:
			cfg->profile_folded = true;
			break;
		case OPT_NO_PROFILE_FOLDED:
			cfg->profile_folded = false;
			break;
		case OPT_PROFILE_KEEP:
			ret = apply(cfg, "profile_keep", optarg, "--profile-keep");
			break;
		case OPT_PROFILE_MAX_KB:
			ret = apply(cfg, "profile_max_kb", optarg, "--profile-max-kb");
			break;
		case OPT_PROFILE_MAX_MEM_KB:
			ret = apply(cfg, "profile_max_mem_kb", optarg, "--profile-max-mem-kb");
			break;
		case OPT_SYMBOLS_MAX_MB:
			ret = apply(cfg, "symbols_max_mb", optarg, "--symbols-max-mb");
			break;
		case OPT_DEBUG_DIR:
			ret = apply(cfg, "debug_dir", optarg, "--debug-dir");
			break;
		case OPT_RUN_DIR:
			ret = apply(cfg, "run_dir", optarg, "--run-dir");
			break;
		case OPT_CLEANUP:
			cli->cleanup = true;
			break;
		case OPT_FORCE:
			cli->force = true;
			break;
		case OPT_RECOVER:
			note_option(cfg, "recover", optarg, "--recover");
			cli->recover = optarg;
			break;
		case OPT_PRINT_CONFIG:
			cli->print_config = true;
			break;
		case 'q':
			cli->quiet = true;
			break;
		case 'v':
			cli->verbose++;
			break;
		default:
			/* getopt printed what was wrong. */
			fputs("Try 'trace-defer --help'.\n", stderr);
			return -1;
		}
		if (ret)
			return -1;
	}
	if (optind < argc) {
		if (!strcmp(argv[optind], "record") || !strcmp(argv[optind], "report"))
			td_err("'%s' is a command: it comes first (trace-defer %s [OPTION]...)",
			       argv[optind], argv[optind]);
		else
			td_err("unexpected argument '%s' (try --help)", argv[optind]);
		return -1;
	}
	return 0;
}

/* --cleanup: the instance, and the names instance of a recording (names.h). */
static int cleanup(const struct td_config *cfg, bool force)
{
	char *names = td_names_instance(cfg->instance);
	int ret;

	if (!names) {
		td_err("out of memory");
		return TD_EXIT_RUNTIME;
	}
	ret = td_tracefs_check() || td_instance_cleanup(cfg->run_dir, cfg->instance, force);
	/*
	 * Made only by recordings, and implied, not named: removed only when
	 * it is a dead run's (someone's own NAME-names is left alone).
	 */
	if (!ret)
		ret = td_instance_remove_stale(cfg->run_dir, names);
	free(names);
	return ret ? TD_EXIT_TRACEFS : TD_EXIT_OK;
}

int main(int argc, char **argv)
{
	static char name[] = "trace-defer";
	struct td_config cfg;
	struct cli cli = { 0 };
	bool conf_output = false;
	sigset_t set;
	int code;

	/* getopt's messages start as ours do, whatever path ran us (journalctl | grep). */
	argv[0] = name;

	/* Reading a trace.dat: no tracefs, no signals to wait for, options of its own. */
	if (argc > 1 && !strcmp(argv[1], "report"))
		return td_report_main(argc - 1, argv + 1);

	/*
	 * Block the signals we handle before anything else, so one that
	 * arrives during set-up waits for the loop's signalfd instead of
	 * killing us with an instance half made.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* A closed stdout reader shows up as EPIPE on write. */
	signal(SIGPIPE, SIG_IGN);

	td_config_init(&cfg);
	if (argc > 1 && !strcmp(argv[1], "record")) {
		cli.record_cmd = true;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	code = pre_scan(argc, argv, &cli);
	if (code) {
		td_config_free(&cfg);
		/* --help, --version; or a long option abbreviated */
		return code > 0 ? TD_EXIT_OK : TD_EXIT_USAGE;
	}
	if (cli.config && td_config_load(&cfg, cli.config)) {
		code = TD_EXIT_USAGE;
		goto out;
	}
	td_log_level = cfg.verbosity;
	if (parse_options(argc, argv, &cfg, &cli)) {
		code = TD_EXIT_USAGE;
		goto out;
	}
	if (cli.quiet)
		cfg.verbosity = TD_LOG_ERR;
	cfg.verbosity += cli.verbose;
	if (cfg.verbosity > TD_LOG_DEBUG)
		cfg.verbosity = TD_LOG_DEBUG;
	td_log_level = cfg.verbosity;
	if (cli.force && !cli.cleanup) {
		td_err("--force goes with --cleanup (try --help)");
		code = TD_EXIT_USAGE;
		goto out;
	}
	/*
	 * record and --recover: only the command line's -o names the
	 * trace.dat. A configuration file's output is the JSON lines (the
	 * service's log, say), which record does not write: never the file
	 * to put a trace.dat in.
	 */
	if (cli.record_cmd && !cli.output_seen && cfg.output) {
		if (cli.recover)
			td_info("record --recover: the configuration's output (%s) is JSON lines, "
				"not the trace.dat", cfg.output);
		free(cfg.output);
		cfg.output = NULL;
		conf_output = true;
	}
	if (cli.recover) {
		if (!cli.record_cmd) {
			td_err("--recover goes with 'trace-defer record' (try --help)");
			code = TD_EXIT_USAGE;
		} else if (cfg.output && !strcmp(cfg.output, "-")) {
			td_err("record --recover: a trace.dat cannot go to standard output");
			code = TD_EXIT_USAGE;
		} else if (cli.other[0]) {
			td_err("record --recover takes only -o (and -c, -v, -q): %s is for a recording",
			       cli.other);
			code = TD_EXIT_USAGE;
		} else {
			/* A long trace-cmd under systemd asks for the time it takes (service.h). */
			td_service_init();
			code = td_recorder_recover(cli.recover, cfg.output);
			code = !code ? TD_EXIT_OK : code == -EINVAL ? TD_EXIT_USAGE :
			       TD_EXIT_RUNTIME;
		}
		goto out;
	}
	if (cli.record_cmd) {
		if (!cfg.output || !strcmp(cfg.output, "-")) {
			td_err("record: give the trace.dat to write with -o FILE.dat%s",
			       conf_output ? " (the configuration's output is JSON lines, "
			       "which record does not write)" : "");
			code = TD_EXIT_USAGE;
			goto out;
		}
		if (cli.record_seen) {
			td_err("record: -o names the trace.dat; --record is the live daemon's "
			       "(trace-defer --record FILE.dat -o OUTPUT)");
			code = TD_EXIT_USAGE;
			goto out;
		}
		free(cfg.record);
		cfg.record = cfg.output;
		cfg.output = NULL;
		/* No output shows frames: naming them would be work for nothing. */
		if (!cfg.folded && !cfg.flamegraph && !cfg.pprof && !cfg.profile_dir)
			cfg.symbolize = false;
	}
	if (td_config_check(&cfg)) {
		code = TD_EXIT_USAGE;
		goto out;
	}
	if (cli.print_config) {
		td_config_dump(&cfg, stdout);
		code = TD_EXIT_OK;
		goto out;
	}
	if (cli.cleanup) {
		/*
		 * No loop reads the signals here: SIGINT, SIGTERM and SIGHUP
		 * take their default action, the end (`timeout`, a Ctrl-C).
		 * What is left, another --cleanup removes.
		 */
		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGHUP);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		code = cleanup(&cfg, cli.force);
		goto out;
	}
	/* Nothing asked for: a person at a terminal wants to see the records. */
	if (!cfg.output && !cfg.folded && !cfg.flamegraph && !cfg.record && !cfg.pprof &&
	    !cfg.profile_dir) {
		cfg.output = strdup("-");
		if (!cfg.output) {
			td_err("out of memory");
			code = TD_EXIT_RUNTIME;
			goto out;
		}
	}
	code = td_daemon_run(&cfg);
out:
	td_config_free(&cfg);
	return code;
}
