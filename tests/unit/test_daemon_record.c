// SPDX-License-Identifier: GPL-2.0
/*
 * `trace-defer record --recover` and the checks `trace-defer record` makes
 * before tracing, run as the built program does them: no tracefs, no
 * root. A scratch directory is made by hand (info, head.dat, cpu0.raw) and
 * a fake trace-cmd first on PATH stands for the real one: it concatenates
 * its inputs into the output, or fails, is killed, waits, or takes its
 * time, as $FAKE_MODE says, and tells the test its pid and what it saw.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static char build_dir[PATH_MAX], work[256];

/* restore -c -o HEAD [-t DIR] | restore -i HEAD -o OUT RAW... */
static const char fake_trace_cmd[] =
	"#!/bin/sh\n"
	"[ \"$1\" = restore ] || exit 2\n"
	"shift\n"
	"if [ \"$1\" = -c ]; then echo head > \"$3\"; exit 0; fi\n"
	"[ \"$1\" = -i ] || exit 2\n"
	"head=$2 out=$4\n"
	"shift 4\n"
	"W=$(dirname \"$0\")/..\n"
	"grep '^SigIgn' /proc/$$/status > \"$W/fake.sigign\"\n"
	"cut -d' ' -f5 /proc/$$/stat > \"$W/fake.pgid\"\n"
	"echo \"$out\" > \"$W/fake.out\"\n"
	"echo $$ > \"$W/fake.pid.new\" && mv \"$W/fake.pid.new\" \"$W/fake.pid\"\n"
	"case \"${FAKE_MODE:-}\" in\n"
	"fail)	echo partial > \"$out\"; echo 'fake: disk full' >&2; exit 1 ;;\n"
	"kill)	echo partial > \"$out\"; kill -KILL $$ ;;\n"
	"wait)	echo partial > \"$out\"\n"
	"	i=0\n"
	"	while [ ! -e \"$W/go\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done ;;\n"
	/* Writes for 3 s, then is stuck for 5.5 s (WORK/stalled says when). */
	"slow)	i=0\n"
	"	while [ $i -lt 6 ]; do echo x >> \"$out\"; sleep 0.5; i=$((i+1)); done\n"
	"	: > \"$W/stalled\"\n"
	"	sleep 5.5 ;;\n"
	"esac\n"
	"cat \"$head\" \"$@\" > \"$out\"\n";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* The whole of @path in @buf (NUL-terminated), or "" when it is not there. */
static const char *read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

/* How many files match @pattern (a glob). */
static size_t count(const char *pattern)
{
	glob_t g;
	size_t n = 0;

	if (!glob(pattern, 0, NULL, &g))
		n = g.gl_pathc;
	globfree(&g);
	return n;
}

/* WORK/NAME.raw.XXXXXX as a killed recording left it: 2 sub-buffers on CPU 0. */
static void make_scratch(char *dir, size_t size, const char *name)
{
	char path[1024], text[1024];
	int fd;

	snprintf(dir, size, "%s/%s.raw.XXXXXX", work, name);
	assert_non_null(mkdtemp(dir));
	/* Another boot: the head.dat saved at the start is used as it is. */
	snprintf(text, sizeof(text), "trace-defer-raw 1\npage_size 4096\ncpus 1\n"
		 "boot_id 00000000-0000-0000-0000-000000000000\noutput %s/%s\n", work, name);
	snprintf(path, sizeof(path), "%s/info", dir);
	write_file(path, text);
	snprintf(path, sizeof(path), "%s/head.dat", dir);
	write_file(path, "saved head\n");
	snprintf(path, sizeof(path), "%s/cpu0.raw", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 8192), 0);
	close(fd);
}

/*
 * Start trace-defer with @args (NULL-terminated, after the program's
 * name), the fake trace-cmd first on PATH, $FAKE_MODE @mode, stdout to
 * WORK/out, stderr to WORK/@err. Returns its pid.
 */
static pid_t start_td(const char *mode, const char *err_name, const char *const *args)
{
	char td[PATH_MAX + 16], path[PATH_MAX + 2048], out[1024], err[1024];
	const char *argv[16] = { td };
	pid_t pid;
	int n = 1;

	snprintf(td, sizeof(td), "%s/trace-defer", build_dir);
	snprintf(path, sizeof(path), "%s/bin:%s", work, getenv("PATH") ?: "/usr/bin:/bin");
	snprintf(out, sizeof(out), "%s/out", work);
	snprintf(err, sizeof(err), "%s/%s", work, err_name);
	for (; *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
		setenv("PATH", path, 1);
		if (mode)
			setenv("FAKE_MODE", mode, 1);
		else
			unsetenv("FAKE_MODE");
		execv(td, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* Wait up to @ms for @pid: its exit status, 128 + signal, or -1 if it still runs. */
static int wait_td(pid_t pid, int ms)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	int status;

	for (int i = 0; i <= ms / 10; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		assert_true(r >= 0);
		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		nanosleep(&tick, NULL);
	}
	return -1;
}

/* trace-defer @args..., waited for (10 s at most). Returns its exit status. */
static int td(const char *mode, ...)
{
	const char *args[16];
	va_list ap;
	int n = 0, rc;
	pid_t pid;

	va_start(ap, mode);
	while (n < 15 && (args[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	args[n] = NULL;
	pid = start_td(mode, "err", args);
	rc = wait_td(pid, 10000);
	if (rc < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("trace-defer still runs after 10 s");
	}
	return rc;
}

/* Wait up to @ms for @path to be there. */
static bool wait_for(const char *path, int ms)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i <= ms / 10; i++) {
		if (exists(path))
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

/* WORK/@name, in @buf. */
static char *work_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", work, name);
	return buf;
}

/* What trace-defer's last run wrote to @name: "out" or "err". */
static const char *td_said(const char *name)
{
	static char buf[8192];
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", work, name);
	return read_text(path, buf, sizeof(buf));
}

static const char *err_text(void)
{
	return td_said("err");
}

#define assert_err_has(s)							\
	do {									\
		if (!strstr(err_text(), (s)))					\
			fail_msg("stderr has no '%s':\n%s", (s), err_text());	\
	} while (0)

/* The configuration's output is JSON lines: never where --recover writes. */
static void test_recover_ignores_config_output(void **state)
{
	char dir[512], conf[1024], log[1024], dat[1024], buf[2048];

	(void)state;
	make_scratch(dir, sizeof(dir), "c.dat");
	snprintf(log, sizeof(log), "%s/log.jsonl", work);
	snprintf(conf, sizeof(conf), "%s/c.conf", work);
	snprintf(dat, sizeof(dat), "%s/c.dat", work);
	write_file(log, "{\"old\":1}\n");
	snprintf(buf, sizeof(buf), "output = %s\n", log);
	write_file(conf, buf);

	assert_int_equal(td(NULL, "record", "--recover", dir, "-c", conf, NULL), 0);
	assert_string_equal(read_text(log, buf, sizeof(buf)), "{\"old\":1}\n");
	assert_string_equal(read_text(dat, buf, sizeof(buf)), "saved head\n");
	assert_false(exists(dir));
}

/* `record -c CONF` without -o: refused, not a recording into the JSON file. */
static void test_record_needs_command_line_output(void **state)
{
	char conf[1024], log[1024], dat[1024], buf[2048];

	(void)state;
	snprintf(log, sizeof(log), "%s/log2.jsonl", work);
	snprintf(conf, sizeof(conf), "%s/c2.conf", work);
	snprintf(dat, sizeof(dat), "%s/c2.dat", work);
	snprintf(buf, sizeof(buf), "output = %s\n", log);
	write_file(conf, buf);

	/* --print-config: what it would do, and never tracefs. */
	assert_int_equal(td(NULL, "record", "-c", conf, "--print-config", NULL), 2);
	assert_err_has("record: give the trace.dat to write with -o FILE.dat (the "
		       "configuration's output is JSON lines");
	assert_false(exists(log));

	/* With -o: that is the trace.dat, and no JSON lines are written. */
	assert_int_equal(td(NULL, "record", "-c", conf, "-o", dat, "--print-config", NULL), 0);
	snprintf(buf, sizeof(buf), "\nrecord = %s\n", dat);
	assert_non_null(strstr(td_said("out"), buf));
	assert_null(strstr(td_said("out"), "\noutput ="));
	assert_false(exists(log));
}

/* The size of @path, -1 if it is not there. */
static long long size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long long)st.st_size;
}

/* -o is checked as every output is: never a program, never in the directory recovered. */
static void test_recover_output_checked(void **state)
{
	char dir[512], prog[1024], link[1024], out[1024], cmd[2048], raw[1024], buf[64];
	const char *const inside[] = { "cpu0.raw", "new.dat", "", "perf-maps/x.dat" };

	(void)state;
	make_scratch(dir, sizeof(dir), "chk.dat");
	snprintf(raw, sizeof(raw), "%s/cpu0.raw", dir);
	work_path(prog, sizeof(prog), "prog");
	snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", prog);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(td(NULL, "record", "--recover", dir, "-o", prog, NULL), 2);
	assert_err_has("record --recover: -o '");
	assert_err_has("' is a program: not overwritten with a trace.dat");
	/* Through a symbolic link too. */
	work_path(link, sizeof(link), "prog-link");
	assert_int_equal(symlink(prog, link), 0);
	assert_int_equal(td(NULL, "record", "--recover", dir, "-o", link, NULL), 2);
	assert_err_has("is a program");
	snprintf(cmd, sizeof(cmd), "cmp -s /bin/true '%s'", prog);
	assert_int_equal(system(cmd), 0);

	for (size_t i = 0; i < sizeof(inside) / sizeof(inside[0]); i++) {
		snprintf(out, sizeof(out), "%s/%s", dir, inside[i]);
		assert_int_equal(td(NULL, "record", "--recover", dir, "-o", out, NULL), 2);
		assert_err_has("the scratch directory the trace.dat is made of (removed once it "
			       "is written): name a file outside it");
	}
	/* Spelled another way, or through a link. */
	snprintf(out, sizeof(out), "%s/../%s/%s/x.dat", work, strrchr(work, '/') + 1,
		 strrchr(dir, '/') + 1);
	assert_int_equal(td(NULL, "record", "--recover", dir, "-o", out, NULL), 2);
	work_path(link, sizeof(link), "raw-link");
	assert_int_equal(symlink(raw, link), 0);
	assert_int_equal(td(NULL, "record", "--recover", dir, "-o", link, NULL), 2);
	assert_err_has("name a file outside it");
	/* Untouched all the while, and then made a trace.dat of. */
	assert_int_equal(size_of(raw), 8192);
	assert_int_equal(td(NULL, "record", "--recover", dir, "-o",
			    work_path(out, sizeof(out), "chk-ok.dat"), NULL), 0);
	assert_string_equal(read_text(out, buf, sizeof(buf)), "saved head\n");
	assert_false(exists(dir));
}

/*
 * A trace-cmd that fails half way (exits 1, or is killed) leaves the file
 * there as it was and no part of a new one; the directory is kept for a
 * retry, which -o is not needed for when there was no file.
 */
static void test_recover_failed_build(void **state)
{
	char dir[512], old[1024], meant[1024], pattern[1040], raw[1024], stale[1040];
	char path[1024], buf[256];
	const char *const modes[] = { "fail", "kill" };
	pid_t dead;

	(void)state;
	make_scratch(dir, sizeof(dir), "fb.dat");
	snprintf(raw, sizeof(raw), "%s/cpu0.raw", dir);
	work_path(old, sizeof(old), "fb-old.dat");
	write_file(old, "OLD\n");
	snprintf(pattern, sizeof(pattern), "%s.tmp.*", old);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		assert_int_equal(td(modes[i], "record", "--recover", dir, "-o", old, NULL), 1);
		assert_string_equal(read_text(old, buf, sizeof(buf)), "OLD\n");
		assert_int_equal(count(pattern), 0);
		assert_err_has("'trace-cmd restore -i' failed (the file there, if any, is left as "
			       "it was):");
		assert_err_has("to retry: trace-defer record --recover");
		assert_int_equal(size_of(raw), 8192);
	}
	/* trace-cmd ran in a process group of its own, SIGPIPE not ignored. */
	assert_string_equal(read_text(work_path(path, sizeof(path), "fake.pgid"), stale,
				      sizeof(stale)),
			    read_text(work_path(path, sizeof(path), "fake.pid"), buf, sizeof(buf)));
	read_text(work_path(path, sizeof(path), "fake.sigign"), stale, sizeof(stale));
	assert_int_equal(strtoull(stale + strlen("SigIgn:"), NULL, 16) & (1ULL << (SIGPIPE - 1)),
			 0);

	/* Without -o, and no file there before: none after, so none in the way of a retry. */
	work_path(meant, sizeof(meant), "fb.dat");
	snprintf(pattern, sizeof(pattern), "%s.tmp.*", meant);
	assert_int_equal(td("fail", "record", "--recover", dir, NULL), 1);
	assert_false(exists(meant));
	assert_int_equal(count(pattern), 0);
	/* A temporary file a dead run left is removed. */
	dead = fork();
	assert_true(dead >= 0);
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0);
	snprintf(stale, sizeof(stale), "%s.tmp.%d", meant, (int)dead);
	write_file(stale, "partial\n");
	assert_int_equal(td(NULL, "record", "--recover", dir, NULL), 0);
	assert_string_equal(read_text(meant, buf, sizeof(buf)), "saved head\n");
	assert_int_equal(count(pattern), 0);
	assert_false(exists(dir));
}

/*
 * SIGTERM or SIGINT ends a recover at once, trace-cmd and all: no file is
 * made (nor a temporary one left), the directory is kept for a retry.
 */
static void test_recover_stopped_by_signal(void **state)
{
	char dir[512], out[1024], pattern[1040], raw[1024], go[1024], pidf[1024], buf[64];
	const char *args[] = { "record", "--recover", dir, "-o", out, NULL };
	const int sigs[] = { SIGTERM, SIGINT };

	(void)state;
	make_scratch(dir, sizeof(dir), "sig.dat");
	snprintf(raw, sizeof(raw), "%s/cpu0.raw", dir);
	work_path(out, sizeof(out), "sig.dat");
	snprintf(pattern, sizeof(pattern), "%s.tmp.*", out);
	work_path(go, sizeof(go), "go");
	work_path(pidf, sizeof(pidf), "fake.pid");
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		pid_t td_pid, fake;
		int rc;

		unlink(go);
		unlink(pidf);
		td_pid = start_td("wait", "err", args);
		if (!wait_for(pidf, 5000)) {
			kill(td_pid, SIGKILL);
			waitpid(td_pid, NULL, 0);
			fail_msg("the recover did not start trace-cmd:\n%s", err_text());
		}
		fake = atoi(read_text(pidf, buf, sizeof(buf)));
		assert_true(fake > 0);
		kill(td_pid, sigs[i]);
		rc = wait_td(td_pid, 3000);
		if (rc < 0) {
			write_file(go, "");
			kill(td_pid, SIGKILL);
			waitpid(td_pid, NULL, 0);
			fail_msg("the recover still runs 3 s after signal %d", sigs[i]);
		}
		assert_int_equal(rc, 1);
		/* Reaped by the recover: not running on in the background. */
		assert_int_equal(kill(fake, 0), -1);
		assert_int_equal(errno, ESRCH);
		assert_false(exists(out));
		assert_int_equal(count(pattern), 0);
		assert_int_equal(size_of(raw), 8192);
		assert_err_has(" not written (trace-cmd stopped)");
		assert_err_has("to retry: trace-defer record --recover");
	}
	/* And then the retry. */
	assert_int_equal(td(NULL, "record", "--recover", dir, "-o", out, NULL), 0);
	assert_string_equal(read_text(out, buf, sizeof(buf)), "saved head\n");
	assert_false(exists(dir));
}

/* Two recovers of one directory: the second is refused while the first works. */
static void test_recover_one_at_a_time(void **state)
{
	char dir[512], a[1024], b[1024], go[1024], pid[1024], buf[64];
	const char *args[] = { "record", "--recover", dir, "-o", a, NULL };
	int rc, first_rc;
	pid_t first;

	(void)state;
	make_scratch(dir, sizeof(dir), "one.dat");
	work_path(a, sizeof(a), "one-a.dat");
	work_path(b, sizeof(b), "one-b.dat");
	unlink(work_path(go, sizeof(go), "go"));
	unlink(work_path(pid, sizeof(pid), "fake.pid"));
	first = start_td("wait", "err.first", args);
	if (!wait_for(pid, 5000)) {
		kill(first, SIGKILL);
		waitpid(first, NULL, 0);
		fail_msg("the first recover did not start trace-cmd:\n%s", td_said("err.first"));
	}
	rc = td(NULL, "record", "--recover", dir, "-o", b, NULL);
	/* Before any assert: the first one ends either way. */
	write_file(go, "");
	first_rc = wait_td(first, 10000);
	assert_int_equal(rc, 2);
	assert_err_has("is in use: a running recording's (its trace.dat comes when it ends), "
		       "or another 'record --recover'");
	assert_false(exists(b));
	assert_int_equal(first_rc, 0);
	assert_string_equal(read_text(a, buf, sizeof(buf)), "saved head\n");
	assert_false(exists(dir));
	unlink(go);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The EXTEND_TIMEOUT_USEC= messages waiting on @fd: counted in *@before
 * until trace-cmd got stuck at @stall_at (< 0: not yet), in *@during
 * when they came while it was stuck, past the one look that may still
 * see its last writes (@t: now).
 */
static void extend_messages(int fd, double t, double stall_at, int *before, int *during)
{
	unsigned long long usec;
	char buf[256];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf) - 1, 0)) > 0) {
		buf[n] = '\0';
		if (sscanf(buf, "EXTEND_TIMEOUT_USEC=%llu", &usec) != 1)
			fail_msg("not an EXTEND_TIMEOUT_USEC message: '%s'", buf);
		/* Some 10-20 s each: more than the look every 2 s needs, not for ever. */
		assert_in_range(usec, 10000000, 20000000);
		if (stall_at < 0)
			(*before)++;
		else if (t - stall_at > 2.5 && t - stall_at < 5.3)
			(*during)++;
	}
}

/*
 * Under systemd (NOTIFY_SOCKET), building the trace.dat asks for the
 * time it takes: EXTEND_TIMEOUT_USEC= when trace-cmd starts and while it
 * gets on, so that a long build is not killed at TimeoutStopSec=; none
 * while it is stuck, so that a trace-cmd that hangs does not hold the
 * stop (a shutdown) for ever.
 */
static void test_recover_extends_timeout(void **state)
{
	char dir[512], out[1024], sock[1024], stalled[1024], buf[64];
	const char *args[] = { "record", "--recover", dir, "-o", out, NULL };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc = -1, before = 0, during = 0;
	double start, stall_at = -1, t;
	pid_t pid;

	(void)state;
	make_scratch(dir, sizeof(dir), "ext.dat");
	work_path(out, sizeof(out), "ext.dat");
	unlink(work_path(stalled, sizeof(stalled), "stalled"));
	work_path(sock, sizeof(sock), "notify");
	assert_true(strlen(sock) < sizeof(sa.sun_path));
	strcpy(sa.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setenv("NOTIFY_SOCKET", sock, 1);
	pid = start_td("slow", "err", args);
	unsetenv("NOTIFY_SOCKET");
	start = now_s();
	while ((t = now_s()) - start < 20 && rc < 0) {
		extend_messages(fd, t, stall_at, &before, &during);
		if (stall_at < 0 && exists(stalled))
			stall_at = t;
		rc = wait_td(pid, 0);	/* a 10 ms tick */
	}
	if (rc < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("the recover still runs after 20 s:\n%s", err_text());
	}
	extend_messages(fd, now_s(), stall_at, &before, &during);
	close(fd);
	unlink(sock);
	assert_int_equal(rc, 0);
	assert_true(stall_at > 0);
	/* At its start, and at least once in the 3 s it wrote. */
	if (before < 2)
		fail_msg("%d EXTEND_TIMEOUT_USEC message(s) while trace-cmd got on", before);
	if (during)
		fail_msg("%d EXTEND_TIMEOUT_USEC message(s) while trace-cmd was stuck", during);
	assert_string_equal(read_text(out, buf, sizeof(buf)), "saved head\n");
	assert_false(exists(dir));
}

static int group_setup(void **state)
{
	char exe[PATH_MAX], path[1024];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	(void)state;
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	/* $(BUILD)/tests/test_daemon_record -> $(BUILD) */
	if (!realpath(dirname(dirname(exe)), build_dir))
		return -1;
	snprintf(work, sizeof(work), "/tmp/td-record-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/bin", work);
	if (mkdir(work, 0700) || mkdir(path, 0700))
		return -1;
	snprintf(path, sizeof(path), "%s/bin/trace-cmd", work);
	write_file(path, fake_trace_cmd);
	return chmod(path, 0755);
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recover_ignores_config_output),
		cmocka_unit_test(test_record_needs_command_line_output),
		cmocka_unit_test(test_recover_output_checked),
		cmocka_unit_test(test_recover_failed_build),
		cmocka_unit_test(test_recover_stopped_by_signal),
		cmocka_unit_test(test_recover_one_at_a_time),
		cmocka_unit_test(test_recover_extends_timeout),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
