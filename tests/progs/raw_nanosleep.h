/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nanosleep(ms) through a raw syscall instruction, inlined into its caller,
 * so that a user stack's first frame is the caller itself (libc's wrapper
 * is built without frame pointers). Shared by the test programs.
 */
#ifndef RAW_NANOSLEEP_H
#define RAW_NANOSLEEP_H
#include <sys/syscall.h>
#include <time.h>

static inline __attribute__((always_inline)) void raw_nanosleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(SYS_nanosleep), "D"(&ts), "S"(0)
		     : "rcx", "r11", "memory");
}
#endif
