// SPDX-License-Identifier: GPL-2.0
/*
 * Event, filter, trigger and option set-up of the daemon's instance.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "capture.h"
#include "log.h"

bool td_capture_kernel_has_deferred(void)
{
	return tracefs_event_file_exists(NULL, "ftrace", "user_unwind_cookie", "format") &&
	       tracefs_event_file_exists(NULL, "ftrace", "user_unwind_stack", "format");
}

int td_capture_pick_mode(enum td_mode wanted)
{
	bool deferred = td_capture_kernel_has_deferred();

	switch (wanted) {
	case TD_MODE_AUTO:
		return deferred ? TD_MODE_OPTION : TD_MODE_INPLACE;
	case TD_MODE_OPTION:
	case TD_MODE_TRIGGER:
		if (!deferred) {
			td_err("mode %s needs a kernel with deferred user stacks "
			       "(events/ftrace/user_unwind_cookie is missing); use --mode inplace "
			       "or --mode auto", td_mode_name(wanted));
			return -1;
		}
		return wanted;
	case TD_MODE_INPLACE:
		return wanted;
	}
	return -1;
}

void td_capture_say_fallback(enum td_mode wanted, int mode)
{
	if (wanted != TD_MODE_AUTO || mode != TD_MODE_INPLACE)
		return;
	td_warn("this kernel has no deferred user stacks (no events/ftrace/"
		"user_unwind_cookie): falling back to the in-place 'userstacktrace' "
		"option, at most 8 user frames, every record marked \"inplace\"; user "
		"frames are named from /proc/PID/maps when their records are read: those of "
		"processes that exit before (short-lived programs) stay unnamed, as do those "
		"of a trace.dat read once its processes are gone");
}

/* Print what the kernel said in the instance's error_log, if anything. */
static void show_error_log(struct tracefs_instance *tfs)
{
	char *log = tracefs_error_last(tfs);
	char *line, *save = NULL;

	if (!log || !*log) {
		free(log);
		return;
	}
	td_err("kernel error_log says:");
	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(stderr, "    %s\n", line);
	free(log);
}

struct strbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_add(struct strbuf *sb, const char *fmt, ...)
{
	char *grown;
	va_list ap;
	size_t cap;
	int n;

	if (sb->oom)
		return;
	for (;;) {
		size_t room = sb->cap - sb->len;

		va_start(ap, fmt);
		n = vsnprintf(sb->s ? sb->s + sb->len : NULL, sb->s ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			sb->oom = true;
			return;
		}
		if (sb->s && (size_t)n < room) {
			sb->len += n;
			return;
		}
		cap = sb->cap * 2 + n + 64;
		grown = realloc(sb->s, cap);
		if (!grown) {
			sb->oom = true;	/* the caller frees what it holds */
			return;
		}
		sb->s = grown;
		sb->cap = cap;
	}
}

/* The thread ids of process @pid, each followed by a space; @pid alone if /proc lists none. */
static void add_tids(struct strbuf *sb, int pid)
{
	char path[64];
	struct dirent *d;
	bool added = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		int tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		sb_add(sb, "%d ", tid);
		added = true;
	}
	if (dir)
		closedir(dir);
	if (!added)
		sb_add(sb, "%d ", pid);
}

/* Write every thread of the processes of -p to set_event_pid (@append: add to it). */
static int write_event_pids(struct tracefs_instance *tfs, const struct td_config *cfg,
			    bool append)
{
	struct strbuf sb = { 0 };
	int ret;

	for (size_t i = 0; i < cfg->nr_pids; i++)
		add_tids(&sb, cfg->pids[i]);
	if (sb.oom) {
		free(sb.s);
		td_err("out of memory");
		return -1;
	}
	ret = append ? tracefs_instance_file_append(tfs, "set_event_pid", sb.s) :
		       tracefs_instance_file_write(tfs, "set_event_pid", sb.s);
	free(sb.s);
	if (ret < 0) {
		td_err("cannot write the threads of the traced processes to set_event_pid: %s",
		       strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * -p: the kernel's pid list holds every thread of the processes, and with
 * the option event-fork also the threads they start later (and their child
 * processes, which the pipeline drops). With the option on first, a thread
 * started after the first read of /proc is either in the second one or
 * started by a listed thread.
 */
static int follow_pids(struct tracefs_instance *tfs, const struct td_config *cfg)
{
	if (tracefs_option_enable(tfs, TRACEFS_OPTION_EVENT_FORK)) {
		td_err("cannot set option event-fork: %s", strerror(errno));
		return -1;
	}
	return write_event_pids(tfs, cfg, false) || write_event_pids(tfs, cfg, true) ? -1 : 0;
}

/* The whole filter of one event, or NULL when there is none (or out of memory: *oom). */
static char *build_filter(const struct td_config *cfg, const struct td_event_spec *ev, bool *oom)
{
	struct strbuf sb = { 0 };
	int parts = 0;

	if (ev->filter) {
		sb_add(&sb, "(%s)", ev->filter);
		parts++;
	}
	/*
	 * Never trace ourselves: every wake-up of the reader would make more
	 * events. Also with -p (set_event_pid): the term makes the triggers
	 * conditional, and the kernel calls an unconditional trigger before
	 * it looks at the pid list, for every task.
	 */
	sb_add(&sb, "%scommon_pid != %d", parts++ ? " && " : "", (int)getpid());
	if (cfg->comm) {
		/* COMM is the current task's comm, for every event; ~ takes a glob. */
		sb_add(&sb, "%sCOMM %s \"%s\"", parts++ ? " && " : "",
		       strpbrk(cfg->comm, "*?[") ? "~" : "==", cfg->comm);
	}
	*oom = sb.oom;
	if (sb.oom) {
		free(sb.s);
		return NULL;
	}
	return sb.s;
}

static int write_trigger(struct tracefs_instance *tfs, const struct td_event_spec *ev,
			 const char *cmd, const char *filter)
{
	char *str = NULL;

	if (asprintf(&str, "%s%s%s", cmd, filter ? " if " : "", filter ? filter : "") < 0) {
		td_err("out of memory");
		return -1;
	}
	tracefs_error_clear(tfs);
	if (tracefs_event_file_append(tfs, ev->system, ev->name, "trigger", str) < 0) {
		td_err("event %s:%s: the kernel refused trigger '%s': %s", ev->system, ev->name,
		       str, strerror(errno));
		show_error_log(tfs);
		free(str);
		return -1;
	}
	free(str);
	return 0;
}

/* The event traced only to name the tasks that exec (cfg->exec_names). */
static const struct td_event_spec exec_names_event = {
	.system = "sched",
	.name = "sched_process_exec",
};

bool td_capture_exec_names(const struct td_config *cfg, enum td_mode mode)
{
	if (cfg->record)
		return false;
	for (size_t i = 0; i < cfg->nr_events; i++) {
		const struct td_event_spec *e = &cfg->events[i];

		if (strcmp(e->system, "sched"))
			continue;
		if (!strcmp(e->name, "sched_process_exec") ||
		    (!strcmp(e->name, "sched_switch") && mode != TD_MODE_INPLACE))
			return false;
	}
	return tracefs_event_file_exists(NULL, exec_names_event.system, exec_names_event.name,
					 "format");
}

/* The event traced only to name new tasks (cfg->fork_names). */
static const struct td_event_spec fork_names_event = {
	.system = "sched",
	.name = "sched_process_fork",
};

bool td_capture_fork_names(const struct td_config *cfg)
{
	if (!cfg->exec_names)
		return false;
	for (size_t i = 0; i < cfg->nr_events; i++)
		if (!strcmp(cfg->events[i].system, fork_names_event.system) &&
		    !strcmp(cfg->events[i].name, fork_names_event.name))
			return false;
	return tracefs_event_file_exists(NULL, fork_names_event.system, fork_names_event.name,
					 "format");
}

bool td_capture_execs_traced(const struct td_config *cfg)
{
	if (cfg->exec_names)
		return true;
	for (size_t i = 0; i < cfg->nr_events; i++)
		if (!strcmp(cfg->events[i].system, exec_names_event.system) &&
		    !strcmp(cfg->events[i].name, exec_names_event.name) && !cfg->events[i].filter)
			return true;
	return false;
}

bool td_capture_record_names(const struct td_config *cfg)
{
	return cfg->record && tracefs_event_file_exists(NULL, exec_names_event.system,
							exec_names_event.name, "format");
}

static int setup_event(struct tracefs_instance *tfs, const struct td_config *cfg,
		       const struct td_event_spec *ev, bool triggers)
{
	char *filter;
	bool oom;
	int ret = -1;

	if (!tracefs_event_file_exists(tfs, ev->system, ev->name, "enable")) {
		td_err("unknown event %s:%s (no events/%s/%s in tracefs)", ev->system, ev->name,
		       ev->system, ev->name);
		return -1;
	}
	filter = build_filter(cfg, ev, &oom);
	if (oom) {
		td_err("out of memory");
		return -1;
	}
	if (filter) {
		tracefs_error_clear(tfs);
		if (tracefs_event_file_write(tfs, ev->system, ev->name, "filter", filter) < 0) {
			td_err("event %s:%s: the kernel refused filter '%s': %s", ev->system,
			       ev->name, filter, strerror(errno));
			show_error_log(tfs);
			goto out;
		}
	}
	if (triggers) {
		/*
		 * Triggers carry the filter themselves: an unfiltered trigger
		 * would fire before, and regardless of, the event's own filter.
		 * stacktrace goes last so it runs first (the kernel adds
		 * triggers at the head of the list): kernel stack, then cookie.
		 */
		if (write_trigger(tfs, ev, "user_stacktrace", filter))
			goto out;
		if (cfg->kernel_stack && write_trigger(tfs, ev, "stacktrace", filter))
			goto out;
	}
	if (tracefs_event_enable(tfs, ev->system, ev->name)) {
		td_err("cannot enable event %s:%s: %s", ev->system, ev->name, strerror(errno));
		show_error_log(tfs);
		goto out;
	}
	ret = 0;
out:
	free(filter);
	return ret;
}

static int set_option(struct tracefs_instance *tfs, enum tracefs_option_id id)
{
	if (tracefs_option_enable(tfs, id)) {
		td_err("cannot set option %s: %s", tracefs_option_name(id), strerror(errno));
		return -1;
	}
	return 0;
}

int td_capture_setup(struct tracefs_instance *tfs, const struct td_config *cfg, enum td_mode mode)
{
	char num[32];

	if (cfg->buffer_kb && tracefs_instance_set_buffer_size(tfs, cfg->buffer_kb, -1)) {
		td_err("cannot set the buffer to %lu KiB per CPU: %s", cfg->buffer_kb,
		       strerror(errno));
		return -1;
	}
	if (cfg->trace_clock &&
	    tracefs_instance_file_write(tfs, "trace_clock", cfg->trace_clock) < 0) {
		char *clocks = tracefs_instance_file_read(tfs, "trace_clock", NULL);

		if (clocks)
			clocks[strcspn(clocks, "\n")] = '\0';
		td_err("trace clock '%s' refused by the kernel (available: %s)", cfg->trace_clock,
		       clocks ? clocks : "?");
		free(clocks);
		return -1;
	}
	/* The readers also drain on a timer, so a low watermark costs little. */
	snprintf(num, sizeof(num), "%d", cfg->buffer_percent);
	if (tracefs_instance_file_write(tfs, "buffer_percent", num) < 0) {
		td_err("cannot set buffer_percent to %s: %s", num, strerror(errno));
		return -1;
	}
	if (cfg->nr_pids && follow_pids(tfs, cfg))
		return -1;
	for (size_t i = 0; i < cfg->nr_events; i++)
		if (setup_event(tfs, cfg, &cfg->events[i], mode == TD_MODE_TRIGGER))
			return -1;
	if (cfg->exec_names && setup_event(tfs, cfg, &exec_names_event, false))
		return -1;
	if (cfg->fork_names && setup_event(tfs, cfg, &fork_names_event, false))
		return -1;

	switch (mode) {
	case TD_MODE_OPTION:
		if (tracefs_instance_file_write(tfs, "options/userstacktrace_delay", "1") < 0) {
			td_err("cannot set option userstacktrace_delay: %s", strerror(errno));
			show_error_log(tfs);
			return -1;
		}
		break;
	case TD_MODE_INPLACE:
		if (set_option(tfs, TRACEFS_OPTION_USERSTACKTRACE))
			return -1;
		break;
	default:
		break;
	}
	if (mode != TD_MODE_TRIGGER && cfg->kernel_stack && set_option(tfs, TRACEFS_OPTION_STACKTRACE))
		return -1;
	return 0;
}

/* 64 KiB per CPU: an exec record is under 100 bytes, read five times a second. */
#define NAMES_BUFFER_KB		64

int td_capture_setup_names(struct tracefs_instance *tfs, const struct td_config *cfg)
{
	/* Too small a buffer is no failure: the kernel's default only costs memory. */
	if (tracefs_instance_set_buffer_size(tfs, NAMES_BUFFER_KB, -1) < 0)
		td_debug("names instance: cannot set buffer_size_kb: %s", strerror(errno));
	/* The recording's processes (and what they start) only: -p names no other. */
	if (cfg->nr_pids && follow_pids(tfs, cfg))
		return -1;
	return setup_event(tfs, cfg, &exec_names_event, false);
}

void td_capture_exclude_pid(struct tracefs_instance *tfs, int pid)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", pid);
	if (tracefs_instance_file_append(tfs, "set_event_notrace_pid", buf) < 0)
		td_debug("cannot keep pid %d out of the events (set_event_notrace_pid: %s)", pid,
			 strerror(errno));
}

void td_capture_stop(struct tracefs_instance *tfs, const struct td_config *cfg)
{
	for (size_t i = 0; i < cfg->nr_events; i++)
		tracefs_event_disable(tfs, cfg->events[i].system, cfg->events[i].name);
	if (cfg->exec_names)
		tracefs_event_disable(tfs, exec_names_event.system, exec_names_event.name);
	if (cfg->fork_names)
		tracefs_event_disable(tfs, fork_names_event.system, fork_names_event.name);
}

const struct td_event_spec *td_capture_disabled(struct tracefs_instance *tfs,
						const struct td_config *cfg, bool *gone)
{
	for (size_t i = 0; i < cfg->nr_events; i++) {
		const struct td_event_spec *ev = &cfg->events[i];
		char *on = tracefs_event_file_read(tfs, ev->system, ev->name, "enable", NULL);
		bool off = !on || on[0] == '0';

		*gone = !on;
		free(on);
		if (off)
			return ev;
	}
	return NULL;
}

static void add_system(const char **sys, size_t *n, const char *system)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(sys[i], system))
			return;
	sys[(*n)++] = system;
}

const char **td_capture_systems(const struct td_config *cfg)
{
	/* ftrace, each event's system, the naming event's, the NULL */
	const char **sys = calloc(cfg->nr_events + 3, sizeof(*sys));
	size_t n = 0;

	if (!sys)
		return NULL;
	sys[n++] = "ftrace";
	for (size_t i = 0; i < cfg->nr_events; i++)
		add_system(sys, &n, cfg->events[i].system);
	if (cfg->exec_names || cfg->record_names)
		add_system(sys, &n, exec_names_event.system);
	return sys;
}
