// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the module of each kernel function of a trace.dat
 * (daemon/kmodules.c): module functions are found by their start address
 * whatever order the kallsyms gave them in, the kernel image's are not,
 * and a kallsyms with no module symbol at all (a kernel without modules
 * or BPF programs, as this project's CI host runs) gives an empty table,
 * not an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event-parse.h>

#include "../../daemon/kmodules.h"

static void add_func(struct tep_handle *tep, const char *name, uint64_t addr,
		     const char *mod)
{
	assert_int_equal(
		tep_register_function(tep, (char *)name, addr, (char *)mod), 0);
}

static void test_no_functions(void **state)
{
	struct tep_handle *tep = tep_alloc();
	struct td_kmodules *km;

	(void)state;
	assert_non_null(tep);
	km = td_kmodules_from_tep(tep);
	assert_non_null(km);
	assert_int_equal(td_kmodules_count(km), 0);
	assert_null(td_kmodules_find(km, 0xffffffff81000000ULL));
	td_kmodules_free(km);
	tep_free(tep);
}

static void test_no_module_symbols(void **state)
{
	struct tep_handle *tep = tep_alloc();
	struct td_kmodules *km;

	(void)state;
	assert_non_null(tep);
	add_func(tep, "_stext", 0xffffffff81000000ULL, NULL);
	add_func(tep, "do_idle", 0xffffffff81080800ULL, NULL);
	km = td_kmodules_from_tep(tep);
	assert_non_null(km);
	assert_int_equal(td_kmodules_count(km), 0);
	assert_null(td_kmodules_find(km, 0xffffffff81080800ULL));
	td_kmodules_free(km);
	tep_free(tep);
}

static void test_modules_found(void **state)
{
	struct tep_handle *tep = tep_alloc();
	struct td_kmodules *km;

	(void)state;
	assert_non_null(tep);
	/* Modules after the kernel image, and not in address order. */
	add_func(tep, "do_idle", 0xffffffff81080800ULL, NULL);
	add_func(tep, "ext4_readdir", 0xffffffffc0200000ULL, "ext4");
	add_func(tep, "bpf_prog_6deef7357e7b4530", 0xffffffffc0001000ULL,
		 "bpf");
	add_func(tep, "ext4_file_open", 0xffffffffc0100000ULL, "ext4");
	km = td_kmodules_from_tep(tep);
	assert_non_null(km);
	assert_int_equal(td_kmodules_count(km), 3);
	assert_string_equal(td_kmodules_find(km, 0xffffffffc0200000ULL),
			    "[ext4]");
	assert_string_equal(td_kmodules_find(km, 0xffffffffc0100000ULL),
			    "[ext4]");
	assert_string_equal(td_kmodules_find(km, 0xffffffffc0001000ULL),
			    "[bpf]");
	assert_null(td_kmodules_find(km, 0xffffffff81080800ULL));
	/* Only a function's start names it: an address inside it is not looked up. */
	assert_null(td_kmodules_find(km, 0xffffffffc0200010ULL));
	td_kmodules_free(km);
	tep_free(tep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_functions),
		cmocka_unit_test(test_no_module_symbols),
		cmocka_unit_test(test_modules_found),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
