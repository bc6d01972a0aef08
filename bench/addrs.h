/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Real addresses for the synthesized capture: kernel functions from
 * /proc/kallsyms, user functions from a running process's ELF files, so
 * that symbolizing the capture does what it does on a real trace.
 */
#ifndef TD_BENCH_ADDRS_H
#define TD_BENCH_ADDRS_H

#include <stdint.h>

#include "capgen.h"

struct ksyms;

/* Text symbols of /proc/kallsyms; NULL when unreadable or hidden (all zero). */
struct ksyms *ksyms_load(const char *path);
void ksyms_free(struct ksyms *ks);

/*
 * A kernel stack from function names, innermost first: each frame is an
 * address inside the function (a return address would be). Names the
 * kernel lacks are left out. Returns the number of frames.
 */
unsigned int ksyms_stack(const struct ksyms *ks, const char *const *names,
			 struct capgen_kstack *out);

/*
 * An address inside function @name of the ELF file @path (its symbol
 * table, else its dynamic one), plus @bias. Returns 0 or -ENOENT.
 */
int elf_func_addr(const char *path, const char *name, uint64_t bias, uint64_t *addr);

/*
 * The GNU build-id of the ELF file @path into @id (at most @size bytes;
 * *@len 0 when it has none, or a longer one). Returns 0, or -ENOENT when
 * the file cannot be read as ELF.
 */
int elf_build_id(const char *path, uint8_t *id, unsigned int size, unsigned int *len);

/*
 * Where the file whose path contains @substr is loaded in process @pid:
 * the load bias of a shared object (start of its offset-0 mapping), and
 * its path. Returns 0 or -ENOENT.
 */
int maps_bias(int pid, const char *substr, uint64_t *bias, char *path, size_t path_len);

#endif /* TD_BENCH_ADDRS_H */
