// SPDX-License-Identifier: GPL-2.0
/*
 * A recording's names instance: sched_process_exec read for the names of
 * the programs that ran (see names.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
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

static int one_exec(struct tep_event *event, struct tep_record *record, int cpu, void *arg)
{
	struct td_names *n = arg;
	char comm[TD_COMM_LEN];
	const char *file;
	int len = 0;

	if (event != n->exec)
		return 0;
	n->st.execs++;
	file = tep_get_field_raw(NULL, event, n->filename->name, record, &len, 0);
	if (!file || len <= 0 || td_exec_comm(file, len, comm) <= 0) {
		n->st.unnamed++;
		return 0;
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
	return 0;
}

void td_names_read(struct td_names *n)
{
	if (!n || !n->inst.tfs)
		return;
	if (tracefs_iterate_raw_events(n->tep, n->inst.tfs, NULL, 0, one_exec, n) < 0 &&
	    !n->warned) {
		td_warn("cannot read instance '%s': %s; programs that exit at once may stay "
			"unnamed in the trace.dat", n->inst.name, strerror(errno));
		n->warned = true;
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
