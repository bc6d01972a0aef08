/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What libtraceevent, libtracefs and libtracecmd say goes wrong. They
 * print it themselves, through tep_vprint(), which libtraceevent lets an
 * application override: ours prints as the library does and shows each
 * message to a hook first. libtracecmd reading a damaged trace.dat only
 * says so ("bad page read") and stops reading that CPU; report counts it.
 */
#ifndef TD_DAEMON_LIBMSG_H
#define TD_DAEMON_LIBMSG_H

#include <event-parse.h>

/*
 * Called with each library message (@lib: "libtracecmd", ...; @msg
 * without its newline) before it is printed; NULL: none.
 */
extern void (*td_libmsg_hook)(const char *lib, enum tep_loglevel level, const char *msg);

#endif /* TD_DAEMON_LIBMSG_H */
