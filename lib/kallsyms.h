/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbol table from a kallsyms file (/proc/kallsyms or a copy).
 *
 * Promises: the file is read once; only text symbols are kept (t, T, w, W:
 * frames are code addresses, and data symbols in between would split a
 * function); the table is sorted by address whatever the file's order
 * (modules and BPF programs come after the core kernel, unsorted), with one
 * name per address (types T, t, W, w in that order, then a native name
 * before a compat-ABI alias: __x64_sys_vfork, not __ia32_sys_vfork, then
 * the first in the file); an address is named by the nearest symbol at or
 * below it, but never further than TD_KSYM_MAX_SPAN from it, so addresses
 * in gaps (between the core kernel and modules) are not given a far-away
 * name.
 */
#ifndef TD_KALLSYMS_H
#define TD_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#define TD_KSYM_MAX_SPAN	(1u << 20)

struct td_kallsyms;

/*
 * Parse @path. Returns NULL and sets errno on failure (ENOENT, EACCES,
 * ENOMEM). A file whose addresses are all zero (kptr_restrict) gives an
 * empty table, not an error.
 */
struct td_kallsyms *td_kallsyms_load(const char *path);
void td_kallsyms_free(struct td_kallsyms *ks);

/* Number of text symbols kept. */
unsigned long td_kallsyms_count(const struct td_kallsyms *ks);
/* Heap bytes the table holds. */
size_t td_kallsyms_bytes(const struct td_kallsyms *ks);
/*
 * A hash of every symbol kept (address, name, module): two loads of a
 * kallsyms that did not change in between give the same value; a module
 * or BPF program loaded or unloaded changes it.
 */
uint64_t td_kallsyms_digest(const struct td_kallsyms *ks);

/*
 * Name @addr. Returns 0 and fills @name, @offset and @object ("[kernel]" or
 * "[module]", strings owned by @ks), or -ENOENT.
 */
int td_kallsyms_find(const struct td_kallsyms *ks, uint64_t addr, const char **name,
		     uint64_t *offset, const char **object);

#endif /* TD_KALLSYMS_H */
