// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer's own frames of a kernel stack (see tracerframes.h).
 */
#include <string.h>

#include "tracerframes.h"

/*
 * Symbols of ftrace's code between a tracepoint and the stack it records,
 * as prefixes: the compiler may add a suffix (.constprop.0) to any of
 * them. Other probes of the tracepoint (perf's, BPF's) run beside
 * ftrace's, never under it: they are in no stack ftrace takes.
 */
static const char *const tracer[] = {
	"trace_event_raw_event_",	/* TRACE_EVENT()'s probe, one per class */
	"__traceiter_",			/* a tracepoint's iterator over its probes */
	"__probestub_",
	"ftrace_syscall_enter",		/* syscalls:sys_enter_* */
	"ftrace_syscall_exit",		/* syscalls:sys_exit_* */
};

/* Named once per distinct stack (the pipeline keeps what it named): no need to be quick. */
static bool is_tracer(const char *sym)
{
	for (size_t i = 0; i < sizeof(tracer) / sizeof(tracer[0]); i++)
		if (!strncmp(sym, tracer[i], strlen(tracer[i])))
			return true;
	return false;
}

unsigned int td_tracer_frames(const struct td_frame *f, unsigned int nr)
{
	unsigned int n = 0;

	while (n + 1 < nr && f[n].symbol && is_tracer(f[n].symbol))
		n++;
	return n;
}
