// SPDX-License-Identifier: GPL-2.0
/*
 * The event formats of a tracefs (or of a copy of one), for the parser:
 * see td_local_events() in include/trace-defer/parse.h.
 *
 * libtracefs' tracefs_local_events_system() does the same and also reads
 * /proc/kallsyms into the handle, whatever directory it is given. Nothing
 * that reads a live capture looks a kernel address up in the handle (the
 * symbolizer keeps its own table), and on a machine with 120,000 kernel
 * symbols that copy held 7 MiB for as long as the daemon ran, and 18 MiB
 * while it was built: most of the daemon's heap before its first event.
 * The listing and the saved_cmdlines are still libtracefs' own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include <trace-defer/parse.h>

/* The whole of @dir/@name in a malloc()ed, NUL-terminated buffer; NULL with errno. */
static char *read_text(const char *dir, const char *name, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *path, *buf = NULL;
	int fd, err;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t r;

		if (!buf || n + 1 >= cap) {
			char *b;

			cap = buf ? 2 * cap : cap;
			b = realloc(buf, cap);
			if (!b)
				goto fail;
			buf = b;
		}
		/* tracefs files say nothing of their size: read until the end. */
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (!r)
			break;
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	err = errno;
	close(fd);
	free(buf);
	errno = err;
	return NULL;
}

/* Every event of @sys that @dir has; a format that does not parse is left out. */
static void load_system(struct tep_handle *tep, const char *dir, const char *sys)
{
	char **events = tracefs_system_events(dir, sys);

	for (char **e = events; e && *e; e++) {
		char *name, *fmt;
		size_t len;

		if (asprintf(&name, "events/%s/%s/format", sys, *e) < 0)
			break;
		fmt = read_text(dir, name, &len);
		free(name);
		if (!fmt)
			continue;
		/* As libtracefs: an event the library cannot parse is not fatal. */
		tep_parse_event(tep, fmt, len, sys);
		free(fmt);
	}
	tracefs_list_free(events);
}

struct tep_handle *td_local_events(const char *tracing_dir, const char *const *systems)
{
	struct tep_handle *tep;
	char **all = NULL;
	size_t len;
	char *buf;
	int err;

	if (!tracing_dir)
		tracing_dir = tracefs_tracing_dir();
	if (!tracing_dir) {
		errno = ENOENT;
		return NULL;
	}
	tep = tep_alloc();
	if (!tep) {
		errno = ENOMEM;
		return NULL;
	}
	/* The ring buffer's page header: without it no sub-buffer can be read. */
	buf = read_text(tracing_dir, "events/header_page", &len);
	if (!buf)
		goto fail;
	tep_parse_header_page(tep, buf, len, sizeof(long));
	free(buf);
	if (!systems) {
		/* ftrace has no "enable" file: tracefs_event_systems() leaves it out. */
		all = tracefs_event_systems(tracing_dir);
		load_system(tep, tracing_dir, "ftrace");
		systems = (const char *const *)all;
	}
	for (const char *const *s = systems; s && *s; s++)
		load_system(tep, tracing_dir, *s);
	tracefs_list_free(all);
	/* Names of threads no record names; bprint's formats. Both may be absent. */
	tracefs_load_cmdlines(tracing_dir, tep);
	buf = read_text(tracing_dir, "printk_formats", &len);
	if (buf) {
		tep_parse_printk_formats(tep, buf);
		free(buf);
	}
	return tep;
fail:
	err = errno;
	tep_free(tep);
	errno = err;
	return NULL;
}
