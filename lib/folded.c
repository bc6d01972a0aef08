// SPDX-License-Identifier: GPL-2.0
/*
 * Folded stacks: counts per distinct "comm;user...;kernel..." line, the input
 * format of flame graph tools. See include/trace-defer/output.h for how
 * frames are named and sanitized.
 *
 * The library's hash table (htab.h) keyed by the folded line; the line of
 * each event is built in one reusable buffer, so counting a stack seen
 * before allocates nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trace-defer/output.h>

#include "htab.h"

struct folded_entry {
	struct hnode node;
	uint64_t count;
	size_t len;
	char line[];
};

struct td_folded {
	struct htab tab;
	size_t nr_entries;
	uint64_t nr_samples;
	char *buf;			/* the line being built */
	size_t len, cap;
	uint64_t entry_bytes;		/* of the entries: td_folded_mem() adds the buckets */
	uint64_t max_mem;		/* td_folded_set_max_mem(); 0: no bound */
	uint64_t over;			/* samples counted in MEMORY_BOUND */
};

#define MEMORY_BOUND	"[memory_bound]"

/* Eight bytes at a time: folded lines are long (hundreds of bytes). */
static uint64_t line_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, v;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&v, s + i, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	v = 0;
	memcpy(&v, s + i, len - i);
	h = (h ^ v) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 29;
	return h;
}

struct td_folded *td_folded_new(void)
{
	struct td_folded *fo = calloc(1, sizeof(*fo));

	if (!fo)
		return NULL;
	if (htab_init(&fo->tab)) {
		free(fo);
		return NULL;
	}
	return fo;
}

static void free_entry(struct hnode *n)
{
	free(container_of(n, struct folded_entry, node));
}

void td_folded_free(struct td_folded *fo)
{
	if (!fo)
		return;
	htab_destroy(&fo->tab, free_entry);
	free(fo->buf);
	free(fo);
}

/* ---- building one line ---- */

static int buf_reserve(struct td_folded *fo, size_t more)
{
	size_t cap = fo->cap ? fo->cap : 256;
	char *nbuf;

	if (fo->len + more + 1 <= fo->cap)
		return 0;
	while (cap < fo->len + more + 1)
		cap *= 2;
	nbuf = realloc(fo->buf, cap);
	if (!nbuf)
		return -ENOMEM;
	fo->buf = nbuf;
	fo->cap = cap;
	return 0;
}

/* Append @s, sanitized so it cannot break the line format. */
static int buf_name(struct td_folded *fo, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	char *out;
	size_t i = 0, n;

	if (buf_reserve(fo, len))
		return -ENOMEM;
	out = fo->buf + fo->len;
	while (i < len) {
		unsigned char c = u[i];

		if (c >= 0x80) {
			n = td_utf8_seq_len(u + i, len - i);
			if (n) {
				memcpy(out, s + i, n);
				out += n;
				i += n;
				continue;
			}
			c = '?';
		} else if (c == ';') {
			c = ':';
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			c = '_';
		} else if (c < 0x20 || c == 0x7f) {
			c = '?';
		}
		*out++ = (char)c;
		i++;
	}
	fo->len = out - fo->buf;
	fo->buf[fo->len] = '\0';
	return 0;
}

/* Append trusted text as is. */
static int buf_raw(struct td_folded *fo, const char *s, size_t len)
{
	if (buf_reserve(fo, len))
		return -ENOMEM;
	memcpy(fo->buf + fo->len, s, len);
	fo->len += len;
	fo->buf[fo->len] = '\0';
	return 0;
}

static int buf_frame(struct td_folded *fo, const struct td_frame *fr, bool user)
{
	const char *base;
	char hex[24];
	int n;

	if (buf_raw(fo, ";", 1))
		return -ENOMEM;
	if (fr->symbol && fr->symbol[0])
		return buf_name(fo, fr->symbol, strlen(fr->symbol));
	if (user && !fr->object)
		return buf_raw(fo, "[unknown]", 9);	/* as pprof: see output.h */
	/* Recorded as in the vDSO, at no offset the record says. */
	if (user && fr->file_kind == TD_FILE_VDSO)
		return buf_name(fo, fr->object, strlen(fr->object));
	if (user && fr->object) {
		base = strrchr(fr->object, '/');
		base = base && base[1] ? base + 1 : fr->object;
		n = snprintf(hex, sizeof(hex), "+0x%" PRIx64, fr->file_offset);
		if (buf_name(fo, base, strlen(base)))
			return -ENOMEM;
	} else {
		n = snprintf(hex, sizeof(hex), "0x%" PRIx64, fr->addr);
	}
	return buf_raw(fo, hex, n);
}

/* ---- the table ---- */

static int count_line(struct td_folded *fo, const char *line, size_t len, uint64_t count)
{
	uint64_t h = line_hash(line, len);
	struct folded_entry *e;
	struct hnode *n;

	for (n = htab_first(&fo->tab, h); n; n = htab_next(n)) {
		e = container_of(n, struct folded_entry, node);
		if (e->len == len && !memcmp(e->line, line, len)) {
			e->count += count;
			fo->nr_samples += count;
			return 0;
		}
	}
	/* Past the bound a new line is counted in one of its own (itself let in once). */
	if (fo->max_mem && td_folded_mem(fo) >= fo->max_mem &&
	    strcmp(line, MEMORY_BOUND)) {
		fo->over += count;
		return count_line(fo, MEMORY_BOUND, strlen(MEMORY_BOUND), count);
	}
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	e->len = len;
	e->count = count;
	memcpy(e->line, line, len);
	e->line[len] = '\0';
	htab_add(&fo->tab, &e->node, h);
	fo->nr_entries++;
	fo->nr_samples += count;
	fo->entry_bytes += sizeof(*e) + len + 1;
	return 0;
}

void td_folded_set_max_mem(struct td_folded *fo, uint64_t bytes)
{
	fo->max_mem = bytes;
}

uint64_t td_folded_mem(const struct td_folded *fo)
{
	return fo->entry_bytes + (fo->tab.mask + 1) * sizeof(*fo->tab.b) + fo->cap;
}

uint64_t td_folded_over(const struct td_folded *fo)
{
	return fo->over;
}

int td_folded_add(struct td_folded *fo, const struct td_resolved *r)
{
	const char *comm = r->ev->comm;
	size_t clen = strnlen(comm, TD_COMM_LEN);
	unsigned int i;

	fo->len = 0;
	if (clen ? buf_name(fo, comm, clen) : buf_name(fo, "[unknown]", 9))
		return -ENOMEM;
	for (i = r->nr_uframes; i > 0; i--) {
		if (buf_frame(fo, &r->uframes[i - 1], true))
			return -ENOMEM;
	}
	if (!r->nr_uframes && (r->status == TD_USER_LOST || r->status == TD_UNWIND_FAILED)) {
		const char *mark = r->status == TD_USER_LOST ? ";[user_lost]" : ";[unwind_failed]";

		if (buf_raw(fo, mark, strlen(mark)))
			return -ENOMEM;
	}
	for (i = r->nr_kframes; i > 0; i--) {
		if (buf_frame(fo, &r->kframes[i - 1], false))
			return -ENOMEM;
	}
	return count_line(fo, fo->buf, fo->len, 1);
}

int td_folded_add_line(struct td_folded *fo, const char *stack, uint64_t count)
{
	size_t len = strlen(stack);

	if (!len || strpbrk(stack, " \t\r\n"))
		return -EINVAL;
	return count_line(fo, stack, len, count);
}

size_t td_folded_nr_stacks(const struct td_folded *fo)
{
	return fo->nr_entries;
}

uint64_t td_folded_nr_samples(const struct td_folded *fo)
{
	return fo->nr_samples;
}

/* ---- sorted output ---- */

static int cmp_entry(const void *a, const void *b)
{
	const struct folded_entry *ea = *(const struct folded_entry *const *)a;
	const struct folded_entry *eb = *(const struct folded_entry *const *)b;

	return strcmp(ea->line, eb->line);
}

static struct folded_entry **sorted(const struct td_folded *fo)
{
	struct folded_entry **v = malloc((fo->nr_entries + 1) * sizeof(*v));
	size_t i, n = 0;

	if (!v)
		return NULL;
	for (i = 0; i <= fo->tab.mask; i++) {
		struct hnode *e;

		for (e = fo->tab.b[i]; e; e = e->next)
			v[n++] = container_of(e, struct folded_entry, node);
	}
	qsort(v, n, sizeof(*v), cmp_entry);
	return v;
}

int td_folded_foreach(const struct td_folded *fo,
		      int (*fn)(const char *stack, uint64_t count, void *arg), void *arg)
{
	struct folded_entry **v = sorted(fo);
	size_t i;
	int ret = 0;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < fo->nr_entries && !ret; i++)
		ret = fn(v[i]->line, v[i]->count, arg);
	free(v);
	return ret;
}

static int write_line(const char *stack, uint64_t count, void *arg)
{
	FILE *f = arg;

	if (fprintf(f, "%s %" PRIu64 "\n", stack, count) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

int td_folded_write(const struct td_folded *fo, FILE *f)
{
	errno = 0;
	return td_folded_foreach(fo, write_line, f);
}
