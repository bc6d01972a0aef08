// SPDX-License-Identifier: GPL-2.0
/*
 * Diagnostics for the daemon: one line per message on stderr. Under
 * systemd stderr goes to the journal, so no syslog of our own.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

int td_log_level = TD_LOG_WARN;

void td_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > td_log_level)
		return;
	va_start(ap, fmt);
	fputs("trace-defer: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
