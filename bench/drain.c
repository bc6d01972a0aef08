// SPDX-License-Identifier: GPL-2.0
/*
 * drain: the ceiling for the live benchmark. Traces what trace-defer
 * traces in fallback mode (sched:sched_switch with options stacktrace and
 * userstacktrace, buffer_percent 10, in its own instance) and reads every
 * CPU's trace_pipe_raw the way the daemon does (one epoll loop, non-blocking
 * tracefs_cpu_read, a 200 ms tick that drains every CPU), but does nothing
 * with the pages except count the sched_switch records in them.
 *
 *   drain -i INSTANCE [--deferred] [--no-user-stack] [--no-kernel-stack]
 *
 * --deferred uses the option userstacktrace_delay instead, as the daemon
 * does on a kernel with the deferred stack events.
 *
 * Tracing is on once the instance's tracing_on reads 1. SIGUSR1 prints
 * "drain: events=N records=N bytes=N pages=N" on stderr; SIGINT/SIGTERM
 * stop, flush, print the same line and remove the instance.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <tracefs.h>

#include "rbwalk.h"

#define MAX_CPUS	256
#define READ_BUDGET	64
#define TICK_MS		200
#define TAG_SIGNAL	(-1)
#define TAG_TIMER	(-2)

struct cpu_reader {
	int cpu, fd;
	struct tracefs_cpu *tcpu;
};

struct drain {
	struct tracefs_instance *inst;
	struct cpu_reader r[MAX_CPUS];
	int nr;
	struct rbwalk *walk;
	int switch_id;
	uint64_t events, bytes;
	void *page;
	int page_size;
};

static void count(unsigned int type, const void *data, int size, void *arg)
{
	struct drain *d = arg;

	(void)data;
	(void)size;
	if ((int)type == d->switch_id)
		d->events++;
}

static void take(struct drain *d, int n)
{
	d->bytes += n;
	rbwalk_page(d->walk, d->page, n, count, d);
}

/* Read one CPU until empty or @budget pages (budget < 0: no limit). */
static void drain_cpu(struct drain *d, struct cpu_reader *r, int budget)
{
	while (budget < 0 || budget-- > 0) {
		int n = tracefs_cpu_read(r->tcpu, d->page, true);

		if (n <= 0)
			return;
		take(d, n);
	}
}

static void report(const struct drain *d)
{
	fprintf(stderr, "drain: events=%" PRIu64 " records=%" PRIu64 " bytes=%" PRIu64
		" pages=%" PRIu64 "\n", d->events, rbwalk_records(d->walk), d->bytes,
		rbwalk_pages(d->walk));
}

static int epoll_add(int ep, int fd, int tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)(int64_t)tag };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int setup(struct drain *d, const char *name, bool ustack, bool deferred, bool kstack)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	d->inst = tracefs_instance_create(name);
	if (!d->inst) {
		fprintf(stderr, "drain: cannot create instance %s: %s\n", name, strerror(errno));
		return -1;
	}
	tracefs_trace_off(d->inst);
	if (tracefs_instance_file_write(d->inst, "buffer_percent", "10") < 0 ||
	    tracefs_event_enable(d->inst, "sched", "sched_switch") ||
	    (ustack && !deferred &&
	     tracefs_option_enable(d->inst, TRACEFS_OPTION_USERSTACKTRACE)) ||
	    (ustack && deferred &&
	     tracefs_instance_file_write(d->inst, "options/userstacktrace_delay", "1") < 0) ||
	    (kstack && tracefs_option_enable(d->inst, TRACEFS_OPTION_STACKTRACE))) {
		fprintf(stderr, "drain: cannot set up the instance: %s\n", strerror(errno));
		return -1;
	}
	d->page_size = getpagesize();
	d->page = malloc(d->page_size);
	d->walk = rbwalk_new();
	d->switch_id = rbwalk_event_id("sched", "sched_switch");
	if (!d->page || !d->walk || d->switch_id < 0)
		return -1;
	for (int cpu = 0; cpu < ncpu && d->nr < MAX_CPUS; cpu++) {
		struct cpu_reader *r = &d->r[d->nr];
		char path[64];

		snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
		r->fd = tracefs_instance_file_open(d->inst, path,
						   O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (r->fd < 0)
			continue;
		r->cpu = cpu;
		r->tcpu = tracefs_cpu_alloc_fd(r->fd, d->page_size, true);
		if (!r->tcpu) {
			close(r->fd);
			return -1;
		}
		d->nr++;
	}
	return d->nr ? 0 : -1;
}

static void teardown(struct drain *d)
{
	for (int i = 0; i < d->nr; i++) {
		tracefs_cpu_free_fd(d->r[i].tcpu);
		close(d->r[i].fd);
	}
	if (d->inst) {
		tracefs_instance_destroy(d->inst);
		tracefs_instance_free(d->inst);
	}
	rbwalk_free(d->walk);
	free(d->page);
}

static int loop(struct drain *d)
{
	struct itimerspec its = {
		.it_interval = { 0, TICK_MS * 1000000L },
		.it_value = { 0, TICK_MS * 1000000L },
	};
	struct epoll_event evs[64];
	struct signalfd_siginfo si;
	int ep, sfd, tfd;
	bool stop = false;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	ep = epoll_create1(EPOLL_CLOEXEC);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (ep < 0 || sfd < 0 || tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) ||
	    epoll_add(ep, sfd, TAG_SIGNAL) || epoll_add(ep, tfd, TAG_TIMER))
		return -1;
	for (int i = 0; i < d->nr; i++)
		if (epoll_add(ep, d->r[i].fd, i))
			return -1;
	tracefs_trace_on(d->inst);
	while (!stop) {
		int n = epoll_wait(ep, evs, 64, -1);

		for (int i = 0; i < n; i++) {
			int tag = (int)(int64_t)evs[i].data.u64;
			uint64_t exp;

			if (tag >= 0) {
				drain_cpu(d, &d->r[tag], READ_BUDGET);
			} else if (tag == TAG_TIMER) {
				if (read(tfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
					return -1;
				for (int c = 0; c < d->nr; c++)
					drain_cpu(d, &d->r[c], -1);
			} else {
				while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGUSR1)
						report(d);
					else
						stop = true;
				}
			}
		}
	}
	tracefs_event_disable(d->inst, "sched", "sched_switch");
	tracefs_trace_off(d->inst);
	for (int i = 0; i < d->nr; i++) {
		int n;

		drain_cpu(d, &d->r[i], -1);
		while ((n = tracefs_cpu_flush(d->r[i].tcpu, d->page)) > 0)
			take(d, n);
	}
	report(d);
	close(tfd);
	close(sfd);
	close(ep);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "instance", required_argument, NULL, 'i' },
		{ "deferred", no_argument, NULL, 'D' },
		{ "no-user-stack", no_argument, NULL, 'U' },
		{ "no-kernel-stack", no_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	struct drain d = { 0 };
	const char *name = NULL;
	bool ustack = true, kstack = true, deferred = false;
	int c, ret = 1;

	while ((c = getopt_long(argc, argv, "i:", lopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			name = optarg;
			break;
		case 'D':
			deferred = true;
			break;
		case 'U':
			ustack = false;
			break;
		case 'K':
			kstack = false;
			break;
		default:
			goto usage;
		}
	}
	if (!name)
		goto usage;
	if (!setup(&d, name, ustack, deferred, kstack) && !loop(&d))
		ret = 0;
	else
		fprintf(stderr, "drain: %s\n", strerror(errno));
	teardown(&d);
	return ret;
usage:
	fprintf(stderr,
		"usage: drain -i INSTANCE [--deferred] [--no-user-stack] [--no-kernel-stack]\n");
	return 2;
}
