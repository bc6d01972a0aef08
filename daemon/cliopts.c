// SPDX-License-Identifier: GPL-2.0
/*
 * Long options taken whole (see cliopts.h).
 */
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "cliopts.h"
#include "log.h"

/*
 * The option taking @name whole, or NULL; then @those lists the options
 * @name begins ("--record or --recover"), empty if none.
 */
static const struct option *find_long(const struct option *lo, const char *name, size_t len,
				      char *those, size_t size)
{
	size_t n = 0;

	those[0] = '\0';
	for (; lo->name; lo++) {
		if (strlen(lo->name) == len && !strncmp(lo->name, name, len))
			return lo;
		if (strlen(lo->name) <= len || strncmp(lo->name, name, len))
			continue;
		/* Whole names only: room for one more and " or ...". */
		if (n + strlen(lo->name) + 16 > size) {
			if (n + 8 <= size && strcmp(those + n - 7, " or ...") != 0)
				n += snprintf(those + n, size - n, " or ...");
			continue;
		}
		n += snprintf(those + n, size - n, "%s--%s", n ? " or " : "", lo->name);
	}
	return NULL;
}

/* Does short option @c take an argument (the next word, or the rest of this one)? */
static bool short_takes_arg(const char *short_opts, char c)
{
	const char *p = c != ':' ? strchr(short_opts, c) : NULL;

	return p && p[1] == ':';
}

int td_cli_exact_long_opts(int argc, char **argv, const char *short_opts,
			   const struct option *long_opts)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (!strcmp(arg, "--"))
			break;
		if (!strncmp(arg, "--", 2)) {
			size_t len = strcspn(arg + 2, "=");
			const struct option *o;
			char those[256];

			o = find_long(long_opts, arg + 2, len, those, sizeof(those));
			if (!o && those[0]) {
				td_err("unknown option '%.*s' (long options are not abbreviated: "
				       "%s?)", (int)len + 2, arg, those);
				return -1;
			}
			/* Its value is the next word: not an option of its own. */
			if (o && o->has_arg == required_argument && !arg[2 + len])
				i++;
			continue;
		}
		if (arg[0] != '-' || !arg[1])
			continue;
		for (const char *c = arg + 1; *c; c++) {
			if (!short_takes_arg(short_opts, *c))
				continue;
			if (!c[1])
				i++;
			break;
		}
	}
	return 0;
}

/* An ftrace filter's operator in @s: == != < <= > >= & && | || or " ~". */
static bool has_filter_op(const char *s)
{
	return strstr(s, "==") || strstr(s, "!=") || strpbrk(s, "<>&|") || strstr(s, " ~");
}

/* Does @value read as a filter, with no '/' and naming no file? */
static bool filter_not_file(const char *value)
{
	struct stat st;

	return !strchr(value, '/') && has_filter_op(value) && lstat(value, &st);
}

int td_cli_output_name(const char *opt, const char *value)
{
	if (!filter_not_file(value))
		return 0;
	td_err("%s '%s' reads as an ftrace filter, not a file name: a filter goes with its "
	       "event, -e SYS:NAME:FILTER; a file of that name is ./%s", opt, value, value);
	return -1;
}

int td_cli_report_output_name(const char *opt, const char *value)
{
	if (!filter_not_file(value))
		return 0;
	td_err("%s '%s' reads as an ftrace filter, not a file name: report takes no filter, "
	       "only -p PID for one process's events; a file of that name is ./%s", opt, value,
	       value);
	return -1;
}
