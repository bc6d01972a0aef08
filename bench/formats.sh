#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench/formats.sh DIR: the event formats bench/replay reads, as a
# tracefs-like directory: this machine's header_page, sched_switch,
# kernel_stack and user_stack formats, and the kernel series'
# user_unwind_cookie, user_unwind_stack and user_unwind_file in their
# current layout (bench/formats/*.format, with IDs after the host's last
# ftrace event, as the patched kernel would number them). Read by replay
# (tracefs_local_events) and by `trace-cmd restore -c -t` for a
# trace.dat's headers. Needs a mounted tracefs (root).
set -u
T=${TRACEFS:-/sys/kernel/tracing}
top=$(cd "$(dirname "$0")/.." && pwd)
d=${1:?usage: bench/formats.sh DIR}

mkdir -p "$d/events/ftrace" "$d/events/sched" "$d/per_cpu/cpu0" "$d/per_cpu/cpu1" || exit 1
cp "$T/events/header_page" "$T/events/header_event" "$d/events/" || exit 1
# libtracefs takes a directory with an "enable" file for a system of plain
# events; ftrace's own events have none.
: > "$d/events/sched/enable"
for e in ftrace/kernel_stack ftrace/user_stack sched/sched_switch; do
	mkdir -p "$d/events/$e"
	cat "$T/events/$e/format" > "$d/events/$e/format" || exit 1
done
max=$(cat "$T"/events/ftrace/*/format | sed -n 's/^ID: //p' | sort -n | tail -n 1)
[ -n "$max" ] || { echo "formats: no ftrace event IDs in $T" >&2; exit 1; }
id=$((max + 1))
for e in user_unwind_cookie user_unwind_stack user_unwind_file; do
	mkdir -p "$d/events/ftrace/$e"
	sed "s/@ID@/$id/" "$top/bench/formats/$e.format" > "$d/events/ftrace/$e/format" || exit 1
	id=$((id + 1))
done
# Names for trace-cmd report's task column.
for p in $(pgrep -x fp_chain); do echo "$p fp_chain"; done > "$d/saved_cmdlines"
