#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make bench-profile` (bench/profile-vm.sh boots it): where
# the always-on daemon spends its CPU in the patched kernel's deferred mode,
# against the drain loop on the same load. Each reader runs under
# `perf record -e cpu-clock` (a software clock: TCG has no PMU) while the
# ping-pong of tests/progs/pingpong runs uncapped, and its report (by
# symbol, the reader's own process only) goes to $TD_OUT/READER.report.
# Per reader: events read and CPU ns (utime + stime of /proc/PID/stat: the
# test kernel has no schedstat), into $TD_OUT/summary.
#
#   guest-profile.sh BUILD_DIR SECS
set -u
build=$1 secs=${2:-10}
T=/sys/kernel/tracing
out=$TD_OUT
command -v perf > /dev/null || { echo "guest-profile: no perf"; exit 77; }
[ -e "$T/options/userstacktrace_delay" ] ||
	{ echo "guest-profile: this kernel has no deferred user stacks"; exit 77; }
: > "$out/summary"

hz=$(getconf CLK_TCK)
cpu_ns() { awk -v hz="$hz" '{printf "%d\n", ($14 + $15) * 1e9 / hz}' "/proc/$1/stat"; }

events_of() {	# READER ERRFILE: the events read at the last SIGUSR1
	if [ "$1" = drain ]; then
		grep -o 'drain: events=[0-9]*' "$2" | tail -n 1 | sed 's/.*events=//'
	else
		grep -o 'read: records=[0-9]* events=[0-9]*' "$2" | tail -n 1 | sed 's/.*events=//'
	fi
}

profile() {	# READER
	local reader=$1 name=td-prof-$1 err=$out/$1.err pid ppid c0 c1 e0 e1
	case $reader in
	drain)
		"$build/bench/drain" -i "$name" --deferred 2> "$err" & ;;
	profiles)
		"$build/trace-defer" -i "$name" --run-dir /tmp/run -q \
			--profile-dir /tmp/profiles --profile-interval 60 \
			--stats-interval 0 2> "$err" & ;;
	esac
	pid=$!
	for _ in $(seq 100); do
		[ "$(cat "$T/instances/$name/tracing_on" 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	if [ "$(cat "$T/instances/$name/tracing_on" 2>/dev/null)" != 1 ]; then
		echo "guest-profile: $reader did not start tracing: $(tail -n 2 "$err")"
		kill "$pid" 2>/dev/null
		exit 1
	fi
	# Start-up apart, as the live benchmark does.
	"$build/progs/pingpong" 2 0 1 0 > /dev/null
	sleep 0.5
	kill -USR1 "$pid"
	sleep 0.2
	e0=$(events_of "$reader" "$err")
	c0=$(cpu_ns "$pid")
	perf record -q -e cpu-clock -F 999 -p "$pid" -o "/tmp/$reader.data" &
	ppid=$!
	sleep 0.5
	"$build/progs/pingpong" "$secs" 0 1 0 > /dev/null
	kill -INT "$ppid"
	wait "$ppid"
	c1=$(cpu_ns "$pid")
	kill -USR1 "$pid"
	sleep 0.5
	e1=$(events_of "$reader" "$err")
	kill -TERM "$pid"
	wait "$pid"
	printf '%s events=%s cpu_ns=%s ns_per_event=%s\n' "$reader" "$((e1 - e0))" \
		"$((c1 - c0))" "$(( (c1 - c0) / ((e1 - e0) > 0 ? (e1 - e0) : 1) ))" >> "$out/summary"
	perf report -q -i "/tmp/$reader.data" --no-children --sort dso,sym --stdio \
		> "$out/$reader.report" 2> "$out/$reader.report.err"
	echo "guest-profile: $reader done: $(tail -n 1 "$out/summary")"
}

profile drain
profile profiles
cat "$out/summary"
