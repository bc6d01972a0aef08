/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libdebuginfod, loaded the first time it is asked for (only ever with
 * DEBUGINFOD_URLS set), not linked. Linked, it brings libcurl and the TLS,
 * Kerberos, LDAP and SSH libraries curl is built with (some 30) into every
 * process that uses the library, whether or not it ever asks a server.
 * elfutils' libdwfl loads it the same way, though elfutils 0.188 does so
 * the first time a file has no local debug file, URLs or not: a process
 * that names user frames gets it all the same; one that names none
 * (--help, --cleanup, record) does not.
 *
 * Promises: the functions come from the library's soname of this ABI
 * (libdebuginfod.so.1); loaded at most once per process, thread-safe, never
 * unloaded.
 */
#ifndef TD_DEBUGINFOD_H
#define TD_DEBUGINFOD_H

#include <elfutils/debuginfod.h>

struct td_debuginfod {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *client);
	int (*find_debuginfo)(debuginfod_client *client, const unsigned char *build_id,
			      int build_id_len, char **path);
	int (*find_executable)(debuginfod_client *client, const unsigned char *build_id,
			       int build_id_len, char **path);
};

/* The library's functions, or NULL when it cannot be loaded (not installed). */
const struct td_debuginfod *td_debuginfod(void);

#endif /* TD_DEBUGINFOD_H */
