// SPDX-License-Identifier: GPL-2.0
/*
 * libfid.so: a library that fid_cases loads and unloads with dlopen and
 * dlclose, so that its frames lie in a file mapped at a different place
 * each time. fid_lib_sleep() -> fid_lib_inner() -> nanosleep, entered
 * with a raw syscall instruction so that the first frame is in here.
 */

#include "../raw_nanosleep.h"

void fid_lib_sleep(long ms);

__attribute__((noinline)) static void fid_lib_inner(long ms)
{
	raw_nanosleep_ms(ms);
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) void fid_lib_sleep(long ms)
{
	fid_lib_inner(ms);
	asm volatile("" ::: "memory");
}
