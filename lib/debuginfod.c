// SPDX-License-Identifier: GPL-2.0
/* libdebuginfod loaded on first use (see debuginfod.h for why). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "debuginfod.h"

static struct td_debuginfod ops;
static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (!h)
		return;
	/* POSIX leaves function pointers from void * to the platform; glibc's is fine. */
	*(void **)&ops.begin = dlsym(h, "debuginfod_begin");
	*(void **)&ops.end = dlsym(h, "debuginfod_end");
	*(void **)&ops.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&ops.find_executable = dlsym(h, "debuginfod_find_executable");
	loaded = ops.begin && ops.end && ops.find_debuginfo && ops.find_executable;
	/* Kept loaded: a client it made may outlive any one caller. */
	if (!loaded)
		dlclose(h);
}

const struct td_debuginfod *td_debuginfod(void)
{
	pthread_once(&once, load);
	return loaded ? &ops : NULL;
}
