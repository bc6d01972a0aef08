/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's messages (daemon/log.c) caught in a temporary file, for
 * the tests of daemon modules to check what they say.
 */
#ifndef TD_TESTS_LOG_CAPTURE_H
#define TD_TESTS_LOG_CAPTURE_H

#include <stdio.h>
#include <unistd.h>

#include "../../daemon/log.h"

/* Start catching; 0, or -1 (no temporary file). */
static inline int log_capture_start(void)
{
	td_log_stream = tmpfile();
	return td_log_stream ? 0 : -1;
}

static inline void log_capture_stop(void)
{
	fclose(td_log_stream);
	td_log_stream = NULL;
}

/* What was said since the last call (a static buffer, cut at 4 KiB). */
static inline const char *log_captured(void)
{
	static char buf[4096];
	size_t n;

	fflush(td_log_stream);
	rewind(td_log_stream);
	n = fread(buf, 1, sizeof(buf) - 1, td_log_stream);
	buf[n] = '\0';
	rewind(td_log_stream);
	if (ftruncate(fileno(td_log_stream), 0))
		return "";
	return buf;
}

#endif /* TD_TESTS_LOG_CAPTURE_H */
