// SPDX-License-Identifier: GPL-2.0
/*
 * ELF objects through libdwfl: one Dwfl per object, used only while the
 * object is being read; what the symbolizer keeps (segments, build-id, the
 * sorted symbol table) is copied out so no file stays open.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <libiberty/demangle.h>

#include "elfsyms.h"

struct td_elf_priv {
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;		/* module address - ELF address (0: placed at its vaddrs) */
};

#define SYM_MANGLED	0x1	/* "_Z..." or "_R...": not demangled yet */
#define SYM_OWNED	0x2	/* name is a malloc'ed demangled string */

struct sym_info {
	uint64_t size;
	const char *name;
	uint32_t flags;
};

struct td_elfsyms {
	size_t nr;
	bool full;
	uint64_t *addrs;	/* sorted; searched apart from the rest for cache locality */
	struct sym_info *info;
	char *pool;
	size_t bytes;		/* td_elfsyms_bytes() */
};

/* ---- demangling ------------------------------------------------------- */

/*
 * The prefixes of the manglings libiberty's demangler knows that matter
 * here: C++ and Rust's legacy mangling ("_ZN...17h<hash>E", an Itanium
 * name with a hash, which the demangler leaves out as rustfilt does) share
 * "_Z"; Rust's v0 mangling is "_R...".
 */
static bool is_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/* Parameters shown (C++ overloads differ by them), the language guessed. */
#define DEMANGLE_OPTS	(DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO)

char *td_demangle(const char *name)
{
	const char *at;
	char *base, *d, *res;
	size_t len;

	if (!is_mangled(name))
		return NULL;
	/* "name@@VERSION" from a .symtab: demangle the name, keep the version. */
	at = strchr(name, '@');
	if (!at)
		return cplus_demangle(name, DEMANGLE_OPTS);
	base = strndup(name, (size_t)(at - name));
	if (!base)
		return NULL;
	d = cplus_demangle(base, DEMANGLE_OPTS);
	free(base);
	if (!d)
		return NULL;
	len = strlen(d);
	res = realloc(d, len + strlen(at) + 1);
	if (!res) {
		free(d);
		return NULL;
	}
	memcpy(res + len, at, strlen(at) + 1);
	return res;
}

/* ---- objects ---------------------------------------------------------- */

/*
 * A separate debug file (objcopy --only-keep-debug, debuginfod) keeps the
 * program headers' addresses and sizes, but not the file offsets of the
 * segments' contents, which it does not hold: its executable PT_LOAD has no
 * file bytes. The offsets the object had are rebuilt from what the ELF gABI
 * and the linkers (ld.bfd, gold, lld) guarantee: loadable segments in
 * ascending address order, laid out in the file in that order, each at the
 * lowest offset past the previous one that is congruent to its address
 * modulo its alignment. Returns 0, -ENOEXEC when the headers break those
 * rules (the file then has no segments: nothing is named from it), -ENOMEM.
 */
static int rebuild_segments(struct td_elf *e, Elf *elf, size_t phnum)
{
	uint64_t off = 0, last_vaddr = 0;
	size_t i;

	for (i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);
		uint64_t align;

		if (!ph || ph->p_type != PT_LOAD || !ph->p_memsz)
			continue;
		align = ph->p_align ? ph->p_align : 1;
		if ((align & (align - 1)) || ph->p_vaddr < last_vaddr)
			goto bad;
		if (off % align != ph->p_vaddr % align)
			off += (ph->p_vaddr % align - off % align + align) % align;
		e->segs[e->nr_segs++] = (struct td_elfseg){
			.offset = off,
			.filesz = ph->p_memsz,
			.vaddr = ph->p_vaddr,
		};
		off += ph->p_memsz;
		last_vaddr = ph->p_vaddr + ph->p_memsz;
	}
	return 0;
bad:
	e->nr_segs = 0;
	return -ENOEXEC;
}

/* Has the file no bytes for its code (a separate debug file)? */
static bool debug_only(Elf *elf, size_t phnum)
{
	size_t i;

	for (i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (ph && ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_memsz &&
		    !ph->p_filesz)
			return true;
	}
	return false;
}

static int read_segments(struct td_elf *e)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(e->priv->mod, &bias);
	Elf_Scn *scn = NULL;
	size_t phnum, i;

	if (!elf || elf_getphdrnum(elf, &phnum))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (sh && sh->sh_type == SHT_SYMTAB)
			e->has_symtab = true;
	}
	e->priv->bias = bias;
	e->segs = calloc(phnum ? phnum : 1, sizeof(*e->segs));
	if (!e->segs)
		return -ENOMEM;
	if (debug_only(elf, phnum)) {
		/* Bad headers: no segments, so no names; the object is still usable. */
		rebuild_segments(e, elf, phnum);
		return 0;
	}
	for (i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD || !ph->p_filesz)
			continue;
		e->segs[e->nr_segs++] = (struct td_elfseg){
			.offset = ph->p_offset,
			.filesz = ph->p_filesz,
			.vaddr = ph->p_vaddr,
		};
	}
	return 0;
}

int td_elf_open(int fd, const char *file_name, const char *debuginfo_path, struct td_elf **out)
{
	struct td_elf *e;
	struct td_elf_priv *p;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int err = -ENOMEM, n;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	p = calloc(1, sizeof(*p));
	if (!e || !p)
		goto fail_fd;
	e->priv = p;
	p->debuginfo_path = strdup(debuginfo_path);
	if (!p->debuginfo_path)
		goto fail_fd;
	p->callbacks.find_elf = dwfl_build_id_find_elf;
	p->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	p->callbacks.section_address = dwfl_offline_section_address;
	p->callbacks.debuginfo_path = &p->debuginfo_path;
	p->dwfl = dwfl_begin(&p->callbacks);
	if (!p->dwfl)
		goto fail_fd;
	dwfl_report_begin(p->dwfl);
	/* Base 0, add p_vaddr: module addresses are the ELF's own addresses. */
	p->mod = dwfl_report_elf(p->dwfl, file_name, file_name, fd, 0, true);
	if (!p->mod) {
		err = -ENOEXEC;
		goto fail_fd;
	}
	/* From here the module owns fd. */
	dwfl_report_end(p->dwfl, NULL, NULL);
	n = dwfl_module_build_id(p->mod, &bits, &vaddr);
	if (n > 0 && n <= TD_BUILD_ID_MAX) {
		memcpy(e->build_id, bits, (size_t)n);
		e->build_id_len = (unsigned int)n;
	}
	err = read_segments(e);
	if (err)
		goto fail;
	*out = e;
	return 0;
fail_fd:
	close(fd);
fail:
	td_elf_close(e);
	if (!e)
		free(p);
	return err;
}

void td_elf_close(struct td_elf *e)
{
	if (!e)
		return;
	if (e->priv) {
		if (e->priv->dwfl)
			dwfl_end(e->priv->dwfl);
		free(e->priv->debuginfo_path);
		free(e->priv);
	}
	free(e->segs);
	free(e);
}

bool td_elf_off2vaddr(const struct td_elfseg *segs, unsigned int nr, uint64_t off,
		      uint64_t *vaddr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (off >= segs[i].offset && off - segs[i].offset < segs[i].filesz) {
			*vaddr = off - segs[i].offset + segs[i].vaddr;
			return true;
		}
	}
	return false;
}

/* ---- symbol tables ---------------------------------------------------- */

struct raw_sym {
	uint64_t addr;
	uint64_t size;
	size_t name;		/* offset in the pool */
	int rank;		/* binding: global 0, weak 1, others 2 */
	int version;		/* 1: an old version's name (NAME@V), 0: any other */
};

struct builder {
	struct raw_sym *v;
	size_t nr, alloc;
	char *pool;
	size_t pool_len, pool_alloc;
};

/*
 * A symbol table with versions (libc's debug file) names a symbol
 * NAME@@VERSION (the default one) or NAME@VERSION (an older one kept for
 * old binaries, such as cfree@GLIBC_2.2.5 at free's address): named NAME,
 * as the dynamic symbols name it without the debug file, and an old
 * version's name is the last choice (free, not cfree).
 */
static int builder_add(struct builder *b, uint64_t addr, uint64_t size, const char *name,
		       int rank)
{
	const char *at = strchr(name, '@');
	size_t len = (at && at != name ? (size_t)(at - name) : strlen(name)) + 1;
	int version = at && at != name && at[1] != '@';

	if (b->nr == b->alloc) {
		size_t n = b->alloc ? b->alloc * 2 : 256;
		struct raw_sym *v = realloc(b->v, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->alloc = n;
	}
	if (b->pool_len + len > b->pool_alloc) {
		size_t n = b->pool_alloc ? b->pool_alloc * 2 : 4096;
		char *p;

		while (n < b->pool_len + len)
			n *= 2;
		p = realloc(b->pool, n);
		if (!p)
			return -ENOMEM;
		b->pool = p;
		b->pool_alloc = n;
	}
	memcpy(b->pool + b->pool_len, name, len - 1);
	b->pool[b->pool_len + len - 1] = '\0';
	b->v[b->nr++] = (struct raw_sym){
		.addr = addr, .size = size, .name = b->pool_len, .rank = rank, .version = version,
	};
	b->pool_len += len;
	return 0;
}

static int raw_cmp(const void *a, const void *b, void *pool)
{
	const struct raw_sym *x = a, *y = b;
	const char *names = pool, *xn, *yn;
	size_t xu, yu;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* A sized symbol says more than a size-0 label at the same place. */
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (x->version != y->version)
		return x->version - y->version;
	/* Aliases: "printf" over "_IO_printf", "malloc" over "__libc_malloc". */
	xn = names + x->name;
	yn = names + y->name;
	xu = strspn(xn, "_");
	yu = strspn(yn, "_");
	if (xu != yu)
		return xu < yu ? -1 : 1;
	return strcmp(xn, yn);
}

static int collect(struct td_elf_priv *p, struct builder *b)
{
	int n = dwfl_module_getsymtab(p->mod), i;

	/* No symbol table at all: an empty table, not an error. */
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name;
		int type, bind;

		name = dwfl_module_getsym_info(p->mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (!name || !*name)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		/* Undefined (imported) or in a section not loaded. */
		if (shndx == SHN_UNDEF || shndx == (GElf_Word)-1)
			continue;
		bind = GELF_ST_BIND(sym.st_info);
		if (builder_add(b, addr - p->bias, sym.st_size, name,
				bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2))
			return -ENOMEM;
	}
	return 0;
}

struct td_elfsyms *td_elf_symbols(struct td_elf *e)
{
	struct builder b = { 0 };
	const char *debugfile = NULL;
	struct td_elfsyms *t;
	size_t i, out = 0;

	t = calloc(1, sizeof(*t));
	if (!t || collect(e->priv, &b))
		goto fail;
	/* Known once the symbol table was looked for. */
	dwfl_module_info(e->priv->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	t->full = e->has_symtab || debugfile;
	if (b.nr) {
		qsort_r(b.v, b.nr, sizeof(*b.v), raw_cmp, b.pool);
		for (i = 1; i < b.nr; i++)
			if (b.v[i].addr != b.v[out].addr)
				b.v[++out] = b.v[i];
		b.nr = out + 1;
	}
	t->addrs = malloc((b.nr ? b.nr : 1) * sizeof(*t->addrs));
	t->info = malloc((b.nr ? b.nr : 1) * sizeof(*t->info));
	if (!t->addrs || !t->info)
		goto fail;
	/* The pool no longer moves: names can be pointers now. */
	t->pool = b.pool;
	b.pool = NULL;
	t->bytes = sizeof(*t) + b.pool_alloc + b.nr * (sizeof(*t->addrs) + sizeof(*t->info));
	for (i = 0; i < b.nr; i++) {
		const char *name = t->pool + b.v[i].name;

		t->addrs[i] = b.v[i].addr;
		t->info[i] = (struct sym_info){
			.size = b.v[i].size,
			.name = name,
			.flags = is_mangled(name) ? SYM_MANGLED : 0,
		};
	}
	t->nr = b.nr;
	free(b.v);
	return t;
fail:
	free(b.v);
	free(b.pool);
	td_elfsyms_free(t);
	return NULL;
}

bool td_elfsyms_find(struct td_elfsyms *t, uint64_t vaddr, const char **name, uint64_t *start)
{
	size_t lo = 0, hi = t->nr, k;

	/* hi = number of symbols starting at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->addrs[mid] <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * The nearest symbol may end before vaddr (vaddr is in a function the
	 * table does not list, e.g. a static one with only .dynsym); a few
	 * symbols further down may still enclose it (nested symbols).
	 */
	for (k = 0; k < 4 && hi > 0; k++, hi--) {
		struct sym_info *s = &t->info[hi - 1];
		uint64_t a = t->addrs[hi - 1];

		if (s->size ? vaddr - a >= s->size : k > 0)
			continue;
		if (s->flags & SYM_MANGLED) {
			char *d = td_demangle(s->name);

			s->flags &= ~SYM_MANGLED;
			if (d) {
				s->name = d;
				s->flags |= SYM_OWNED;
				t->bytes += strlen(d) + 1;
			}
		}
		*name = s->name;
		*start = a;
		return true;
	}
	return false;
}

size_t td_elfsyms_count(const struct td_elfsyms *t)
{
	return t ? t->nr : 0;
}

size_t td_elfsyms_bytes(const struct td_elfsyms *t)
{
	return t ? t->bytes : 0;
}

bool td_elfsyms_full(const struct td_elfsyms *t)
{
	return t->full;
}

void td_elfsyms_free(struct td_elfsyms *t)
{
	size_t i;

	if (!t)
		return;
	if (t->info)
		for (i = 0; i < t->nr; i++)
			if (t->info[i].flags & SYM_OWNED)
				free((char *)t->info[i].name);
	free(t->addrs);
	free(t->info);
	free(t->pool);
	free(t);
}
