// SPDX-License-Identifier: GPL-2.0
/*
 * Output files of the daemon (see outputs.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters.h"
#include "log.h"
#include "outputs.h"
#include "wholefile.h"

static bool is_stdout(const char *path)
{
	return !strcmp(path, "-");
}

#define JSON_BUF_SIZE	(1 << 16)

/* A regular file's size, or -1: a pipe or a terminal cannot be cut back. */
static long long file_size(FILE *f)
{
	struct stat st;

	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode))
		return -1;
	return st.st_size;
}

/*
 * What is not a regular file, opened for writing: a FIFO without a reader
 * is an error (ENXIO), not a wait without end where signals are not read
 * (at start, at exit): opened without blocking, then written blocking.
 */
static FILE *open_in_place(const char *target)
{
	int fd = open(target, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

/*
 * A file appended to may end in a line a run cut short: stdio writes 64 KiB
 * at a time, and a run killed between two writes (or within one: a write
 * is cut at a page when the task is killed) leaves half a line. The next
 * run's first line would be glued to it, unreadable, and with it the
 * stack ids it defines. Cut the file back to its last newline, if one is
 * within CUT_MAX bytes of its end (far more than any line written: a file
 * without one is not a JSON lines file cut short, and is left alone).
 * @fd is open for reading and appending. Returns the bytes cut, 0 when
 * nothing is cut (it ends whole, is empty, is not a regular file), -1 on
 * an error (errno; EFBIG: no newline near the end).
 */
#define CUT_MAX		(4 << 20)

static long long cut_unfinished_line(int fd)
{
	char buf[4096];
	struct stat st;
	off_t end;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size)
		return 0;
	for (end = st.st_size; end > 0 && st.st_size - end < CUT_MAX;) {
		size_t n = end < (off_t)sizeof(buf) ? (size_t)end : sizeof(buf);
		ssize_t got = pread(fd, buf, n, end - n);

		if (got != (ssize_t)n) {
			if (got >= 0)
				errno = EIO;	/* it shrank meanwhile */
			return -1;
		}
		for (size_t i = n; i > 0; i--) {
			if (buf[i - 1] != '\n')
				continue;
			end -= n - i;
			goto found;
		}
		end -= n;
	}
	/* A torn first line is all there is: nothing of it is worth keeping. */
	if (end > 0) {
		errno = EFBIG;
		return -1;
	}
found:
	if (end == st.st_size)
		return 0;
	return ftruncate(fd, end) ? -1 : st.st_size - end;
}

/*
 * A new output file's mode: every traced process's stacks and event fields
 * (file names, command lines' comms) are in it, readable by its owner
 * alone, as perf.data and the recording's trace.dat are, whatever the
 * umask. A file that exists keeps its mode when appended to.
 */
#define OUTPUT_MODE	0600

/* fopen(@path, "a+e" or "we"), a new file made OUTPUT_MODE. */
static FILE *open_output(const char *path, bool append)
{
	int flags = append ? O_RDWR | O_APPEND : O_WRONLY | O_TRUNC;
	int fd = open(path, flags | O_CREAT | O_CLOEXEC, OUTPUT_MODE);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, append ? "a+" : "w");
	if (!f)
		close(fd);
	return f;
}

/* @quiet: a failure is the caller's to say. */
static int open_json(struct td_outputs *o, bool append, bool quiet)
{
	long long cut;

	if (is_stdout(o->json_path)) {
		o->js.f = stdout;
	} else {
		struct stat st;
		bool fifo = !stat(o->json_path, &st) && S_ISFIFO(st.st_mode);

		/* Appending: read too, for the check below (through the same file). */
		o->js.f = fifo ? open_in_place(o->json_path) : open_output(o->json_path, append);
		if (!o->js.f) {
			if (!quiet)
				td_err("cannot open output %s: %s%s", o->json_path, strerror(errno),
				       fifo && errno == ENXIO ? " (a FIFO nobody reads)" : "");
			return -1;
		}
		cut = append && !fifo ? cut_unfinished_line(fileno(o->js.f)) : 0;
		if (cut > 0)
			td_notice("%s ended in an unfinished line (a run that died wrote it): "
				  "%lld bytes cut", o->json_path, cut);
		else if (cut < 0 && errno == EFBIG)
			td_warn("%s has no line end in its last %d MiB: not a JSON lines file "
				"cut short, left as it is (appending after it)", o->json_path,
				CUT_MAX >> 20);
		else if (cut < 0)
			td_warn("%s may end in an unfinished line, and cannot be cut back: %s",
				o->json_path, strerror(errno));
	}
	o->json_good_size = file_size(o->js.f);
	o->json_flushed = o->js.written;
	o->json_failed = o->js.failed;
	/* A terminal sees each record at once; a pipe gets them per drain tick. */
	if (o->js.f == stdout && isatty(STDOUT_FILENO))
		return 0;
	/*
	 * A big buffer of our own (glibc ignores the size without one):
	 * records are flushed on every drain tick anyway. stdout's is
	 * static, as stdio may still look at it after we are done.
	 */
	if (o->js.f == stdout) {
		static char stdout_buf[JSON_BUF_SIZE];

		setvbuf(stdout, stdout_buf, _IOFBF, JSON_BUF_SIZE);
		return 0;
	}
	if (!o->json_buf)
		o->json_buf = malloc(JSON_BUF_SIZE);
	if (o->json_buf)
		setvbuf(o->js.f, o->json_buf, _IOFBF, JSON_BUF_SIZE);
	return 0;
}

/*
 * Files written whole at exit and on SIGHUP (pprof, folded, SVG) go
 * through PATH.tmp.PID, renamed over PATH once complete: a failed write
 * (the disk full) leaves the last good file, not a cut one. Made with
 * O_EXCL and OUTPUT_MODE (so the file renamed over PATH has it). A symbolic link
 * is written through (its target replaced, the link kept), and what is
 * not a regular file (a device such as /dev/null, a FIFO) is written in
 * place: a rename() over it would put a file where the device was (we
 * run as root).
 */
struct whole {
	FILE *f;
	char *target;		/* @path, or the target of the link @path is */
	char *tmp;		/* NULL: written in place */
};

static FILE *open_tmp(const char *tmp)
{
	int fd;
	FILE *f;

	fd = td_whole_create_tmp(tmp, OUTPUT_MODE);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
	}
	return f;
}

/* Returns 0 or -1 (message printed). */
static int whole_open(const char *path, struct whole *w)
{
	bool in_place;

	memset(w, 0, sizeof(*w));
	w->target = td_whole_target(path, &in_place);
	if (w->target && !in_place)
		w->tmp = td_whole_tmp_path(w->target);
	if (!w->target || (!in_place && !w->tmp)) {
		td_err("cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	/* Checked at start too (td_config_check()); written maybe days later. */
	if (!in_place && td_is_program(w->target)) {
		td_err("cannot write %s: a program is there now, not overwritten", path);
		goto fail;
	}
	w->f = in_place ? open_in_place(w->target) : open_tmp(w->tmp);
	if (!w->f) {
		int err = errno;
		struct stat st;

		td_err("cannot write %s: %s%s", path, strerror(err),
		       in_place && err == ENXIO && !stat(w->target, &st) && S_ISFIFO(st.st_mode) ?
		       " (a FIFO nobody reads)" : "");
		goto fail;
	}
	return 0;
fail:
	free(w->target);
	free(w->tmp);
	return -1;
}

/* Close @w, written with result @ret (0 or -errno), and put it in place. Returns 0 or -1. */
static int whole_close(struct whole *w, const char *path, int ret)
{
	/* On disk before the rename, or a crash may leave an empty file in place of the last good one. */
	if (!ret && w->tmp && (fflush(w->f) || fsync(fileno(w->f))))
		ret = errno ? -errno : -EIO;
	if (fclose(w->f) && !ret)
		ret = errno ? -errno : -EIO;
	if (!ret && w->tmp && rename(w->tmp, w->target))
		ret = -errno;
	if (ret && w->tmp)
		td_err("cannot write %s: %s (the file there, if any, is left as it was)", path,
		       strerror(-ret));
	else if (ret)
		td_err("cannot write %s: %s", path, strerror(-ret));
	if (ret && w->tmp)
		unlink(w->tmp);
	free(w->target);
	free(w->tmp);
	return ret ? -1 : 0;
}

/*
 * Fail now, not after a long capture, if a file written at exit cannot be.
 * Nothing is left at @path: an empty file there (after a crash, or a last
 * write that failed) would read as a profile of nothing.
 */
static int check_writable(const char *path)
{
	bool in_place;
	char *target, *tmp;
	FILE *f;

	if (is_stdout(path))
		return 0;
	target = td_whole_target(path, &in_place);
	if (!target) {
		td_err("cannot open output %s: %s", path, strerror(errno));
		return -1;
	}
	if (in_place) {
		/* A FIFO's reader may come later: only the permission is checked. */
		if (access(target, W_OK)) {
			td_err("cannot open output %s: %s", path, strerror(errno));
			free(target);
			return -1;
		}
		free(target);
		return 0;
	}
	td_whole_remove_stale(target);
	/* Its directory: the file is replaced through a temporary one there. */
	tmp = td_whole_tmp_path(target);
	f = tmp ? open_tmp(tmp) : NULL;
	if (!f) {
		td_err("cannot write output %s: %s in its directory: %s", path,
		       tmp ? "cannot create a file" : "out of memory", strerror(errno));
		free(tmp);
		free(target);
		return -1;
	}
	fclose(f);
	unlink(tmp);
	free(tmp);
	free(target);
	return 0;
}

static void free_writers(struct td_outputs *o)
{
	td_json_writer_free(o->js.jw);
	o->js.jw = NULL;
	td_folded_free(o->folded);
	o->folded = NULL;
	td_pprof_free(o->pprof);
	o->pprof = NULL;
}

/*
 * Could the JSON output be opened for writing? Asked without opening it,
 * which would cut the file: a run refused later must leave it whole.
 */
static int check_json(const char *path)
{
	struct stat st;
	char *dir, *slash;
	int ret;

	if (is_stdout(path))
		return 0;
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			errno = EISDIR;
		else if (!access(path, W_OK))
			return 0;
	} else if (errno == ENOENT) {
		dir = strdup(path);
		if (!dir)
			return -1;
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';	/* "/name": the root */
		else if (slash)
			*slash = '\0';
		ret = access(slash ? dir : ".", W_OK | X_OK);
		free(dir);
		if (!ret)
			return 0;
	}
	td_err("cannot open output %s: %s", path, strerror(errno));
	return -1;
}

int td_outputs_check(const struct td_config *cfg)
{
	if (cfg->pprof && check_writable(cfg->pprof))
		return -1;
	if (cfg->folded && check_writable(cfg->folded))
		return -1;
	if (cfg->flamegraph && is_stdout(cfg->flamegraph)) {
		td_err("the flame graph needs a file name, not '-'");
		return -1;
	}
	if (cfg->flamegraph && check_writable(cfg->flamegraph))
		return -1;
	return cfg->output ? check_json(cfg->output) : 0;
}

int td_outputs_open(struct td_outputs *o, const struct td_config *cfg)
{
	memset(o, 0, sizeof(*o));
	o->json_path = cfg->output;
	o->folded_path = cfg->folded;
	o->flame_path = cfg->flamegraph;
	o->pprof_path = cfg->pprof;
	o->append = cfg->output_append;
	if (o->folded_path || o->flame_path) {
		o->folded = td_folded_new();
		if (!o->folded) {
			td_err("out of memory");
			return -1;
		}
		/* A whole run's stacks: the same bound as an interval's tables. */
		td_folded_set_max_mem(o->folded, cfg->profile_max_mem_kb << 10);
	}
	if (o->pprof_path) {
		o->pprof = td_pprof_new(td_now_real_ns());
		if (!o->pprof) {
			td_err("out of memory");
			goto fail;
		}
		/* A whole run's tables: the same bound as an interval's. */
		td_pprof_set_max_mem(o->pprof, cfg->profile_max_mem_kb << 10);
	}
	if (cfg->profile_dir) {
		o->profiles = td_profiles_open(cfg, td_now_mono_ns());
		if (!o->profiles)
			goto fail;
	}
	if (o->json_path) {
		o->js.jw = td_json_writer_new(cfg->json_layout, 0);
		if (!o->js.jw)
			td_err("out of memory");
		if (!o->js.jw || open_json(o, o->append, false))
			goto fail;
	}
	return 0;
fail:
	free_writers(o);
	/* nothing was counted: the close writes no file */
	td_profiles_close(o->profiles, NULL);
	o->profiles = NULL;
	return -1;
}

static int profiles_write(void *priv, const struct td_resolved *r)
{
	struct td_outputs *o = priv;

	return o->profiles ? td_profiles_add(o->profiles, r) : 0;
}

/* The interval profiles (pprof, folded): profiles, as the library's sinks of them. */
static const struct td_sink_ops profiles_sink_ops = {
	.name = "profiles", .write = profiles_write, .no_fields = true, .no_tracer_frames = true,
};

int td_outputs_attach(struct td_outputs *o, struct td_pipeline *pl)
{
	if (o->folded && td_pipeline_add_sink(pl, &td_folded_sink_ops, o->folded))
		return -ENOMEM;
	if (o->pprof && td_pipeline_add_sink(pl, &td_pprof_sink_ops, o->pprof))
		return -ENOMEM;
	if (o->profiles && td_pipeline_add_sink(pl, &profiles_sink_ops, o))
		return -ENOMEM;
	if (o->js.f && td_pipeline_add_sink(pl, &td_json_sink_ops, &o->js))
		return -ENOMEM;
	return 0;
}

#define SAY_EVERY_NS	(60 * 1000000000ULL)

static const char *json_name(const struct td_outputs *o)
{
	return is_stdout(o->json_path) ? "standard output" : o->json_path;
}

/*
 * The write of @o's JSON file failed (-@err): what stdio holds is dropped,
 * and the file cut back to its size at the last good flush (what a failed
 * write left of a line goes with it). The writer forgets the stacks and
 * formats it defined, as for a new file: those after the cut are gone.
 */
static void json_drop(struct td_outputs *o, int err)
{
	uint64_t lost = o->js.written - o->json_flushed, now;
	/* With the lines whose own write failed: gone as well. */
	uint64_t streak = lost + o->js.failed - o->json_failed;
	int fd = fileno(o->js.f);
	bool cut = false;

	__fpurge(o->js.f);
	clearerr(o->js.f);
	if (o->json_good_size >= 0)
		cut = !ftruncate(fd, o->json_good_size) &&
		      lseek(fd, o->json_good_size, SEEK_SET) >= 0;
	td_json_writer_reset(o->js.jw);
	o->json_dropped += lost;
	o->json_flushed = o->js.written;
	o->json_failed = o->js.failed;
	o->json_failing = true;
	if (!o->flush_error)
		o->flush_error = err;
	/* A disk that stays full fails every tick: said at most once a minute. */
	now = td_now_mono_ns();
	if (o->json_said_ns && now - o->json_said_ns < SAY_EVERY_NS)
		return;
	o->json_said_ns = now;
	o->json_said = true;
	o->json_said_lost = o->json_dropped + o->js.failed;
	td_err("cannot write %s: %s: %" PRIu64 " event lines dropped (%" PRIu64 " in all)%s",
	       json_name(o), strerror(-err), streak,
	       o->json_dropped + o->js.failed,
	       cut ? ", the file cut back to its last whole line" :
	       o->json_good_size < 0 ? ", not a file to cut back: a line may be cut short" :
	       ", and the file could not be cut back: a line may be cut short");
}

/*
 * The JSON file could not be opened again (SIGHUP; its directory gone, the
 * disk full): tried again at every tick, quietly, and its events counted
 * as failed writes meanwhile (the sink has no stream).
 */
static void json_retry_open(struct td_outputs *o)
{
	if (open_json(o, true, true))
		return;
	o->json_lost_file = false;
	o->json_said_lost = o->json_dropped + o->js.failed;
	td_notice("%s: open again, writing (%" PRIu64 " event lines dropped so far)",
		  json_name(o), o->json_said_lost);
}

void td_outputs_flush(struct td_outputs *o)
{
	int err;

	if (o->json_lost_file)
		json_retry_open(o);
	if (!o->js.f || o->json_broken)
		return;
	errno = 0;
	/* An error of a write within the tick counts too: stdio may have dropped bytes. */
	if (!fflush(o->js.f) && !ferror(o->js.f)) {
		/* Recovered only once lines went out: nothing to write proves nothing. */
		if (o->json_failing && o->js.written == o->json_flushed)
			return;
		if (o->json_failing && o->json_said) {
			o->json_said_lost = o->json_dropped + o->js.failed;
			td_notice("%s: writing again (%" PRIu64 " event lines dropped so far)",
				  json_name(o), o->json_said_lost);
		}
		o->json_said &= !o->json_failing;
		o->json_failing = false;
		o->js.error = 0;
		o->json_flushed = o->js.written;
		o->json_failed = o->js.failed;
		if (o->json_good_size >= 0)
			o->json_good_size = file_size(o->js.f);
		return;
	}
	err = errno ? -errno : o->js.error ? o->js.error : -EIO;
	o->js.error = 0;
	if (err == -EPIPE) {
		o->json_broken = true;
		return;
	}
	json_drop(o, err);
}

uint64_t td_outputs_json_written(const struct td_outputs *o)
{
	return o->js.written - o->json_dropped;
}

void td_outputs_tick(struct td_outputs *o, uint64_t mono_ns)
{
	if (o->profiles)
		td_profiles_tick(o->profiles, mono_ns);
}

bool td_outputs_profile_stats(const struct td_outputs *o, struct td_profiles_stats *st)
{
	if (o->profiles)
		td_profiles_stats(o->profiles, st);
	else if (o->had_profiles)
		*st = o->pstats;
	return o->profiles || o->had_profiles;
}

int td_outputs_end_profiles(struct td_outputs *o)
{
	int ret;

	if (!o->profiles)
		return 0;
	/* the counters after the final cut stay for the report at exit */
	ret = td_profiles_close(o->profiles, &o->pstats);
	o->profiles = NULL;
	o->had_profiles = true;
	return ret;
}

void td_outputs_trace_span(struct td_outputs *o, uint64_t span_ns)
{
	o->trace_span = true;
	o->span_ns = span_ns;
}

void td_outputs_tracing_on(struct td_outputs *o)
{
	if (o->pprof)
		td_pprof_set_start(o->pprof, td_now_real_ns());
}

void td_outputs_tracing_off(struct td_outputs *o)
{
	o->off_real_ns = td_now_real_ns();
}

static int write_pprof(struct td_outputs *o)
{
	uint64_t end = o->trace_span ? o->span_ns : o->off_real_ns ?: td_now_real_ns();
	struct td_pprof_stats st;
	struct whole w;
	int ret;

	if (whole_open(o->pprof_path, &w))
		return -1;
	if (o->trace_span)
		td_pprof_set_start(o->pprof, 0);
	ret = td_pprof_write(o->pprof, w.f, end, NULL);
	ret = whole_close(&w, o->pprof_path, ret);
	td_pprof_stats(o->pprof, &st);
	if (!ret && st.folded_events)
		td_notice("%s: %" PRIu64 " event(s) with no sample of their own once the "
			  "profile's tables were three quarters full counted without their pid "
			  "(one sample per stack, comm and event)", o->pprof_path,
			  st.folded_events);
	if (!ret && st.over_events)
		td_notice("%s: %" PRIu64 " event(s) of new stacks counted as [memory_bound]: the "
			  "profile's tables reached profile_max_mem_kb", o->pprof_path,
			  st.over_events);
	return ret;
}

static int write_file(const char *path, const struct td_folded *fo, bool svg)
{
	struct td_flamegraph_opts opts = { .title = "trace-defer" };
	struct whole w;
	int ret;

	if (!is_stdout(path)) {
		if (whole_open(path, &w))
			return -1;
		ret = svg ? td_flamegraph_write(fo, w.f, &opts) : td_folded_write(fo, w.f);
		return whole_close(&w, path, ret);
	}
	ret = svg ? td_flamegraph_write(fo, stdout, &opts) : td_folded_write(fo, stdout);
	if (fflush(stdout) && !ret)
		ret = -errno;
	if (ret) {
		td_err("cannot write %s: %s", path, strerror(-ret));
		return -1;
	}
	return 0;
}

/* @final: at exit; otherwise (SIGHUP) only what is a file is written again. */
/*
 * Rewritten on SIGHUP: a file, not stdout, a device or a FIFO, which
 * would take a second profile after the first (and a FIFO's slow reader
 * would hold the drain loop up).
 */
static bool rewritable(const char *path)
{
	struct stat st;

	return !is_stdout(path) && (stat(path, &st) || S_ISREG(st.st_mode));
}

static int write_accumulated(struct td_outputs *o, bool final)
{
	int ret = 0;

	if (o->abandoned)
		return 0;
	if (o->pprof && (final || rewritable(o->pprof_path)) && write_pprof(o))
		ret = -1;
	if (!o->folded)
		return ret;
	if (o->folded_path && (final || rewritable(o->folded_path)) &&
	    write_file(o->folded_path, o->folded, false))
		ret = -1;
	if (o->flame_path && (final || rewritable(o->flame_path)) &&
	    write_file(o->flame_path, o->folded, true))
		ret = -1;
	if (td_folded_over(o->folded))
		td_notice("%s: %" PRIu64 " event(s) of new stacks counted as [memory_bound]: the "
			  "stacks reached profile_max_mem_kb",
			  o->folded_path ? o->folded_path : o->flame_path, td_folded_over(o->folded));
	return ret;
}

int td_outputs_reopen(struct td_outputs *o)
{
	int ret = 0;

	if (o->js.f && !is_stdout(o->json_path)) {
		/* What the old file can still take, or dropped with the file whole. */
		td_outputs_flush(o);
		if (fclose(o->js.f)) {
			td_err("error closing %s: %s", o->json_path, strerror(errno));
			ret = -1;
		}
		o->js.f = NULL;
		td_json_writer_reset(o->js.jw);
		if (open_json(o, true, true)) {
			int err = errno;

			td_err("cannot open output %s: %s (tried again at every tick; event lines "
			       "dropped meanwhile, counted as write errors)", o->json_path,
			       strerror(err));
			if (!o->flush_error)
				o->flush_error = -err;
			o->json_lost_file = true;
			ret = -1;
		}
	}
	if (write_accumulated(o, false))
		ret = -1;
	return ret;
}

void td_outputs_abandon(struct td_outputs *o)
{
	o->abandoned = true;
}

int td_outputs_close(struct td_outputs *o)
{
	int ret = write_accumulated(o, true);

	if (td_outputs_end_profiles(o))
		ret = -1;

	if (o->json_lost_file) {
		td_err("%s: could not be opened again: %" PRIu64 " event lines dropped in all",
		       json_name(o), o->json_dropped + o->js.failed);
		ret = -1;
	}
	if (o->js.f) {
		/* A failed last write leaves the file whole, said once. */
		td_outputs_flush(o);
		if (o->json_failing)
			ret = -1;
		/* Drops not said since the last word (said at most once a minute). */
		if (o->json_broken && o->json_dropped + o->js.failed)
			td_info("%s: its reader went away; %" PRIu64 " event line(s) not written",
				json_name(o), o->json_dropped + o->js.failed);
		else if (!o->json_broken && o->json_dropped + o->js.failed > o->json_said_lost)
			td_err("%s: %" PRIu64 " event lines dropped in all (write errors)",
			       json_name(o), o->json_dropped + o->js.failed);
		if (is_stdout(o->json_path)) {
			if (fflush(o->js.f) && errno != EPIPE) {
				td_err("error writing stdout: %s", strerror(errno));
				ret = -1;
			}
		} else if (fclose(o->js.f)) {
			td_err("error writing %s: %s", o->json_path, strerror(errno));
			ret = -1;
		}
		o->js.f = NULL;
	}
	free_writers(o);
	free(o->json_buf);
	o->json_buf = NULL;
	return ret;
}
