// SPDX-License-Identifier: GPL-2.0
/*
 * rbstat: run one workload under one user-stack mode and say what it cost
 * in the ring buffer. For the VM benchmark (bench/guest-bench.sh).
 *
 *   rbstat --mode untraced|none|inplace|deferred -e SYS:NAME [-e ...]
 *          [--buffer-kb N] -- CMD [ARGS...]
 *
 * Except for `untraced`, a fresh instance traces the events for CMD's
 * processes only (set_event_pid + event-fork), with no user stacks, the
 * in-place option `userstacktrace`, or the deferred option
 * `userstacktrace_delay`. When CMD exits, every CPU's buffer is read and
 * walked: records and ring-buffer bytes per kind, user frames per stack,
 * and the per_cpu stats (overruns must be 0 for the figures to hold).
 * CMD's "elapsed_ns=N ops=N" line is passed on. Prints one JSON object.
 * Exit 0, 77 when the kernel lacks what the mode needs, 1 on error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>
#include <tracefs.h>

#include "rbwalk.h"

#define INSTANCE	"td-bench-rb"
#define MAX_EVENTS	8

enum kind { K_EVENT, K_KSTACK, K_USTACK, K_COOKIE, K_UNWIND, K_UFILE, K_OTHER, NR_KINDS };

static const char *const kind_names[NR_KINDS] = {
	"event", "kernel_stack", "user_stack", "user_unwind_cookie", "user_unwind_stack",
	"user_unwind_file", "other",
};

struct stat_ctx {
	int ev_ids[MAX_EVENTS], nr_ev;
	int id_kstack, id_ustack, id_cookie, id_unwind, id_ufile;
	int unwind_stack_off;		/* of the stack's __data_loc word: 16, 20 with "dropped" */
	uint64_t records[NR_KINDS], bytes[NR_KINDS];
	/* user_unwind_stack bytes had the records no file identity (cookie + stack) */
	uint64_t unwind_bytes_no_files;
	uint64_t uframes_inplace, uframes_deferred, empty_unwind;
};

/* Ring-buffer bytes of a record of @size data bytes: header, length word, rounding. */
static unsigned int rb_size(int size)
{
	unsigned int len = (size + 3) & ~3;

	return 4 + len + (len > 112 ? 4 : 0);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void on_record(unsigned int type, const void *data, int size, void *arg)
{
	struct stat_ctx *c = arg;
	const uint8_t *d = data;
	enum kind k = K_OTHER;

	if ((int)type == c->id_kstack) {
		k = K_KSTACK;
	} else if ((int)type == c->id_ustack) {
		k = K_USTACK;
		/* caller[8] at offset 16; unused slots are 0 */
		for (int i = 0; i < 8 && 16 + 8 * (i + 1) <= size && get64(d + 16 + 8 * i); i++)
			c->uframes_inplace++;
	} else if ((int)type == c->id_cookie) {
		k = K_COOKIE;
	} else if ((int)type == c->id_unwind) {
		uint32_t loc;

		k = K_UNWIND;
		if (c->unwind_stack_off > 0 && size >= c->unwind_stack_off + 4) {
			memcpy(&loc, d + c->unwind_stack_off, sizeof(loc));
			c->uframes_deferred += (loc >> 16) / 8;
			c->empty_unwind += !(loc >> 16);
			/* The layout before file identity: 24 bytes, then the IPs */
			c->unwind_bytes_no_files += rb_size(24 + (loc >> 16));
		}
	} else if ((int)type == c->id_ufile) {
		k = K_UFILE;
	} else {
		for (int i = 0; i < c->nr_ev; i++)
			if ((int)type == c->ev_ids[i])
				k = K_EVENT;
	}
	c->records[k]++;
	c->bytes[k] += rb_size(size);
}

static int ftrace_id(const char *name)
{
	return rbwalk_event_id("ftrace", name);
}

static uint64_t stat_field(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* Run CMD (stdout to a pipe) once the parent says go; returns its pid. */
static pid_t spawn(char **cmd, int *out_fd, int *go_fd)
{
	int out[2], go[2];
	pid_t pid;
	char c;

	if (pipe2(out, O_CLOEXEC) || pipe2(go, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		dup2(out[1], 1);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	close(out[1]);
	close(go[0]);
	*out_fd = out[0];
	*go_fd = go[1];
	return pid;
}

static int set_up(struct tracefs_instance *inst, const char *mode, char **events, int nr_ev,
		  unsigned long buffer_kb)
{
	tracefs_trace_off(inst);
	if (buffer_kb && tracefs_instance_set_buffer_size(inst, buffer_kb, -1))
		return -1;
	if (tracefs_option_enable(inst, TRACEFS_OPTION_EVENT_FORK))
		return -1;
	if (!strcmp(mode, "inplace") && tracefs_option_enable(inst, TRACEFS_OPTION_USERSTACKTRACE))
		return -1;
	if (!strcmp(mode, "deferred")) {
		if (!tracefs_file_exists(inst, "options/userstacktrace_delay"))
			return 77;
		if (tracefs_instance_file_write(inst, "options/userstacktrace_delay", "1") < 0)
			return -1;
	}
	for (int i = 0; i < nr_ev; i++) {
		char sys[64], *name;

		snprintf(sys, sizeof(sys), "%s", events[i]);
		name = strchr(sys, ':');
		if (!name)
			return -1;
		*name++ = '\0';
		if (tracefs_event_enable(inst, sys, name))
			return -1;
	}
	return 0;
}

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void add_ratio(json_object *o, const char *key, uint64_t num, uint64_t den)
{
	json_object_object_add(o, key, json_object_new_double(den ? (double)num / den : 0));
}

/* Read every CPU's buffer to the end and walk it. */
static int read_all(struct tracefs_instance *inst, struct rbwalk *w, struct stat_ctx *c,
		    json_object *out)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int psize = getpagesize();
	uint64_t overrun = 0, entries = 0, sbytes = 0;
	char *page = malloc(psize);

	if (!page)
		return -1;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct tracefs_cpu *tc;
		char path[64], *stats;
		int n;

		snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", cpu);
		stats = tracefs_instance_file_read(inst, path, NULL);
		if (!stats)
			continue;
		entries += stat_field(stats, "entries:");
		overrun += stat_field(stats, "\noverrun:");
		sbytes += stat_field(stats, "\nbytes:");
		free(stats);
		tc = tracefs_cpu_open(inst, cpu, true);
		if (!tc)
			continue;
		while ((n = tracefs_cpu_read(tc, page, true)) > 0)
			rbwalk_page(w, page, n, on_record, c);
		while ((n = tracefs_cpu_flush(tc, page)) > 0)
			rbwalk_page(w, page, n, on_record, c);
		tracefs_cpu_close(tc);
	}
	free(page);
	add_u64(out, "stats_entries", entries);
	add_u64(out, "stats_bytes", sbytes);
	add_u64(out, "overrun", overrun);
	return 0;
}

static void results(const struct stat_ctx *c, const struct rbwalk *w, json_object *out)
{
	json_object *recs = json_object_new_object(), *bytes = json_object_new_object();
	uint64_t ev = c->records[K_EVENT];
	uint64_t stacks = c->records[K_USTACK] + c->records[K_UNWIND];
	uint64_t ustack_bytes = c->bytes[K_USTACK] + c->bytes[K_COOKIE] + c->bytes[K_UNWIND] +
				c->bytes[K_UFILE];

	for (int k = 0; k < NR_KINDS; k++) {
		add_u64(recs, kind_names[k], c->records[k]);
		add_u64(bytes, kind_names[k], c->bytes[k]);
	}
	json_object_object_add(out, "records", recs);
	json_object_object_add(out, "record_bytes", bytes);
	add_u64(out, "events", ev);
	add_u64(out, "rb_bytes", rbwalk_commit_bytes(w));
	add_u64(out, "pages", rbwalk_pages(w));
	add_ratio(out, "rb_bytes_per_event", rbwalk_commit_bytes(w), ev);
	add_ratio(out, "user_stack_bytes_per_event", ustack_bytes, ev);
	add_u64(out, "stacks", stacks);
	add_u64(out, "empty_deferred_stacks", c->empty_unwind);
	if (c->records[K_USTACK])
		add_ratio(out, "user_frames_per_stack", c->uframes_inplace, c->records[K_USTACK]);
	else if (c->records[K_UNWIND])
		add_ratio(out, "user_frames_per_stack", c->uframes_deferred, c->records[K_UNWIND]);
	add_ratio(out, "events_per_stack", ev, stacks);
	if (c->records[K_UNWIND]) {
		/*
		 * File identity's cost, from the same records: their bytes as
		 * written, and as they would be without file_bases, file_ids
		 * and frame_files (plus the file records they needed).
		 */
		add_ratio(out, "unwind_stack_bytes_per_record", c->bytes[K_UNWIND],
			  c->records[K_UNWIND]);
		add_ratio(out, "unwind_stack_bytes_per_record_no_files", c->unwind_bytes_no_files,
			  c->records[K_UNWIND]);
		add_ratio(out, "user_stack_bytes_per_event_no_files",
			  ustack_bytes - c->bytes[K_UNWIND] - c->bytes[K_UFILE] +
				  c->unwind_bytes_no_files, ev);
	}
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "event", required_argument, NULL, 'e' },
		{ "buffer-kb", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	struct tracefs_instance *inst = NULL;
	struct stat_ctx c = { 0 };
	struct rbwalk *w = NULL;
	char *events[MAX_EVENTS], line[256];
	unsigned long buffer_kb = 0;
	unsigned long long elapsed = 0, ops = 0;
	const char *mode = NULL;
	int nr_ev = 0, ch, out_fd, go_fd, status, ret = 1;
	json_object *out = json_object_new_object();
	bool traced;
	FILE *f;
	pid_t pid;

	while ((ch = getopt_long(argc, argv, "+m:e:b:", lopts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			mode = optarg;
			break;
		case 'e':
			if (nr_ev < MAX_EVENTS)
				events[nr_ev++] = optarg;
			break;
		case 'b':
			buffer_kb = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (!mode || optind >= argc)
		goto usage;
	if (strcmp(mode, "untraced") && strcmp(mode, "none") && strcmp(mode, "inplace") &&
	    strcmp(mode, "deferred"))
		goto usage;
	traced = strcmp(mode, "untraced");
	json_object_object_add(out, "mode", json_object_new_string(mode));

	if (traced) {
		int r;

		/* Left by a run that was killed: start afresh. */
		if (tracefs_instance_exists(INSTANCE)) {
			inst = tracefs_instance_alloc(NULL, INSTANCE);
			if (inst)
				tracefs_instance_destroy(inst);
			tracefs_instance_free(inst);
		}
		inst = tracefs_instance_create(INSTANCE);
		if (!inst)
			goto err;
		r = set_up(inst, mode, events, nr_ev, buffer_kb);
		if (r == 77) {
			ret = 77;
			fprintf(stderr, "rbstat: this kernel has no option userstacktrace_delay\n");
			goto out;
		}
		if (r)
			goto err;
		for (int i = 0; i < nr_ev; i++) {
			char sys[64], *name;

			snprintf(sys, sizeof(sys), "%s", events[i]);
			name = strchr(sys, ':');
			*name++ = '\0';
			c.ev_ids[c.nr_ev++] = rbwalk_event_id(sys, name);
		}
		c.id_kstack = ftrace_id("kernel_stack");
		c.id_ustack = ftrace_id("user_stack");
		c.id_cookie = ftrace_id("user_unwind_cookie");
		c.id_unwind = ftrace_id("user_unwind_stack");
		c.id_ufile = ftrace_id("user_unwind_file");
		c.unwind_stack_off = rbwalk_field_offset("ftrace", "user_unwind_stack", "stack");
	}
	pid = spawn(argv + optind, &out_fd, &go_fd);
	if (pid < 0)
		goto err;
	if (traced) {
		char num[32];

		snprintf(num, sizeof(num), "%d", (int)pid);
		if (tracefs_instance_file_write(inst, "set_event_pid", num) < 0)
			goto err;
		tracefs_trace_on(inst);
	}
	if (write(go_fd, "g", 1) != 1)
		goto err;
	close(go_fd);
	f = fdopen(out_fd, "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "elapsed_ns=%llu ops=%llu", &elapsed, &ops);
	if (f)
		fclose(f);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "rbstat: the workload failed\n");
		goto err;
	}
	add_u64(out, "elapsed_ns", elapsed);
	add_u64(out, "ops", ops);
	if (traced) {
		tracefs_trace_off(inst);
		w = rbwalk_new();
		if (!w || read_all(inst, w, &c, out))
			goto err;
		results(&c, w, out);
	}
	printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
	ret = 0;
	goto out;
err:
	fprintf(stderr, "rbstat: %s\n", strerror(errno));
out:
	if (inst) {
		tracefs_instance_destroy(inst);
		tracefs_instance_free(inst);
	}
	rbwalk_free(w);
	json_object_put(out);
	return ret;
usage:
	fputs("usage: rbstat --mode untraced|none|inplace|deferred -e SYS:NAME...\n"
	      "              [--buffer-kb N] -- CMD [ARGS...]\n", stderr);
	json_object_put(out);
	return 2;
}
