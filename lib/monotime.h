/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CLOCK_MONOTONIC in nanoseconds, for the library's refresh and expiry
 * times (never compared with trace time). Private to the library.
 */
#ifndef TD_LIB_MONOTIME_H
#define TD_LIB_MONOTIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t td_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* TD_LIB_MONOTIME_H */
