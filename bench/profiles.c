// SPDX-License-Identifier: GPL-2.0
/*
 * profiles: the pprof sink (lib/pprof.c) on the events of short-lived
 * processes, against the same events from one process.
 *
 * The always-on service profiles every event into one pprof table per
 * interval. A process that lives for the whole interval costs a hash per
 * event once its stacks are known; a build server's processes do not: each
 * one is a new pid with stacks new to the pipeline (new ids, other
 * addresses), though their frames are the same functions at the same file
 * offsets. Both streams here hold the same events of the same stacks, as a
 * td_pipeline hands them to its sinks; only the pids and the stack ids
 * differ:
 *   one     one process, its stacks' ids the same all along (the baseline)
 *   procs   every PER events a new process, its user stacks new ids
 * Prints one JSON object: per stream the sink's ns per event (best of
 * REPEAT), the interval's cut (td_pprof_write to /dev/null) in ms, its
 * bytes, samples and table memory, and the ratio procs / one.
 *
 *   profiles [--procs N] [--per N] [--repeat N]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <trace-defer/output.h>
#include <trace-defer/pprof.h>
#include <trace-defer/symbolize.h>
#include <trace-defer/types.h>

#define KSTACKS		12	/* kernel stacks: the same in every process */
#define KDEPTH		14
#define USTACKS		24	/* user stacks of a process (exec, ld.so, libc, main) */
#define UDEPTH		9
#define STRINGS_ID	0x5eed	/* one "symbolizer": the strings below never change */

static const char *const ksyms[KDEPTH] = {
	"__schedule", "schedule", "do_wait", "kernel_wait4", "__do_sys_wait4",
	"do_syscall_64", "entry_SYSCALL_64", "exit_mmap", "mmput", "do_exit",
	"do_group_exit", "__x64_sys_exit_group", "x64_sys_call", "ret_from_fork",
};

static const char *const usyms[UDEPTH] = {
	"_dl_relocate_object", "_dl_start_final", "_dl_start", "__libc_start_call_main",
	"__libc_start_main", "main", "run_child", "spawner", "_start",
};

static const char *const objects[3] = {
	"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/local/bin/spawn",
};

struct stream {
	struct td_frame kf[KSTACKS][KDEPTH];
	struct td_frame uf[USTACKS][UDEPTH];
	uint64_t uid[USTACKS];
	uint64_t next_id;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void make_stacks(struct stream *s)
{
	unsigned int k, u, i;

	for (k = 0; k < KSTACKS; k++)
		for (i = 0; i < KDEPTH; i++)
			s->kf[k][i] = (struct td_frame){
				.addr = 0xffffffff81000000ull + k * 0x1000 + i * 0x40,
				.symbol = ksyms[(k + i) % KDEPTH], .sym_offset = 0x10 + k,
				.object = "[kernel]", .strings_id = STRINGS_ID,
			};
	for (u = 0; u < USTACKS; u++)
		for (i = 0; i < UDEPTH; i++)
			s->uf[u][i] = (struct td_frame){
				.symbol = usyms[(u + i) % UDEPTH], .sym_offset = 0x20 + u,
				.object = objects[(u + i) % 3],
				.file_offset = 0x1000 + u * 0x100 + i * 0x10,
				.strings_id = STRINGS_ID, .file_kind = TD_FILE_IN,
				.file_id = 1 + (u + i) % 3,
			};
}

/* A new process: its pid, and (@renew) its user stacks at new addresses and ids. */
static void new_process(struct stream *s, struct td_event *ev, int pid, bool renew)
{
	uint64_t base = 0x7f0000000000ull + (uint64_t)pid * 0x200000;
	unsigned int u, i;

	memset(ev, 0, sizeof(*ev));
	ev->pid = ev->tid = pid;
	strcpy(ev->comm, "spawn");
	if (!renew)
		return;
	for (u = 0; u < USTACKS; u++) {
		s->uid[u] = ++s->next_id;
		for (i = 0; i < UDEPTH; i++)
			s->uf[u][i].addr = base + s->uf[u][i].file_offset;
	}
}

struct result {
	double ns_per_event, cut_ms;
	size_t bytes;
	struct td_pprof_stats st;
};

/* Feed @procs * @per events (new pids when @spawn); the sink's time and its cut. */
static int run(bool spawn, int procs, int per, struct result *res)
{
	static struct stream s;
	struct td_pprof *pp = td_pprof_new(1);
	unsigned int seed = 1;
	struct td_event ev;
	double t0, t;
	FILE *null;
	int p, e;

	if (!pp)
		return -ENOMEM;
	make_stacks(&s);
	s.next_id = 1000;
	new_process(&s, &ev, 100, true);
	t = 0;
	for (p = 0; p < procs; p++) {
		if (spawn)
			new_process(&s, &ev, 100 + p, true);
		t0 = now_ns();
		for (e = 0; e < per; e++) {
			/* A user stack mostly meets the kernel in one place. */
			unsigned int u, k;
			struct td_resolved r;

			seed = seed * 1103515245 + 12345;
			u = (seed >> 16) % USTACKS;
			k = (seed >> 8) % 4 ? u % KSTACKS : (seed >> 4) % KSTACKS;
			r = (struct td_resolved){
				.ev = &ev, .status = TD_STITCHED, .event_name = "sched:sched_switch",
				.kframes = s.kf[k], .nr_kframes = KDEPTH, .kstack_id = 1 + k,
				.uframes = s.uf[u], .nr_uframes = UDEPTH, .ustack_id = s.uid[u],
			};
			if (td_pprof_add(pp, &r)) {
				td_pprof_free(pp);
				return -ENOMEM;
			}
		}
		t += now_ns() - t0;
	}
	res->ns_per_event = t / ((double)procs * per);
	td_pprof_stats(pp, &res->st);
	null = fopen("/dev/null", "w");
	if (!null) {
		td_pprof_free(pp);
		return -errno;
	}
	t0 = now_ns();
	e = td_pprof_write(pp, null, 2, &res->bytes);
	res->cut_ms = (now_ns() - t0) / 1e6;
	fclose(null);
	td_pprof_free(pp);
	return e;
}

static void print_result(const char *name, const struct result *r, bool comma)
{
	printf("  \"%s\": {\"ns_per_event\": %.1f, \"cut_ms\": %.2f, \"bytes\": %zu, "
	       "\"samples\": %llu, \"locations\": %llu, \"mem_bytes\": %llu}%s\n",
	       name, r->ns_per_event, r->cut_ms, r->bytes, (unsigned long long)r->st.samples,
	       (unsigned long long)r->st.locations, (unsigned long long)r->st.mem_bytes,
	       comma ? "," : "");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "procs", required_argument, NULL, 'p' },
		{ "per", required_argument, NULL, 'e' },
		{ "repeat", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct result best[2] = { 0 }, r;
	int procs = 1000, per = 200, repeat = 3, c, i, j;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			procs = atoi(optarg);
			break;
		case 'e':
			per = atoi(optarg);
			break;
		case 'r':
			repeat = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: profiles [--procs N] [--per N] [--repeat N]\n");
			return 2;
		}
	}
	if (procs < 1 || per < 1 || repeat < 1) {
		fprintf(stderr, "profiles: --procs, --per and --repeat must be positive\n");
		return 2;
	}
	/* Best of @repeat per stream, the streams in turn: the machine's load moves both. */
	for (i = 0; i < repeat; i++) {
		for (j = 0; j < 2; j++) {
			int err = run(j == 1, procs, per, &r);

			if (err) {
				fprintf(stderr, "profiles: %s\n", strerror(-err));
				return 1;
			}
			if (!i || r.ns_per_event < best[j].ns_per_event)
				best[j].ns_per_event = r.ns_per_event;
			if (!i || r.cut_ms < best[j].cut_ms)
				best[j].cut_ms = r.cut_ms;
			best[j].bytes = r.bytes;
			best[j].st = r.st;
		}
	}
	printf("{\n  \"processes\": %d, \"events_per_process\": %d, \"events\": %lld,\n", procs, per,
	       (long long)procs * per);
	print_result("one", &best[0], true);
	print_result("procs", &best[1], true);
	printf("  \"ratio_ns_per_event\": %.2f\n}\n",
	       best[1].ns_per_event / best[0].ns_per_event);
	return 0;
}
