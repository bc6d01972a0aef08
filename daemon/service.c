// SPDX-License-Identifier: GPL-2.0
/*
 * sd_notify wrapper (see service.h).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "service.h"

#define STATUS_PERIOD_NS	1000000000ULL

static uint64_t watchdog_ns;	/* half of WATCHDOG_USEC, 0 when off */
static uint64_t last_watchdog, last_status;
static uint64_t last_extend;
static bool started;	/* td_service_got_on() was called */
static bool notify;

void td_service_init(void)
{
	uint64_t usec = 0;

	notify = getenv("NOTIFY_SOCKET") != NULL;
	/* unset_environment = 0: keep WATCHDOG_USEC for anything we might exec. */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec)
		watchdog_ns = usec * 1000ULL / 2;
}

void td_service_ready(const char *status)
{
	if (status)
		sd_notifyf(0, "READY=1\nSTATUS=%s", status);
	else
		sd_notify(0, "READY=1");
}

void td_service_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: draining buffers");
}

void td_service_tick(uint64_t now_ns, const char *status)
{
	if (watchdog_ns && now_ns - last_watchdog >= watchdog_ns) {
		sd_notify(0, "WATCHDOG=1");
		last_watchdog = now_ns;
	}
	if (status && now_ns - last_status >= STATUS_PERIOD_NS) {
		sd_notifyf(0, "STATUS=%s", status);
		last_status = now_ns;
	}
}

void td_service_extend_timeout(uint64_t usec)
{
	if (notify)
		sd_notifyf(0, "EXTEND_TIMEOUT_USEC=%" PRIu64, usec);
}

void td_service_got_on(uint64_t now_ns)
{
	if (!notify)
		return;
	/* The first call starts the clock: work done within it needs no more time. */
	if (!started) {
		started = true;
		last_extend = now_ns;
		return;
	}
	if (now_ns - last_extend < TD_SERVICE_EXTEND_EVERY_NS)
		return;
	td_service_extend_timeout(TD_SERVICE_EXTEND_USEC);
	last_extend = now_ns;
}

uint64_t td_service_watchdog_ns(void)
{
	return watchdog_ns;
}

bool td_service_active(void)
{
	return notify;
}
