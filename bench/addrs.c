// SPDX-License-Identifier: GPL-2.0
/*
 * Real kernel and user addresses for the synthesized capture (see addrs.h).
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addrs.h"

struct ksym {
	uint64_t addr;
	char *name;
};

struct ksyms {
	struct ksym *v;
	size_t n;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void ksyms_free(struct ksyms *ks)
{
	if (!ks)
		return;
	for (size_t i = 0; i < ks->n; i++)
		free(ks->v[i].name);
	free(ks->v);
	free(ks);
}

struct ksyms *ksyms_load(const char *path)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	unsigned long long addr;
	char type, name[256];
	size_t cap = 0;
	bool nonzero = false;
	char line[512];
	FILE *f;

	if (!ks)
		return NULL;
	f = fopen(path, "re");
	if (!f)
		goto fail;
	while (fgets(line, sizeof(line), f)) {
		struct ksym *v;

		/* Module symbols end with "\t[mod]": only the kernel image is wanted. */
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || strchr(line, '['))
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (ks->n == cap) {
			cap = cap ? 2 * cap : 4096;
			v = realloc(ks->v, cap * sizeof(*v));
			if (!v)
				goto fail_file;
			ks->v = v;
		}
		ks->v[ks->n].addr = addr;
		ks->v[ks->n].name = strdup(name);
		if (!ks->v[ks->n].name)
			goto fail_file;
		ks->n++;
		nonzero |= addr != 0;
	}
	fclose(f);
	if (!nonzero)
		goto fail;
	qsort(ks->v, ks->n, sizeof(*ks->v), cmp_addr);
	return ks;
fail_file:
	fclose(f);
fail:
	ksyms_free(ks);
	return NULL;
}

unsigned int ksyms_stack(const struct ksyms *ks, const char *const *names,
			 struct capgen_kstack *out)
{
	out->nr = 0;
	for (; *names && out->nr < CAPGEN_MAX_KFRAMES; names++) {
		for (size_t i = 0; i < ks->n; i++) {
			uint64_t size;

			if (strcmp(ks->v[i].name, *names))
				continue;
			size = i + 1 < ks->n ? ks->v[i + 1].addr - ks->v[i].addr : 0x100;
			/* Some way into the function, where a call would return to. */
			out->ips[out->nr++] = ks->v[i].addr + (size > 0xc0 ? 0x5b : size / 2 + 1);
			break;
		}
	}
	return out->nr;
}

static int sym_in(Elf *elf, Elf_Scn *scn, const char *name, uint64_t *addr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Shdr sh;
	GElf_Sym sym;

	if (!data || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return -ENOENT;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		const char *n;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    !sym.st_value)
			continue;
		n = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!n || strcmp(n, name))
			continue;
		/* Past the prologue, before the end: where a callee would return. */
		*addr = sym.st_value + (sym.st_size > 8 ? sym.st_size / 2 : 0);
		return 0;
	}
	return -ENOENT;
}

/* @path opened for libelf: the handle, its descriptor in *@fd; NULL when not ELF. */
static Elf *elf_open(const char *path, int *fd)
{
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!elf)
		close(*fd);
	return elf;
}

static void elf_close(Elf *elf, int fd)
{
	elf_end(elf);
	close(fd);
}

int elf_func_addr(const char *path, const char *name, uint64_t bias, uint64_t *addr)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	int fd, ret = -ENOENT;
	Elf *elf = elf_open(path, &fd);

	if (!elf)
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	if (symtab)
		ret = sym_in(elf, symtab, name, addr);
	if (ret && dynsym)
		ret = sym_in(elf, dynsym, name, addr);
	if (!ret)
		*addr += bias;
	elf_close(elf, fd);
	return ret;
}

int elf_build_id(const char *path, uint8_t *id, unsigned int size, unsigned int *len)
{
	const void *bid;
	ssize_t n;
	int fd;
	Elf *elf = elf_open(path, &fd);

	*len = 0;
	if (!elf)
		return -ENOENT;
	n = dwelf_elf_gnu_build_id(elf, &bid);
	if (n > 0 && (size_t)n <= size) {
		memcpy(id, bid, (size_t)n);
		*len = (unsigned int)n;
	}
	elf_close(elf, fd);
	return n < 0 ? -ENOENT : 0;
}

int maps_bias(int pid, const char *substr, uint64_t *bias, char *path, size_t path_len)
{
	unsigned long long start, end, off;
	char file[64], line[1024], perm[8];
	int ret = -ENOENT, n;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/maps", pid);
	f = fopen(file, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perm, &off,
			   &n) != 4)
			continue;
		p = line + n;
		p[strcspn(p, "\n")] = '\0';
		if (off || *p != '/' || !strstr(p, substr))
			continue;
		*bias = start;
		snprintf(path, path_len, "%s", p);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}
