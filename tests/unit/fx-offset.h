/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For tests that name frames of the fixture binaries: the file offset of a
 * function, from `nm` and `readelf -l` (the binary's own symbol table and
 * program headers), not from the code under test. Needs cmocka.h, stdio.h,
 * string.h, stdint.h and limits.h.
 */
#ifndef TEST_FX_OFFSET_H
#define TEST_FX_OFFSET_H

static uint64_t fx_func_offset(const char *path, const char *name)
{
	char cmd[2 * PATH_MAX + 64], line[512], sym[256], type[8];
	unsigned long long addr = 0, a, off, vaddr, paddr, filesz;
	uint64_t found = UINT64_MAX;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s'; readelf -lW '%s'", path, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%llx %7s %255s", &a, type, sym) == 3 && !strcmp(sym, name))
			addr = a;
		else if (addr &&
			 sscanf(line, " LOAD %llx %llx %llx %llx", &off, &vaddr, &paddr, &filesz) == 4 &&
			 addr >= vaddr && addr < vaddr + filesz)
			found = addr - vaddr + off;
	}
	assert_int_equal(pclose(p), 0);
	assert_true(found != UINT64_MAX);
	return found;
}

#endif /* TEST_FX_OFFSET_H */
