#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/fuzz/run.sh [SECONDS]: for each libFuzzer target (FUZZ_TARGETS,
# default "page plugin"), run every committed seed once, then fuzz for
# SECONDS (default 60) from the seeds and the inputs kept by earlier runs
# (build-fuzz/corpus/TARGET/, where new units go). Prints one summary line
# per target; fails on any crash, leak, UBSan report, timeout or OOM, whose
# input is saved under build-fuzz/crashes/. Built by `make fuzz`.
set -u

secs=${1:-60}
b=${FUZZ_BUILD:-build-fuzz}
src=$(cd "$(dirname "$0")" && pwd)
targets=${FUZZ_TARGETS:-page plugin}
# Several sub-buffers per input for the parser; a few records for the plugin.
declare -A max_len=([page]=16384 [plugin]=8192)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

mkdir -p "$b/crashes" "$b/logs"
fail=0
for t in $targets; do
	bin=$b/fuzz_$t
	seeds=$src/corpus/$t
	work=$b/corpus/$t
	log=$b/logs/$t.log
	if [ ! -x "$bin" ]; then
		echo "fuzz: $bin missing (make fuzz)" >&2
		exit 1
	fi
	mkdir -p "$work"

	# 1. The seeds (and crash inputs kept as regressions) one by one.
	if ! "$bin" -runs=1 "$seeds"/* >"$log" 2>&1; then
		echo "fuzz_$t: FAILED on a committed seed (see $log)"
		tail -n 30 "$log"
		fail=1
		continue
	fi

	# 2. Fuzz.
	before=$(find "$work" -type f | wc -l)
	"$bin" -max_total_time="$secs" -max_len="${max_len[$t]:-16384}" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -reload=0 \
		-artifact_prefix="$b/crashes/$t-" "$work" "$seeds" >>"$log" 2>&1
	rc=$?
	after=$(find "$work" -type f | wc -l)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	crashes=$(grep -c 'Test unit written to' "$log")
	echo "fuzz_$t: ${secs}s, ${execs:-?} inputs run (${rate:-?}/s), corpus $after units" \
	     "(+$((after - before)) new), crashes $crashes, exit $rc"
	if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
		fail=1
		grep -E 'ERROR:|runtime error|SUMMARY|Test unit written' "$log" | head -n 10
		echo "fuzz_$t: log in $log; reproduce with $bin <input>"
	fi
done
exit $fail
