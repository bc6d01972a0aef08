#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Events the kernel overwrites before the reader gets to them (the reader
# stopped, or blocked on a slow file system) must be said in words, not
# only in the counters: a recording with a hole in it looks like one
# without. A daemon stopped with SIGSTOP under a ping-pong load, with a
# tiny buffer, loses events for certain; it must say how many, on which
# CPUs, with what buffer, and the total at the end must be the counters'.
. "$(dirname "$0")/lib.sh"

PINGPONG="$BUILD/progs/pingpong"
[ -x "$PINGPONG" ] || { fail "missing $PINGPONG (run make progs)"; finish; }

bg "$PINGPONG" 30 0 0 >/dev/null
td_bg -d 4 --buffer-kb 8 -o "$SCRATCH/l.jsonl" --json-layout=full 2>"$SCRATCH/l.err"
check "tracing started" wait_tracing
sleep 0.5
kill -STOP "$D"
sleep 1.5
kill -CONT "$D"
# It writes every event read (500,000-630,000 lines of layout full) before
# it exits: 5-10 s alone, more than 15 with a kernel build and the fuzzers
# beside it (a clean clone's make check, 2026-12-04). What is checked is
# how it exits, not how fast.
wait_exit "$D" 600
check "daemon exits 0 after being stopped (got ${WAIT_RC:-none})" [ "${WAIT_RC:-1}" = 0 ]
check "instance removed" instance_gone

grep 'records lost' "$SCRATCH/l.err" | sed 's/^/    /'
lost=$(sed -n 's/.* \([0-9]*\) ring-buffer records lost in all (.*/\1/p' "$SCRATCH/l.err" | tail -1)
counted=$(grep -o 'cpu[0-9]*: reads=[0-9]* bytes=[0-9]* overrun=[0-9]* dropped=[0-9]*' \
	"$SCRATCH/l.err" | awk -F'[= ]' '{ n += $7 + $9 } END { print n + 0 }')
check "says at the end how many records were lost (${lost:-nothing})" [ -n "$lost" ]
check "... as many as the per-CPU counters (${lost:-?} = $counted)" \
	test "${lost:-x}" = "$counted" -a "$counted" -gt 0
check "... said while running too, before the end" grep -q 'records lost so far' "$SCRATCH/l.err"
check "... names the CPUs that lost them (cpu 0 among them)" \
	grep -Eq 'records lost in all .*\(cpu (0|0,[0-9,]*)\)' "$SCRATCH/l.err"
# The kernel rounds 8 KiB up to whole sub-buffers: the size it gave is said.
kb=$(sed -n 's/.*records lost in all .*--buffer-kb (now \([0-9]*\) KiB per CPU).*/\1/p' \
	"$SCRATCH/l.err")
check "... and the buffer to raise, as the kernel sized it (${kb:-none} KiB for 8 asked)" \
	test -n "$kb" -a "${kb:-0}" -ge 8 -a "${kb:-0}" -lt 64
# What was read is still written whole: one JSON line per event read.
read_events=$(grep -o 'read: records=[0-9]* events=[0-9]*' "$SCRATCH/l.err" | sed 's/.*events=//')
lines=$(grep -c '"ts"' "$SCRATCH/l.jsonl")
check "every event read is written ($lines lines, $read_events read)" \
	test "$lines" = "$read_events" -a "$lines" -gt 0
finish
