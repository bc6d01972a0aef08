/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events given as patterns or bare words, made into the events that exist
 * in tracefs, as trace-cmd reads -e: "sched:sched_wak*", "syscalls" (every
 * event of a system), "sched_switch" (an event of any system, when no
 * system has that name). Patterns are fnmatch(3)'s.
 */
#ifndef TD_DAEMON_EVENT_GLOB_H
#define TD_DAEMON_EVENT_GLOB_H

#include "config.h"

/*
 * Replace each pattern or bare word of @cfg's event list by the events it
 * matches, in the list's order, each with the pattern's filter; an event
 * also given by its own name keeps its own entry (and filter), and one
 * matched twice is listed once. The "ftrace" system (the tracer's own
 * records, not events to enable) is matched only when named. Returns 0,
 * or -1 when a pattern matches nothing or memory runs out (message
 * printed; the list is left as it was).
 */
int td_events_expand(struct td_config *cfg);

#endif /* TD_DAEMON_EVENT_GLOB_H */
