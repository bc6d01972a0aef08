// SPDX-License-Identifier: GPL-2.0
/*
 * The module of each kernel function a trace.dat's kallsyms names, read
 * from tep_print_funcs() (see kmodules.h for why there).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "kmodules.h"

struct kmod_func {
	uint64_t start;
	uint32_t mod;			/* index in mods[] */
};

struct td_kmodules {
	struct kmod_func *funcs;
	unsigned int nr, cap;
	char **mods;			/* "[name]" */
	unsigned int nr_mods;
};

void td_kmodules_free(struct td_kmodules *km)
{
	if (!km)
		return;
	for (unsigned int i = 0; i < km->nr_mods; i++)
		free(km->mods[i]);
	free(km->mods);
	free(km->funcs);
	free(km);
}

/* The index of module @name (@len bytes, brackets included), added if new. */
static int mod_index(struct td_kmodules *km, const char *name, size_t len, unsigned int *last)
{
	char **mods;

	/* kallsyms lists a module's functions together: the last one first. */
	if (*last < km->nr_mods && !strncmp(km->mods[*last], name, len) && !km->mods[*last][len])
		return *last;
	for (unsigned int i = 0; i < km->nr_mods; i++) {
		if (!strncmp(km->mods[i], name, len) && !km->mods[i][len]) {
			*last = i;
			return i;
		}
	}
	mods = realloc(km->mods, (km->nr_mods + 1) * sizeof(*mods));
	if (!mods)
		return -1;
	km->mods = mods;
	mods[km->nr_mods] = strndup(name, len);
	if (!mods[km->nr_mods])
		return -1;
	*last = km->nr_mods;
	return km->nr_mods++;
}

/* One line of tep_print_funcs(): "%016llx NAME" or "%016llx NAME [MODULE]". */
static int add_line(struct td_kmodules *km, const char *line, unsigned int *last)
{
	const char *open, *close;
	struct kmod_func *funcs;
	uint64_t start;
	char *end;
	int mod;

	open = strstr(line, " [");
	close = open ? strchr(open, ']') : NULL;
	if (!close || close[1])
		return 0;
	errno = 0;
	start = strtoull(line, &end, 16);
	if (errno || end == line || *end != ' ')
		return 0;
	mod = mod_index(km, open + 1, close + 1 - (open + 1), last);
	if (mod < 0)
		return -1;
	if (km->nr == km->cap) {
		unsigned int cap = km->cap ? 2 * km->cap : 1024;

		funcs = realloc(km->funcs, cap * sizeof(*funcs));
		if (!funcs)
			return -1;
		km->funcs = funcs;
		km->cap = cap;
	}
	km->funcs[km->nr++] = (struct kmod_func){ .start = start, .mod = mod };
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct kmod_func *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* tep_print_funcs()' text, with stdout pointing back at itself afterwards. */
static char *print_funcs(struct tep_handle *tep)
{
	FILE *saved = stdout, *mem;
	char *text = NULL;
	size_t size = 0;

	fflush(stdout);
	mem = open_memstream(&text, &size);
	if (!mem)
		return NULL;
	/*
	 * glibc's stdout is a variable: libtraceevent's printf() follows it.
	 * (Not portable: musl declares it const. Debian's libc is glibc.)
	 */
	stdout = mem;
	tep_print_funcs(tep);
	stdout = saved;
	if (fclose(mem)) {
		free(text);
		return NULL;
	}
	return text;
}

struct td_kmodules *td_kmodules_from_tep(struct tep_handle *tep)
{
	struct td_kmodules *km = calloc(1, sizeof(*km));
	unsigned int last = 0;
	char *text, *line, *next;

	if (!km)
		return NULL;
	text = print_funcs(tep);
	if (!text) {
		td_kmodules_free(km);
		return NULL;
	}
	for (line = text; *line; line = next) {
		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		if (add_line(km, line, &last)) {
			free(text);
			td_kmodules_free(km);
			errno = ENOMEM;
			return NULL;
		}
	}
	free(text);
	/* No module symbol at all (no modules, no BPF programs): funcs is NULL. */
	if (km->nr)
		qsort(km->funcs, km->nr, sizeof(*km->funcs), by_start);
	return km;
}

const char *td_kmodules_find(const struct td_kmodules *km, uint64_t start)
{
	unsigned int lo = 0, hi = km ? km->nr : 0;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (km->funcs[mid].start == start)
			return km->mods[km->funcs[mid].mod];
		if (km->funcs[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

unsigned int td_kmodules_count(const struct td_kmodules *km)
{
	return km ? km->nr : 0;
}
