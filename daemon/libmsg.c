// SPDX-License-Identifier: GPL-2.0
/*
 * Library messages, shown to a hook (see libmsg.h). tep_vprint() is
 * libtraceevent's, weak, and called from the other libraries through
 * their PLT: the executable's definition is the one they reach, whatever
 * they were linked with.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <event-parse.h>
#include <event-utils.h>

#include "libmsg.h"

void (*td_libmsg_hook)(const char *lib, enum tep_loglevel level, const char *msg);

int tep_vprint(const char *name, enum tep_loglevel level, bool print_err, const char *fmt,
	       va_list ap)
{
	if (td_libmsg_hook) {
		char msg[512];
		va_list copy;

		va_copy(copy, ap);
		vsnprintf(msg, sizeof(msg), fmt, copy);
		va_end(copy);
		msg[strcspn(msg, "\n")] = '\0';
		td_libmsg_hook(name, level, msg);
	}
	return __tep_vprint(name, level, print_err, fmt, ap);
}
