// SPDX-License-Identifier: GPL-2.0
/*
 * The event loop: one thread, one epoll set holding every CPU's
 * trace_pipe_raw (non-blocking, close-on-exec), a timerfd and a signalfd.
 *
 * Latency bound: a CPU fd wakes us when the kernel has data for it (at the
 * instance's buffer_percent watermark); independently, every TICK_MS the
 * timer drains every CPU and moves the parser and the stitcher to the
 * trace time read from per_cpu/cpuN/stats *before* that drain, so anything
 * older has been read. An event is thus written within TICK_MS plus the
 * parser's hold time under light load, and a partly filled sub-buffer is
 * never held back by the watermark.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

#include <trace-defer/pipeline.h>

#include "capture.h"
#include "daemon.h"
#include "log.h"
#include "names.h"
#include "record.h"
#include "service.h"

#define TICK_MS			200
/* Sub-buffers read from one CPU per round before looking at the others. */
#define READ_BUDGET		64
/* And at least, with many CPUs, whose batch is bounded to BATCH_PAGES. */
#define READ_BUDGET_MIN		4
#define BATCH_PAGES		1024
/* Rounds read on a wake-up, at most, before the loop looks at its timer and signals. */
#define WAKE_ROUNDS		4
/* After disabling the events, deferred stacks of requests already made may still come. */
#define STOP_GRACE_MS		200
#define HOUSEKEEPING_NS		(5ULL * 1000000000ULL)
/* Lost events are said when first seen, then at most this often, and at the end. */
#define LOST_WARN_NS		(60ULL * 1000000000ULL)
#define EPOLL_TAG_SIGNAL	(-1)
#define EPOLL_TAG_TIMER		(-2)
#define EPOLL_TAG_JITMAPS	(-3)

static int epoll_add(int epfd, int fd, int tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)(int64_t)tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int open_reader(struct td_daemon *d, struct td_cpu_reader *r, int cpu)
{
	struct tracefs_instance *tfs = d->inst.tfs;
	char path[64];

	r->cpu = cpu;
	r->fd = r->stats_fd = -1;
	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	/*
	 * Opened here rather than by tracefs_cpu_open(), which sets no
	 * O_CLOEXEC: an fd inherited by a child keeps the instance busy.
	 */
	r->fd = tracefs_instance_file_open(tfs, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (r->fd < 0) {
		td_err("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", cpu);
	r->stats_fd = tracefs_instance_file_open(tfs, path, O_RDONLY | O_CLOEXEC);
	if (r->stats_fd < 0) {
		td_err("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	r->tcpu = tracefs_cpu_alloc_fd(r->fd, d->page_size, true);
	if (!r->tcpu) {
		td_err("cannot set up the reader of cpu %d: %s", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static void close_reader(struct td_cpu_reader *r)
{
	if (r->tcpu)
		tracefs_cpu_free_fd(r->tcpu);
	if (r->fd >= 0)
		close(r->fd);
	if (r->stats_fd >= 0)
		close(r->stats_fd);
	r->tcpu = NULL;
	r->fd = r->stats_fd = -1;
}

static int setup_readers(struct td_daemon *d)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	if (ncpu < 1)
		ncpu = 1;
	d->readers = calloc(ncpu, sizeof(*d->readers));
	if (!d->readers) {
		td_err("out of memory");
		return -1;
	}
	for (int cpu = 0; cpu < ncpu; cpu++) {
		char path[64];
		struct td_cpu_reader *r;

		snprintf(path, sizeof(path), "per_cpu/cpu%d", cpu);
		if (!tracefs_dir_exists(d->inst.tfs, path))
			continue;
		r = &d->readers[d->nr_readers++];
		if (open_reader(d, r, cpu))
			return -1;
		if (epoll_add(d->epfd, r->fd, d->nr_readers - 1)) {
			td_err("epoll: %s", strerror(errno));
			return -1;
		}
		d->nr_cpus = cpu + 1;
	}
	if (!d->nr_readers) {
		td_err("no per_cpu directories in the instance");
		return -1;
	}
	d->batch_per_cpu = BATCH_PAGES / d->nr_readers;
	if (d->batch_per_cpu > READ_BUDGET)
		d->batch_per_cpu = READ_BUDGET;
	if (d->batch_per_cpu < READ_BUDGET_MIN)
		d->batch_per_cpu = READ_BUDGET_MIN;
	d->batch = malloc((size_t)d->nr_readers * d->batch_per_cpu * d->page_size);
	d->refs = calloc((size_t)d->nr_readers * d->batch_per_cpu, sizeof(*d->refs));
	if (!d->batch || !d->refs) {
		td_err("out of memory");
		return -1;
	}
	return 0;
}

/*
 * Perf maps opened as the JITs make them (a thread of the library's): one
 * that runs for a moment and removes its map at exit is named all the
 * same. Without the watch (inotify limits reached), maps are read when
 * looked for, as before.
 */
static void setup_jit_watch(struct td_daemon *d)
{
	int fd = td_pipeline_jit_watch(d->pl);

	if (fd == -ENOENT)
		return;
	if (fd < 0 || epoll_add(d->epfd, fd, EPOLL_TAG_JITMAPS)) {
		td_warn("perf maps not watched (%s): a JIT that removes its map at exit may "
			"stay unnamed", strerror(fd < 0 ? -fd : errno));
		return;
	}
	d->jit_watch = true;
	td_debug("watching for perf maps being written");
}

int td_loop_setup(struct td_daemon *d)
{
	struct itimerspec its = {
		.it_interval = { 0, TICK_MS * 1000000L },
		.it_value = { 0, TICK_MS * 1000000L },
	};
	struct sigaction sa;
	sigset_t set;

	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0) {
		td_err("epoll_create1: %s", strerror(errno));
		return -1;
	}
	if (setup_readers(d))
		return -1;
	/*
	 * Under nohup (SIGHUP ignored) a hang-up is to be outlived: blocked
	 * for the signalfd, an ignored SIGHUP would still come to it.
	 */
	d->tty_fd = -1;
	if (!sigaction(SIGHUP, NULL, &sa) && sa.sa_handler != SIG_IGN)
		for (int fd = STDIN_FILENO; fd <= STDERR_FILENO && d->tty_fd < 0; fd++)
			if (isatty(fd))
				d->tty_fd = fd;
	/* The signals were blocked at start (main.c): they are read here, in order. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	d->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	d->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->sigfd < 0 || d->timerfd < 0) {
		td_err("signalfd/timerfd: %s", strerror(errno));
		return -1;
	}
	if (timerfd_settime(d->timerfd, 0, &its, NULL) ||
	    epoll_add(d->epfd, d->sigfd, EPOLL_TAG_SIGNAL) ||
	    epoll_add(d->epfd, d->timerfd, EPOLL_TAG_TIMER)) {
		td_err("timer/epoll set-up: %s", strerror(errno));
		return -1;
	}
	setup_jit_watch(d);
	return 0;
}

void td_loop_teardown(struct td_daemon *d)
{
	for (int i = 0; i < d->nr_readers; i++)
		close_reader(&d->readers[i]);
	free(d->readers);
	d->readers = NULL;
	d->nr_readers = 0;
	free(d->batch);
	free(d->refs);
	d->batch = NULL;
	d->refs = NULL;
	if (d->sigfd >= 0)
		close(d->sigfd);
	if (d->timerfd >= 0)
		close(d->timerfd);
	if (d->epfd >= 0)
		close(d->epfd);
	d->sigfd = d->timerfd = d->epfd = -1;
}

static uint64_t stat_field(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/*
 * Read per_cpu/cpuN/stats: overrun counts, and the trace clock "now ts"
 * ("S.UUUUUU" for nanosecond clocks). Returns the time in ns, 0 if unknown.
 */
static uint64_t read_stats(struct td_daemon *d, struct td_cpu_reader *r)
{
	struct td_cpu_counters *c = &d->counters.cpu[r->cpu];
	unsigned long long sec = 0, usec = 0;
	char buf[512];
	const char *p;
	ssize_t n;

	n = pread(r->stats_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "\n" keeps "commit overrun:" out of it; "entries:" is the first line. */
	c->overrun = stat_field(buf, "\noverrun:");
	c->commit_overrun = stat_field(buf, "commit overrun:");
	c->dropped = stat_field(buf, "dropped events:");
	p = strstr(buf, "now ts:");
	if (!p || sscanf(p + 7, "%llu.%llu", &sec, &usec) < 1)
		return 0;
	return sec * 1000000000ULL + usec * 1000ULL;
}

/*
 * A CPU with no buffer to read: offline when the instance was made (the
 * kernel gives a CPU its buffer when it comes online), or gone since. Its
 * fd then reports EPOLLERR (level-triggered: it would wake us forever)
 * and its reads fail with ENODEV. It is not read and not polled until
 * reader_recheck() finds it has a buffer again.
 */
static void reader_offline(struct td_daemon *d, struct td_cpu_reader *r)
{
	if (r->offline)
		return;
	r->offline = true;
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, r->fd, NULL);
	td_warn("cpu %d: no buffer to read (offline?); read again once it has one", r->cpu);
}

/*
 * At every tick: has an offline CPU got its buffer (come online)? poll()
 * says so without reading: EPOLLERR while there is none. From then on it
 * is read as every other CPU, from its first record; a CPU that was
 * offline wrote none before.
 */
static void reader_recheck(struct td_daemon *d)
{
	for (int i = 0; i < d->nr_readers; i++) {
		struct td_cpu_reader *r = &d->readers[i];
		struct pollfd pfd = { .fd = r->fd, .events = POLLIN };

		if (!r->offline || poll(&pfd, 1, 0) < 0 || (pfd.revents & (POLLERR | POLLNVAL)))
			continue;
		if (epoll_add(d->epfd, r->fd, i)) {
			td_debug("cpu %d: epoll: %s", r->cpu, strerror(errno));
			continue;
		}
		r->offline = false;
		td_notice("cpu %d: has a buffer again (online); reading it", r->cpu);
	}
}

/*
 * Read sub-buffers of one CPU into the batch until it is empty or @budget
 * is spent; @flush: at the end, what is left, partly filled sub-buffers
 * too. Returns 1 if it was emptied, 0 if the budget ran out, -1 on a read
 * error (loop stopped).
 */
static int read_cpu(struct td_daemon *d, struct td_cpu_reader *r, int budget, bool flush,
		    unsigned int *nr)
{
	struct td_cpu_counters *c = &d->counters.cpu[r->cpu];

	while (!r->offline && budget-- > 0) {
		void *page = d->batch + (size_t)*nr * d->page_size;
		int n = flush ? tracefs_cpu_flush(r->tcpu, page) : tracefs_cpu_read(r->tcpu, page, true);

		if (n == 0)
			return 1;
		if (n < 0) {
			/* At the end, as ever: whatever stops the flush ends it. */
			if (errno == EINTR || errno == EAGAIN || flush)
				return 1;
			if (errno == ENODEV) {
				reader_offline(d, r);
				return 1;
			}
			td_err("reading cpu %d: %s", r->cpu, strerror(errno));
			d->stop = true;
			d->exit_code = TD_EXIT_TRACEFS;
			return -1;
		}
		c->reads++;
		c->bytes += n;
		if (d->recorder)
			td_recorder_page(d->recorder, r->cpu, page, n);
		d->refs[(*nr)++] = (struct td_page_ref){ r->cpu, page, n };
	}
	return r->offline;
}

/*
 * The perf maps made since, each opened by the watch's thread the moment
 * it was made: taken at every round too, not only when epoll says so, so
 * that the round's lookups find them. One read() that finds nothing, most
 * rounds.
 */
static void jit_maps_written(struct td_daemon *d)
{
	int n;

	if (!d->jit_watch)
		return;
	n = td_pipeline_jit_watched(d->pl);

	if (n == -ENOMEM) {
		td_warn("out of memory reading a perf map");
	} else if (n < 0) {
		/* Level-triggered: a watch that cannot be read would wake us forever. */
		td_warn("perf maps not watched any more (%s)", strerror(-n));
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, td_pipeline_jit_watch(d->pl), NULL);
		d->jit_watch = false;
	}
}

/*
 * One round: up to batch_per_cpu sub-buffers of every CPU, read one CPU
 * after the other and handed on as one batch. The pipeline merges them by
 * time, so the exec or fork of a task read on a later CPU still comes
 * before the task's events read on an earlier one. And the other way: a
 * CPU read first may write a fork after its read, whose child's records
 * on a CPU read later are in the batch. So only records older than the
 * round's start (the trace clock then, from the first CPU's stats) are
 * parsed now, every CPU read since; the rest wait for the next round
 * (as perf's rounds of ordered events do). A CPU left unemptied (its
 * budget spent) may still hold older ones: under such load, names can
 * come from /proc, as before. @flush (at the end): no cut. Returns 1
 * when every CPU was emptied, 0 if one has more, -1 on a read error.
 */
static int drain_round(struct td_daemon *d, bool flush)
{
	uint64_t cut = UINT64_MAX;
	unsigned int nr = 0;
	int all = 1, ret;

	jit_maps_written(d);
	for (int i = 0; !flush && cut == UINT64_MAX && i < d->nr_readers; i++)
		if (!d->readers[i].offline) {
			uint64_t t = read_stats(d, &d->readers[i]);

			cut = t ? t : UINT64_MAX;
			break;
		}
	for (int i = 0; i < d->nr_readers && all >= 0; i++) {
		ret = read_cpu(d, &d->readers[i], d->batch_per_cpu, flush, &nr);
		if (ret < 1)
			all = ret;
	}
	/* A page the pipeline refuses (a short read): the others one by one, as ever. */
	if (nr && td_pipeline_pages_until(d->pl, d->refs, nr, cut) == -EINVAL)
		for (unsigned int i = 0; i < nr; i++)
			td_pipeline_page(d->pl, d->refs[i].cpu, d->refs[i].page, d->refs[i].size);
	return all;
}

/*
 * Is a SIGINT or SIGTERM waiting to be read? Blocked for the signalfd, it
 * stays pending until then: one system call, no read.
 */
static bool stop_pending(void)
{
	sigset_t set;

	return !sigpending(&set) && (sigismember(&set, SIGTERM) == 1 ||
				     sigismember(&set, SIGINT) == 1);
}

/*
 * Drain every CPU, in rounds, up to @budget sub-buffers of a CPU (< 0: no
 * limit); returns true when each was emptied. A stop asked for ends it
 * early: the last drain reads the rest, telling systemd while it gets on,
 * where a long drain here (full buffers, a daemon short of CPU) would
 * keep the signal unread and the time it takes unasked for.
 */
static bool drain_all(struct td_daemon *d, int budget)
{
	for (int spent = 0; budget < 0 || spent < budget; spent += d->batch_per_cpu) {
		int ret;

		if (!d->stopping && stop_pending())
			return false;
		ret = drain_round(d, false);
		/* A drain that gets on is not stuck: WATCHDOG=1 between rounds too. */
		td_service_tick(td_now_mono_ns(), NULL);
		if (ret)
			return ret > 0;
	}
	return false;
}

static void fill_report(struct td_daemon *d, struct td_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->c = &d->counters;
	td_pipeline_get_stats(d->pl, &rep->pl);
	if (d->outputs.js.jw) {
		rep->has_json = true;
		rep->written = td_outputs_json_written(&d->outputs);
		rep->dropped = d->outputs.json_dropped;
		td_json_writer_stats(d->outputs.js.jw, &rep->js);
	}
	rep->has_profiles = td_outputs_profile_stats(&d->outputs, &rep->prof);
}

void td_daemon_report(struct td_daemon *d, const char *title)
{
	struct td_report rep;

	if (!d->pl)
		return;
	fill_report(d, &rep);
	td_counters_print(stderr, &rep, title);
}

/* The first output write that failed, once; the counters show the rest. */
static void report_write_error(struct td_daemon *d)
{
	const char *sink;
	int err;

	if (d->warned_write)
		return;
	err = td_pipeline_error(d->pl, &sink);
	if (!err)
		return;
	/* The JSON file's failures are said where its lines are dropped (outputs.c). */
	if (!strcmp(sink, "json") && d->outputs.flush_error) {
		d->warned_write = true;
		return;
	}
	td_err("cannot write an event to the %s output: %s (counting further errors)", sink,
	       strerror(-err));
	d->warned_write = true;
}

/*
 * Records the kernel overwrote or dropped before they were read (its
 * counts are of records, not events): in the counters, and said once in
 * words, since a recording or profile with a hole in it looks like one
 * without. The reader falls behind when it is not scheduled or its output
 * blocks (a slow or remote file system); a bigger buffer rides out a
 * longer stall.
 */
static void warn_lost(struct td_daemon *d, uint64_t now_ns, bool final)
{
	char cpus[64] = "";
	uint64_t lost = 0;
	size_t len = 0;
	ssize_t kb;

	for (int i = 0; i < d->nr_cpus; i++) {
		const struct td_cpu_counters *c = &d->counters.cpu[i];

		if (!c->overrun && !c->dropped)
			continue;
		lost += c->overrun + c->dropped;
		if (len < sizeof(cpus))
			len += snprintf(cpus + len, sizeof(cpus) - len, "%s%d", len ? "," : "", i);
	}
	/* At exit the total, even if said already while running. */
	if (!lost || (!final && lost == d->lost_warned))
		return;
	if (!final && d->lost_warned && now_ns - d->lost_warned_ns < LOST_WARN_NS)
		return;
	kb = d->inst.tfs ? tracefs_instance_get_buffer_size(d->inst.tfs, 0) : -1;
	td_warn("%" PRIu64 " ring-buffer records lost%s (an event comes with up to three "
		"more: its stacks and cookie): the kernel overwrote or dropped them before they "
		"were read "
		"(cpu %s%s); the reader fell behind (more events than it reads, a busy "
		"machine, or a slow file system under the output); --buffer-kb (now %zd KiB "
		"per CPU) rides out longer stalls, fewer events or filters lower the rate",
		lost, final ? " in all" : " so far", cpus, len >= sizeof(cpus) ? "..." : "", kb);
	d->lost_warned = lost;
	d->lost_warned_ns = now_ns;
}

/*
 * Is the instance still as set up? Another tool may take it: trace-cmd
 * record -B NAME adopts an instance that exists and, leaving, turns it off
 * and disables its events. From then on nothing would be read, the
 * counters frozen, and a service would look healthy. NULL when intact,
 * else what changed.
 */
static const char *instance_changed(struct td_daemon *d)
{
	const struct td_event_spec *off;
	const char *what = NULL;
	bool all = false, gone;
	char *events;

	switch (tracefs_trace_is_on(d->inst.tfs)) {
	case 1:
		break;
	case 0:
		return "its tracing_on is 0";
	default:
		return "its tracing_on cannot be read";
	}
	/* "1", "X" (some), "0" (none): a few bytes, however many events. */
	events = tracefs_instance_file_read(d->inst.tfs, "events/enable", NULL);
	if (!events)
		what = "its events/enable cannot be read";
	else if (events[0] == '0')
		what = "no event of it is enabled";
	else
		all = events[0] == '1';
	free(events);
	/*
	 * The events that only name tasks stay on: each event asked for,
	 * then (one file each, every 5 s: not when every event reads on).
	 */
	if (what || all)
		return what;
	off = td_capture_disabled(d->inst.tfs, d->cfg, &gone);
	if (off) {
		snprintf(d->changed, sizeof(d->changed), "its event %s:%s %s", off->system,
			 off->name,
			 gone ? "is gone (its enable file cannot be read)" : "is disabled");
		return d->changed;
	}
	return NULL;
}

/* The pipeline's, and what it did that a user should hear of. */
static void housekeeping(struct td_daemon *d)
{
	const char *changed = instance_changed(d);
	unsigned int did;

	if (changed) {
		/* A tracefs error: a service is started again, and sets it up anew. */
		td_err("instance '%s' was changed by another program (%s): nothing more "
		       "would be read; stopping", d->cfg->instance, changed);
		d->exit_code = TD_EXIT_TRACEFS;
		d->stop = true;
		return;
	}
	did = td_pipeline_housekeeping(d->pl);

	if (did & TD_HK_SYM_RESTARTED)
		td_notice("the symbolizer held more than symbols_max_mb (%" PRIu64 " MiB): what it "
			  "read of files is freed and read again as frames need it (restart %" PRIu64
			  ")", d->cfg->symbols_max_mb, ++d->sym_restarts);
	if (did & TD_HK_KSYMS_RELOADED)
		td_info("kernel symbols changed (a module or BPF program loaded or unloaded): "
			"/proc/kallsyms read again");
}

static void tick(struct td_daemon *d)
{
	uint64_t now_ns = td_now_mono_ns(), trace_now = 0, expirations;
	/* Bound one tick's drain: twice what the buffers can hold. */
	int budget = 0;

	if (read(d->timerfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		td_debug("timerfd: %s", strerror(errno));
	td_pipeline_set_now(d->pl, now_ns);
	reader_recheck(d);
	for (int i = 0; i < d->nr_readers; i++) {
		uint64_t t = read_stats(d, &d->readers[i]);

		/* The earliest clock read: every record older than it is read below. */
		if (t && (!trace_now || t < trace_now))
			trace_now = t;
	}
	warn_lost(d, now_ns, false);
	budget = d->cfg->buffer_kb ? (int)(d->cfg->buffer_kb * 2048 / d->page_size) : 4096;
	if (budget < READ_BUDGET)
		budget = READ_BUDGET;
	/* Only a full drain proves nothing older than trace_now is still unread. */
	if (drain_all(d, budget) && trace_now) {
		d->trace_now = trace_now;
		td_pipeline_advance(d->pl, trace_now);
	}
	td_names_read(d->names);
	td_outputs_flush(&d->outputs);
	td_outputs_tick(&d->outputs, now_ns);
	if (td_pipeline_broken(d->pl) || d->outputs.json_broken) {
		td_info("output reader went away: stopping");
		d->stop = true;
	}
	report_write_error(d);
	if (now_ns - d->last_housekeeping_ns >= HOUSEKEEPING_NS) {
		housekeeping(d);
		d->last_housekeeping_ns = now_ns;
	}
	if (d->cfg->stats_interval > 0 &&
	    now_ns - d->last_stats_ns >= (uint64_t)(d->cfg->stats_interval * 1e9)) {
		td_daemon_report(d, "counters");
		d->last_stats_ns = now_ns;
	}
	if (d->cfg->duration > 0 &&
	    now_ns - d->counters.start_ns >= (uint64_t)(d->cfg->duration * 1e9))
		d->stop = true;
	if (td_service_active()) {
		struct td_report rep;
		char status[256];

		fill_report(d, &rep);
		td_counters_status(status, sizeof(status), &rep);
		td_service_tick(now_ns, status);
	}
}

/*
 * Did the terminal we were started on hang up (an ssh session that
 * dropped, a closed terminal window)? Its fds then fail every call with
 * EIO. The SIGHUP that comes with it is not a request to reopen the
 * outputs (logrotate's): a run nobody can see any more stops, as on
 * SIGTERM, rather than trace until killed.
 */
static bool terminal_gone(const struct td_daemon *d)
{
	struct termios t;

	return d->tty_fd >= 0 && tcgetattr(d->tty_fd, &t) && errno == EIO;
}

static void handle_signals(struct td_daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGINT:
		case SIGTERM:
			td_info("signal %d: stopping", si.ssi_signo);
			d->stop = true;
			break;
		case SIGHUP:
			if (terminal_gone(d)) {
				td_info("SIGHUP: the terminal hung up: stopping");
				d->stop = true;
				break;
			}
			td_notice("SIGHUP: reopening outputs");
			if (td_outputs_reopen(&d->outputs))
				d->exit_code = TD_EXIT_RUNTIME;
			break;
		case SIGUSR1:
			td_daemon_report(d, "counters");
			break;
		}
	}
}

int td_loop_run(struct td_daemon *d)
{
	struct epoll_event evs[64];

	d->last_stats_ns = d->last_housekeeping_ns = td_now_mono_ns();
	while (!d->stop) {
		int n = epoll_wait(d->epfd, evs, 64, -1);
		bool woken = false;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			td_err("epoll_wait: %s", strerror(errno));
			d->exit_code = TD_EXIT_RUNTIME;
			return -1;
		}
		for (int i = 0; i < n && !d->stop; i++) {
			int tag = (int)(int64_t)evs[i].data.u64;

			if (tag == EPOLL_TAG_SIGNAL)
				handle_signals(d);
			else if (tag == EPOLL_TAG_TIMER)
				tick(d);
			else if (tag == EPOLL_TAG_JITMAPS)
				jit_maps_written(d);
			else if (tag >= 0 && tag < d->nr_readers &&
				 (evs[i].events & (EPOLLERR | EPOLLIN)) == EPOLLERR)
				reader_offline(d, &d->readers[tag]);
			else if (tag >= 0 && tag < d->nr_readers)
				woken = true;
		}
		/*
		 * A CPU has data: every CPU is read, for its records to be
		 * merged with theirs, a few rounds before the timer and the
		 * signals are looked at again.
		 */
		for (int i = 0; woken && !d->stop && i < WAKE_ROUNDS; i++) {
			int ret = drain_round(d, false);

			td_service_tick(td_now_mono_ns(), NULL);
			if (ret || stop_pending())
				break;
		}
	}
	return 0;
}

void td_loop_drain_and_stop(struct td_daemon *d)
{
	struct timespec ts = { 0, 20 * 1000000L };

	td_service_stopping();
	d->stopping = true;
	if (d->inst.tfs)
		td_capture_stop(d->inst.tfs, d->cfg);
	td_outputs_tracing_off(&d->outputs);
	td_names_stop(d->names);
	/*
	 * A full buffer written to a slow output can take longer than
	 * TimeoutStopSec=: every round that ends got on (see service.h).
	 */
	td_service_got_on(td_now_mono_ns());
	if (d->mode == TD_MODE_OPTION || d->mode == TD_MODE_TRIGGER) {
		/* Tasks still in the kernel write their stacks on the way out. */
		for (int i = 0; i < STOP_GRACE_MS / 20; i++) {
			drain_all(d, -1);
			td_service_got_on(td_now_mono_ns());
			nanosleep(&ts, NULL);
		}
	}
	if (d->inst.tfs)
		tracefs_trace_off(d->inst.tfs);
	/* What is left, partly filled sub-buffers too, in merged rounds. */
	while (!drain_round(d, true))
		td_service_got_on(td_now_mono_ns());
	for (int i = 0; i < d->nr_readers; i++)
		read_stats(d, &d->readers[i]);
	warn_lost(d, td_now_mono_ns(), true);
	td_service_got_on(td_now_mono_ns());
	td_pipeline_flush(d->pl);
	td_service_got_on(td_now_mono_ns());
	td_outputs_flush(&d->outputs);
	report_write_error(d);
}
