#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A trace.dat read later, after the pid of a traced process was reused by
# another run of a program of the same name (short-lived programs reuse
# pids and names all the time): `trace-defer report` must not name the old
# process's frames through the new one's /proc. On this kernel (no file
# identity) they stay raw; before, they took the new build's names. The
# same report names those of the old build still running under another pid.
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || { fail "jq not installed"; finish; }
AT_PID="$BUILD/progs/at_pid"
src=$SCRATCH/w.c
cat >"$src" <<'EOF'
#include <stdlib.h>
#include "raw_nanosleep.h"
__attribute__((noinline)) void LEAF(void) { raw_nanosleep_ms(10); }
__attribute__((noinline)) void MID(int n) { while (n-- > 0) LEAF(); }
int main(int argc, char **argv) { MID(argc > 1 ? atoi(argv[1]) : 1); return 0; }
EOF
# build LEAF MID OUT: the same program, its functions named otherwise.
build() {
	gcc -O0 -no-pie -fno-omit-frame-pointer -I "$TOP/tests/progs" -DLEAF="$1" -DMID="$2" \
		-o "$3" "$src"
}
mkdir "$SCRATCH/new"
check "the old build" build old_leaf old_mid "$SCRATCH/w"
check "the new build" build NEW_leaf NEW_mid "$SCRATCH/new/w"
# The control: the old build, running under another pid all along. The same
# report must name its frames (through its /proc/PID/maps): a report that
# names no user frame at all must not pass for one that refuses the reused
# pid's.
mkdir "$SCRATCH/keep" && cp "$SCRATCH/w" "$SCRATCH/keep/w"
"$SCRATCH/keep/w" 100000 &
K=$!
BG_PIDS+=("$K")

"$TD" record -i "$NAME" --run-dir "$RUN_DIR" --comm w -o "$SCRATCH/x.dat" 2>"$SCRATCH/rec.err" &
D=$!
BG_PIDS+=("$D")
check "recording" wait_tracing
"$SCRATCH/w" 40 &
P=$!
wait "$P"
sleep 0.3
kill -INT "$D"
wait "$D"
check "record exits 0" [ $? = 0 ]

# The pid again, a program of the same name: the new build, still running,
# started well after the last event. The trace clock (local) and the
# kernel's timekeeping drift apart (a start within 100 ms of an event counts
# as the same task): wait until CLOCK_MONOTONIC is 1 s past the last
# event's trace time, however far ahead the trace clock has run.
last=$("$TD" report "$SCRATCH/x.dat" --json 2>/dev/null | jq -s 'map(.ts) | max')
check "the recording's last event time ($last)" [ "${last:-null}" != null ]
check "CLOCK_MONOTONIC 1 s past it within 30 s" python3 -c '
import sys, time
t = int(sys.argv[1]) + 10**9
give_up = time.monotonic() + 30
while time.clock_gettime_ns(time.CLOCK_MONOTONIC) < t and time.monotonic() < give_up:
    time.sleep(0.05)
sys.exit(time.clock_gettime_ns(time.CLOCK_MONOTONIC) < t)' "${last:-0}"
cp "$SCRATCH/new/w" "$SCRATCH/w"
"$AT_PID" "$P" "$SCRATCH/w" 1000 &
A=$!
BG_PIDS+=("$A")
for i in $(seq 50); do [ "$(cat /proc/$P/comm 2>/dev/null)" = w ] && break; sleep 0.1; done
check "pid $P runs the new build" [ "$(cat /proc/$P/comm 2>/dev/null)" = w ]

"$TD" report "$SCRATCH/x.dat" -p "$P" -p "$K" --json --json-layout=full >"$SCRATCH/rep.jsonl" \
	2>"$SCRATCH/rep.err"
check "report exits 0" [ $? = 0 ]
n=$(jq -c "select(.tid == $P and (.user_stack | length) > 0)" "$SCRATCH/rep.jsonl" | wc -l)
named=$(jq -r "select(.tid == $P) | .user_stack[] | .sym // empty" "$SCRATCH/rep.jsonl" |
	sort | uniq -c | tr '\n' ' ')
check "report: $n events of the old process with user stacks" [ "$n" -gt 10 ]
check "report: none of their frames named through the new process (named: ${named:-none})" \
	[ -z "$named" ]
kept=$(jq -r "select(.tid == $K) | .user_stack[] | .sym // empty" "$SCRATCH/rep.jsonl" |
	sort | uniq -c | tr '\n' ' ')
check "report: the frames of the old build still running (pid $K) named (${kept:-none})" \
	eval 'echo "$kept" | grep -q " old_leaf " && echo "$kept" | grep -q " old_mid "'
# The program under pid $P first: at_pid only waits for it.
kill "$P" "$K" 2>/dev/null
wait "$A" 2>/dev/null
check "pid $P's program stopped" [ ! -e "/proc/$P" ]
check "instance removed" instance_gone
finish
