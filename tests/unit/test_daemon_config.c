// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the daemon's configuration (daemon/config.c): event specs,
 * values and their bounds, config files with their line numbers in error
 * messages, precedence helpers, and the defaults td_config_check() fills.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/config.h"
#include "../../daemon/log.h"
#include "log-capture.h"

/* The messages caught in a file, to check what they say. */
static int err_setup(void **state)
{
	return log_capture_start();
}

static int err_teardown(void **state)
{
	log_capture_stop();
	return 0;
}

static char *write_conf(const char *text)
{
	char *path = strdup("/tmp/td-config-test.XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_event_spec(void **state)
{
	struct td_event_spec s;

	assert_int_equal(td_event_spec_parse(&s, "sched:sched_switch", "t"), 0);
	assert_string_equal(s.system, "sched");
	assert_string_equal(s.name, "sched_switch");
	assert_null(s.filter);
	free(s.system);
	free(s.name);

	/* Everything after the second colon is the filter, colons included. */
	assert_int_equal(td_event_spec_parse(&s, "sched:sched_switch: prev_comm ~ \"a:b*\"", "t"),
			 0);
	assert_string_equal(s.filter, "prev_comm ~ \"a:b*\"");
	free(s.system);
	free(s.name);
	free(s.filter);

	/* An empty filter is no filter. */
	assert_int_equal(td_event_spec_parse(&s, "sched:sched_switch:  ", "t"), 0);
	assert_null(s.filter);
	free(s.system);
	free(s.name);

	/* Patterns are kept as given; event_glob.c matches them. */
	assert_int_equal(td_event_spec_parse(&s, "sys*:sys_enter_[rw]*:id == 0", "t"), 0);
	assert_string_equal(s.system, "sys*");
	assert_string_equal(s.name, "sys_enter_[rw]*");
	assert_string_equal(s.filter, "id == 0");
	assert_false(s.bare);
	td_event_spec_free(&s);

	/* A bare word: a system, or an event of any system. */
	assert_int_equal(td_event_spec_parse(&s, "sched_switch", "where"), 0);
	assert_true(s.bare);
	assert_string_equal(s.system, "sched_switch");
	assert_string_equal(s.name, "*");
	assert_null(s.filter);
	td_event_spec_free(&s);

	assert_int_equal(td_event_spec_parse(&s, "sched/x", "where"), -1);
	assert_non_null(strstr(log_captured(), "where: event 'sched/x': expected"));
	assert_int_equal(td_event_spec_parse(&s, "", "t"), -1);
	assert_int_equal(td_event_spec_parse(&s, ":sched_switch", "t"), -1);
	assert_int_equal(td_event_spec_parse(&s, "sched:", "t"), -1);
	assert_int_equal(td_event_spec_parse(&s, "sc/hed:x", "t"), -1);
	assert_non_null(strstr(log_captured(), "bad system or event name"));
}

static void test_values(void **state)
{
	struct td_stitch_config sc;
	struct td_config c;

	td_config_init(&c);
	/* Unset: every bound is the library's default. */
	td_config_stitch(&c, &sc);
	assert_int_equal(sc.max_pending_events, 0);
	assert_int_equal(sc.max_wait_ns, 0);
	assert_int_equal(sc.stack_keep_ns, 0);
	assert_int_equal(c.mode, TD_MODE_AUTO);
	assert_string_equal(c.instance, "trace-defer");
	assert_true(c.kernel_stack);

	assert_int_equal(td_config_set(&c, "mode", "trigger", "t"), 0);
	assert_int_equal(c.mode, TD_MODE_TRIGGER);
	assert_int_equal(td_config_set(&c, "mode", "fast", "t"), -1);
	assert_int_equal(c.mode, TD_MODE_TRIGGER);

	assert_int_equal(c.symbols_max_mb, 256);
	assert_int_equal(td_config_set(&c, "symbols_max_mb", "0", "t"), 0);
	assert_int_equal(c.symbols_max_mb, 0);
	assert_int_equal(td_config_set(&c, "symbols_max_mb", "64", "t"), 0);
	assert_int_equal(c.symbols_max_mb, 64);
	assert_int_equal(td_config_set(&c, "symbols_max_mb", "-1", "t"), -1);
	assert_int_equal(td_config_set(&c, "symbols_max_mb", "2000000000", "t"), -1);
	assert_int_equal(c.symbols_max_mb, 64);

	/* Near an interval's empty tables (6 KiB) every event cut one. */
	assert_int_equal(td_config_set(&c, "profile_max_mem_kb", "0", "t"), 0);
	assert_int_equal(c.profile_max_mem_kb, 0);
	assert_int_equal(td_config_set(&c, "profile_max_mem_kb", "16", "t"), 0);
	assert_int_equal(c.profile_max_mem_kb, 16);
	assert_int_equal(td_config_set(&c, "profile_max_mem_kb", "8", "f:3"), -1);
	assert_non_null(strstr(log_captured(), "f:3: profile_max_mem_kb: must be 0 (no bound) or at "
				 "least 16"));
	assert_int_equal(td_config_set(&c, "profile_interval", "0.01", "t"), 0);
	assert_int_equal(td_config_set(&c, "profile_interval", "0", "f:4"), -1);
	assert_non_null(strstr(log_captured(), "f:4: profile_interval: must be at least 0.01 s"));

	assert_int_equal(td_config_set(&c, "buffer_kb", "4096", "t"), 0);
	assert_int_equal(c.buffer_kb, 4096);
	assert_int_equal(td_config_set(&c, "buffer_kb", "-1", "t"), -1);
	assert_int_equal(td_config_set(&c, "buffer_kb", "12k", "t"), -1);
	assert_int_equal(td_config_set(&c, "buffer_percent", "101", "t"), -1);
	assert_int_equal(td_config_set(&c, "buffer_percent", "100", "t"), 0);
	assert_int_equal(c.buffer_percent, 100);
	assert_int_equal(td_config_set(&c, "max_pending", "0", "t"), -1);
	assert_int_equal(td_config_set(&c, "max_wait_ms", "250", "t"), 0);
	assert_int_equal(c.max_wait_ms, 250);
	/* A short wait bounds how long stacks are kept too; a long one does not. */
	td_config_stitch(&c, &sc);
	assert_int_equal(sc.max_wait_ns, 250000000ULL);
	assert_int_equal(sc.stack_keep_ns, 250000000ULL);
	assert_int_equal(td_config_set(&c, "max_wait_ms", "600000", "t"), 0);
	td_config_stitch(&c, &sc);
	assert_int_equal(sc.max_wait_ns, 600000000000ULL);
	assert_int_equal(sc.stack_keep_ns, 0);

	assert_int_equal(td_config_set(&c, "kernel_stack", "off", "t"), 0);
	assert_false(c.kernel_stack);
	assert_int_equal(td_config_set(&c, "kernel_stack", "True", "t"), 0);
	assert_true(c.kernel_stack);
	assert_int_equal(td_config_set(&c, "kernel_stack", "maybe", "t"), -1);

	assert_int_equal(td_config_set(&c, "duration", "1.5", "t"), 0);
	assert_true(c.duration > 1.49 && c.duration < 1.51);
	assert_int_equal(td_config_set(&c, "duration", "-1", "t"), -1);
	assert_non_null(strstr(log_captured(), "'-1' is not in [0, 1e9] seconds"));
	assert_int_equal(td_config_set(&c, "duration", "99999999999999", "t"), -1);
	assert_non_null(strstr(log_captured(), "is not in [0, 1e9] seconds"));
	assert_int_equal(td_config_set(&c, "duration", "nan", "t"), -1);
	assert_non_null(strstr(log_captured(), "'nan' is not a number of seconds"));

	assert_int_equal(td_config_set(&c, "trace_clock", "mono", "t"), 0);
	assert_int_equal(td_config_set(&c, "trace_clock", "counter", "t"), -1);
	assert_int_equal(td_config_set(&c, "instance", "a/b", "t"), -1);
	assert_int_equal(td_config_set(&c, "instance", ".hidden", "t"), -1);
	/* What the message says, no more: no pattern characters (events take them). */
	assert_int_equal(td_config_set(&c, "instance", "a*b", "f:5"), -1);
	assert_non_null(strstr(log_captured(), "f:5: instance: 'a*b' is not a valid name (letters, "
				 "digits, '_', '-', '.'; not a '.' first)"));
	assert_int_equal(td_config_set(&c, "instance", "[x]", "t"), -1);
	assert_int_equal(td_config_set(&c, "instance", "a?", "t"), -1);
	assert_int_equal(td_config_set(&c, "instance", "!a", "t"), -1);
	assert_int_equal(td_config_set(&c, "instance", "td-host_1.2", "t"), 0);
	assert_string_equal(c.instance, "td-host_1.2");
	assert_int_equal(td_config_set(&c, "comm", "abcdefghijklmnop", "t"), -1);
	assert_int_equal(td_config_set(&c, "comm", "a\"b", "t"), -1);
	assert_int_equal(td_config_set(&c, "comm", "postgres*", "t"), 0);

	assert_int_equal(td_config_set(&c, "pid", "0", "t"), -1);
	assert_int_equal(td_config_set(&c, "pid", "12", "t"), 0);
	assert_int_equal(td_config_set(&c, "pid", "13", "t"), 0);
	assert_int_equal(c.nr_pids, 2);
	td_config_clear_pids(&c);
	assert_int_equal(c.nr_pids, 0);

	assert_int_equal(td_config_set(&c, "nokey", "1", "here"), -1);
	assert_non_null(strstr(log_captured(), "here: unknown key 'nokey'"));
	td_config_free(&c);
}

static void test_events_list(void **state)
{
	struct td_config c;
	char *dump = NULL;
	size_t len = 0;
	FILE *f;

	td_config_init(&c);
	assert_int_equal(td_config_check(&c), 0);
	/* No event given: sched:sched_switch. */
	assert_int_equal(c.nr_events, 1);
	assert_string_equal(c.events[0].name, "sched_switch");

	td_config_clear_events(&c);
	assert_int_equal(td_config_set(&c, "event", "irq:irq_handler_entry", "t"), 0);
	assert_int_equal(td_config_set(&c, "event", "sched:sched_wakeup:pid == 1", "t"), 0);
	/* The same event twice would need two filters in one file: refused. */
	assert_int_equal(td_config_set(&c, "event", "irq:irq_handler_entry:irq == 1", "t"), -1);
	assert_non_null(strstr(log_captured(), "given twice"));
	assert_int_equal(td_config_check(&c), 0);
	assert_int_equal(c.nr_events, 2);
	assert_string_equal(c.events[1].filter, "pid == 1");
	/* A bare word and the same name as a system:event are two specs. */
	assert_int_equal(td_config_set(&c, "event", "irq", "t"), 0);
	assert_int_equal(td_config_set(&c, "event", "irq:*", "t"), 0);
	assert_int_equal(td_config_set(&c, "event", "irq", "t"), -1);
	assert_int_equal(c.nr_events, 4);
	/* --print-config writes them back as given. */
	f = open_memstream(&dump, &len);
	assert_non_null(f);
	td_config_dump(&c, f);
	fclose(f);
	assert_non_null(strstr(dump, "\nevent = irq\nevent = irq:*\n"));
	/* The effective settings: defaults unset said as their values. */
	assert_non_null(strstr(dump, "\nmax_pending = 1048576\nmax_stacks = 65536\n"
				   "max_wait_ms = 60000\n"));
	assert_non_null(strstr(dump, "\ntrace_clock = local\n"));
	assert_non_null(strstr(dump, "\n# debug_dir not set: /usr/lib/debug only\n"));
	free(dump);
	td_config_free(&c);
}

static void test_file(void **state)
{
	struct td_config c;
	const char *said;
	char *p;

	/* A key set twice: the later wins, said; event and pid add up, quietly. */
	p = write_conf("buffer_kb = 100\nevent = sched:sched_switch\nbuffer_kb = 200\n"
		       "event = irq:irq_handler_entry\n");
	td_config_init(&c);
	td_log_level = TD_LOG_WARN;
	log_captured();
	assert_int_equal(td_config_load(&c, p), 0);
	assert_int_equal(c.buffer_kb, 200);
	assert_int_equal(c.nr_events, 2);
	/* Said by the check, once the verbosity is known. */
	assert_string_equal(log_captured(), "");
	assert_int_equal(td_config_check(&c), 0);
	td_log_level = TD_LOG_ERR;
	said = log_captured();
	assert_non_null(strstr(said, ":3: buffer_kb set again (line 1 set it before)"));
	assert_null(strstr(said, "event set again"));
	td_config_free(&c);
	unlink(p);
	free(p);

	/* verbosity = 0 (errors only) silences it, wherever it is in the file... */
	p = write_conf("mode = auto\nmode = option\nverbosity = 0\n");
	td_config_init(&c);
	assert_int_equal(td_config_load(&c, p), 0);
	td_log_level = c.verbosity;
	assert_int_equal(td_config_check(&c), 0);
	td_config_free(&c);
	assert_string_equal(log_captured(), "");
	/* ... so does -q, which sets the level before the check... */
	td_config_init(&c);
	td_log_level = TD_LOG_WARN;
	assert_int_equal(td_config_load(&c, p), 0);
	assert_int_equal(td_config_set(&c, "verbosity", "1", "option -v"), 0);
	td_log_level = TD_LOG_ERR;
	assert_int_equal(td_config_check(&c), 0);
	td_config_free(&c);
	assert_string_equal(log_captured(), "");
	/* ... and a run that stops before the check says it at the end, if at all. */
	td_config_init(&c);
	assert_int_equal(td_config_load(&c, p), 0);
	td_log_level = TD_LOG_WARN;
	td_config_free(&c);
	td_log_level = TD_LOG_ERR;
	assert_non_null(strstr(log_captured(), ":2: mode set again (line 1 set it before)"));
	unlink(p);
	free(p);

	p = write_conf("# comment\n\n  event =  sched:sched_switch:prev_pid == 1 \n"
		       "mode=inplace\n\t# indented comment\nbuffer_kb = 128\n");
	td_config_init(&c);
	assert_int_equal(td_config_load(&c, p), 0);
	assert_int_equal(c.nr_events, 1);
	assert_string_equal(c.events[0].filter, "prev_pid == 1");
	assert_int_equal(c.mode, TD_MODE_INPLACE);
	assert_int_equal(c.buffer_kb, 128);
	td_config_free(&c);
	unlink(p);
	free(p);

	/* Errors name the file and the line. */
	p = write_conf("mode = auto\n\nno equals sign\n");
	td_config_init(&c);
	assert_int_equal(td_config_load(&c, p), -1);
	assert_non_null(strstr(log_captured(), ":3: expected 'key = value'"));
	td_config_free(&c);
	unlink(p);
	free(p);

	p = write_conf("mode = auto\nbuffer_kb =\n");
	td_config_init(&c);
	assert_int_equal(td_config_load(&c, p), -1);
	assert_non_null(strstr(log_captured(), ":2: buffer_kb: missing value"));
	td_config_free(&c);
	unlink(p);
	free(p);

	p = write_conf(" = 5\n");
	td_config_init(&c);
	assert_int_equal(td_config_load(&c, p), -1);
	assert_non_null(strstr(log_captured(), ":1: missing key"));
	td_config_free(&c);
	unlink(p);
	free(p);

	td_config_init(&c);
	assert_int_equal(td_config_load(&c, "/nonexistent/td.conf"), -1);
	assert_non_null(strstr(log_captured(), "/nonexistent/td.conf: No such file"));
	td_config_free(&c);
}

/* Outputs @k1 at @p1 and @k2 at @p2 refused by td_config_check() with @why. */
static void refused_pair(const char *k1, const char *p1, const char *k2, const char *p2,
			 const char *why)
{
	struct td_config c;

	td_config_init(&c);
	assert_int_equal(td_config_set(&c, k1, p1, "t"), 0);
	assert_int_equal(td_config_set(&c, k2, p2, "t"), 0);
	assert_int_equal(td_config_check(&c), -1);
	assert_non_null(strstr(log_captured(), why));
	td_config_free(&c);
}

static void test_check(void **state)
{
	char priv[] = "/tmp/td-config-check-XXXXXX", a[96], b[96];
	struct td_config c;

	/*
	 * Paths in a directory of the test's own: a fixed name such as /tmp/x
	 * may be anything on the machine (CI clones the project there), and
	 * an existing directory or device is rightly not a "same file".
	 */
	assert_non_null(mkdtemp(priv));
	snprintf(a, sizeof(a), "%s/x", priv);
	refused_pair("output", a, "folded", a, "same file");

	/* Any two outputs, however the path is spelt. */
	snprintf(a, sizeof(a), "%s/td-same-out", priv);
	snprintf(b, sizeof(b), "%s/../%s/./td-same-out", priv, strrchr(priv, '/') + 1);
	refused_pair("output", a, "pprof", b, "output and pprof name the same file");
	snprintf(b, sizeof(b), "%s//td-same-out", priv);
	refused_pair("flamegraph", a, "record", b, "flamegraph and record name the same file");
	/* Still one file once it exists: the check must not rely on absence. */
	assert_int_equal(close(open(a, O_CREAT | O_WRONLY, 0600)), 0);
	refused_pair("output", a, "folded", b, "output and folded name the same file");
	assert_int_equal(unlink(a), 0);
	assert_int_equal(rmdir(priv), 0);
	/* The profile directory is made at start: no output may be it (not made yet). */
	{
		char base[] = "/tmp/td-same-prof-XXXXXX", dir[64], out[96];

		assert_non_null(mkdtemp(base));
		snprintf(dir, sizeof(dir), "%s/prof/", base);
		snprintf(out, sizeof(out), "%s/./prof", base);
		td_config_init(&c);
		assert_int_equal(td_config_set(&c, "profile_dir", dir, "t"), 0);
		assert_int_equal(td_config_set(&c, "output", out, "t"), 0);
		assert_int_equal(td_config_check(&c), -1);
		assert_non_null(strstr(log_captured(), "profile_dir and output name the same path"));
		td_config_free(&c);
		snprintf(out, sizeof(out), "%s/prof/events.jsonl", base);
		td_config_init(&c);
		assert_int_equal(td_config_set(&c, "profile_dir", dir, "t"), 0);
		assert_int_equal(td_config_set(&c, "output", out, "t"), 0);
		assert_int_equal(td_config_check(&c), 0);
		td_config_free(&c);
		assert_int_equal(rmdir(base), 0);
	}
	/* A device takes them all. */
	td_config_init(&c);
	assert_int_equal(td_config_set(&c, "output", "/dev/null", "t"), 0);
	assert_int_equal(td_config_set(&c, "folded", "/dev/null", "t"), 0);
	assert_int_equal(td_config_set(&c, "pprof", "/dev/null", "t"), 0);
	assert_int_equal(td_config_check(&c), 0);
	td_config_free(&c);

	td_config_init(&c);
	assert_int_equal(td_config_set(&c, "run_dir", "relative", "t"), 0);
	assert_int_equal(td_config_check(&c), -1);
	assert_non_null(strstr(log_captured(), "must be an absolute path"));
	td_config_free(&c);
}

/*
 * --print-config's output is a configuration file: read back, it gives
 * the same settings, to the last bit of a number of seconds.
 */
static void test_dump_round_trip(void **state)
{
	struct td_config c, back;
	char *dump = NULL, *p;
	size_t len = 0;
	FILE *f;

	td_config_init(&c);
	assert_int_equal(td_config_set(&c, "duration", "123456789.5", "t"), 0);
	assert_int_equal(td_config_set(&c, "profile_interval", "0.1234567890123", "t"), 0);
	assert_int_equal(td_config_set(&c, "stats_interval", "0.1", "t"), 0);
	assert_int_equal(td_config_set(&c, "profile_dir", "/tmp/td-prof", "t"), 0);
	assert_int_equal(td_config_check(&c), 0);
	f = open_memstream(&dump, &len);
	assert_non_null(f);
	td_config_dump(&c, f);
	fclose(f);
	/* As given, not 1.23457e+08: the fewest digits that read back exactly. */
	assert_non_null(strstr(dump, "\nduration = 123456789.5\n"));
	assert_non_null(strstr(dump, "\nprofile_interval = 0.1234567890123\n"));
	assert_non_null(strstr(dump, "\nstats_interval = 0.1\n"));
	p = write_conf(dump);
	td_config_init(&back);
	assert_int_equal(td_config_load(&back, p), 0);
	assert_true(back.duration == c.duration);
	assert_true(back.profile_interval == c.profile_interval);
	assert_true(back.stats_interval == c.stats_interval);
	td_config_free(&back);
	td_config_free(&c);
	unlink(p);
	free(p);
	free(dump);
}

/* Set @key to "-": td_config_check() takes it (NULL @msg) or says @msg. */
static void stdout_output(const char *key, const char *msg)
{
	struct td_config c;

	td_config_init(&c);
	assert_int_equal(td_config_set(&c, key, "-", "t"), 0);
	assert_int_equal(td_config_check(&c), msg ? -1 : 0);
	if (msg)
		assert_non_null(strstr(log_captured(), msg));
	td_config_free(&c);
}

/*
 * Standard output: the outputs that can be written there are, those that
 * cannot are refused by the check (status 2, also for --print-config),
 * not found out once the run has started.
 */
static void test_stdout_outputs(void **state)
{
	stdout_output("output", NULL);
	stdout_output("folded", NULL);
	stdout_output("flamegraph", "the flame graph needs a file name, not '-'");
	stdout_output("pprof", "pprof needs a file name, not '-'");
	stdout_output("record", "record needs a file of its own, not '-'");
	/* A directory: mkdir("-") would make ./- wherever the daemon runs. */
	stdout_output("profile_dir", "profile_dir needs a directory name, not '-'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_spec),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_events_list),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_stdout_outputs),
		cmocka_unit_test(test_dump_round_trip),
	};

	td_log_level = TD_LOG_ERR;
	return cmocka_run_group_tests(tests, err_setup, err_teardown);
}
