// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for a recording's command lines (daemon/cmdlines.c): the
 * names learned from exec (DIR/names, in the order learned) over the
 * kernel's saved_cmdlines, the last name of a pid winning, lines that are
 * not "PID COMM" skipped, and nothing made when nothing was learned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/cmdlines.h"

struct fx {
	char dir[64];
	char names[96], kernel[96], out[96];
};

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The whole of @path (static buffer), or "" when there is no such file. */
static const char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return buf;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/td-cmdlines.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->names, sizeof(fx->names), "%s/names", fx->dir);
	snprintf(fx->kernel, sizeof(fx->kernel), "%s/kernel", fx->dir);
	snprintf(fx->out, sizeof(fx->out), "%s/out", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	unlink(fx->names);
	unlink(fx->kernel);
	unlink(fx->out);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static void test_learned_over_kernel(void **state)
{
	struct fx *fx = *state;

	/*
	 * pid 100 exec'd twice; 300's name has a space; the other lines are
	 * no names: a blank one would make trace-cmd drop the list after it.
	 */
	put(fx->names, "100 sh\n300 my prog\n100 cat\nnot a line\n0 zero\n150  \n160 \t\n");
	put(fx->kernel, "100 bash\n200 sshd\n300 sh\n250 kworker/0:1\n270 \n");
	assert_int_equal(td_cmdlines_write(fx->dir, fx->kernel, fx->out), 1);
	assert_string_equal(slurp(fx->out), "100 cat\n300 my prog\n200 sshd\n250 kworker/0:1\n");
}

static void test_no_kernel_list(void **state)
{
	struct fx *fx = *state;

	put(fx->names, "7 a\n5 b\n7 c\n");
	assert_int_equal(td_cmdlines_write(fx->dir, NULL, fx->out), 1);
	assert_string_equal(slurp(fx->out), "5 b\n7 c\n");
	/* A kernel list that cannot be opened is none. */
	unlink(fx->out);
	assert_int_equal(td_cmdlines_write(fx->dir, "/nonexistent/saved_cmdlines", fx->out), 1);
	assert_string_equal(slurp(fx->out), "5 b\n7 c\n");
}

static void test_nothing_learned(void **state)
{
	struct fx *fx = *state;

	put(fx->kernel, "1 init\n");
	/* No DIR/names, then one with no name in it: no list made. */
	assert_int_equal(td_cmdlines_write(fx->dir, fx->kernel, fx->out), 0);
	assert_int_not_equal(access(fx->out, F_OK), 0);
	put(fx->names, "x y\n12\n");
	assert_int_equal(td_cmdlines_write(fx->dir, fx->kernel, fx->out), 0);
	assert_int_not_equal(access(fx->out, F_OK), 0);
}

static void test_never_replaces(void **state)
{
	struct fx *fx = *state;

	put(fx->names, "9 a\n");
	put(fx->out, "someone's\n");
	assert_int_equal(td_cmdlines_write(fx->dir, NULL, fx->out), -1);
	assert_string_equal(slurp(fx->out), "someone's\n");
}

/* Many names, in no order, each pid's last one kept: the sort and the dedup. */
static void test_many(void **state)
{
	struct fx *fx = *state;
	FILE *f = fopen(fx->names, "w");
	static char want[8192];
	size_t n = 0;

	assert_non_null(f);
	/* 7919 is prime to 500: each round names every pid 1..500 once, shuffled. */
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 500; i++)
			fprintf(f, "%d r%d\n", (i * 7919) % 500 + 1, round);
	assert_int_equal(fclose(f), 0);
	put(fx->kernel, "250 k\n501 k\n");
	assert_int_equal(td_cmdlines_write(fx->dir, fx->kernel, fx->out), 1);
	for (int pid = 1; pid <= 500; pid++)
		n += snprintf(want + n, sizeof(want) - n, "%d r2\n", pid);
	snprintf(want + n, sizeof(want) - n, "501 k\n");
	assert_string_equal(slurp(fx->out), want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_learned_over_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_kernel_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_learned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_never_replaces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
