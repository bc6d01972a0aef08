/* SPDX-License-Identifier: GPL-2.0 */
/*
 * systemd integration through libsystemd's sd_notify: READY=1 once the
 * capture runs, STATUS= with live counters, WATCHDOG=1 at half the
 * watchdog interval when WATCHDOG_USEC is set, STOPPING=1 on shutdown,
 * EXTEND_TIMEOUT_USEC= while the last drain (loop.c) or trace-cmd making a
 * trace.dat (record.c) gets on.
 * Without NOTIFY_SOCKET every call is a cheap no-op.
 */
#ifndef TD_DAEMON_SERVICE_H
#define TD_DAEMON_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

void td_service_init(void);
/* Running under systemd with a notify socket: worth formatting STATUS= lines. */
bool td_service_active(void);
void td_service_ready(const char *status);
void td_service_stopping(void);
/* Call often (every drain tick); rate-limits itself. @status may be NULL. */
void td_service_tick(uint64_t now_ns, const char *status);
/* How often td_service_tick() wants to be called at least, ns; 0 if not. */
uint64_t td_service_watchdog_ns(void);
/*
 * EXTEND_TIMEOUT_USEC=@usec: systemd's timeout for the state the unit is
 * in (TimeoutStartSec=, RuntimeMaxSec=, TimeoutStopSec=) ends @usec from
 * now, unless it ends later anyway; sent again before then to go on: for
 * work that makes progress but takes long (a trace.dat built at the end).
 * A no-op without a notify socket.
 */
void td_service_extend_timeout(uint64_t usec);

/*
 * Long work at stop (the last drain, a trace.dat's build) asks for
 * TD_SERVICE_EXTEND_USEC more at most every TD_SERVICE_EXTEND_EVERY_NS
 * while it gets on: work that takes longer than TimeoutStopSec= is not
 * cut short by SIGKILL, and work that is stuck is, 15 to 17 s after it
 * last got on (or when TimeoutStopSec= is up, if that is later).
 */
#define TD_SERVICE_EXTEND_USEC		(15 * 1000000ULL)
#define TD_SERVICE_EXTEND_EVERY_NS	(2 * 1000000000ULL)
/*
 * The work at stop got on at @now_ns (monotonic): EXTEND_TIMEOUT_USEC=
 * TD_SERVICE_EXTEND_USEC once TD_SERVICE_EXTEND_EVERY_NS passed since the
 * last one, or since the first call, which starts the clock and sends
 * nothing (a stop within the unit's own timeout asks for nothing). A
 * no-op without a notify socket.
 */
void td_service_got_on(uint64_t now_ns);

#endif /* TD_DAEMON_SERVICE_H */
