// SPDX-License-Identifier: GPL-2.0
/*
 * A recording's names instance: sched_process_exec read for the names of
 * the programs that ran (see names.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

#include <trace-defer/parse.h>

#include "capture.h"
#include "config.h"
#include "instance.h"
#include "log.h"
#include "names.h"
#include "record.h"

struct td_names {
	struct td_instance inst;
	struct tep_handle *tep;
	struct tep_event *exec;
	struct tep_format_field *filename;
	struct td_recorder *rec;
	struct td_names_stats st;
	/*
	 * Each CPU's trace_pipe_raw, open for the whole run (NULL: could not
	 * be opened, or gone): not opened again five times a second per CPU,
	 * and the instance shows as in use to a --cleanup of another run
	 * directory (instance.h).
	 */
	struct tracefs_cpu **cpus;
	int *fds;		/* their fds, -1 for a NULL reader */
	int nr_cpus;
	void *page;
	struct kbuffer *kbuf;
	bool stopped;
	bool warned;		/* a failed read was said */
};

char *td_names_instance(const char *instance)
{
	char *name;

	if (asprintf(&name, "%s-names", instance) < 0)
		return NULL;
	return name;
}

/*
 * CPU @cpu's trace_pipe_raw, non-blocking, @page_size bytes a read; NULL
 * if it cannot be opened. Opened here with O_CLOEXEC, as the capture's
 * readers are (loop.c), not by tracefs_cpu_open(), which sets none: a
 * child (trace-cmd) that inherited the fd, whenever it is started, would
 * keep the instance busy (it cannot be removed while a file of it is
 * open) for as long as it runs.
 */
static struct tracefs_cpu *open_reader(struct td_names *n, int cpu, int page_size)
{
	struct tracefs_cpu *tcpu;
	char path[64];
	int fd, err;

	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	fd = tracefs_instance_file_open(n->inst.tfs, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	tcpu = tracefs_cpu_alloc_fd(fd, page_size, true);
	if (!tcpu) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	n->fds[cpu] = fd;
	return tcpu;
}

static void close_reader(struct td_names *n, int cpu)
{
	if (n->cpus[cpu])
		tracefs_cpu_free_fd(n->cpus[cpu]);
	if (n->fds[cpu] >= 0)
		close(n->fds[cpu]);
	n->cpus[cpu] = NULL;
	n->fds[cpu] = -1;
}

/* Every CPU's trace_pipe_raw, non-blocking. Returns 0 or -1 (printed). */
static int open_readers(struct td_names *n)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	/* What the capture reads in (daemon.c): the sub-buffer of the formats read. */
	int page_size = tep_get_sub_buffer_size(n->tep), opened = 0;

	if (page_size <= 0)
		page_size = getpagesize();
	n->nr_cpus = ncpu > 0 ? (int)ncpu : 1;
	n->cpus = calloc(n->nr_cpus, sizeof(*n->cpus));
	n->fds = malloc(n->nr_cpus * sizeof(*n->fds));
	n->kbuf = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
	/* Before any way out: the cleanup closes every fd that is not -1. */
	for (int cpu = 0; n->fds && cpu < n->nr_cpus; cpu++)
		n->fds[cpu] = -1;
	if (!n->cpus || !n->fds || !n->kbuf) {
		td_err("out of memory");
		return -1;
	}
	for (int cpu = 0; cpu < n->nr_cpus; cpu++) {
		/* A CPU that is not there has no buffer to read: skipped. */
		n->cpus[cpu] = open_reader(n, cpu, page_size);
		if (n->cpus[cpu])
			opened++;
	}
	if (!opened) {
		td_err("cannot open the buffers of instance '%s': %s", n->inst.name,
		       strerror(errno));
		return -1;
	}
	n->page = malloc(page_size);
	if (!n->page) {
		td_err("out of memory");
		return -1;
	}
	return 0;
}

static void close_readers(struct td_names *n)
{
	for (int cpu = 0; n->cpus && n->fds && cpu < n->nr_cpus; cpu++)
		close_reader(n, cpu);
	free(n->cpus);
	n->cpus = NULL;
	free(n->fds);
	n->fds = NULL;
	free(n->page);
	n->page = NULL;
	if (n->kbuf)
		kbuffer_free(n->kbuf);
	n->kbuf = NULL;
}

struct td_names *td_names_open(const struct td_config *cfg, struct tep_handle *tep,
			       struct td_recorder *rec)
{
	struct td_names *n = calloc(1, sizeof(*n));
	char *name = td_names_instance(cfg->instance);

	if (!n || !name) {
		td_err("out of memory");
		goto fail;
	}
	n->inst.lock_fd = -1;
	n->inst.hold_fd = -1;
	n->tep = tep;
	n->rec = rec;
	n->exec = tep_find_event_by_name(tep, "sched", "sched_process_exec");
	n->filename = n->exec ? tep_find_field(n->exec, "filename") : NULL;
	if (!n->filename || !(n->filename->flags & TEP_FIELD_IS_DYNAMIC)) {
		td_err("sched:sched_process_exec has no filename field to name programs from");
		goto fail;
	}
	if (td_instance_open(&n->inst, cfg->run_dir, name) ||
	    td_capture_setup_names(n->inst.tfs, cfg))
		goto fail;
	if (open_readers(n))
		goto fail;
	if (tracefs_trace_on(n->inst.tfs)) {
		td_err("cannot turn tracing on in instance '%s': %s", name, strerror(errno));
		goto fail;
	}
	free(name);
	return n;
fail:
	free(name);
	td_names_close(n);
	return NULL;
}

static void one_exec(struct td_names *n, struct tep_record *record)
{
	char comm[TD_COMM_LEN];
	const char *file;
	int len = 0;

	if (record->size < 2 || tep_find_event_by_record(n->tep, record) != n->exec)
		return;
	n->st.execs++;
	file = tep_get_field_raw(NULL, n->exec, n->filename->name, record, &len, 0);
	if (!file || len <= 0 || td_exec_comm(file, len, comm) <= 0) {
		n->st.unnamed++;
		return;
	}
	switch (td_recorder_name(n->rec, tep_data_pid(n->tep, record), comm)) {
	case 0:
		n->st.named++;
		break;
	case 1:
		n->st.unnamed++;
		break;
	default:
		n->st.failed++;
	}
}

/* The records of one sub-buffer the kernel wrote (trusted, unlike a file's). */
static void read_page(struct td_names *n, int cpu)
{
	unsigned long long ts;
	void *data;

	if (kbuffer_load_subbuffer(n->kbuf, n->page) < 0)
		return;
	for (data = kbuffer_read_event(n->kbuf, &ts); data;
	     data = kbuffer_next_event(n->kbuf, &ts)) {
		struct tep_record rec = {
			.ts = ts, .cpu = cpu, .data = data, .size = kbuffer_event_size(n->kbuf),
		};

		one_exec(n, &rec);
	}
}

void td_names_read(struct td_names *n)
{
	if (!n || !n->cpus)
		return;
	for (int cpu = 0; cpu < n->nr_cpus; cpu++) {
		int r = 0;

		while (n->cpus[cpu] && (r = tracefs_cpu_read(n->cpus[cpu], n->page, true)) > 0)
			read_page(n, cpu);
		/*
		 * ENODEV: the CPU has no buffer (offline, maybe since before
		 * the instance was made): tried again at every tick, it has
		 * one once it comes online.
		 */
		if (!n->cpus[cpu] || !r || errno == EAGAIN || errno == EINTR || errno == ENODEV)
			continue;
		/* Worse: that CPU's buffer is read no more. */
		if (!n->warned)
			td_warn("cannot read cpu %d of instance '%s': %s; programs that exit at "
				"once there may stay unnamed in the trace.dat", cpu, n->inst.name,
				strerror(errno));
		n->warned = true;
		close_reader(n, cpu);
	}
}

/* Exec records the kernel overwrote before they were read, all CPUs. */
static uint64_t overruns(struct tracefs_instance *tfs)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t sum = 0;

	for (long cpu = 0; cpu < ncpu; cpu++) {
		char file[64], *buf, *p;

		snprintf(file, sizeof(file), "per_cpu/cpu%ld/stats", cpu);
		buf = tracefs_instance_file_read(tfs, file, NULL);
		p = buf ? strstr(buf, "overrun:") : NULL;
		if (p)
			sum += strtoull(p + 8, NULL, 10);
		free(buf);
	}
	return sum;
}

void td_names_stop(struct td_names *n)
{
	if (!n || !n->inst.tfs || n->stopped)
		return;
	tracefs_trace_off(n->inst.tfs);
	td_names_read(n);
	n->st.lost = overruns(n->inst.tfs);
	n->stopped = true;
}

void td_names_get_stats(const struct td_names *n, struct td_names_stats *st)
{
	if (n)
		*st = n->st;
	else
		memset(st, 0, sizeof(*st));
}

int td_names_close(struct td_names *n)
{
	int ret;

	if (!n)
		return 0;
	/* Before the instance: it cannot be removed while a file of it is open. */
	close_readers(n);
	ret = n->inst.name ? td_instance_close(&n->inst) : 0;
	free(n);
	return ret;
}

void td_names_clean_stale(const struct td_config *cfg)
{
	char *name = td_names_instance(cfg->instance);

	if (name)
		td_instance_remove_stale(cfg->run_dir, name);
	free(name);
}
