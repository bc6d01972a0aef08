// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for folded stacks (lib/folded.c) and the flame graph SVG
 * (lib/flamegraph.c): frame order, naming of unknown frames, sanitizing,
 * status markers, counting, sorting, and an SVG that is well formed, has
 * one frame per tree node with the right counts and widths, and escapes
 * names.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <trace-defer/output.h>

static char *folded_text(const struct td_folded *fo)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(td_folded_write(fo, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static struct td_event *event(const char *comm)
{
	struct td_event *ev = td_event_new();

	assert_non_null(ev);
	strncpy(ev->comm, comm, TD_COMM_LEN);
	return ev;
}

/* Frames are given innermost first, as the symbolizer produces them. */
static const struct td_frame kfr[] = {
	{ .addr = 0xffffffff81000100ULL, .symbol = "__schedule" },
	{ .addr = 0xffffffff81000200ULL, .symbol = "schedule" },
	{ .addr = 0xffffffff81000300ULL, .symbol = "do_nanosleep" },
	{ .addr = 0xffffffff81000400ULL, .object = "[kernel]" },	/* no symbol */
};

static const struct td_frame ufr[] = {
	{ .addr = 0x401000, .symbol = "c", .object = "/bin/fp_chain" },
	{ .addr = 0x401100, .symbol = "b", .object = "/bin/fp_chain" },
	{ .addr = 0x7f0000027234ULL, .object = "/usr/lib/x86_64-linux-gnu/libc.so.6",
	  .file_offset = 0x27234 },
	{ .addr = 0xdead0 },						/* nothing known */
};

static void test_order_and_names(void **state)
{
	struct td_folded *fo = td_folded_new();
	struct td_event *ev = event("fp_chain");
	struct td_resolved r = {
		.ev = ev, .status = TD_STITCHED,
		.kframes = kfr, .nr_kframes = 4, .uframes = ufr, .nr_uframes = 4,
	};
	char *text;

	assert_non_null(fo);
	assert_int_equal(td_folded_add(fo, &r), 0);
	text = folded_text(fo);
	/* comm; user outermost .. innermost; kernel outermost .. innermost COUNT */
	assert_string_equal(text, "fp_chain;[unknown];libc.so.6+0x27234;b;c;"
				  "0xffffffff81000400;do_nanosleep;schedule;__schedule 1\n");
	free(text);
	td_event_free(ev);
	td_folded_free(fo);
}

/* A frame the kernel recorded as in the vDSO says no offset in it: "[vdso]". */
static void test_vdso_frame(void **state)
{
	static const struct td_frame uf[] = {
		{ .addr = 0x7ffd12345678ULL, .object = "[vdso]", .file_kind = TD_FILE_VDSO },
		{ .addr = 0x401000, .symbol = "main", .object = "/bin/x", .file_kind = TD_FILE_IN },
	};
	struct td_folded *fo = td_folded_new();
	struct td_event *ev = event("x");
	struct td_resolved r = {
		.ev = ev, .status = TD_STITCHED, .uframes = uf, .nr_uframes = 2,
	};
	char *text;

	(void)state;
	assert_non_null(fo);
	assert_int_equal(td_folded_add(fo, &r), 0);
	text = folded_text(fo);
	assert_string_equal(text, "x;main;[vdso] 1\n");
	free(text);
	td_event_free(ev);
	td_folded_free(fo);
}

static void test_counts_and_sorting(void **state)
{
	struct td_folded *fo = td_folded_new();
	struct td_event *a = event("zeta"), *b = event("alpha"), *k = event("kworker/0:1");
	struct td_resolved ra = { .ev = a, .status = TD_STITCHED, .kframes = kfr, .nr_kframes = 2,
				  .uframes = ufr, .nr_uframes = 2 };
	struct td_resolved rb = { .ev = b, .status = TD_STITCHED, .kframes = kfr, .nr_kframes = 1,
				  .uframes = ufr, .nr_uframes = 1 };
	struct td_resolved rk = { .ev = k, .status = TD_NO_USER, .kframes = kfr + 1,
				  .nr_kframes = 1 };
	char *text;
	int i;

	assert_non_null(fo);
	for (i = 0; i < 3; i++)
		assert_int_equal(td_folded_add(fo, &ra), 0);
	assert_int_equal(td_folded_add(fo, &rb), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(td_folded_add(fo, &rk), 0);
	/* Same comm, one kernel frame less: a different stack. */
	ra.nr_kframes = 1;
	assert_int_equal(td_folded_add(fo, &ra), 0);
	text = folded_text(fo);
	assert_string_equal(text,
			    "alpha;c;__schedule 1\n"
			    "kworker/0:1;schedule 2\n"
			    "zeta;b;c;__schedule 1\n"
			    "zeta;b;c;schedule;__schedule 3\n");
	assert_int_equal(td_folded_nr_stacks(fo), 4);
	assert_int_equal(td_folded_nr_samples(fo), 7);
	free(text);
	td_event_free(a);
	td_event_free(b);
	td_event_free(k);
	td_folded_free(fo);
}

static void test_sanitize(void **state)
{
	static const struct td_frame odd[] = {
		{ .addr = 1, .symbol = "ns::f(int, char const*)" },
		{ .addr = 2, .symbol = "semi;colon\tand\nnewline" },
		{ .addr = 3, .symbol = "ctl\x01\x7f bad\xff\xc3 ok\xc3\xa9" },
		{ .addr = 4, .symbol = "" },			/* empty, in no file: [unknown] */
		{ .addr = 5, .object = "/odd dir;x/lib a;b.so", .file_offset = 0x10 },
	};
	struct td_folded *fo = td_folded_new();
	struct td_event *ev = event("my prog;1");
	struct td_resolved r = { .ev = ev, .status = TD_STITCHED, .uframes = odd,
				 .nr_uframes = 5 };
	char *text;

	assert_non_null(fo);
	assert_int_equal(td_folded_add(fo, &r), 0);
	text = folded_text(fo);
	assert_string_equal(text, "my_prog:1;lib_a:b.so+0x10;[unknown];ctl??_bad??_ok\xc3\xa9;"
				  "semi:colon_and_newline;ns::f(int,_char_const*) 1\n");
	free(text);
	td_event_free(ev);
	td_folded_free(fo);
}

static void test_status_markers(void **state)
{
	struct td_folded *fo = td_folded_new();
	struct td_event *ev = event("");
	struct td_resolved r = { .ev = ev, .kframes = kfr, .nr_kframes = 1 };
	char *text;

	assert_non_null(fo);
	r.status = TD_USER_LOST;
	assert_int_equal(td_folded_add(fo, &r), 0);
	r.status = TD_UNWIND_FAILED;
	assert_int_equal(td_folded_add(fo, &r), 0);
	r.status = TD_NO_USER;
	assert_int_equal(td_folded_add(fo, &r), 0);
	r.status = TD_INPLACE;
	r.uframes = ufr;
	r.nr_uframes = 1;
	assert_int_equal(td_folded_add(fo, &r), 0);
	text = folded_text(fo);
	assert_string_equal(text,
			    "[unknown];[unwind_failed];__schedule 1\n"
			    "[unknown];[user_lost];__schedule 1\n"
			    "[unknown];__schedule 1\n"
			    "[unknown];c;__schedule 1\n");
	free(text);
	td_event_free(ev);
	td_folded_free(fo);
}

static int stop_at_second(const char *stack, uint64_t count, void *arg)
{
	int *calls = arg;

	return ++*calls == 2 ? 42 : 0;
}

static void test_add_line_foreach(void **state)
{
	struct td_folded *fo = td_folded_new();
	char *text;
	int calls = 0;

	assert_non_null(fo);
	assert_int_equal(td_folded_add_line(fo, "b;x", 5), 0);
	assert_int_equal(td_folded_add_line(fo, "a;y", 1), 0);
	assert_int_equal(td_folded_add_line(fo, "b;x", 2), 0);
	assert_int_equal(td_folded_add_line(fo, "", 1), -EINVAL);
	assert_int_equal(td_folded_add_line(fo, "a b", 1), -EINVAL);
	assert_int_equal(td_folded_add_line(fo, "a\nb", 1), -EINVAL);
	text = folded_text(fo);
	assert_string_equal(text, "a;y 1\nb;x 7\n");
	free(text);
	assert_int_equal(td_folded_foreach(fo, stop_at_second, &calls), 42);
	assert_int_equal(calls, 2);
	td_folded_free(fo);
}

static void test_many_stacks(void **state)
{
	enum { N = 5000 };
	struct td_folded *fo = td_folded_new();
	char line[64], *text, *p, *prev = NULL;
	size_t lines = 0;
	uint64_t total = 0;
	int i;

	assert_non_null(fo);
	/* (i mod N, i mod 3) takes each of its 3N values twice over 6N steps. */
	for (i = 0; i < 6 * N; i++) {
		snprintf(line, sizeof(line), "comm;f%d;g%d", (i * 7919) % N, i % 3);
		assert_int_equal(td_folded_add_line(fo, line, 1), 0);
	}
	assert_int_equal(td_folded_nr_stacks(fo), 3 * N);
	text = folded_text(fo);
	for (p = strtok(text, "\n"); p; p = strtok(NULL, "\n")) {
		char *sp = strrchr(p, ' ');

		assert_non_null(sp);
		assert_int_equal(strtoull(sp + 1, NULL, 10), 2);
		total += 2;
		*sp = '\0';
		if (prev)
			assert_true(strcmp(prev, p) < 0);	/* sorted, distinct */
		prev = p;
		lines++;
	}
	assert_int_equal(lines, td_folded_nr_stacks(fo));
	assert_int_equal(total, 6 * N);
	assert_int_equal(td_folded_nr_samples(fo), 6 * N);
	free(text);
	td_folded_free(fo);
}

/*
 * A bound on memory: once the stacks take it, new ones count in one
 * "[memory_bound]" line; stacks seen before count as before; every event
 * is counted, the memory stays near the bound however many new stacks
 * come, and no bound (0) lets them all in.
 */
static void test_memory_bound(void **state)
{
	enum { N = 20000, BOUND = 64 << 10 };
	struct td_folded *fo = td_folded_new();
	uint64_t kept, mem;
	char line[64], *text, *p;
	int i;

	(void)state;
	assert_non_null(fo);
	assert_int_equal(td_folded_add_line(fo, "comm;old_stack", 1), 0);
	td_folded_set_max_mem(fo, BOUND);
	for (i = 0; i < N; i++) {
		snprintf(line, sizeof(line), "comm;new_stack_%d;leaf", i);
		assert_int_equal(td_folded_add_line(fo, line, 1), 0);
		assert_int_equal(td_folded_add_line(fo, "comm;old_stack", 1), 0);
	}
	mem = td_folded_mem(fo);
	kept = td_folded_nr_stacks(fo) - 2;	/* not old_stack nor the bound's */
	assert_true(kept > 100 && kept < N / 10);
	/* Past it by the line that crossed it, and the table's buckets if they grew then. */
	assert_true(mem >= BOUND && mem < BOUND + BOUND / 4);
	assert_int_equal(td_folded_over(fo), N - kept);
	assert_int_equal(td_folded_nr_samples(fo), 2 * N + 1);
	text = folded_text(fo);
	/* '[' sorts before letters: the first line. */
	assert_int_equal(strncmp(text, "[memory_bound] ", 15), 0);
	assert_int_equal(strtoull(text + 15, &p, 10), N - kept);
	assert_int_equal(*p, '\n');
	assert_non_null(strstr(text, "comm;old_stack 20001\n"));
	free(text);
	/* A stack kept before still counts on its own line. */
	assert_int_equal(td_folded_add_line(fo, "comm;new_stack_0;leaf", 5), 0);
	assert_int_equal(td_folded_over(fo), N - kept);
	td_folded_free(fo);

	fo = td_folded_new();
	assert_non_null(fo);
	for (i = 0; i < N; i++) {
		snprintf(line, sizeof(line), "comm;new_stack_%d;leaf", i);
		assert_int_equal(td_folded_add_line(fo, line, 1), 0);
	}
	assert_int_equal(td_folded_nr_stacks(fo), N);
	assert_int_equal(td_folded_over(fo), 0);
	assert_true(td_folded_mem(fo) > 10 * BOUND);
	td_folded_free(fo);
}

static void test_write_error(void **state)
{
	struct td_folded *fo = td_folded_new();
	FILE *f = fopen("/dev/null", "r");

	assert_non_null(fo);
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(td_folded_add_line(fo, "a;b", 1), 0);
	assert_true(td_folded_write(fo, f) < 0);
	assert_true(td_flamegraph_write(fo, f, NULL) < 0);
	fclose(f);
	td_folded_free(fo);
}

/* ---- flame graph ---- */

static char *svg_text(const struct td_folded *fo, const struct td_flamegraph_opts *opts)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(td_flamegraph_write(fo, f, opts), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/*
 * Enough XML to check well-formedness of what we write: balanced tags,
 * quoted attributes, no raw '<' or '>' in text, only known entities.
 */
static void check_well_formed(const char *s)
{
	const char *stack[16];
	size_t depth = 0, n;
	int roots = 0;

	assert_true(!strncmp(s, "<?xml ", 6));
	s = strstr(s, "?>") + 2;
	while (*s) {
		if (*s == '<') {
			const char *end = strchr(s, '>');

			assert_non_null(end);
			assert_null(memchr(s + 1, '<', end - s - 1));
			if (s[1] == '/') {
				assert_true(depth > 0);
				depth--;
				n = strcspn(stack[depth], " />");
				assert_int_equal(strncmp(stack[depth], s + 2, n), 0);
				assert_int_equal(s[2 + n], '>');
			} else if (end[-1] != '/') {
				assert_true(depth < 16);
				if (!depth)
					roots++;
				stack[depth++] = s + 1;
			}
			/* Attribute values are quoted: an even number of quotes. */
			n = 0;
			for (const char *q = s; q < end; q++)
				n += *q == '"';
			assert_int_equal(n % 2, 0);
			s = end + 1;
		} else if (*s == '&') {
			assert_true(!strncmp(s, "&amp;", 5) || !strncmp(s, "&lt;", 4) ||
				    !strncmp(s, "&gt;", 4) || !strncmp(s, "&quot;", 6) ||
				    !strncmp(s, "&apos;", 6));
			s++;
		} else {
			assert_true(*s != '>');
			s++;
		}
	}
	assert_int_equal(depth, 0);
	assert_int_equal(roots, 1);
}

struct frame_info {
	char name[64];
	uint64_t samples;
	double x, y, w;
	char fill[32];
};

/* Parse every "<g><title>NAME (N samples, P%)</title><rect x y width ..." */
static size_t frames(const char *svg, struct frame_info *out, size_t max)
{
	size_t n = 0;
	const char *p = svg;

	while ((p = strstr(p, "<g><title>"))) {
		struct frame_info *fi = &out[n];
		const char *t = p + 10, *open = strstr(t, " (");
		const char *rect = strstr(t, "<rect ");

		assert_true(n < max);
		assert_non_null(open);
		assert_true((size_t)(open - t) < sizeof(fi->name));
		memcpy(fi->name, t, open - t);
		fi->name[open - t] = '\0';
		fi->samples = strtoull(open + 2, NULL, 10);
		assert_non_null(rect);
		assert_int_equal(sscanf(rect, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\"", &fi->x,
					&fi->y, &fi->w), 3);
		assert_int_equal(sscanf(strstr(rect, "fill=\""), "fill=\"%31[^\"]", fi->fill), 1);
		n++;
		p = rect;
	}
	return n;
}

static const struct frame_info *frame_named(const struct frame_info *fi, size_t n,
					    const char *name, double y)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(fi[i].name, name) && fi[i].y == y)
			return &fi[i];
	return NULL;
}

static void test_flamegraph(void **state)
{
	struct td_folded *fo = td_folded_new();
	struct td_flamegraph_opts opts = { .title = "t<1>", .width = 1020, .frame_height = 10 };
	struct frame_info fi[32];
	const struct frame_info *all, *main_, *a, *b, *c, *x, *y;
	char *svg;
	size_t n;

	assert_non_null(fo);
	assert_int_equal(td_folded_add_line(fo, "prog;main;a;c", 30), 0);
	assert_int_equal(td_folded_add_line(fo, "prog;main;b;c", 10), 0);
	assert_int_equal(td_folded_add_line(fo, "prog;main", 10), 0);
	assert_int_equal(td_folded_add_line(fo, "x&y;<op>;\"q'", 50), 0);
	svg = svg_text(fo, &opts);
	check_well_formed(svg);
	assert_non_null(strstr(svg, "t&lt;1&gt;"));
	assert_non_null(strstr(svg, "width=\"1020\""));

	n = frames(svg, fi, 32);
	/* all, prog, main, a, c, b, c, x&y, <op>, "q' */
	assert_int_equal(n, 10);
	all = frame_named(fi, n, "all", fi[0].y);
	assert_non_null(all);
	assert_int_equal(all->samples, 100);
	assert_true(all->w > 999.9 && all->w < 1000.1);	/* width - 2 * 10 padding */
	main_ = frame_named(fi, n, "main", all->y - 20);
	a = frame_named(fi, n, "a", all->y - 30);
	b = frame_named(fi, n, "b", all->y - 30);
	assert_non_null(main_);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(main_->samples, 50);
	assert_int_equal(a->samples, 30);
	assert_int_equal(b->samples, 10);
	/* Widths by count, children side by side on their parent, in name order. */
	assert_true(a->w > 299.9 && a->w < 300.1);
	assert_true(b->w > 99.9 && b->w < 100.1);
	assert_true(a->x >= main_->x && b->x >= a->x + a->w - 0.1);
	assert_true(b->x + b->w <= main_->x + main_->w + 0.1);
	c = frame_named(fi, n, "c", all->y - 40);
	assert_non_null(c);
	/* Same name, same color, wherever it is. */
	for (size_t i = 0; i < n; i++)
		if (!strcmp(fi[i].name, "c"))
			assert_string_equal(fi[i].fill, c->fill);
	x = frame_named(fi, n, "x&amp;y", all->y - 10);
	y = frame_named(fi, n, "&lt;op&gt;", all->y - 20);
	assert_non_null(x);
	assert_non_null(y);
	assert_non_null(frame_named(fi, n, "&quot;q&apos;", all->y - 30));
	assert_int_equal(x->samples, 50);
	assert_true(x->x >= all->x + 499.9);
	free(svg);
	td_folded_free(fo);
}

static void test_flamegraph_narrow_and_empty(void **state)
{
	struct td_folded *fo = td_folded_new();
	struct frame_info fi[8];
	char *svg;

	assert_non_null(fo);
	svg = svg_text(fo, NULL);
	check_well_formed(svg);
	assert_int_equal(frames(svg, fi, 8), 0);
	assert_non_null(strstr(svg, "no samples"));
	free(svg);

	/* One sample in ten million is far under 0.1 px: left out, with its children. */
	assert_int_equal(td_folded_add_line(fo, "big;f", 10000000), 0);
	assert_int_equal(td_folded_add_line(fo, "tiny;g;h", 1), 0);
	svg = svg_text(fo, NULL);
	check_well_formed(svg);
	assert_int_equal(frames(svg, fi, 8), 3);	/* all, big, f */
	assert_null(strstr(svg, "tiny"));
	assert_null(strstr(svg, ">h<"));
	free(svg);
	td_folded_free(fo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_names),
		cmocka_unit_test(test_vdso_frame),
		cmocka_unit_test(test_counts_and_sorting),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_status_markers),
		cmocka_unit_test(test_add_line_foreach),
		cmocka_unit_test(test_many_stacks),
		cmocka_unit_test(test_memory_bound),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_flamegraph),
		cmocka_unit_test(test_flamegraph_narrow_and_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
