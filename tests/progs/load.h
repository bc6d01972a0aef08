/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the load programs (tests/progs/pingpong.c, bench/progs/spawn.c)
 * share: pinning to a CPU and a monotonic clock in seconds.
 */
#ifndef TD_PROGS_LOAD_H
#define TD_PROGS_LOAD_H

#include <sched.h>
#include <stdio.h>
#include <time.h>

/* Run on @cpu only; says so on stderr when it cannot. */
static inline void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
}

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif /* TD_PROGS_LOAD_H */
