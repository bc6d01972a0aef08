// SPDX-License-Identifier: GPL-2.0
/*
 * trace.dat recording through saved sub-buffers and `trace-cmd restore`
 * (see record.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bootid.h"
#include "cmdlines.h"
#include "config.h"
#include "counters.h"
#include "log.h"
#include "record.h"
#include "service.h"
#include "wholefile.h"

extern char **environ;

struct td_recorder {
	char *path;		/* the trace.dat to make */
	char *dir;		/* scratch: PATH.raw.XXXXXX */
	char *maps;		/* DIR/perf-maps: the JITs' perf maps, made when one is saved */
	int nr_cpus;
	int page_size;
	int *fds;
	char *pad;		/* a zeroed sub-buffer, to pad short reads */
	unsigned long long pages;
	pid_t head_pid;		/* trace-cmd making the start's headers, until reaped */
	int lock_fd;		/* DIR/info, flock()ed while this run owns DIR */
	int names_fd;		/* DIR/names, made on the first name learned */
	bool failed;
	bool names_failed;	/* DIR/names could not be written: said once */
};

static char *raw_path(const struct td_recorder *rec, int cpu)
{
	char *p;

	if (asprintf(&p, "%s/cpu%d.raw", rec->dir, cpu) < 0)
		return NULL;
	return p;
}

/* Remove the perf-PID.map files of @dir, then @dir if that left it empty. */
static void remove_maps(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len > 9 && !strncmp(de->d_name, "perf-", 5) &&
		    !strcmp(de->d_name + len - 4, ".map"))
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
	rmdir(dir);
}

/*
 * Every file a recording puts in @dir (but its JIT perf maps if @keep_maps),
 * then @dir (if empty: never a file of someone else).
 */
static void remove_scratch(const char *dir, int nr_cpus, bool keep_maps)
{
	static const char *const names[] = { "head.dat", "head.new", "restore.log", "info",
					      "names" };
	char path[PATH_MAX];

	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		snprintf(path, sizeof(path), "%s/cpu%d.raw", dir, cpu);
		unlink(path);
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	td_cmdlines_dir_remove(dir);
	snprintf(path, sizeof(path), "%s/perf-maps", dir);
	if (!keep_maps)
		remove_maps(path);
	rmdir(dir);
}

static void recorder_free(struct td_recorder *rec)
{
	if (!rec)
		return;
	for (int cpu = 0; rec->fds && cpu < rec->nr_cpus; cpu++)
		if (rec->fds[cpu] >= 0)
			close(rec->fds[cpu]);
	if (rec->lock_fd >= 0)
		close(rec->lock_fd);
	if (rec->names_fd >= 0)
		close(rec->names_fd);
	free(rec->fds);
	free(rec->pad);
	free(rec->dir);
	free(rec->maps);
	free(rec->path);
	free(rec);
}

/*
 * DIR/info: what `record --recover` needs when the run that made DIR is
 * gone (killed, out of memory, power lost): how to cut the raw files, how
 * many there are, whether the running system is the one they came from,
 * and the trace.dat meant.
 */
static int write_info(const struct td_recorder *rec)
{
	const char *boot = td_boot_id();
	char path[PATH_MAX];
	int fd, ret;
	FILE *f;

	snprintf(path, sizeof(path), "%s/info", rec->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fprintf(f, "trace-defer-raw 1\npage_size %d\ncpus %d\nboot_id %s\noutput %s\n",
		rec->page_size, rec->nr_cpus, boot[0] ? boot : "-", rec->path);
	ret = ferror(f);
	return fclose(f) || ret ? -1 : 0;
}

/*
 * Start trace-cmd with @argv, output to @log_fd, with the default signal
 * mask and dispositions: the daemon blocks the signals its loop reads and
 * ignores SIGPIPE, and both survive exec (trace-cmd writing to a pipe
 * that closed would go on for nothing). In a process group of its own: a
 * Ctrl-C at the terminal, sent to the foreground group, is the daemon's
 * to act on, and does not kill trace-cmd half way through a file behind
 * its back. Returns its pid, or -1 (said in the log).
 */
static pid_t spawn(char *const argv[], int log_fd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dfl;
	mode_t mask;
	pid_t pid;
	int err;

	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGHUP);
	if (posix_spawn_file_actions_init(&fa))
		return -1;
	if (posix_spawnattr_init(&attr)) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				 POSIX_SPAWN_SETPGROUP);
	posix_spawn_file_actions_adddup2(&fa, log_fd, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, log_fd, STDERR_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	/*
	 * What trace-cmd writes (the trace.dat, its headers) is as private as
	 * every output (trace-defer(8), FILES): the child's umask says so.
	 */
	mask = umask(077);
	err = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
	umask(mask);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		/* In the log: shown where a failure matters, not at the start. */
		dprintf(log_fd, "cannot run %s: %s\n", argv[0], strerror(err));
		return -1;
	}
	return pid;
}

/* The SIGINT or SIGTERM that stopped a trace-cmd (see reap()), or 0. */
static int stop_signal;

/*
 * Under systemd, trace-cmd gets TD_SERVICE_EXTEND_USEC more from the start
 * of its wait (EXTEND_TIMEOUT_USEC=), and again at each look, every
 * TD_SERVICE_EXTEND_EVERY_NS, that finds it got on since the last one
 * (progress()): see service.h.
 */

/*
 * How far trace-cmd @pid got: the bytes it read and wrote (/proc/PID/io)
 * and the CPU time it used (/proc/PID/stat), summed, only ever compared
 * with an earlier value of its own. What cannot be read adds nothing.
 */
static uint64_t progress(pid_t pid)
{
	unsigned long long utime, stime;
	char path[64], line[512], *p;
	uint64_t sum = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %" SCNu64, &v) == 1 ||
		    sscanf(line, "wchar: %" SCNu64, &v) == 1)
			sum += v;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f && fgets(line, sizeof(line), f)) {
		/* After the comm, which may hold anything: state, ..., utime, stime. */
		p = strrchr(line, ')');
		if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&utime, &stime) == 2)
			sum += utime + stime;
	}
	if (f)
		fclose(f);
	return sum;
}

/*
 * Wait for trace-cmd @pid, which may take minutes (a long recording). No
 * loop reads the daemon's signals now, and main() blocked them: a SIGINT
 * or SIGTERM meanwhile is taken here, and stops trace-cmd (its process
 * group: SIGTERM, then SIGKILL a second later), so that `kill`, `timeout`
 * or a second Ctrl-C end a recover or the trace.dat's build. The signal
 * is kept in stop_signal: what trace-cmd was making is not made. Under
 * systemd, the time it takes is asked for while it gets on (see
 * TD_SERVICE_EXTEND_USEC). Returns its exit status, or -1 (killed, stopped,
 * or not to be waited for).
 */
static int reap(pid_t pid)
{
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	bool extend = td_service_active();
	uint64_t mark = 0, next = 0;
	int status = 0, ticks = 0;
	sigset_t wake, old;
	pid_t r;

	sigemptyset(&wake);
	sigaddset(&wake, SIGINT);
	sigaddset(&wake, SIGTERM);
	/* Its end wakes the wait below: blocked, SIGCHLD is kept for it. */
	sigaddset(&wake, SIGCHLD);
	sigprocmask(SIG_BLOCK, &wake, &old);
	while ((r = waitpid(pid, &status, WNOHANG)) <= 0) {
		int sig;

		if (r < 0 && errno != EINTR)
			break;
		if (stop_signal && (!ticks || ticks == 10))
			kill(-pid, !ticks ? SIGTERM : SIGKILL);
		if (stop_signal)
			ticks++;
		if (extend && !stop_signal && td_now_mono_ns() >= next) {
			uint64_t now = progress(pid);

			/* Its start (no look yet) is progress: its time begins now. */
			if (!next || now != mark)
				td_service_extend_timeout(TD_SERVICE_EXTEND_USEC);
			mark = now;
			next = td_now_mono_ns() + TD_SERVICE_EXTEND_EVERY_NS;
		}
		sig = sigtimedwait(&wake, NULL, &tick);
		if ((sig == SIGINT || sig == SIGTERM) && !stop_signal) {
			td_info("signal %d: stopping trace-cmd", sig);
			stop_signal = sig;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r < 0 || stop_signal || !WIFEXITED(status) ? -1 : WEXITSTATUS(status);
}

/*
 * Whether a SIGINT or SIGTERM stopped trace-cmd: then @out is not made,
 * said once.
 */
static bool stopped(const char *out)
{
	static bool said;

	if (stop_signal && !said)
		td_err("%s: %s not written (trace-cmd stopped)", strsignal(stop_signal), out);
	said = said || stop_signal;
	return stop_signal;
}

/*
 * DIR is this run's while it lives: a lock on DIR/info that the kernel
 * drops however the run ends, so that --recover and the next run's
 * warning leave a live recording's directory alone.
 */
static int lock_info(struct td_recorder *rec)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/info", rec->dir);
	rec->lock_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (rec->lock_fd < 0)
		return -1;
	return flock(rec->lock_fd, LOCK_EX | LOCK_NB);
}

/* Is @dir a live recording's? */
static bool in_use(const char *dir)
{
	char path[PATH_MAX];
	bool busy;
	int fd;

	snprintf(path, sizeof(path), "%s/info", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	busy = flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

/*
 * Take @dir for a recover: the lock a recording holds on DIR/info while it
 * runs, held until the fd returned is closed, so that no second recover
 * (nor a recording) works on the same files meanwhile. -1 with errno:
 * EWOULDBLOCK, someone holds it; ENOENT, DIR/info is gone (removed by the
 * recover that held it, now done); or why flock() failed (taken as not
 * held: the recording could not have taken it either).
 */
static int lock_dir(const char *dir)
{
	char path[PATH_MAX];
	struct stat held, now;
	int fd, err;

	snprintf(path, sizeof(path), "%s/info", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	if (fstat(fd, &held) || stat(path, &now) || held.st_dev != now.st_dev ||
	    held.st_ino != now.st_ino) {
		close(fd);
		errno = ENOENT;
		return -1;
	}
	return fd;
}

/* Run trace-cmd with @argv, output to @log_fd. Returns its exit status, or -1. */
static int run(char *const argv[], int log_fd)
{
	pid_t pid = spawn(argv, log_fd);

	return pid < 0 ? -1 : reap(pid);
}

static void show_log(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "    %s", line);
	fclose(f);
}

/*
 * DIR/head.dat, the headers `trace-cmd restore -c` takes from the running
 * system (event formats, kallsyms, printk formats, cmdlines): made through
 * a temporary, so that a failure leaves an older head.dat as it was. The
 * command lines are the kernel's with the names learned from exec
 * (cmdlines.h) when the run learned any.
 */
static int make_head(const char *dir, int log_fd)
{
	char head[PATH_MAX], tmp[PATH_MAX], tdir[PATH_MAX];
	char *argv[] = { "trace-cmd", "restore", "-c", "-o", tmp, NULL, NULL, NULL };
	int ret;

	snprintf(head, sizeof(head), "%s/head.dat", dir);
	snprintf(tmp, sizeof(tmp), "%s/head.new", dir);
	if (td_cmdlines_dir(dir, tdir, sizeof(tdir)) > 0) {
		argv[5] = "-t";
		argv[6] = tdir;
	}
	ret = run(argv, log_fd);
	td_cmdlines_dir_remove(dir);
	if (ret) {
		unlink(tmp);
		return -1;
	}
	/* Private like the raw files: kallsyms and cmdlines are not for everyone. */
	chmod(tmp, 0600);
	return rename(tmp, head);
}

static int open_log(const char *dir)
{
	char log[PATH_MAX];
	int fd;

	snprintf(log, sizeof(log), "%s/restore.log", dir);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		td_err("cannot create %s: %s", log, strerror(errno));
	return fd;
}

static void show_restore_log(const char *dir)
{
	char log[PATH_MAX];

	snprintf(log, sizeof(log), "%s/restore.log", dir);
	show_log(log);
}

/* The perf maps next to trace.dat @out: OUT.perf-maps (malloc()ed, NULL: no memory). */
static char *final_maps(const char *out)
{
	char *p;

	if (asprintf(&p, "%s.perf-maps", out) < 0)
		return NULL;
	return p;
}

/*
 * The trace.dat @out was just written: the perf maps of an earlier one
 * there go, and those the run saved in @from (its scratch directory's)
 * take their place, OUT.perf-maps. A directory that still holds other
 * files after the old maps went receives the new ones one by one; a
 * symbolic link or a file there is never followed or replaced. Returns 0,
 * or -1 when some stay in @from (said).
 */
static int place_maps(const char *from, const char *out)
{
	char *to = final_maps(out);
	struct dirent *de;
	struct stat st;
	int ret = -1;
	DIR *d;

	if (access(from, F_OK)) {
		ret = 0;	/* none saved: only an earlier trace.dat's to remove */
		if (to && !lstat(to, &st) && S_ISDIR(st.st_mode))
			remove_maps(to);
		goto out;
	}
	if (!to) {
		td_err("out of memory: the JIT perf maps stay in %s", from);
		goto out;
	}
	if (!lstat(to, &st) && !S_ISDIR(st.st_mode)) {
		td_err("%s is not a directory: the JIT perf maps stay in %s "
		       "(trace-defer report --perf-maps %s)", to, from, from);
		goto out;
	}
	remove_maps(to);
	if (!rename(from, to)) {
		ret = 0;
		goto out;
	}
	/* Another file system (record --recover -o elsewhere): left where they are. */
	d = errno == EXDEV ? NULL : opendir(from);
	if (!d || (mkdir(to, 0700) && errno != EEXIST)) {
		td_err("cannot move the JIT perf maps from %s to %s: %s; they stay there "
		       "(trace-defer report --perf-maps %s)", from, to, strerror(errno), from);
		if (d)
			closedir(d);
		goto out;
	}
	ret = 0;
	while ((de = readdir(d))) {
		char path[PATH_MAX];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", to, de->d_name);
		if (renameat(dirfd(d), de->d_name, AT_FDCWD, path)) {
			td_err("cannot move %s/%s to %s: %s", from, de->d_name, path,
			       strerror(errno));
			ret = -1;
		}
	}
	closedir(d);
	if (!ret)
		rmdir(from);
	else
		td_err("the JIT perf maps not moved stay in %s (trace-defer report --perf-maps %s)",
		       from, from);
out:
	free(to);
	return ret;
}

const char *td_recorder_maps_dir(const struct td_recorder *rec)
{
	return rec->maps;
}

/*
 * Whether a trace.dat can be written at @path when the recording ends:
 * said now, not after the whole run (and its scratch directory is named
 * after @path: "DIR/" would put it next to DIR).
 */
static bool target_ok(const char *path)
{
	size_t len = strlen(path);
	const char *slash;
	struct stat st;
	char *dir;
	int err;

	if (!len || path[len - 1] == '/' || (!stat(path, &st) && S_ISDIR(st.st_mode))) {
		td_err("cannot write the trace.dat to %s: %s", path,
		       len ? "it names a directory; name the file to write" : "no file named");
		return false;
	}
	/* There (through a link too): writable. A dangling link is made, as a new file. */
	if (!stat(path, &st) && access(path, W_OK)) {
		td_err("cannot write the trace.dat to %s: %s", path, strerror(errno));
		return false;
	}
	/* Its directory: the scratch directory goes there too. */
	slash = strrchr(path, '/');
	if (asprintf(&dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
		     slash ? path : ".") < 0)
		return true;
	err = 0;
	if (stat(dir, &st))
		err = errno;
	else if (!S_ISDIR(st.st_mode))
		err = ENOTDIR;
	else if (access(dir, W_OK | X_OK))
		err = errno;
	if (err)
		td_err("cannot write the trace.dat to %s: its directory %s: %s", path, dir,
		       strerror(err));
	free(dir);
	return !err;
}

/*
 * @out from DIR/head.dat and DIR/cpu0.raw .. cpu<@nr_cpus - 1>.raw, written
 * whole as the other outputs are: into OUT.tmp.PID next to it, renamed
 * over it once trace-cmd is done, so that a trace-cmd that fails half way
 * (the disk full, killed) leaves no part of a file there and an earlier
 * one as it was. A symbolic link is written through; what is not a
 * regular file (/dev/null) is written in place. Returns 0, or -1 (said,
 * with trace-cmd's log).
 */
static int build(const char *dir, int nr_cpus, const char *out, int log_fd)
{
	char head[PATH_MAX], *target, *tmp = NULL;
	char **argv = NULL;
	int n = 0, ret = -1;
	bool in_place;

	target = td_whole_target(out, &in_place);
	if (!target) {
		td_err("cannot write %s: %s", out, strerror(errno));
		return -1;
	}
	/* Checked at the start too; written maybe days later. */
	if (!in_place && td_is_program(target)) {
		td_err("cannot write %s: a program is there now, not overwritten", out);
		goto out;
	}
	if (!in_place) {
		int fd;

		/* OUT.tmp.PID of a run killed while trace-cmd wrote it stays for good. */
		td_whole_remove_stale(target);
		tmp = td_whole_tmp_path(target);
		if (!tmp) {
			td_err("out of memory");
			goto out;
		}
		fd = td_whole_create_tmp(tmp, 0600);
		if (fd < 0) {
			td_err("cannot create %s: %s", tmp, strerror(errno));
			free(tmp);
			tmp = NULL;
			goto out;
		}
		close(fd);
	}
	snprintf(head, sizeof(head), "%s/head.dat", dir);
	argv = calloc(nr_cpus + 7, sizeof(*argv));
	if (!argv) {
		td_err("out of memory");
		goto out;
	}
	argv[n++] = "trace-cmd";
	argv[n++] = "restore";
	argv[n++] = "-i";
	argv[n++] = head;
	argv[n++] = "-o";
	argv[n++] = tmp ? tmp : target;
	for (int cpu = 0; cpu < nr_cpus; cpu++)
		if (asprintf(&argv[n++], "%s/cpu%d.raw", dir, cpu) < 0) {
			argv[--n] = NULL;
			td_err("out of memory");
			goto out;
		}
	if (run(argv, log_fd)) {
		if (stopped(out))
			goto out;
		td_err("'trace-cmd restore -i' failed%s:", tmp ? " (the file there, if any, is "
		       "left as it was)" : "");
		show_restore_log(dir);
		goto out;
	}
	if (tmp && rename(tmp, target)) {
		td_err("cannot write %s: %s (the file there, if any, is left as it was)", out,
		       strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (ret && tmp)
		unlink(tmp);
	for (int i = 6; argv && i < n; i++)
		free(argv[i]);
	free(argv);
	free(tmp);
	free(target);
	return ret;
}

/*
 * @path as its real path as far as it exists (the directories and links
 * there resolved), the rest as it is spelled. malloc()ed, NULL: no memory
 * or no such path at all.
 */
static char *real_as_far(const char *path)
{
	char *head = strdup(path), *real = NULL, *out = NULL;
	size_t len = head ? strlen(head) : 0;

	while (head) {
		real = realpath(len ? head : ".", NULL);
		if (real || (errno != ENOENT && errno != ENOTDIR) || !len)
			break;
		/* One name less, its slashes kept: "a/b/c" "a/b/" "a/" "" */
		while (len && head[len - 1] == '/')
			len--;
		while (len && head[len - 1] != '/')
			len--;
		head[len] = '\0';
	}
	if (real && !path[len])
		out = strdup(real);
	else if (real && asprintf(&out, "%s/%s", strcmp(real, "/") ? real : "", path + len) < 0)
		out = NULL;
	free(real);
	free(head);
	return out;
}

/* Whether @path (a file, there or not) is @dir or in it, however either is spelled. */
static bool in_dir(const char *path, const char *dir)
{
	char *rdir = realpath(dir, NULL), *rpath = real_as_far(path);
	size_t n = rdir ? strlen(rdir) : 0;
	bool ret = rdir && rpath && !strncmp(rpath, rdir, n) &&
		   (rpath[n] == '\0' || rpath[n] == '/');

	free(rdir);
	free(rpath);
	return ret;
}

/*
 * The trace.dat -o names for a recover of @dir, checked as every output
 * is (td_config_check()): not a program, and not in @dir, which holds
 * the files it is made of and goes once it is written. Returns 0 or
 * -EINVAL (said).
 */
static int recover_output_ok(const char *dir, const char *out)
{
	bool in_place;
	char *target = td_whole_target(out, &in_place);
	int ret = 0;

	if (in_dir(out, dir) || (target && in_dir(target, dir))) {
		td_err("record --recover: -o %s is in %s, the scratch directory the trace.dat is "
		       "made of (removed once it is written): name a file outside it", out, dir);
		ret = -EINVAL;
	} else if (target && !in_place && td_is_program(target)) {
		td_err("record --recover: -o '%s' is a program: not overwritten with a trace.dat",
		       out);
		ret = -EINVAL;
	}
	free(target);
	return ret;
}

struct td_recorder *td_recorder_open(const char *path, int nr_cpus, int page_size)
{
	struct td_recorder *rec;
	char why[128];
	int log_fd;

	if (!target_ok(path))
		return NULL;
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		goto oom;
	rec->lock_fd = -1;
	rec->names_fd = -1;
	rec->nr_cpus = nr_cpus;
	rec->page_size = page_size;
	rec->path = strdup(path);
	rec->fds = malloc(nr_cpus * sizeof(*rec->fds));
	/* Before any way out: the cleanup closes every fd that is not -1. */
	if (rec->fds)
		for (int cpu = 0; cpu < nr_cpus; cpu++)
			rec->fds[cpu] = -1;
	rec->pad = calloc(1, page_size);
	if (!rec->path || !rec->fds || !rec->pad)
		goto oom;
	if (asprintf(&rec->dir, "%s.raw.XXXXXX", path) < 0) {
		rec->dir = NULL;
		goto oom;
	}
	/* Next to the output: same file system, and a clear name if it is left behind. */
	if (!mkdtemp(rec->dir)) {
		td_err("cannot create %s: %s", rec->dir, strerror(errno));
		free(rec->dir);
		rec->dir = NULL;
		recorder_free(rec);
		return NULL;
	}
	if (asprintf(&rec->maps, "%s/perf-maps", rec->dir) < 0) {
		rec->maps = NULL;
		goto oom_dir;
	}
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		char *p = raw_path(rec, cpu);

		if (!p)
			goto oom_dir;
		rec->fds[cpu] = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (rec->fds[cpu] < 0) {
			td_err("cannot create %s: %s", p, strerror(errno));
			free(p);
			td_recorder_abort(rec);
			return NULL;
		}
		free(p);
	}
	if (write_info(rec) || lock_info(rec)) {
		td_err("cannot write %s/info: %s", rec->dir, strerror(errno));
		td_recorder_abort(rec);
		return NULL;
	}
	/*
	 * The headers now as well as at the end: should this run not reach
	 * its end, `record --recover` still has the formats and kernel
	 * symbols of the kernel that wrote the sub-buffers, even after a
	 * reboot. In the background (reading kallsyms takes a while, more so
	 * in a slow VM): tracing starts now. It outlives a killed daemon.
	 * Without trace-cmd now, the end says what to do.
	 */
	log_fd = open_log(rec->dir);
	if (log_fd < 0) {
		snprintf(why, sizeof(why), "its log: %s", strerror(errno));
	} else {
		char head[PATH_MAX];
		char *const argv[] = { "trace-cmd", "restore", "-c", "-o", head, NULL };

		int fd;

		/* Made here: trace-cmd keeps its mode, private like the raw files. */
		snprintf(head, sizeof(head), "%s/head.dat", rec->dir);
		fd = open(head, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			rec->head_pid = spawn(argv, log_fd);
			snprintf(why, sizeof(why), "see restore.log there");
		} else {
			snprintf(why, sizeof(why), "head.dat: %s", strerror(errno));
		}
		close(log_fd);
	}
	/* Said now, not only after a long capture. */
	if (rec->head_pid <= 0)
		td_warn("cannot run trace-cmd restore now (%s): %s is made at exit only if it "
			"can run then; else the raw sub-buffers stay in %s for trace-defer record "
			"--recover", why, path, rec->dir);
	return rec;
oom_dir:
	td_recorder_abort(rec);
	td_err("out of memory");
	return NULL;
oom:
	recorder_free(rec);
	td_err("out of memory");
	return NULL;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

int td_recorder_page(struct td_recorder *rec, int cpu, const void *page, int size)
{
	if (rec->failed || cpu < 0 || cpu >= rec->nr_cpus)
		return -1;
	if (size > rec->page_size)
		size = rec->page_size;
	/* trace-cmd reads the files in whole sub-buffers. */
	if (write_all(rec->fds[cpu], page, size) ||
	    (size < rec->page_size && write_all(rec->fds[cpu], rec->pad, rec->page_size - size))) {
		td_err("cannot write %s/cpu%d.raw: %s (recording stopped)", rec->dir, cpu,
		       strerror(errno));
		rec->failed = true;
		return -1;
	}
	rec->pages++;
	return 0;
}

int td_recorder_name(struct td_recorder *rec, int pid, const char *comm)
{
	char line[64];
	int n;

	/* trace-cmd gives up on the whole list at a line with a blank name. */
	if (!comm[strspn(comm, " \t\n\v\f\r")])
		return 1;
	if (rec->names_fd < 0 && !rec->names_failed) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/names", rec->dir);
		rec->names_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (rec->names_fd < 0) {
			td_warn("cannot create %s: %s; programs that exited at once may stay "
				"unnamed in %s", path, strerror(errno), rec->path);
			rec->names_failed = true;
		}
	}
	if (rec->names_fd < 0)
		return -1;
	n = snprintf(line, sizeof(line), "%d ", pid);
	/* A line per name: a newline in a file's name would start another. */
	for (int i = 0; i < 15 && comm[i]; i++)
		line[n++] = comm[i] == '\n' ? '?' : comm[i];
	line[n++] = '\n';
	if (write_all(rec->names_fd, line, n)) {
		if (!rec->names_failed)
			td_warn("cannot write %s/names: %s; programs that exited at once may stay "
				"unnamed in %s", rec->dir, strerror(errno), rec->path);
		rec->names_failed = true;
		close(rec->names_fd);
		rec->names_fd = -1;
		return -1;
	}
	return 0;
}

int td_recorder_helper(const struct td_recorder *rec)
{
	return rec->head_pid > 0 ? rec->head_pid : 0;
}

/* The start's headers done (or stopped, with @stop: the directory goes). */
static void reap_head(struct td_recorder *rec, bool stop)
{
	if (rec->head_pid <= 0)
		return;
	if (stop)
		kill(rec->head_pid, SIGTERM);
	if (reap(rec->head_pid))
		td_debug("no trace-cmd headers from the start (see %s/restore.log)", rec->dir);
	rec->head_pid = 0;
}

static void print_retry(const char *dir, const char *out)
{
	td_err("the raw sub-buffers are kept in %s; to retry: trace-defer record --recover %s "
	       "-o %s", dir, dir, out);
}

int td_recorder_finish(struct td_recorder *rec)
{
	int log_fd = -1, ret = -1;

	for (int cpu = 0; cpu < rec->nr_cpus; cpu++) {
		if (close(rec->fds[cpu]) && !rec->failed) {
			td_err("cannot write %s/cpu%d.raw: %s", rec->dir, cpu, strerror(errno));
			rec->failed = true;
		}
		rec->fds[cpu] = -1;
	}
	reap_head(rec, false);
	if (rec->failed || stopped(rec->path))
		goto keep;
	log_fd = open_log(rec->dir);
	if (log_fd < 0)
		goto keep;
	/* Again at the end: the cmdlines and module symbols of now. */
	if (make_head(rec->dir, log_fd)) {
		if (!stopped(rec->path)) {
			td_err("'trace-cmd restore -c' failed:");
			show_restore_log(rec->dir);
		}
		goto keep;
	}
	if (build(rec->dir, rec->nr_cpus, rec->path, log_fd))
		goto keep;
	td_notice("wrote %s (%llu sub-buffers)", rec->path, rec->pages);
	remove_scratch(rec->dir, rec->nr_cpus, place_maps(rec->maps, rec->path) != 0);
	ret = 0;
	goto out;
keep:
	print_retry(rec->dir, rec->path);
out:
	if (log_fd >= 0)
		close(log_fd);
	recorder_free(rec);
	return ret;
}

void td_recorder_abort(struct td_recorder *rec)
{
	if (!rec)
		return;
	for (int cpu = 0; cpu < rec->nr_cpus; cpu++) {
		if (rec->fds[cpu] >= 0)
			close(rec->fds[cpu]);
		rec->fds[cpu] = -1;
	}
	reap_head(rec, true);
	if (rec->dir)
		remove_scratch(rec->dir, rec->nr_cpus, false);
	recorder_free(rec);
}

/* ---- a scratch directory left behind ---- */

struct raw_info {
	int page_size, nr_cpus;
	char boot[64];
	char output[PATH_MAX];
};

/* DIR/info as write_info() made it. 0, or -1 with errno (EINVAL: not one). */
static int read_info(const char *dir, struct raw_info *ri)
{
	char path[PATH_MAX], line[PATH_MAX + 16];
	int version = 0, ret = 0;
	FILE *f;

	memset(ri, 0, sizeof(*ri));
	snprintf(path, sizeof(path), "%s/info", dir);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "trace-defer-raw %d", &version) == 1 ||
		    sscanf(line, "page_size %d", &ri->page_size) == 1 ||
		    sscanf(line, "cpus %d", &ri->nr_cpus) == 1 ||
		    sscanf(line, "boot_id %63s", ri->boot) == 1)
			continue;
		if (!strncmp(line, "output ", 7) && strlen(line + 7) < sizeof(ri->output))
			strcpy(ri->output, line + 7);
	}
	if (ferror(f) || version != 1 || ri->page_size <= 0 || ri->nr_cpus <= 0 ||
	    ri->nr_cpus > 65536 || !ri->output[0]) {
		errno = EINVAL;
		ret = -1;
	}
	fclose(f);
	return ret;
}

/*
 * The raw files as whole sub-buffers: a run killed in the middle of a
 * write leaves part of one at the end, which trace-cmd would read as a
 * sub-buffer. Returns the whole sub-buffers in all, or -1 (printed).
 */
static long long cut_raw(const char *dir, const struct raw_info *ri)
{
	char path[PATH_MAX];
	long long pages = 0;
	struct stat st;

	for (int cpu = 0; cpu < ri->nr_cpus; cpu++) {
		snprintf(path, sizeof(path), "%s/cpu%d.raw", dir, cpu);
		if (stat(path, &st)) {
			td_err("%s: %s", path, strerror(errno));
			return -1;
		}
		if (st.st_size % ri->page_size &&
		    truncate(path, st.st_size - st.st_size % ri->page_size)) {
			td_err("cannot cut %s to whole sub-buffers: %s", path, strerror(errno));
			return -1;
		}
		pages += st.st_size / ri->page_size;
	}
	return pages;
}

/*
 * The trace.dat a scratch directory was made for: its own path without
 * ".raw.XXXXXX", next to it wherever the recover runs (the run may have
 * been given a relative path; a completed shell word ends in '/').
 */
static int meant_path(const char *dir, char *buf, size_t size)
{
	size_t len = strlen(dir);
	const char *tail;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len >= size || len < 12)
		return -1;
	memcpy(buf, dir, len);
	buf[len] = '\0';
	tail = buf + len - 11;
	if (strncmp(tail, ".raw.", 5) || strchr(tail + 5, '/') || tail == buf || tail[-1] == '/')
		return -1;
	buf[len - 11] = '\0';
	return 0;
}

int td_recorder_recover(const char *dir, const char *out)
{
	char head[PATH_MAX], meant[PATH_MAX];
	int log_fd = -1, lock_fd, ret = -EINVAL;
	struct raw_info ri;
	struct stat st;
	long long pages;

	if (read_info(dir, &ri)) {
		if (errno == EINVAL)
			td_err("%s/info: not a trace-defer recording's", dir);
		else
			td_err("%s is not a trace-defer recording's scratch directory (%s/info: %s)",
			       dir, dir, strerror(errno));
		return -EINVAL;
	}
	/* Held until the directory is gone or given up: one recover at a time. */
	lock_fd = lock_dir(dir);
	if (lock_fd < 0 && errno == EWOULDBLOCK) {
		td_err("%s is in use: a running recording's (its trace.dat comes when it ends), "
		       "or another 'record --recover' is making a trace.dat of it", dir);
		return -EINVAL;
	}
	if (lock_fd < 0 && errno == ENOENT) {
		td_err("%s is not a trace-defer recording's scratch directory (any more: %s/info "
		       "is gone)", dir, dir);
		return -EINVAL;
	}
	if (lock_fd < 0)
		td_debug("%s/info: no lock (%s): recovering without", dir, strerror(errno));
	if (!out) {
		if (meant_path(dir, meant, sizeof(meant))) {
			td_err("%s is not named FILE.dat.raw.XXXXXX: give the trace.dat to write "
			       "with -o (it was %s)", dir, ri.output);
			goto out;
		}
		out = meant;
	}
	/* A trace.dat there may be an earlier run's: never replaced unasked. */
	if (out == meant && !lstat(out, &st)) {
		td_err("%s exists; give the trace.dat to write with -o", out);
		goto out;
	}
	if (out != meant && recover_output_ok(dir, out))
		goto out;
	ret = -EIO;
	/* As for a recording's: a directory, or one that cannot be written to. */
	if (!target_ok(out))
		goto out;
	pages = cut_raw(dir, &ri);
	if (pages < 0)
		goto out;
	log_fd = open_log(dir);
	if (log_fd < 0)
		goto out;
	/*
	 * The running system's headers if the sub-buffers are this boot's
	 * (its cmdlines name the processes that ran since), else those
	 * saved at the start: the kernel that wrote them is gone.
	 */
	snprintf(head, sizeof(head), "%s/head.dat", dir);
	if (strcmp(td_boot_id(), ri.boot) || make_head(dir, log_fd)) {
		if (stopped(out)) {
			print_retry(dir, out);
			goto out;
		}
		/* Empty: trace-cmd was not there at the start, or did not get to write. */
		if (stat(head, &st) || !st.st_size) {
			td_err("%s has no trace-cmd headers (head.dat) and the running system %s: "
			       "its sub-buffers cannot be read", dir,
			       strcmp(td_boot_id(), ri.boot) ? "booted since it was recorded" :
			       "cannot give them ('trace-cmd restore -c' failed)");
			show_restore_log(dir);
			goto out;
		}
		td_notice("%s: using the headers saved when the recording started", dir);
	}
	if (build(dir, ri.nr_cpus, out, log_fd)) {
		print_retry(dir, out);
		goto out;
	}
	td_notice("wrote %s (%lld sub-buffers)", out, pages);
	snprintf(head, sizeof(head), "%s/perf-maps", dir);
	remove_scratch(dir, ri.nr_cpus, place_maps(head, out) != 0);
	ret = 0;
out:
	if (log_fd >= 0)
		close(log_fd);
	/* After the directory went: no recover starts on what is left of it. */
	if (lock_fd >= 0)
		close(lock_fd);
	return ret;
}

void td_recorder_note_leftovers(const char *path)
{
	struct raw_info ri;
	glob_t g;
	char *pat;

	if (asprintf(&pat, "%s.raw.??????", path) < 0)
		return;
	if (!glob(pat, GLOB_NOSORT, NULL, &g)) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			if (!read_info(g.gl_pathv[i], &ri) && !in_use(g.gl_pathv[i]))
				td_warn("%s holds the sub-buffers of a recording that did not "
					"finish; 'trace-defer record --recover %s -o OTHER.dat' "
					"makes a trace.dat of them (%s is this run's)",
					g.gl_pathv[i], g.gl_pathv[i], path);
		globfree(&g);
	}
	free(pat);
}
