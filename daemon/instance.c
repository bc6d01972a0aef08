// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs instance lifecycle and stale-instance cleanup (see instance.h for
 * the lock-file protocol).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

#include "bootid.h"
#include "instance.h"
#include "log.h"

/* rmdir of an instance may be refused for a moment while the kernel drops references. */
#define DESTROY_TRIES		40
#define DESTROY_WAIT_NS		50000000L

int td_tracefs_check(void)
{
	char path[PATH_MAX];
	const char *dir;

	dir = tracefs_tracing_dir();
	if (!dir) {
		td_err("tracefs is not mounted and could not be mounted%s",
		       geteuid() ? " (mounting needs root)" : "");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/instances", dir);
	if (access(path, W_OK | X_OK)) {
		td_err("cannot create tracefs instances in %s: %s (trace-defer must run as root)",
		       path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Start time of a process (clock ticks since boot, field 22 of its stat), 0 if gone. */
static unsigned long long proc_start_time(int pid)
{
	unsigned long long start = 0;
	char path[64], buf[1024];
	const char *p;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: count fields after the last ')'. */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	return start ? start : 1;
}

/* The marker names a process that still runs (the same one: start times agree). */
static bool owner_alive(int pid, unsigned long long start)
{
	unsigned long long now_start;

	if (pid <= 0 || pid == getpid())
		return false;
	now_start = proc_start_time(pid);
	return now_start && (!start || now_start == start);
}

/*
 * The owner the marker names: "PID START BOOT_ID". A marker of an
 * earlier boot names no owner: the run dir outlived the reboot (not
 * /run), and an instance of the name now is not that run's (one made at
 * boot with trace_instance=, say), so it must not be removed as stale. A
 * marker without a boot id (an older trace-defer's) is taken as it is.
 */
static void marker_read(int fd, int *pid, unsigned long long *start)
{
	char buf[128] = "", boot[40] = "";
	ssize_t n;

	*pid = 0;
	*start = 0;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "%d %llu %39s", pid, start, boot) < 1)
		*pid = 0;
	else if (boot[0] && td_boot_id()[0] && strcmp(boot, td_boot_id()))
		*pid = 0;
}

/*
 * Lock file: returns the fd, sets *prev_pid from its content, or -1.
 * Without flock() (a kernel without CONFIG_FILE_LOCKING, some network file
 * systems) the owner's liveness is judged from the marker instead: its pid
 * still running with the start time it recorded. That cannot stop two
 * daemons starting in the same instant, which the lock does.
 */
static int lock_open(const char *run_dir, const char *name, char **path_out, int *prev_pid,
		     bool quiet_busy)
{
	unsigned long long start;
	char *path = NULL;
	int fd = -1;

	*prev_pid = 0;
	if (mkdir(run_dir, 0755) && errno != EEXIST) {
		td_err("cannot create run directory %s: %s", run_dir, strerror(errno));
		return -1;
	}
	if (asprintf(&path, "%s/%s.lock", run_dir, name) < 0) {
		td_err("out of memory");
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		td_err("cannot open lock file %s: %s", path, strerror(errno));
		goto fail;
	}
	marker_read(fd, prev_pid, &start);
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK)
			goto busy;
		if (errno != ENOSYS && errno != ENOLCK && errno != EINVAL &&
		    errno != EOPNOTSUPP) {
			td_err("cannot lock %s: %s", path, strerror(errno));
			goto fail;
		}
		td_debug("no flock() on %s (%s): judging the owner by its pid", path,
			 strerror(errno));
		if (owner_alive(*prev_pid, start))
			goto busy;
	}
	/* Re-read under the lock: the previous holder may have cleared it meanwhile. */
	marker_read(fd, prev_pid, &start);
	*path_out = path;
	return fd;
busy:
	if (!quiet_busy)
		td_err("instance '%s' is in use by a running trace-defer (pid %d, lock %s)", name,
		       *prev_pid, path);
fail:
	if (fd >= 0)
		close(fd);
	free(path);
	return -1;
}

/* Record @pid (0: none) as the owner of the instance, with its start time and boot. */
static int marker_set(int fd, int pid)
{
	char buf[128];
	int len;

	if (ftruncate(fd, 0))
		return -1;
	if (!pid)
		return 0;
	len = snprintf(buf, sizeof(buf), "%d %llu %s\n", pid, proc_start_time(pid), td_boot_id());
	return pwrite(fd, buf, len, 0) == len ? 0 : -1;
}

/*
 * Remove every trigger of one event. Each line of a trigger file reads
 * "cmd[:args]:count[ if filter]"; "!cmd[:args]" removes it.
 */
static void remove_triggers(const char *trigger_path)
{
	char buf[4096];
	char *line, *save = NULL;
	ssize_t n;
	int fd;

	fd = open(trigger_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char cmd[512];
		char *p;
		int wfd;

		if (line[0] == '#' || !line[0])
			continue;
		snprintf(cmd, sizeof(cmd), "!%s", line);
		p = strstr(cmd, " if ");
		if (p)
			*p = '\0';
		p = strchr(cmd, ' ');
		if (p)
			*p = '\0';
		p = strrchr(cmd, ':');
		if (p)
			*p = '\0';
		wfd = open(trigger_path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (wfd < 0)
			return;
		if (write(wfd, cmd, strlen(cmd)) < 0)
			td_debug("cannot remove trigger '%s' from %s: %s", line, trigger_path,
				 strerror(errno));
		close(wfd);
	}
}

static void remove_all_triggers(struct tracefs_instance *tfs)
{
	char *events_dir = tracefs_instance_get_file(tfs, "events");
	struct dirent *sd, *ed;
	DIR *sys_dir, *ev_dir;

	if (!events_dir)
		return;
	sys_dir = opendir(events_dir);
	while (sys_dir && (sd = readdir(sys_dir))) {
		char sys_path[PATH_MAX];

		if (sd->d_name[0] == '.' || sd->d_type != DT_DIR)
			continue;
		snprintf(sys_path, sizeof(sys_path), "%s/%s", events_dir, sd->d_name);
		ev_dir = opendir(sys_path);
		while (ev_dir && (ed = readdir(ev_dir))) {
			char trig[PATH_MAX];

			if (ed->d_name[0] == '.' || ed->d_type != DT_DIR)
				continue;
			if (snprintf(trig, sizeof(trig), "%s/%s/trigger", sys_path, ed->d_name) <
			    (int)sizeof(trig))
				remove_triggers(trig);
		}
		if (ev_dir)
			closedir(ev_dir);
	}
	if (sys_dir)
		closedir(sys_dir);
	tracefs_put_tracing_file(events_dir);
}

void td_instance_scrub(struct tracefs_instance *tfs)
{
	tracefs_trace_off(tfs);
	tracefs_instance_file_write(tfs, "events/enable", "0");
	remove_all_triggers(tfs);
	if (tracefs_option_is_enabled(tfs, TRACEFS_OPTION_STACKTRACE))
		tracefs_option_disable(tfs, TRACEFS_OPTION_STACKTRACE);
	if (tracefs_option_is_enabled(tfs, TRACEFS_OPTION_USERSTACKTRACE))
		tracefs_option_disable(tfs, TRACEFS_OPTION_USERSTACKTRACE);
	/* Not known to libtracefs 1.6: the option of the deferred-stack kernel series. */
	if (tracefs_file_exists(tfs, "options/userstacktrace_delay"))
		tracefs_instance_file_write(tfs, "options/userstacktrace_delay", "0");
}

static int destroy(struct tracefs_instance *tfs, const char *name)
{
	struct timespec ts = { 0, DESTROY_WAIT_NS };
	int i;

	for (i = 0; i < DESTROY_TRIES; i++) {
		if (!tracefs_instance_destroy(tfs))
			return 0;
		if (errno != EBUSY)
			break;
		nanosleep(&ts, NULL);
	}
	td_err("cannot remove tracefs instance '%s': %s%s", name, strerror(errno),
	       errno == EBUSY ? " (a trace_pipe_raw or trace_pipe of it is still open?)" : "");
	return -1;
}

/*
 * A process (not us) with a file of instance @name open: its pid, its name
 * in @comm; 0 if none is found. A reader holds the trace_pipe_raw files of
 * its instance open for as long as it runs, whatever lock file it took: a
 * daemon started with another run directory, or whose lock file was
 * deleted, must not have its tracing turned off under it. An fd is one of
 * tracefs (its device) whose path, as it was opened, has the instance's
 * directory in it. Processes whose fds cannot be seen (no CAP_SYS_PTRACE,
 * hidepid) are said: what they hold is not known.
 */
static int instance_user(const char *name, char *comm, size_t size)
{
	char needle[NAME_MAX + 32];
	struct dirent *pd, *fd_ent;
	struct stat tfs_st;
	DIR *proc, *fds;
	int found = 0, unseen = 0;

	if (stat(tracefs_tracing_dir(), &tfs_st))
		return 0;
	snprintf(needle, sizeof(needle), "/instances/%s/", name);
	proc = opendir("/proc");
	while (proc && !found && (pd = readdir(proc))) {
		char dir[64];
		int pid = atoi(pd->d_name);

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
		fds = opendir(dir);
		if (!fds && (errno == EACCES || errno == EPERM))
			unseen++;
		while (fds && !found && (fd_ent = readdir(fds))) {
			char link[PATH_MAX], target[PATH_MAX];
			struct stat st;
			ssize_t n;

			if (fd_ent->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", dir, fd_ent->d_name);
			n = readlink(link, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			if (strstr(target, needle) && !stat(link, &st) && st.st_dev == tfs_st.st_dev)
				found = pid;
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
		closedir(proc);
	if (!found && unseen)
		td_warn("cannot see the open files of %d process(es) (no CAP_SYS_PTRACE?): "
			"whether one reads instance '%s' is not known", unseen, name);
	if (found) {
		char path[64];
		FILE *f;

		snprintf(comm, size, "?");
		snprintf(path, sizeof(path), "/proc/%d/comm", found);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, size, f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
	}
	return found;
}

/*
 * Scrub and remove an existing instance we did not open in this process,
 * unless a live process reads it.
 */
static int remove_existing(const char *name)
{
	struct tracefs_instance *tfs;
	char comm[32];
	int ret, user;

	user = instance_user(name, comm, sizeof(comm));
	if (user) {
		td_err("tracefs instance '%s' is in use: pid %d (%s) has its files open; not "
		       "touching it (a trace-defer of another run directory? stop it first)",
		       name, user, comm);
		return -1;
	}
	tfs = tracefs_instance_alloc(NULL, name);
	if (!tfs) {
		td_err("cannot access tracefs instance '%s': %s", name, strerror(errno));
		return -1;
	}
	/*
	 * Removed as it is first: the kernel turns it off and drops its
	 * triggers itself, and refuses (EBUSY) while a file of it is open,
	 * by a reader instance_user() could not see (hidepid, no
	 * CAP_SYS_PTRACE), whose tracing must then not be turned off under
	 * it. Scrubbed first only when that removal failed otherwise.
	 */
	if (!tracefs_instance_destroy(tfs)) {
		ret = 0;
	} else if (errno == EBUSY) {
		td_err("tracefs instance '%s' is in use: a file of it is open; not touching it",
		       name);
		ret = -1;
	} else {
		td_instance_scrub(tfs);
		ret = destroy(tfs, name);
	}
	tracefs_instance_free(tfs);
	return ret;
}

int td_instance_open(struct td_instance *inst, const char *run_dir, const char *name)
{
	char *path;
	int prev_pid;

	memset(inst, 0, sizeof(*inst));
	inst->lock_fd = -1;
	inst->hold_fd = -1;
	inst->name = strdup(name);
	if (!inst->name) {
		td_err("out of memory");
		return -1;
	}
	inst->lock_fd = lock_open(run_dir, name, &inst->lock_path, &prev_pid, false);
	if (inst->lock_fd < 0)
		goto fail;
	if (tracefs_instance_exists(name)) {
		char comm[32];
		int user = instance_user(name, comm, sizeof(comm));

		if (user) {
			td_err("a tracefs instance named '%s' exists and is in use: pid %d (%s) has "
			       "its files open (%s records no owner: a trace-defer of another run "
			       "directory?); choose another name with --instance", name, user, comm,
			       inst->lock_path);
			goto fail;
		}
		if (!prev_pid) {
			td_err("a tracefs instance named '%s' exists but was not made by "
			       "trace-defer (%s records no owner): remove it with 'trace-defer "
			       "--cleanup --force -i %s' or choose another name with --instance",
			       name, inst->lock_path, name);
			goto fail;
		}
		td_warn("removing stale tracefs instance '%s' left by trace-defer pid %d", name,
			prev_pid);
		if (remove_existing(name))
			goto fail;
	}
	/* Marker first: a crash between mkdir and here must still be recognised. */
	if (marker_set(inst->lock_fd, getpid())) {
		td_err("cannot write %s: %s", inst->lock_path, strerror(errno));
		goto fail;
	}
	inst->tfs = tracefs_instance_create(name);
	if (!inst->tfs) {
		td_err("cannot create tracefs instance '%s': %s", name, strerror(errno));
		marker_set(inst->lock_fd, 0);
		goto fail;
	}
	if (!tracefs_instance_is_new(inst->tfs)) {
		/* Made by someone else between our check and our mkdir: leave it to them. */
		td_err("tracefs instance '%s' appeared while starting; not touching it", name);
		tracefs_instance_free(inst->tfs);
		inst->tfs = NULL;
		marker_set(inst->lock_fd, 0);
		goto fail;
	}
	/* Not needed to trace: a failure only leaves the window it closes open. */
	path = tracefs_instance_get_file(inst->tfs, "tracing_on");
	if (path)
		inst->hold_fd = open(path, O_RDONLY | O_CLOEXEC);
	tracefs_put_tracing_file(path);
	if (tracefs_trace_off(inst->tfs)) {
		td_err("cannot turn tracing off in instance '%s': %s", name, strerror(errno));
		td_instance_close(inst);
		return -1;
	}
	return 0;
fail:
	td_instance_close(inst);
	return -1;
}

int td_instance_close(struct td_instance *inst)
{
	int ret = 0;

	/* An open file of it keeps the kernel from removing it. */
	if (inst->hold_fd >= 0)
		close(inst->hold_fd);
	inst->hold_fd = -1;
	if (inst->tfs) {
		td_instance_scrub(inst->tfs);
		ret = destroy(inst->tfs, inst->name);
		tracefs_instance_free(inst->tfs);
		inst->tfs = NULL;
		/* On failure keep the marker: the next run or --cleanup removes it. */
		if (!ret && inst->lock_fd >= 0)
			marker_set(inst->lock_fd, 0);
	}
	if (inst->lock_fd >= 0)
		close(inst->lock_fd);
	inst->lock_fd = -1;
	free(inst->lock_path);
	free(inst->name);
	inst->lock_path = NULL;
	inst->name = NULL;
	return ret;
}

int td_instance_cleanup(const char *run_dir, const char *name, bool force)
{
	char *lock_path = NULL, comm[32];
	int prev_pid, fd, ret = 0;

	/* Nothing there, and no run dir: none is made only to say so. */
	if (!tracefs_instance_exists(name) && access(run_dir, F_OK) && errno == ENOENT) {
		td_info("no tracefs instance '%s': nothing to clean", name);
		return 0;
	}
	fd = lock_open(run_dir, name, &lock_path, &prev_pid, false);
	if (fd < 0)
		return -1;
	if (tracefs_instance_exists(name) && !prev_pid && !force) {
		/*
		 * Another program's (trace-cmd record -B, a person's mkdir),
		 * or the instance of a start that it made refuse: the unit's
		 * ExecStopPost runs this after every failed start.
		 */
		int user = instance_user(name, comm, sizeof(comm));

		if (user)
			td_err("tracefs instance '%s' is in use: pid %d (%s) has its files open; "
			       "not touching it", name, user, comm);
		else
			td_err("tracefs instance '%s' was not made by trace-defer (%s records no "
			       "owner): left alone; add --force to remove it anyway", name,
			       lock_path);
		ret = -1;
	} else if (tracefs_instance_exists(name)) {
		ret = remove_existing(name);
		/* Asked for, and it was there: said, as the names instance's removal is. */
		if (!ret)
			td_notice("removed tracefs instance '%s'%s", name,
				  prev_pid ? "" : " (not made by trace-defer: --force)");
	} else {
		td_info("no tracefs instance '%s': nothing to clean", name);
	}
	if (!ret)
		marker_set(fd, 0);
	close(fd);
	free(lock_path);
	return ret;
}

int td_instance_remove_stale(const char *run_dir, const char *name)
{
	char *lock_path = NULL;
	int prev_pid, fd, ret = 0;

	if (!tracefs_instance_exists(name))
		return 0;
	/* Busy: a live trace-defer's, not ours to touch, and no news. */
	fd = lock_open(run_dir, name, &lock_path, &prev_pid, true);
	if (fd < 0)
		return 0;
	if (prev_pid && tracefs_instance_exists(name)) {
		td_warn("removing stale tracefs instance '%s' left by trace-defer pid %d", name,
			prev_pid);
		ret = remove_existing(name);
		if (!ret)
			marker_set(fd, 0);
	}
	close(fd);
	free(lock_path);
	return ret;
}
