// SPDX-License-Identifier: GPL-2.0
/*
 * Configuration: defaults, "key = value" files and command-line overrides.
 * See config.h for the syntax and the precedence rules.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "log.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define TD_MAX_EVENTS	256
#define TD_MAX_PIDS	1024
#define PROFILE_MIN_MEM_KB	16	/* profile_max_mem_kb, when not 0 */
/* The interval profiles' built-in defaults (profile_dir); the service's file sets its own. */
#define PROFILE_INTERVAL	60
#define PROFILE_KEEP		60
#define PROFILE_MAX_KB		(64 << 10)

static const char *const mode_names[] = {
	[TD_MODE_AUTO] = "auto",
	[TD_MODE_OPTION] = "option",
	[TD_MODE_TRIGGER] = "trigger",
	[TD_MODE_INPLACE] = "inplace",
};

const char *td_mode_name(enum td_mode mode)
{
	if ((unsigned int)mode >= ARRAY_SIZE(mode_names))
		return "?";
	return mode_names[mode];
}

/* Late events come within microseconds of their stack; 2 s is plenty. */
#define STACK_KEEP_NS	2000000000ULL

void td_config_stitch(const struct td_config *cfg, struct td_stitch_config *sc)
{
	uint64_t wait = cfg->max_wait_ms * 1000000ULL;

	*sc = (struct td_stitch_config){
		.max_pending_events = cfg->max_pending,
		.max_stacks = cfg->max_stacks,
		.max_wait_ns = wait,
		/*
		 * Not the event's wait: a stack kept that long for every task
		 * seen would crowd max_stacks out with short-lived processes.
		 */
		.stack_keep_ns = wait && wait < STACK_KEEP_NS ? wait : 0,
	};
}

void td_config_init(struct td_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = TD_MODE_AUTO;
	cfg->instance = strdup("trace-defer");
	cfg->run_dir = strdup("/run/trace-defer");
	/* Wake the reader at 10%: the drain tick catches everything else. */
	cfg->buffer_percent = 10;
	cfg->kernel_stack = true;
	cfg->symbolize = true;
	cfg->json_layout = TD_JSON_INTERNED;
	cfg->profile_interval = PROFILE_INTERVAL;
	cfg->profile_keep = PROFILE_KEEP;
	cfg->profile_max_kb = PROFILE_MAX_KB;
	cfg->profile_max_mem_kb = 64 << 10;
	cfg->symbols_max_mb = 256;
	cfg->verbosity = TD_LOG_WARN;
}

void td_event_spec_free(struct td_event_spec *spec)
{
	free(spec->system);
	free(spec->name);
	free(spec->filter);
	memset(spec, 0, sizeof(*spec));
}

void td_config_clear_events(struct td_config *cfg)
{
	for (size_t i = 0; i < cfg->nr_events; i++)
		td_event_spec_free(&cfg->events[i]);
	free(cfg->events);
	cfg->events = NULL;
	cfg->nr_events = 0;
}

void td_config_clear_pids(struct td_config *cfg)
{
	free(cfg->pids);
	cfg->pids = NULL;
	cfg->nr_pids = 0;
}

void td_config_note(struct td_config *cfg, const char *fmt, ...)
{
	char **n = NULL, *msg;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg)
		n = realloc(cfg->notes, (cfg->nr_notes + 1) * sizeof(*n));
	if (!n) {
		/* No memory to hold it: said now, at the verbosity known so far. */
		td_warn("%s", msg ? msg : "out of memory: a warning about the settings is lost");
		free(msg);
		return;
	}
	cfg->notes = n;
	n[cfg->nr_notes++] = msg;
}

/* The notes held so far, at the verbosity now in force; then forgotten. */
static void say_notes(struct td_config *cfg)
{
	for (size_t i = 0; i < cfg->nr_notes; i++) {
		td_warn("%s", cfg->notes[i]);
		free(cfg->notes[i]);
	}
	free(cfg->notes);
	cfg->notes = NULL;
	cfg->nr_notes = 0;
}

void td_config_free(struct td_config *cfg)
{
	say_notes(cfg);
	td_config_clear_events(cfg);
	td_config_clear_pids(cfg);
	free(cfg->comm);
	free(cfg->instance);
	free(cfg->run_dir);
	free(cfg->trace_clock);
	free(cfg->output);
	free(cfg->folded);
	free(cfg->flamegraph);
	free(cfg->record);
	free(cfg->pprof);
	free(cfg->profile_dir);
	free(cfg->debug_dir);
	memset(cfg, 0, sizeof(*cfg));
}

/*
 * An ftrace system or event name, what the kernel allows in a directory
 * name of events/, or a shell pattern of one (fnmatch(3): * ? [...]).
 */
static bool valid_ident(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_-.*?[]!", s[i]))
			return false;
	return true;
}

int td_event_spec_parse(struct td_event_spec *spec, const char *str, const char *where)
{
	const char *c1, *c2;
	const char *filter = NULL;

	memset(spec, 0, sizeof(*spec));
	c1 = strchr(str, ':');
	if (!c1) {
		if (!valid_ident(str, strlen(str))) {
			td_err("%s: event '%s': expected SYSTEM:EVENT[:FILTER], SYSTEM or EVENT",
			       where, str);
			return -1;
		}
		spec->bare = true;
		spec->system = strdup(str);
		spec->name = strdup("*");
		if (!spec->system || !spec->name) {
			td_event_spec_free(spec);
			td_err("%s: out of memory", where);
			return -1;
		}
		return 0;
	}
	c2 = strchr(c1 + 1, ':');
	if (c2) {
		filter = c2 + 1;
		while (isspace((unsigned char)*filter))
			filter++;
		if (!*filter)
			filter = NULL;
	} else {
		c2 = c1 + strlen(c1);
	}
	if (!valid_ident(str, c1 - str) || !valid_ident(c1 + 1, c2 - c1 - 1)) {
		td_err("%s: event '%s': bad system or event name", where, str);
		return -1;
	}
	spec->system = strndup(str, c1 - str);
	spec->name = strndup(c1 + 1, c2 - c1 - 1);
	spec->filter = filter ? strdup(filter) : NULL;
	if (!spec->system || !spec->name || (filter && !spec->filter)) {
		td_event_spec_free(spec);
		td_err("%s: out of memory", where);
		return -1;
	}
	return 0;
}

static int parse_bool(const char *value, bool *out, const char *where, const char *key)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(value, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(value, no[i])) {
			*out = false;
			return 0;
		}
	}
	td_err("%s: %s: '%s' is not yes or no", where, key, value);
	return -1;
}

static int parse_u64(const char *value, uint64_t min, uint64_t max, uint64_t *out,
		     const char *where, const char *key)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)*value))
		goto bad;
	v = strtoull(value, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	td_err("%s: %s: '%s' is not an integer in [%llu, %llu]", where, key, value,
	       (unsigned long long)min, (unsigned long long)max);
	return -1;
}

static int parse_seconds(const char *value, double *out, const char *where, const char *key)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	if (end == value || *end || isnan(v)) {
		td_err("%s: %s: '%s' is not a number of seconds", where, key, value);
		return -1;
	}
	if (errno || v < 0 || v > 1e9) {
		td_err("%s: %s: '%s' is not in [0, 1e9] seconds", where, key, value);
		return -1;
	}
	*out = v;
	return 0;
}

static int set_string(char **dst, const char *value, const char *where, const char *key)
{
	char *s;

	if (!*value) {
		td_err("%s: %s: empty value", where, key);
		return -1;
	}
	s = strdup(value);
	if (!s) {
		td_err("%s: out of memory", where);
		return -1;
	}
	free(*dst);
	*dst = s;
	return 0;
}

static int add_event(struct td_config *cfg, const char *value, const char *where)
{
	struct td_event_spec spec, *n;

	if (cfg->nr_events >= TD_MAX_EVENTS) {
		td_err("%s: more than %d events", where, TD_MAX_EVENTS);
		return -1;
	}
	if (td_event_spec_parse(&spec, value, where))
		return -1;
	for (size_t i = 0; i < cfg->nr_events; i++) {
		if (!strcmp(cfg->events[i].system, spec.system) &&
		    !strcmp(cfg->events[i].name, spec.name) && cfg->events[i].bare == spec.bare) {
			td_err("%s: event %s:%s given twice (put both conditions in one filter)",
			       where, spec.system, spec.name);
			td_event_spec_free(&spec);
			return -1;
		}
	}
	n = realloc(cfg->events, (cfg->nr_events + 1) * sizeof(*n));
	if (!n) {
		td_event_spec_free(&spec);
		td_err("%s: out of memory", where);
		return -1;
	}
	cfg->events = n;
	cfg->events[cfg->nr_events++] = spec;
	return 0;
}

static int add_pid(struct td_config *cfg, const char *value, const char *where)
{
	uint64_t pid;
	int *n;

	if (parse_u64(value, 1, INT_MAX, &pid, where, "pid"))
		return -1;
	if (cfg->nr_pids >= TD_MAX_PIDS) {
		td_err("%s: more than %d pids", where, TD_MAX_PIDS);
		return -1;
	}
	n = realloc(cfg->pids, (cfg->nr_pids + 1) * sizeof(*n));
	if (!n) {
		td_err("%s: out of memory", where);
		return -1;
	}
	cfg->pids = n;
	cfg->pids[cfg->nr_pids++] = (int)pid;
	return 0;
}

/* The index of @value in @names, or -1. */
static int name_index(const char *value, const char *const *names, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(value, names[i]))
			return (int)i;
	return -1;
}

static int set_mode(struct td_config *cfg, const char *value, const char *where)
{
	int i = name_index(value, mode_names, ARRAY_SIZE(mode_names));

	if (i < 0) {
		td_err("%s: mode: '%s' is not one of auto, option, trigger, inplace", where, value);
		return -1;
	}
	cfg->mode = i;
	return 0;
}

/*
 * A tracefs instance name becomes a directory name: keep it simple and
 * safe. Not a pattern (valid_ident() takes * ? [ ] !): the name is made
 * and removed as given, and shows in logs, lock files and commands.
 */
static bool valid_instance(const char *s, size_t len)
{
	if (!len || s[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_-.", s[i]))
			return false;
	return true;
}

static int set_instance(struct td_config *cfg, const char *value, const char *where)
{
	size_t len = strlen(value);

	if (len > 64) {
		td_err("%s: instance: a name of %zu characters is too long (64 at most)", where,
		       len);
		return -1;
	}
	if (!valid_instance(value, len)) {
		td_err("%s: instance: '%s' is not a valid name (letters, digits, '_', '-', '.'; "
		       "not a '.' first)", where, value);
		return -1;
	}
	return set_string(&cfg->instance, value, where, "instance");
}

static int set_comm(struct td_config *cfg, const char *value, const char *where)
{
	if (strlen(value) >= 16 || strpbrk(value, "\"\\")) {
		td_err("%s: comm: '%s' must be at most 15 characters, without quotes", where,
		       value);
		return -1;
	}
	return set_string(&cfg->comm, value, where, "comm");
}

static const char *const layout_names[] = {
	[TD_JSON_FULL] = "full",
	[TD_JSON_INTERNED] = "interned",
	[TD_JSON_COMPACT] = "compact",
};

static int set_layout(struct td_config *cfg, const char *value, const char *where)
{
	int i = name_index(value, layout_names, ARRAY_SIZE(layout_names));

	if (i < 0) {
		td_err("%s: json_layout: '%s' is not one of full, interned, compact", where, value);
		return -1;
	}
	cfg->json_layout = i;
	return 0;
}

/*
 * Only clocks that count nanoseconds: the stitcher's time bounds and the
 * drain timer compare trace time with nanosecond limits.
 */
static int set_clock(struct td_config *cfg, const char *value, const char *where)
{
	static const char *const ns_clocks[] = {
		"local", "global", "mono", "mono_raw", "boot", "tai", "perf",
	};

	for (size_t i = 0; i < ARRAY_SIZE(ns_clocks); i++)
		if (!strcmp(value, ns_clocks[i]))
			return set_string(&cfg->trace_clock, value, where, "trace_clock");
	td_err("%s: trace_clock: '%s' is not one of local, global, mono, mono_raw, boot, tai, perf",
	       where, value);
	return -1;
}

int td_config_set(struct td_config *cfg, const char *key, const char *value, const char *where)
{
	uint64_t v = 0;
	int ret;

	if (!strcmp(key, "event"))
		return add_event(cfg, value, where);
	if (!strcmp(key, "pid"))
		return add_pid(cfg, value, where);
	if (!strcmp(key, "comm"))
		return set_comm(cfg, value, where);
	if (!strcmp(key, "mode"))
		return set_mode(cfg, value, where);
	if (!strcmp(key, "instance"))
		return set_instance(cfg, value, where);
	if (!strcmp(key, "run_dir"))
		return set_string(&cfg->run_dir, value, where, key);
	if (!strcmp(key, "buffer_kb")) {
		ret = parse_u64(value, 0, 1UL << 30, &v, where, key);
		cfg->buffer_kb = v;
		return ret;
	}
	if (!strcmp(key, "buffer_percent")) {
		ret = parse_u64(value, 0, 100, &v, where, key);
		cfg->buffer_percent = (int)v;
		return ret;
	}
	if (!strcmp(key, "trace_clock"))
		return set_clock(cfg, value, where);
	if (!strcmp(key, "kernel_stack"))
		return parse_bool(value, &cfg->kernel_stack, where, key);
	if (!strcmp(key, "output"))
		return set_string(&cfg->output, value, where, key);
	if (!strcmp(key, "output_append"))
		return parse_bool(value, &cfg->output_append, where, key);
	if (!strcmp(key, "json_layout"))
		return set_layout(cfg, value, where);
	if (!strcmp(key, "folded"))
		return set_string(&cfg->folded, value, where, key);
	if (!strcmp(key, "flamegraph"))
		return set_string(&cfg->flamegraph, value, where, key);
	if (!strcmp(key, "record"))
		return set_string(&cfg->record, value, where, key);
	if (!strcmp(key, "pprof"))
		return set_string(&cfg->pprof, value, where, key);
	if (!strcmp(key, "profile_dir"))
		return set_string(&cfg->profile_dir, value, where, key);
	if (!strcmp(key, "profile_interval")) {
		if (parse_seconds(value, &cfg->profile_interval, where, key))
			return -1;
		if (cfg->profile_interval < 0.01) {
			td_err("%s: %s: must be at least 0.01 s", where, key);
			return -1;
		}
		return 0;
	}
	if (!strcmp(key, "profile_folded"))
		return parse_bool(value, &cfg->profile_folded, where, key);
	if (!strcmp(key, "profile_keep"))
		return parse_u64(value, 0, 1ULL << 20, &cfg->profile_keep, where, key);
	if (!strcmp(key, "profile_max_mem_kb")) {
		if (parse_u64(value, 0, 1ULL << 40, &cfg->profile_max_mem_kb, where, key))
			return -1;
		/*
		 * An interval's empty tables take about 6 KiB: a bound near that
		 * cut an interval (a file written, fsync'ed) at every event.
		 */
		if (cfg->profile_max_mem_kb && cfg->profile_max_mem_kb < PROFILE_MIN_MEM_KB) {
			td_err("%s: %s: must be 0 (no bound) or at least %d: an interval's empty "
			       "tables take about 6 KiB", where, key, PROFILE_MIN_MEM_KB);
			return -1;
		}
		return 0;
	}
	if (!strcmp(key, "profile_max_kb"))
		return parse_u64(value, 0, 1ULL << 40, &cfg->profile_max_kb, where, key);
	if (!strcmp(key, "symbolize"))
		return parse_bool(value, &cfg->symbolize, where, key);
	if (!strcmp(key, "debug_dir"))
		return set_string(&cfg->debug_dir, value, where, key);
	if (!strcmp(key, "symbols_max_mb"))
		return parse_u64(value, 0, 1ULL << 30, &cfg->symbols_max_mb, where, key);
	if (!strcmp(key, "duration"))
		return parse_seconds(value, &cfg->duration, where, key);
	if (!strcmp(key, "stats_interval"))
		return parse_seconds(value, &cfg->stats_interval, where, key);
	if (!strcmp(key, "max_pending"))
		return parse_u64(value, 1, 1ULL << 32, &cfg->max_pending, where, key);
	if (!strcmp(key, "max_stacks"))
		return parse_u64(value, 1, 1ULL << 32, &cfg->max_stacks, where, key);
	if (!strcmp(key, "max_wait_ms"))
		return parse_u64(value, 1, 3600ULL * 1000, &cfg->max_wait_ms, where, key);
	if (!strcmp(key, "verbosity")) {
		ret = parse_u64(value, 0, TD_LOG_DEBUG, &v, where, key);
		cfg->verbosity = (int)v;
		return ret;
	}
	td_err("%s: unknown key '%s'", where, key);
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Keys a file may give more than once: each adds to a list. */
bool td_config_repeatable(const char *key)
{
	return !strcmp(key, "event") || !strcmp(key, "pid");
}

/*
 * A key the file already set (a pasted line, two edits of one setting):
 * the later wins, as on the command line, but it is said. Keys seen so
 * far are @seen, @nr of them, with the line each was set on.
 */
static int note_key(struct td_config *cfg, const char *key, const char *where,
		    unsigned int lineno, char ***seen, unsigned int **lines, size_t *nr)
{
	char **s;
	unsigned int *l;

	if (td_config_repeatable(key))
		return 0;
	for (size_t i = 0; i < *nr; i++) {
		if (strcmp((*seen)[i], key))
			continue;
		td_config_note(cfg, "%s: %s set again (line %u set it before): the later one is "
			       "used", where, key, (*lines)[i]);
		(*lines)[i] = lineno;
		return 0;
	}
	s = realloc(*seen, (*nr + 1) * sizeof(*s));
	if (!s)
		return -1;
	*seen = s;
	l = realloc(*lines, (*nr + 1) * sizeof(*l));
	if (!l)
		return -1;
	*lines = l;
	s[*nr] = strdup(key);
	if (!s[*nr])
		return -1;
	l[(*nr)++] = lineno;
	return 0;
}

int td_config_load(struct td_config *cfg, const char *path)
{
	char where[PATH_MAX + 32];
	unsigned int *seen_lines = NULL;
	char **seen = NULL;
	size_t nr_seen = 0;
	char *line = NULL;
	size_t cap = 0;
	unsigned int lineno = 0;
	ssize_t len;
	int ret = -1;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		td_err("config %s: %s", path, strerror(errno));
		return -1;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *key, *value, *eq;

		lineno++;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if ((size_t)len != strlen(line)) {
			td_err("%s: NUL byte in line", where);
			goto out;
		}
		key = trim(line);
		if (!*key || *key == '#')
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			td_err("%s: expected 'key = value', got '%s'", where, key);
			goto out;
		}
		*eq = '\0';
		value = trim(eq + 1);
		key = trim(key);
		if (!*key) {
			td_err("%s: missing key before '='", where);
			goto out;
		}
		if (!*value) {
			td_err("%s: %s: missing value after '='", where, key);
			goto out;
		}
		if (td_config_set(cfg, key, value, where))
			goto out;
		if (note_key(cfg, key, where, lineno, &seen, &seen_lines, &nr_seen)) {
			td_err("out of memory");
			goto out;
		}
	}
	if (ferror(f)) {
		td_err("config %s: read error: %s", path, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; i < nr_seen; i++)
		free(seen[i]);
	free(seen);
	free(seen_lines);
	free(line);
	fclose(f);
	return ret;
}

/*
 * @path as written to: the real path of the file, or of its directory and
 * its name when it is not there yet (malloc'ed; NULL: no memory). Paths
 * that resolve to nothing are compared as written.
 */
static char *canonical(const char *path)
{
	char *copy, *slash, *dir, *out = NULL;

	out = realpath(path, NULL);
	if (out)
		return out;
	copy = strdup(path);
	if (!copy)
		return NULL;
	slash = strrchr(copy, '/');
	if (slash == copy)
		dir = realpath("/", NULL);
	else if (slash)
		*slash = '\0', dir = realpath(copy, NULL);
	else
		dir = realpath(".", NULL);
	if (!dir || asprintf(&out, "%s/%s", strcmp(dir, "/") ? dir : "",
			     slash ? slash + 1 : copy) < 0)
		out = strdup(path);
	free(dir);
	free(copy);
	return out;
}

/*
 * Two outputs naming one file (-o out --pprof ./out): the last written
 * would replace the other's bytes. A device or a FIFO (-o /dev/null
 * --pprof /dev/null) takes any number of writers.
 */
static int same_file_outputs(const struct td_config *cfg)
{
	const struct { const char *key, *path; } out[] = {
		{ "output", cfg->output }, { "folded", cfg->folded },
		{ "flamegraph", cfg->flamegraph }, { "pprof", cfg->pprof },
		{ "record", cfg->record },
	};
	char *canon[ARRAY_SIZE(out)] = { NULL };
	struct stat st;
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(out) && !ret; i++) {
		if (!out[i].path || !strcmp(out[i].path, "-") ||
		    (!stat(out[i].path, &st) && !S_ISREG(st.st_mode)))
			continue;
		canon[i] = canonical(out[i].path);
		if (!canon[i]) {
			td_err("out of memory");
			ret = -1;
		}
		for (size_t j = 0; j < i && !ret; j++) {
			if (!canon[j] || strcmp(canon[i], canon[j]))
				continue;
			td_err("%s and %s name the same file '%s'", out[j].key, out[i].key,
			       canon[i]);
			ret = -1;
		}
	}
	/* The profile directory is made at start: a file there could not be. */
	if (!ret && cfg->profile_dir) {
		char *given = strdup(cfg->profile_dir), *dir = NULL;
		size_t len = given ? strlen(given) : 0;

		/* "prof/" names "prof" too, also before it exists. */
		while (len > 1 && given[len - 1] == '/')
			given[--len] = '\0';
		if (given)
			dir = canonical(given);
		free(given);

		for (size_t i = 0; i < ARRAY_SIZE(out) && dir && !ret; i++) {
			if (!canon[i] || strcmp(canon[i], dir))
				continue;
			td_err("profile_dir and %s name the same path '%s'", out[i].key, dir);
			ret = -1;
		}
		if (!dir) {
			td_err("out of memory");
			ret = -1;
		}
		free(dir);
	}
	for (size_t i = 0; i < ARRAY_SIZE(out); i++)
		free(canon[i]);
	return ret;
}

/*
 * A program or a library: an ELF file, or a script ("#!"). Told by its
 * first bytes, not its mode: vfat, CIFS and some 9p mounts show every
 * file executable, an output written there before among them.
 */
bool td_is_program(const char *path)
{
	char magic[4];
	size_t n = 0;
	FILE *f;

	f = fopen(path, "re");
	if (f) {
		n = fread(magic, 1, sizeof(magic), f);
		fclose(f);
	}
	return (n == sizeof(magic) && !memcmp(magic, "\177ELF", sizeof(magic))) ||
	       (n >= 2 && magic[0] == '#' && magic[1] == '!');
}

/*
 * An output naming a program would replace it: trace-cmd record takes -F
 * for "trace only this program", here the flame graph (record -F ./prog).
 * A program is never an output. (A filter given to -f or -F is told
 * apart on the command line: cliopts.h.)
 */
static int program_outputs(const struct td_config *cfg)
{
	const struct { const char *key, *opt, *path; } out[] = {
		{ "output", "-o", cfg->output }, { "folded", "-f", cfg->folded },
		{ "flamegraph", "-F", cfg->flamegraph }, { "pprof", "--pprof", cfg->pprof },
		{ "record", "record -o, --record", cfg->record },
	};
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(out); i++) {
		const char *path = out[i].path;

		if (!path || !strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode) ||
		    !td_is_program(path))
			continue;
		td_err("%s (%s) '%s' is a program: not overwritten with an output%s", out[i].key,
		       out[i].opt, path, !strcmp(out[i].opt, "-F") ?
		       " (trace-cmd record's -F, trace only this program, is -p PID here)" : "");
		return -1;
	}
	return 0;
}

int td_config_check(struct td_config *cfg)
{
	say_notes(cfg);
	if (!cfg->nr_events && add_event(cfg, "sched:sched_switch", "default event"))
		return -1;
	if (!cfg->instance || !cfg->run_dir) {
		td_err("out of memory");
		return -1;
	}
	if (cfg->run_dir[0] != '/') {
		td_err("run_dir '%s' must be an absolute path", cfg->run_dir);
		return -1;
	}
	if (same_file_outputs(cfg) || program_outputs(cfg))
		return -1;
	if (cfg->folded && !strcmp(cfg->folded, "-") && cfg->output &&
	    !strcmp(cfg->output, "-")) {
		td_err("the JSON lines and the folded stacks cannot both go to standard output");
		return -1;
	}
	if (cfg->pprof && !strcmp(cfg->pprof, "-")) {
		td_err("pprof needs a file name, not '-' (the profile is binary)");
		return -1;
	}
	/* Refused by td_outputs_open() too: said here, before anything starts. */
	if (cfg->flamegraph && !strcmp(cfg->flamegraph, "-")) {
		td_err("the flame graph needs a file name, not '-' (a file named - is ./-)");
		return -1;
	}
	/* Not standard output: mkdir("-") would make ./-, silently. */
	if (cfg->profile_dir && !strcmp(cfg->profile_dir, "-")) {
		td_err("profile_dir needs a directory name, not '-' (a directory named - is ./-)");
		return -1;
	}
	if (cfg->profile_dir && cfg->profile_interval < 0.01) {
		td_err("profile_interval must be at least 0.01 s");
		return -1;
	}
	/* Set for interval profiles that are not cut: said, as a typo would be. */
	if (!cfg->profile_dir &&
	    (cfg->profile_interval != PROFILE_INTERVAL || cfg->profile_keep != PROFILE_KEEP ||
	     cfg->profile_max_kb != PROFILE_MAX_KB || cfg->profile_folded))
		td_warn("profile_interval, profile_keep, profile_max_kb and profile_folded are "
			"for the interval profiles of profile_dir (--profile-dir), which is not "
			"set: none are cut");
	if (cfg->record && (!strcmp(cfg->record, "-") ||
			    (cfg->output && !strcmp(cfg->record, cfg->output)))) {
		td_err("record needs a file of its own, not '%s'", cfg->record);
		return -1;
	}
	return 0;
}

/*
 * @v in the fewest digits that read back as @v: --print-config's output,
 * used as a configuration file, gives the same settings (%g kept six
 * digits: -d 123456789.5 came back as 1.23457e+08).
 */
static const char *exact(char *buf, size_t size, double v)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

void td_config_dump(const struct td_config *cfg, FILE *f)
{
	struct td_stitch_config sc;
	char num[2][32];

	fprintf(f, "mode = %s\ninstance = %s\nrun_dir = %s\n", td_mode_name(cfg->mode),
		cfg->instance, cfg->run_dir);
	for (size_t i = 0; i < cfg->nr_events; i++) {
		const struct td_event_spec *e = &cfg->events[i];

		if (e->bare)
			fprintf(f, "event = %s\n", e->system);
		else
			fprintf(f, "event = %s:%s%s%s\n", e->system, e->name,
				e->filter ? ":" : "", e->filter ? e->filter : "");
	}
	for (size_t i = 0; i < cfg->nr_pids; i++)
		fprintf(f, "pid = %d\n", cfg->pids[i]);
	if (cfg->comm)
		fprintf(f, "comm = %s\n", cfg->comm);
	fprintf(f, "buffer_kb = %lu\nbuffer_percent = %d\n", cfg->buffer_kb, cfg->buffer_percent);
	/* Not set: the kernel's default, local, which is what a new instance has. */
	fprintf(f, "trace_clock = %s\n", cfg->trace_clock ? cfg->trace_clock : "local");
	fprintf(f, "kernel_stack = %s\n", cfg->kernel_stack ? "yes" : "no");
	if (cfg->output)
		fprintf(f, "output = %s\n", cfg->output);
	fprintf(f, "output_append = %s\n", cfg->output_append ? "yes" : "no");
	fprintf(f, "json_layout = %s\n", layout_names[cfg->json_layout]);
	if (cfg->folded)
		fprintf(f, "folded = %s\n", cfg->folded);
	if (cfg->flamegraph)
		fprintf(f, "flamegraph = %s\n", cfg->flamegraph);
	if (cfg->record)
		fprintf(f, "record = %s\n", cfg->record);
	if (cfg->pprof)
		fprintf(f, "pprof = %s\n", cfg->pprof);
	if (cfg->profile_dir)
		fprintf(f, "profile_dir = %s\n", cfg->profile_dir);
	fprintf(f, "profile_interval = %s\nprofile_folded = %s\n",
		exact(num[0], sizeof(num[0]), cfg->profile_interval),
		cfg->profile_folded ? "yes" : "no");
	fprintf(f, "profile_keep = %llu\nprofile_max_kb = %llu\nprofile_max_mem_kb = %llu\n",
		(unsigned long long)cfg->profile_keep, (unsigned long long)cfg->profile_max_kb,
		(unsigned long long)cfg->profile_max_mem_kb);
	fprintf(f, "symbolize = %s\n", cfg->symbolize ? "yes" : "no");
	/* /usr/lib/debug is searched anyway, after any debug_dir: said, not set. */
	if (cfg->debug_dir)
		fprintf(f, "debug_dir = %s\n", cfg->debug_dir);
	else
		fprintf(f, "# debug_dir not set: /usr/lib/debug only\n");
	fprintf(f, "symbols_max_mb = %llu\n", (unsigned long long)cfg->symbols_max_mb);
	fprintf(f, "duration = %s\nstats_interval = %s\n",
		exact(num[0], sizeof(num[0]), cfg->duration),
		exact(num[1], sizeof(num[1]), cfg->stats_interval));
	/* Not set: the stitcher's defaults, said as the values they are. */
	td_stitch_config_default(&sc);
	fprintf(f, "max_pending = %llu\nmax_stacks = %llu\nmax_wait_ms = %llu\n",
		(unsigned long long)(cfg->max_pending ? cfg->max_pending : sc.max_pending_events),
		(unsigned long long)(cfg->max_stacks ? cfg->max_stacks : sc.max_stacks),
		(unsigned long long)(cfg->max_wait_ms ? cfg->max_wait_ms :
				     sc.max_wait_ns / 1000000));
	fprintf(f, "verbosity = %d\n", cfg->verbosity);
}
