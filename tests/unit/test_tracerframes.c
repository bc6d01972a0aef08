// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer's own frames of a kernel stack (lib/tracerframes.c), on the
 * stacks this machine's ftrace wrote (6.18): the probe of an event class
 * and the tracepoint iterator when another probe shares the tracepoint,
 * the syscall events' probe, compiler suffixes; a stack that starts in the
 * traced code, an unnamed innermost frame, a look-alike further out and a
 * stack of nothing but the tracer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../lib/tracerframes.h"

#define MAX_FRAMES	8

/* The frames named @syms (NULL ends them; "" is a frame with no symbol). */
static unsigned int count(const char *const *syms)
{
	struct td_frame f[MAX_FRAMES] = { 0 };
	unsigned int nr = 0;

	for (; syms[nr]; nr++) {
		assert_true(nr < MAX_FRAMES);
		f[nr].addr = 0xffffffff81000000ULL + 0x100 * nr;
		f[nr].symbol = syms[nr][0] ? syms[nr] : NULL;
	}
	return td_tracer_frames(f, nr);
}

static void test_event_probes(void **state)
{
	const char *const sw_shared[] = {
		"trace_event_raw_event_sched_switch", "__traceiter_sched_switch", "__schedule",
		"schedule", NULL,
	};
	const char *const softirq[] = {
		"trace_event_raw_event_softirq", "handle_softirqs", "__irq_exit_rcu", NULL,
	};
	const char *const wakeup[] = {
		"trace_event_raw_event_sched_wakeup_template", "__traceiter_sched_wakeup",
		"ttwu_do_activate", "try_to_wake_up", NULL,
	};
	const char *const sys_enter[] = {
		"ftrace_syscall_enter", "syscall_trace_enter", "do_syscall_64",
		"entry_SYSCALL_64_after_hwframe", NULL,
	};
	const char *const sys_exit[] = {
		"ftrace_syscall_exit.constprop.0", "syscall_exit_work", "do_syscall_64", NULL,
	};

	(void)state;
	assert_int_equal(count(sw_shared), 2);
	assert_int_equal(count(softirq), 1);
	assert_int_equal(count(wakeup), 2);
	assert_int_equal(count(sys_enter), 1);
	assert_int_equal(count(sys_exit), 1);
}

static void test_traced_code_kept(void **state)
{
	/* The benchmark's stacks, and stacks of other tools: nothing to drop. */
	const char *const plain[] = { "__schedule", "schedule", "do_nanosleep", NULL };
	/* Tracing code as the traced code itself, further out: not the probe. */
	const char *const deeper[] = {
		"__schedule", "trace_event_raw_event_sched_switch", "schedule", NULL,
	};
	/* Unnamed: nothing known, nothing dropped, and the rest not looked at. */
	const char *const unnamed[] = { "", "__traceiter_sched_switch", "__schedule", NULL };
	/* Names that only look alike. */
	const char *const alike[] = { "trace_event_raw_init", "ftrace_syscalls_init", NULL };
	const char *const none[] = { NULL };

	(void)state;
	assert_int_equal(count(plain), 0);
	assert_int_equal(count(deeper), 0);
	assert_int_equal(count(unnamed), 0);
	assert_int_equal(count(alike), 0);
	assert_int_equal(count(none), 0);
}

static void test_never_all(void **state)
{
	const char *const only[] = {
		"trace_event_raw_event_sched_switch", "__traceiter_sched_switch", NULL,
	};
	const char *const one[] = { "trace_event_raw_event_sched_switch", NULL };

	(void)state;
	assert_int_equal(count(only), 1);
	assert_int_equal(count(one), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_probes),
		cmocka_unit_test(test_traced_code_kept),
		cmocka_unit_test(test_never_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
