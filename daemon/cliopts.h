/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Long options are taken whole. getopt_long() accepts any unambiguous
 * prefix of a long option: `trace-defer --json full` (--json is report's)
 * quietly set --json-layout, and a future option could change what an
 * abbreviation in a service's command line means.
 */
#ifndef TD_DAEMON_CLIOPTS_H
#define TD_DAEMON_CLIOPTS_H

#include <getopt.h>

/* What --version says, the daemon's and report's alike. */
#ifndef TD_VERSION
#define TD_VERSION "0.1"
#endif

/*
 * Check @argv, as getopt_long() will read it with @short_opts and
 * @long_opts, for a long option given by a prefix of its name. Returns 0,
 * or -1 after saying which option it is and what it would have been
 * taken for. Unknown options are left to getopt_long()'s own message.
 */
int td_cli_exact_long_opts(int argc, char **argv, const char *short_opts,
			   const struct option *long_opts);

/*
 * trace-cmd record takes -f for a filter; here -f and -F name outputs,
 * and a filter goes with its event (-e SYS:NAME:FILTER). A value of
 * option @opt that reads as a filter (an ftrace operator: == != < > & |,
 * or ~ after a space) with no '/' and naming no file is refused: returns
 * -1 after saying how to give a filter, or a file of that name (./NAME).
 * For the command line only: a configuration file names its keys.
 */
int td_cli_output_name(const char *opt, const char *value);

/*
 * The same for trace-defer report, which has no -e: it takes no filter
 * at all (trace-cmd report's -F is one), and says so.
 */
int td_cli_report_output_name(const char *opt, const char *value);

#endif /* TD_DAEMON_CLIOPTS_H */
