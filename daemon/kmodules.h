/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module of each kernel function a trace.dat's kallsyms names. The
 * tep that libtracecmd loads those symbols into keeps each one's module,
 * but tep_find_function_info() does not say it: a report would call an
 * ext4 function's object "[kernel]" where the live daemon says "[ext4]".
 * The only way libtraceevent tells the modules is tep_print_funcs(), which
 * prints the table on stdout: it is read from there once, at start.
 */
#ifndef TD_DAEMON_KMODULES_H
#define TD_DAEMON_KMODULES_H

#include <stdint.h>

struct tep_handle;
struct td_kmodules;

/*
 * The module functions of @tep's kallsyms. NULL with errno set on failure
 * (ENOMEM, or what open_memstream() says); a table with no entry when no
 * symbol has a module. stdout is flushed first, and is stdout again when
 * this returns.
 */
struct td_kmodules *td_kmodules_from_tep(struct tep_handle *tep);

/*
 * "[module]" when the function that starts at @start is a module's, else
 * NULL (the kernel image's, or not in the table). Valid until freed.
 */
const char *td_kmodules_find(const struct td_kmodules *km, uint64_t start);

/* How many module functions the table holds. */
unsigned int td_kmodules_count(const struct td_kmodules *km);

void td_kmodules_free(struct td_kmodules *km);

#endif /* TD_DAEMON_KMODULES_H */
