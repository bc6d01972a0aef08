/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages on stderr, prefixed "trace-defer: ", filtered by one global
 * verbosity level (-q lowers it, -v raises it). Errors are always shown.
 */
#ifndef TD_DAEMON_LOG_H
#define TD_DAEMON_LOG_H

#include <stdio.h>

enum td_log_level {
	TD_LOG_ERR = 0,
	TD_LOG_WARN = 1,	/* default: warnings and notices */
	TD_LOG_NOTICE = 1,
	TD_LOG_INFO = 2,
	TD_LOG_DEBUG = 3,
};

extern int td_log_level;
/* Where messages go; NULL means stderr (tests point it at a file). */
extern FILE *td_log_stream;

void td_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define td_err(...)	td_log(TD_LOG_ERR, __VA_ARGS__)
#define td_warn(...)	td_log(TD_LOG_WARN, __VA_ARGS__)
#define td_notice(...)	td_log(TD_LOG_NOTICE, __VA_ARGS__)
#define td_info(...)	td_log(TD_LOG_INFO, __VA_ARGS__)
#define td_debug(...)	td_log(TD_LOG_DEBUG, __VA_ARGS__)

#endif /* TD_DAEMON_LOG_H */
