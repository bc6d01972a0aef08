// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of td_local_events() (lib/formats.c): a tracefs-like
 * directory is written to a scratch directory and read back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <event-parse.h>
#include <tracefs.h>

#include <trace-defer/parse.h>

#define COMMON \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static const char fmt_kernel_stack[] =
	"name: kernel_stack\nID: 4\nformat:\n" COMMON
	"\tfield:int size;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n\n"
	"print fmt: \"\\t=> %ps\\n\", (void *)REC->caller[0]\n";

static const char fmt_sched_switch[] =
	"name: sched_switch\nID: 372\nformat:\n" COMMON
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n";

static const char fmt_sys_enter[] =
	"name: sys_enter\nID: 443\nformat:\n" COMMON
	"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n\n"
	"print fmt: \"NR %ld\", REC->id\n";

struct dir {
	char path[64];
};

static void put(const char *root, const char *rel, const char *text)
{
	char path[256], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* Every directory on the way. */
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		assert_true(!mkdir(path, 0700) || errno == EEXIST);
		*slash = '/';
	}
	if (!text)
		return;
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	strcpy(d->path, "/tmp/td-formats.XXXXXX");
	assert_non_null(mkdtemp(d->path));
	put(d->path, "events/header_page", header_page);
	put(d->path, "events/ftrace/kernel_stack/format", fmt_kernel_stack);
	put(d->path, "events/sched/enable", "0\n");
	put(d->path, "events/sched/sched_switch/format", fmt_sched_switch);
	put(d->path, "events/raw_syscalls/enable", "0\n");
	put(d->path, "events/raw_syscalls/sys_enter/format", fmt_sys_enter);
	put(d->path, "saved_cmdlines", "42 worker\n7 kthreadd\n");
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dir *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
	assert_int_equal(system(cmd), 0);
	free(d);
	return 0;
}

static void test_systems_listed(void **state)
{
	struct dir *d = *state;
	const char *const systems[] = { "ftrace", "sched", NULL };
	struct tep_handle *tep = td_local_events(d->path, systems);

	assert_non_null(tep);
	assert_non_null(tep_find_event_by_name(tep, "ftrace", "kernel_stack"));
	assert_non_null(tep_find_event_by_name(tep, "sched", "sched_switch"));
	/* Not asked for. */
	assert_null(tep_find_event_by_name(tep, "raw_syscalls", "sys_enter"));
	/* The header page says how long a sub-buffer's data is. */
	assert_int_equal(tep_get_sub_buffer_size(tep), 4096);
	assert_string_equal(tep_data_comm_from_pid(tep, 42), "worker");
	assert_string_equal(tep_data_comm_from_pid(tep, 7), "kthreadd");
	tep_free(tep);
}

static void test_every_system(void **state)
{
	struct dir *d = *state;
	struct tep_handle *tep = td_local_events(d->path, NULL);

	assert_non_null(tep);
	/* ftrace too, though it has no "enable" file. */
	assert_non_null(tep_find_event_by_name(tep, "ftrace", "kernel_stack"));
	assert_non_null(tep_find_event_by_name(tep, "sched", "sched_switch"));
	assert_non_null(tep_find_event_by_name(tep, "raw_syscalls", "sys_enter"));
	tep_free(tep);
}

static void test_not_a_tracefs(void **state)
{
	struct dir *d = *state;
	char path[128];

	snprintf(path, sizeof(path), "%s/events", d->path);
	errno = 0;
	assert_null(td_local_events(path, NULL));
	assert_int_equal(errno, ENOENT);
}

/*
 * The point of it: no kernel symbols, where libtracefs' reading of the
 * same directory holds /proc/kallsyms. Only where kallsyms shows
 * addresses (root); else there is nothing to tell apart.
 */
static void test_no_kernel_symbols(void **state)
{
	struct dir *d = *state;
	unsigned long long addr = 0, a;
	struct tep_handle *ours, *theirs;
	char line[256], type;
	FILE *f = fopen("/proc/kallsyms", "r");

	while (!addr && f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c", &a, &type) == 2 && a && (type == 'T' || type == 't'))
			addr = a;
	if (f)
		fclose(f);
	if (!addr)
		skip();
	theirs = tracefs_local_events(d->path);
	assert_non_null(theirs);
	assert_non_null(tep_find_function(theirs, addr));
	ours = td_local_events(d->path, NULL);
	assert_non_null(ours);
	assert_null(tep_find_function(ours, addr));
	tep_free(ours);
	tep_free(theirs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_systems_listed),
		cmocka_unit_test(test_every_system),
		cmocka_unit_test(test_not_a_tracefs),
		cmocka_unit_test(test_no_kernel_symbols),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
