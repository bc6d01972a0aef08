#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of the VM benchmark (bench/run.sh boots it with kernel/run-vm.sh):
# in one boot, the same workloads with no user stacks, in-place
# `userstacktrace` and deferred `userstacktrace_delay`, plus an untraced run
# for the slowdown. Writes one JSON object per run to $TD_OUT/vm-bench.jsonl:
#   {"load": "syscall"|"pingpong", "round": N, "result": {rbstat's object}}
# or {"load": ..., "mode": ..., "skipped": "why"}, and {"guest": {...}} first.
#
# Then, when LIVE_SECS > 0, bench/run.sh's live section in the guest (deferred
# mode): trace-defer, its always-on configuration and the drain loop on one
# uncapped ping-pong, LIVE_SECS per reader, LIVE_ROUNDS times over, into
# $TD_OUT/live/live.jsonl. With LIVE_INPLACE 1, the same readers once more on
# the ping-pong in fallback mode (in-place user stacks, as on a kernel
# without the deferred events), into $TD_OUT/live-inplace/live.jsonl: that
# ratio, set against the host's in the same mode, is what TCG adds.
#
#   guest-bench.sh BUILD_DIR SYSCALL_OPS PINGPONG_OPS DEPTH ROUNDS [LIVE_SECS [LIVE_ROUNDS
#                  [LIVE_WARMUP [LIVE_INPLACE]]]]
set -u
build=$1 sys_ops=$2 pp_ops=$3 depth=$4 rounds=${5:-2} live_secs=${6:-0} live_rounds=${7:-1}
live_warmup=${8:-2} live_inplace=${9:-0}
rb=$build/bench/rbstat
lg=$build/bench/loadgen
out=$TD_OUT/vm-bench.jsonl
: > "$out"

ncpu=$(nproc)
# The two sides of the ping-pong on two CPUs when there are two.
cpu_b=$((ncpu > 1 ? 1 : 0))
echo "guest: $(uname -r), $ncpu CPUs"
for f in "$rb" "$lg"; do
	[ -x "$f" ] || { echo "guest: no $f"; exit 1; }
done
printf '{"guest":{"kernel":"%s","cpus":%d}}\n' "$(uname -r)" "$ncpu" >> "$out"
ls /sys/kernel/tracing/options/ | grep -q '^userstacktrace_delay$' ||
	echo "guest: no option userstacktrace_delay: the deferred runs will be skipped"

# Per-CPU buffer: large enough to hold a whole run (overruns are checked).
buf=131072

run() {	# LOAD ROUND MODE rbstat-arguments...
	local load=$1 round=$2 mode=$3 res rc
	shift 3
	res=$("$rb" --mode "$mode" --buffer-kb "$buf" "$@" 2>/tmp/rbstat.err)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		printf '{"load":"%s","round":%d,"result":%s}\n' "$load" "$round" "$res" >> "$out"
	else
		local why
		why=$(tr -d '"\\' < /tmp/rbstat.err | tr '\n' ' ')
		[ "$rc" -eq 77 ] || why="rbstat exit $rc: $why"
		printf '{"load":"%s","round":%d,"mode":"%s","skipped":"%s"}\n' \
			"$load" "$round" "$mode" "$why" >> "$out"
	fi
	echo "guest: $load round $round $mode: exit $rc $(cut -c1-160 <<< "$res")"
}

for round in $(seq "$rounds"); do
	for mode in untraced none inplace deferred; do
		# Syscall-heavy: getppid in a loop, sys_enter and sys_exit traced (two
		# events per kernel entry, one deferred stack for both).
		run syscall "$round" "$mode" -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit \
			-- "$lg" syscall "$sys_ops" "$depth"
		# Context-switch-heavy: ping-pong over pipes between the two CPUs.
		run pingpong "$round" "$mode" -e sched:sched_switch \
			-- "$lg" pingpong "$pp_ops" "$depth" 0 "$cpu_b"
	done
done
if [ "$live_secs" -gt 0 ]; then
	BUILD=$build BENCH_SECTIONS=live BENCH_WORK=$TD_OUT/live \
		BENCH_RESULTS=$TD_OUT/live/results.json BENCH_LIVE_SECS=$live_secs \
		BENCH_LIVE_RATES=0 BENCH_LIVE_ROUNDS=$live_rounds BENCH_LIVE_WARMUP=$live_warmup \
		bash "$(dirname "$0")/run.sh" > "$TD_OUT/live.out" 2>&1
	echo "guest: live readers: exit $? $(grep -c . "$TD_OUT/live/live.jsonl" 2>/dev/null) steps"
	if [ "$live_inplace" = 1 ]; then
		BUILD=$build BENCH_SECTIONS=live BENCH_WORK=$TD_OUT/live-inplace \
			BENCH_RESULTS=$TD_OUT/live-inplace/results.json BENCH_LIVE_SECS=$live_secs \
			BENCH_LIVE_RATES=0 BENCH_LIVE_ROUNDS=$live_rounds BENCH_LIVE_WARMUP=$live_warmup \
			BENCH_LIVE_LOADS=pingpong BENCH_LIVE_MODE=inplace \
			bash "$(dirname "$0")/run.sh" > "$TD_OUT/live-inplace.out" 2>&1
		echo "guest: live readers, fallback mode: exit $?" \
			"$(grep -c . "$TD_OUT/live-inplace/live.jsonl" 2>/dev/null) steps"
	fi
fi
echo "guest: done"
