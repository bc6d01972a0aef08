#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Not a pass/fail test: measures the event rate trace-defer sustains on this
# host in fallback (inplace) mode, its CPU use and the kernel's overruns.
#
#   [NICE=-15] tests/host/measure-rate.sh [SECONDS] [daemon options...]
#
# NICE runs the daemon at that nice level, so other work on a shared
# machine does not starve it (overruns then measure the daemon, not the
# neighbours). Add -b 8192 to see what a bigger ring buffer absorbs.
#
# Load: tests/progs/pingpong, one pair of processes pinned on CPU 0 (they
# switch directly to each other: sched_switch + kernel_stack + user_stack
# per switch), at rising round-trip rates, then unlimited. The daemon is
# pinned on CPU 1. For each step: sched_switch events read per second, the
# daemon's CPU use (utime + stime from /proc/PID/stat), and the overrun
# count of per_cpu/cpu0/stats (events the kernel overwrote unread).
set -u
secs=${1:-5}
shift || true
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
NAME="td-rate-$$"
RUN_DIR=$(mktemp -d /tmp/td-rate.XXXXXX)
hz=$(getconf CLK_TCK)

mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

printf '%-10s %12s %12s %10s %12s %10s\n' "rate cap" "trips/s" "events/s" "cpu %" "us/event" \
	"overruns"
for rate in 20000 40000 60000 80000 100000 0; do
	taskset -c 1 ${NICE:+nice -n "$NICE"} "$BUILD/trace-defer" -i "$NAME" --run-dir "$RUN_DIR" -q \
		-o /dev/null --stats-interval 0 "$@" 2>"$RUN_DIR/err" &
	d=$!
	for i in $(seq 100); do
		[ "$(cat /sys/kernel/tracing/instances/$NAME/tracing_on 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	t0=$(awk '{print $14 + $15}' /proc/$d/stat)
	ev0=$(grep -c . /dev/null)
	trips=$("$BUILD/progs/pingpong" "$secs" 0 0 "$rate" | sed -n 's/.*: \([0-9]*\) round.*/\1/p')
	t1=$(awk '{print $14 + $15}' /proc/$d/stat)
	over=$(awk '/^overrun/ {print $2}' /sys/kernel/tracing/instances/$NAME/per_cpu/cpu0/stats)
	kill -USR1 "$d"
	sleep 0.5
	kill -TERM "$d"
	wait "$d"
	events=$(grep -o 'read: records=[0-9]* events=[0-9]*' "$RUN_DIR/err" | head -n 1 |
		sed 's/.*events=//')
	cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s="$secs" \
		'BEGIN {printf "%.1f", 100 * (b - a) / hz / s}')
	us=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v e="$events" \
		'BEGIN {printf "%.2f", e ? 1e6 * (b - a) / hz / e : 0}')
	printf '%-10s %12s %12s %10s %12s %10s\n' "${rate/#0/none}" "$trips" \
		"$((events / secs))" "$cpu" "$us" "$over"
done
rm -rf "$RUN_DIR"
