// SPDX-License-Identifier: GPL-2.0
/*
 * Diagnostics for the daemon: one line per message on stderr. Under
 * systemd stderr goes to the journal, so no syslog of our own.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

int td_log_level = TD_LOG_WARN;
FILE *td_log_stream;

void td_log(int level, const char *fmt, ...)
{
	FILE *f = td_log_stream ? td_log_stream : stderr;
	va_list ap;

	if (level > td_log_level)
		return;
	va_start(ap, fmt);
	fputs("trace-defer: ", f);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	va_end(ap);
}
