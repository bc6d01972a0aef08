/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ELF objects and their function symbols, through elfutils' libdwfl.
 *
 * td_elf_open() reads what is cheap (build-id from the ELF note, PT_LOAD
 * segments; for a separate debug file, which holds no code, the segments'
 * file offsets are rebuilt from the program headers' layout); td_elf_symbols() reads the symbol table: the object's .symtab,
 * else the one of a separate debug file (found by build-id under the debug
 * directories' .build-id/, or by .gnu_debuglink, checked by build-id when the
 * object has one, else by CRC), else .dynsym, plus MiniDebugInfo if present.
 * The table keeps function symbols only (STT_FUNC, STT_GNU_IFUNC), sorted by
 * address, one per address (sized before size-0, global before weak before
 * local so a hidden alias never hides the exported name, then fewer leading
 * underscores: "printf" over "_IO_printf"), with the names copied: it needs
 * no file once built. C++ names are demangled lazily, on first lookup.
 */
#ifndef TD_ELFSYMS_H
#define TD_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TD_BUILD_ID_MAX 64

/* A PT_LOAD segment: file [offset, offset + filesz) is at ELF address vaddr. */
struct td_elfseg {
	uint64_t offset;
	uint64_t filesz;
	uint64_t vaddr;
};

struct td_elf {
	uint8_t build_id[TD_BUILD_ID_MAX];
	unsigned int build_id_len;	/* 0: none */
	struct td_elfseg *segs;		/* malloc'ed; the caller may take it */
	unsigned int nr_segs;
	bool has_symtab;		/* the file itself has a .symtab */
	struct td_elf_priv *priv;
};

struct td_elfsyms;

/*
 * Open the ELF file on @fd (always consumed). @file_name is where the file
 * is found (separate debug files are searched relative to it),
 * @debuginfo_path is libdwfl's search path (":.debug:/usr/lib/debug").
 * Returns 0, -ENOEXEC (not an ELF file) or -ENOMEM.
 */
int td_elf_open(int fd, const char *file_name, const char *debuginfo_path, struct td_elf **out);
void td_elf_close(struct td_elf *e);

/*
 * Read @e's function symbols; an object without any gives an empty table.
 * NULL only on allocation failure.
 */
struct td_elfsyms *td_elf_symbols(struct td_elf *e);

/* ELF virtual address of file offset @off; false when no PT_LOAD holds it. */
bool td_elf_off2vaddr(const struct td_elfseg *segs, unsigned int nr, uint64_t off,
		      uint64_t *vaddr);

/*
 * The function containing @vaddr: the nearest symbol at or below it, if
 * @vaddr lies within its size (a size-0 symbol covers up to the next one).
 * Fills @name (demangled) and @start; false when none.
 */
bool td_elfsyms_find(struct td_elfsyms *t, uint64_t vaddr, const char **name, uint64_t *start);
size_t td_elfsyms_count(const struct td_elfsyms *t);

/* Heap bytes the table holds: names (demangled ones too), addresses, sizes. */
size_t td_elfsyms_bytes(const struct td_elfsyms *t);

/*
 * The table came from a full .symtab (the object's or its debug file's), not
 * only .dynsym/MiniDebugInfo: another file with the same build-id cannot
 * give a better one.
 */
bool td_elfsyms_full(const struct td_elfsyms *t);
void td_elfsyms_free(struct td_elfsyms *t);

/*
 * Demangle a C++ or Rust (legacy or v0) name with libiberty's demangler,
 * as c++filt does; a "@VERSION" suffix is kept. Returns a malloc'ed
 * string, or NULL when @name is not a name it can demangle.
 */
char *td_demangle(const char *name);

#endif /* TD_ELFSYMS_H */
