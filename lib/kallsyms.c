// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel symbols from a kallsyms file: parsed once into one sorted array of
 * text symbols and one string pool, then named by binary search.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "htab.h"

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offset in pool */
	uint16_t mod;		/* index in mods[]; 0 = [kernel] */
	uint8_t rank;		/* lower wins when two symbols share an address:
				 * type_rank() * 2, + 1 for a compat_alias() */
};

struct td_kallsyms {
	struct ksym *syms;
	size_t nr, alloc;
	char *pool;
	size_t pool_len, pool_alloc;
	uint32_t *mods;		/* pool offsets of "[kernel]", "[ext4]", ... */
	size_t nr_mods, mods_alloc;
};

/* Append @len bytes and a NUL to the pool; returns the offset or -1. */
static int64_t pool_add(struct td_kallsyms *ks, const char *s, size_t len)
{
	size_t off = ks->pool_len;

	if (off + len + 1 > UINT32_MAX)
		return -1;
	if (off + len + 1 > ks->pool_alloc) {
		size_t n = ks->pool_alloc ? ks->pool_alloc * 2 : 1 << 16;
		char *p;

		while (n < off + len + 1)
			n *= 2;
		p = realloc(ks->pool, n);
		if (!p)
			return -1;
		ks->pool = p;
		ks->pool_alloc = n;
	}
	memcpy(ks->pool + off, s, len);
	ks->pool[off + len] = '\0';
	ks->pool_len += len + 1;
	return off;
}

/* Index of module "[name]" (@name given without brackets), added if new. */
static int mod_index(struct td_kallsyms *ks, const char *name, size_t len)
{
	char buf[256];
	int64_t off;
	size_t i;

	if (len + 3 > sizeof(buf))
		len = sizeof(buf) - 3;
	buf[0] = '[';
	memcpy(buf + 1, name, len);
	buf[len + 1] = ']';
	buf[len + 2] = '\0';
	/* Modules come in runs, so the last one added is the likely match. */
	for (i = ks->nr_mods; i-- > 0;)
		if (!strcmp(ks->pool + ks->mods[i], buf))
			return (int)i;
	if (ks->nr_mods >= UINT16_MAX)
		return 0;
	if (ks->nr_mods == ks->mods_alloc) {
		size_t n = ks->mods_alloc ? ks->mods_alloc * 2 : 64;
		uint32_t *p = realloc(ks->mods, n * sizeof(*p));

		if (!p)
			return -1;
		ks->mods = p;
		ks->mods_alloc = n;
	}
	off = pool_add(ks, buf, len + 2);
	if (off < 0)
		return -1;
	ks->mods[ks->nr_mods] = (uint32_t)off;
	return (int)ks->nr_mods++;
}

/* Text symbol types, and the preference among aliases: T, t, W, w. */
static int type_rank(char type)
{
	switch (type) {
	case 'T':
		return 0;
	case 't':
		return 1;
	case 'W':
		return 2;
	case 'w':
		return 3;
	default:
		return -1;
	}
}

/*
 * Is @name a compat-ABI alias? Several names can share one address: on
 * x86_64 a syscall without arguments has one wrapper for each ABI, listed
 * __ia32_sys_vfork first, then __x64_sys_vfork. The first in the file was
 * kept, so a 64-bit task's vfork() was named as the 32-bit entry point,
 * not as __x64_sys_vfork, the name its syscall table calls and users
 * expect. Among aliases of the same binding (T, t, W, w, in that order,
 * decide first), a name with one of these prefixes loses to one without.
 * A plain prefix list, not the kernel's ABI: a name of this kind with no
 * other alias of its binding keeps it (a compat-only syscall such as
 * __ia32_compat_sys_sigreturn, or __ia32_sys_* on a 32-bit kernel).
 */
static bool compat_alias(const char *name, size_t len)
{
	static const char *const prefixes[] = { "__ia32_", "__x32_", "compat_" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);

		if (len > n && !memcmp(name, prefixes[i], n))
			return true;
	}
	return false;
}

/* Parse one line; 0 on success or skipped line, -1 on allocation failure. */
static int parse_line(struct td_kallsyms *ks, char *line)
{
	char *p = line, *end, *name, *mod = NULL;
	size_t name_len, mod_len = 0;
	uint64_t addr;
	int64_t off;
	int rank, mi = 0;

	addr = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return 0;
	p = end + 1;
	rank = type_rank(*p);
	if (rank < 0 || p[1] != ' ' || addr == 0)
		return 0;
	name = p + 2;
	name_len = strcspn(name, " \t\n");
	if (!name_len)
		return 0;
	p = name + name_len;
	if (*p == '\t' && p[1] == '[') {
		mod = p + 2;
		mod_len = strcspn(mod, "]\n");
	}

	if (ks->nr == ks->alloc) {
		size_t n = ks->alloc ? ks->alloc * 2 : 4096;
		struct ksym *s = realloc(ks->syms, n * sizeof(*s));

		if (!s)
			return -1;
		ks->syms = s;
		ks->alloc = n;
	}
	if (mod) {
		mi = mod_index(ks, mod, mod_len);
		if (mi < 0)
			return -1;
	}
	off = pool_add(ks, name, name_len);
	if (off < 0)
		return -1;
	ks->syms[ks->nr++] = (struct ksym){
		.addr = addr,
		.name = (uint32_t)off,
		.mod = (uint16_t)mi,
		.rank = (uint8_t)(rank * 2 + compat_alias(name, name_len)),
	};
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	/* Same address, same kind: keep the order stable by name. */
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Sort and keep the preferred name of each address. */
static void sort_dedup(struct td_kallsyms *ks)
{
	size_t i, out = 0;

	if (!ks->nr)
		return;
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), ksym_cmp);
	for (i = 1; i < ks->nr; i++)
		if (ks->syms[i].addr != ks->syms[out].addr)
			ks->syms[++out] = ks->syms[i];
	ks->nr = out + 1;
}

struct td_kallsyms *td_kallsyms_load(const char *path)
{
	struct td_kallsyms *ks;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int err = 0;

	f = fopen(path, "re");
	if (!f)
		return NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		err = ENOMEM;
		goto out;
	}
	if (mod_index(ks, "kernel", 6) != 0) {
		err = ENOMEM;
		goto out;
	}
	while (getline(&line, &cap, f) > 0) {
		if (parse_line(ks, line) < 0) {
			err = ENOMEM;
			goto out;
		}
	}
	if (ferror(f))
		err = EIO;
	else
		sort_dedup(ks);
out:
	free(line);
	fclose(f);
	if (err) {
		td_kallsyms_free(ks);
		errno = err;
		return NULL;
	}
	return ks;
}

void td_kallsyms_free(struct td_kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->pool);
	free(ks->mods);
	free(ks);
}

unsigned long td_kallsyms_count(const struct td_kallsyms *ks)
{
	return ks ? ks->nr : 0;
}

size_t td_kallsyms_bytes(const struct td_kallsyms *ks)
{
	if (!ks)
		return 0;
	return sizeof(*ks) + ks->alloc * sizeof(*ks->syms) + ks->pool_alloc +
	       ks->mods_alloc * sizeof(*ks->mods);
}

uint64_t td_kallsyms_digest(const struct td_kallsyms *ks)
{
	uint64_t h = HTAB_SEED;

	for (size_t i = 0; ks && i < ks->nr; i++) {
		const char *name = ks->pool + ks->syms[i].name;
		const char *mod = ks->pool + ks->mods[ks->syms[i].mod];

		h = htab_hash_u64(h, ks->syms[i].addr);
		h = htab_hash_bytes(name, strlen(name) + 1, h);
		h = htab_hash_bytes(mod, strlen(mod) + 1, h);
	}
	return h;
}

int td_kallsyms_find(const struct td_kallsyms *ks, uint64_t addr, const char **name,
		     uint64_t *offset, const char **object)
{
	size_t lo = 0, hi;
	const struct ksym *s;

	if (!ks || !ks->nr || addr < ks->syms[0].addr)
		return -ENOENT;
	/* Last symbol with start <= addr. */
	hi = ks->nr;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	s = &ks->syms[lo];
	if (addr - s->addr >= TD_KSYM_MAX_SPAN)
		return -ENOENT;
	*name = ks->pool + s->name;
	*offset = addr - s->addr;
	*object = ks->pool + ks->mods[s->mod];
	return 0;
}
