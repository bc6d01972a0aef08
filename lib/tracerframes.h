/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracer's own frames at the top of an event's kernel stack. ftrace
 * takes an event's kernel stack inside the probe that writes the event, so
 * its innermost frames are the probe (trace_event_raw_event_<class>,
 * ftrace_syscall_enter) and, when more than one probe is attached to the
 * tracepoint, the tracepoint's iterator (__traceiter_<name>). Whether the
 * iterator shows up depends on what else (perf, BPF, another instance)
 * happens to be attached, so two profiles of the same code would differ by
 * it; and a profile whose every sample ends in the probe has nothing to
 * say in its flat column. Profiles start at the traced code instead; the
 * JSON lines keep every frame as recorded. Private to the library.
 */
#ifndef TD_LIB_TRACERFRAMES_H
#define TD_LIB_TRACERFRAMES_H

#include <trace-defer/symbolize.h>

/*
 * How many of the @nr kernel frames at @f, innermost first, are the
 * tracer's own, by their symbols: those before the first frame that is
 * not (or has no symbol). Never all @nr: a stack of nothing but the
 * tracer (no caller unwound) keeps its outermost frame.
 */
unsigned int td_tracer_frames(const struct td_frame *f, unsigned int nr);

#endif /* TD_LIB_TRACERFRAMES_H */
