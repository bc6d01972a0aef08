// SPDX-License-Identifier: GPL-2.0
/*
 * One capture from start to end. The order matters for "leave nothing
 * behind": everything that can be checked without tracefs (outputs,
 * permissions, event names) is checked before the instance exists, and
 * every failure after that goes through the one teardown at the end, which
 * closes the readers before removing the instance.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include <trace-defer/parse.h>
#include <trace-defer/pipeline.h>
#include <trace-defer/task.h>

#include "capture.h"
#include "daemon.h"
#include "event_glob.h"
#include "log.h"
#include "names.h"
#include "record.h"
#include "service.h"

/* Every configured event must exist before we create anything. */
static int check_events(const struct td_config *cfg)
{
	for (size_t i = 0; i < cfg->nr_events; i++) {
		const struct td_event_spec *e = &cfg->events[i];

		if (!tracefs_event_file_exists(NULL, e->system, e->name, "format")) {
			td_err("unknown event %s:%s (no events/%s/%s in %s)", e->system, e->name,
			       e->system, e->name, tracefs_tracing_dir());
			return -1;
		}
	}
	return 0;
}

/* A pid that names no process is a typo more often than a race. */
static int check_pids(const struct td_config *cfg)
{
	for (size_t i = 0; i < cfg->nr_pids; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/proc/%d", cfg->pids[i]);
		if (access(path, F_OK)) {
			td_err("no process with pid %d", cfg->pids[i]);
			return -1;
		}
	}
	return 0;
}

static int load_formats(struct td_daemon *d)
{
	const char **systems = td_capture_systems(d->cfg);

	if (!systems) {
		td_err("out of memory");
		return -1;
	}
	d->tep = td_local_events(NULL, systems);
	free(systems);
	if (!d->tep) {
		td_err("cannot read the event formats from tracefs: %s", strerror(errno));
		return -1;
	}
	d->page_size = tep_get_sub_buffer_size(d->tep);
	if (d->page_size <= 0)
		d->page_size = getpagesize();
	return 0;
}

/*
 * The process of each -p, for the pipeline's filter: a thread id given
 * names its process. NULL when out of memory.
 */
static int *pid_tgids(const struct td_config *cfg)
{
	struct td_tgid_cache *tc = td_tgid_new(NULL);
	int *tgids = calloc(cfg->nr_pids, sizeof(*tgids));

	if (!tc || !tgids) {
		td_tgid_free(tc);
		free(tgids);
		return NULL;
	}
	for (size_t i = 0; i < cfg->nr_pids; i++) {
		int tgid = td_tgid_lookup(tc, cfg->pids[i], 0);

		tgids[i] = tgid > 0 ? tgid : cfg->pids[i];
	}
	td_tgid_free(tc);
	return tgids;
}

static int setup_pipeline(struct td_daemon *d)
{
	const struct td_config *cfg = d->cfg;
	struct td_pipeline_config pc = {
		.nr_cpus = (int)sysconf(_SC_NPROCESSORS_CONF),
		/*
		 * An event waits for the cookie record its task writes right
		 * after it; in a VM whose vCPU is preempted in between that can
		 * take more than the parser's default 10 ms of trace time. A
		 * quarter second keeps output well within the second a user
		 * expects.
		 */
		.hold_ns = 250 * 1000 * 1000ULL,
		.symbolize = cfg->symbolize,
		.debug_dir = cfg->debug_dir,
		.sym_max_bytes = cfg->symbols_max_mb << 20,
		.load_kallsyms = cfg->kernel_stack,
		.live = true,
		.exec_names_only = cfg->exec_names,
		.fork_names_only = cfg->fork_names,
		.execs_traced = td_capture_execs_traced(cfg),
	};
	char *cmdlines;
	int *tgids = NULL;

	td_config_stitch(cfg, &pc.stitch);
	/* What names a recording's JIT frames, kept for reading it later. */
	if (d->recorder)
		pc.perf_maps_save = td_recorder_maps_dir(d->recorder);
	if (cfg->nr_pids) {
		tgids = pid_tgids(cfg);
		if (!tgids) {
			td_err("out of memory");
			return -1;
		}
		pc.pids = tgids;
		pc.nr_pids = cfg->nr_pids;
	}
	pc.saved_cmdlines = cmdlines = tracefs_get_tracing_file("saved_cmdlines");
	d->pl = td_pipeline_new(d->tep, &pc);
	tracefs_put_tracing_file(cmdlines);
	free(tgids);
	if (!d->pl) {
		if (errno == ENOMEM)
			td_err("out of memory");
		else
			td_err("cannot set up the pipeline: %s", strerror(errno));
		return -1;
	}
	/* A sched_process_exec the parser cannot read would be output: not traced then. */
	if (cfg->exec_names && !td_pipeline_exec_names_only(d->pl)) {
		td_debug("sched:sched_process_exec has no usable filename field: not traced");
		d->cfg->exec_names = false;
		d->cfg->fork_names = false;
	}
	if (cfg->fork_names && !td_pipeline_fork_names_only(d->pl)) {
		td_debug("sched:sched_process_fork lacks child_comm or child_pid: not traced");
		d->cfg->fork_names = false;
	}
	return 0;
}

/*
 * Opened once everything that can refuse the run has passed (the tracefs
 * checks, the instance's lock, the kernel taking the filters and
 * triggers): a run that is refused, such as a second start of a running
 * service's configuration, must not cut or empty the files the first one
 * writes. The sinks go on before the first page is read.
 */
static int open_outputs(struct td_daemon *d)
{
	if (td_outputs_open(&d->outputs, d->cfg))
		return -1;
	d->outputs_open = true;
	if (td_outputs_attach(&d->outputs, d->pl)) {
		td_err("out of memory");
		return -1;
	}
	return 0;
}

int td_daemon_run(struct td_config *cfg)
{
	struct td_daemon d = { .cfg = cfg, .epfd = -1, .sigfd = -1, .timerfd = -1 };
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int code = TD_EXIT_OK;
	bool ran = false;
	int mode;

	td_service_init();
	d.inst.lock_fd = -1;
	d.inst.hold_fd = -1;
	if (td_counters_init(&d.counters, ncpu > 0 ? (int)ncpu : 1)) {
		td_err("out of memory");
		return TD_EXIT_RUNTIME;
	}
	if (check_pids(cfg)) {
		code = TD_EXIT_USAGE;
		goto out;
	}
	/* Opened later (open_outputs()); what would fail then is said first. */
	if (td_outputs_check(cfg)) {
		code = TD_EXIT_RUNTIME;
		goto out;
	}
	if (td_tracefs_check() || td_events_expand(cfg) || check_events(cfg)) {
		code = TD_EXIT_TRACEFS;
		goto out;
	}
	mode = td_capture_pick_mode(cfg->mode);
	if (mode < 0) {
		code = TD_EXIT_TRACEFS;
		goto out;
	}
	d.mode = mode;
	cfg->exec_names = td_capture_exec_names(cfg, mode);
	cfg->fork_names = td_capture_fork_names(cfg);
	cfg->record_names = td_capture_record_names(cfg);
	if (load_formats(&d)) {
		code = TD_EXIT_TRACEFS;
		goto out;
	}
	/* Before the pipeline: it saves the JITs' perf maps in the recording's directory. */
	if (cfg->record) {
		td_recorder_note_leftovers(cfg->record);
		d.recorder = td_recorder_open(cfg->record, ncpu > 0 ? (int)ncpu : 1, d.page_size);
		if (!d.recorder) {
			code = TD_EXIT_RUNTIME;
			goto out;
		}
	}
	if (setup_pipeline(&d)) {
		code = TD_EXIT_RUNTIME;
		goto out;
	}
	if (td_instance_open(&d.inst, cfg->run_dir, cfg->instance)) {
		code = TD_EXIT_TRACEFS;
		goto out;
	}
	td_capture_say_fallback(cfg->mode, mode);
	if (td_capture_setup(d.inst.tfs, cfg, mode) || td_loop_setup(&d)) {
		code = TD_EXIT_TRACEFS;
		goto out;
	}
	if (open_outputs(&d)) {
		code = TD_EXIT_RUNTIME;
		goto out;
	}
	if (d.recorder && td_recorder_helper(d.recorder))
		td_capture_exclude_pid(d.inst.tfs, td_recorder_helper(d.recorder));
	if (cfg->record_names) {
		d.names = td_names_open(cfg, d.tep, d.recorder);
		if (!d.names)
			td_warn("recording on without it: programs that exit at once may stay "
				"unnamed in %s", cfg->record);
	} else {
		td_names_clean_stale(cfg);
	}
	if (tracefs_trace_on(d.inst.tfs)) {
		td_err("cannot turn tracing on: %s", strerror(errno));
		code = TD_EXIT_TRACEFS;
		goto out;
	}
	/* --duration, rates and the whole run's profile count from here, not from set-up. */
	d.counters.start_ns = td_now_mono_ns();
	td_outputs_tracing_on(&d.outputs);
	d.counters.busy_start_ns = td_cpu_time_ns();
	td_notice("tracing %zu event(s) in instance '%s', mode %s (%s user stacks)%s",
		  cfg->nr_events, cfg->instance, td_mode_name(mode),
		  mode == TD_MODE_INPLACE ? "in-place" : "deferred",
		  !cfg->exec_names ? "" : cfg->fork_names ?
		  ", and sched:sched_process_exec and sched_process_fork only to name tasks" :
		  ", and sched:sched_process_exec only to name tasks");
	td_service_ready("tracing");

	td_loop_run(&d);
	td_loop_drain_and_stop(&d);
	ran = true;
	code = d.exit_code;
	if (td_outputs_end_profiles(&d.outputs) && code == TD_EXIT_OK)
		code = TD_EXIT_RUNTIME;
	if (td_log_level >= TD_LOG_WARN || cfg->stats_interval > 0)
		td_daemon_report(&d, "done");
out:
	/* Readers first: an open trace_pipe_raw keeps the instance from going. */
	td_loop_teardown(&d);
	if (d.inst.name && td_instance_close(&d.inst) && code == TD_EXIT_OK)
		code = TD_EXIT_TRACEFS;
	if (d.names) {
		struct td_names_stats ns;

		td_names_stop(d.names);
		td_names_get_stats(d.names, &ns);
		if (ran)
			td_notice("%llu program(s) named from their exec for the trace.dat "
				  "(%llu exec records, %llu without a name to give, %llu lost "
				  "to a full buffer)",
				  (unsigned long long)ns.named, (unsigned long long)ns.execs,
				  (unsigned long long)ns.unnamed, (unsigned long long)ns.lost);
		if (td_names_close(d.names) && code == TD_EXIT_OK)
			code = TD_EXIT_TRACEFS;
		d.names = NULL;
	}
	/* After the readers and the instance are gone: trace-cmd runs in a child. */
	if (d.recorder && ran) {
		if (td_recorder_finish(d.recorder) && code == TD_EXIT_OK)
			code = TD_EXIT_RUNTIME;
	} else if (d.recorder) {
		td_recorder_abort(d.recorder);
	}
	d.recorder = NULL;
	if (((d.pl && td_pipeline_error(d.pl, NULL)) || d.outputs.flush_error) &&
	    code == TD_EXIT_OK)
		code = TD_EXIT_RUNTIME;
	td_pipeline_free(d.pl);
	/* Nothing traced: the whole run's files from before are left as they were. */
	if (d.outputs_open && !ran)
		td_outputs_abandon(&d.outputs);
	if (d.outputs_open && td_outputs_close(&d.outputs) && code == TD_EXIT_OK)
		code = TD_EXIT_RUNTIME;
	if (d.tep)
		tep_free(d.tep);
	td_counters_free(&d.counters);
	return code;
}
