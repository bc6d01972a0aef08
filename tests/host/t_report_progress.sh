#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `trace-defer report --progress`: a long report says how far it is, on
# stderr: lines for logs when asked, one line rewritten in place on a
# terminal (cleared at the end), nothing by default when stderr is not a
# terminal or the report's text goes to a pager, and the same output with
# or without it.
. "$(dirname "$0")/lib.sh"

command -v trace-cmd >/dev/null || { fail "trace-cmd not installed"; finish; }
command -v script >/dev/null || { fail "script (util-linux) not installed"; finish; }

# Enough records for several progress lines: a switch-heavy load, traced system-wide.
"$TD" record -i "$NAME" --run-dir "$RUN_DIR" -o "$SCRATCH/p.dat" -d 60 2>"$SCRATCH/rec.err" &
D=$!
BG_PIDS+=("$D")
check "recording: tracing on" wait_tracing
"$BUILD/progs/pingpong" 1 0 1 >/dev/null
kill -INT "$D"
check "recording exits 0" eval 'wait_exit "$D" && [ "$WAIT_RC" = 0 ]'

# Compared without names: on this kernel user frames are named through
# /proc while their processes run, and a system-wide trace holds
# processes that end between two reports (beside a kernel build, a
# compiler's frames were named in one and raw in the other, 2026-12-02).
"$TD" report "$SCRATCH/p.dat" --no-symbolize -o "$SCRATCH/plain.jsonl" 2>"$SCRATCH/plain.err"
check "default, stderr not a terminal: no progress line" \
	sh -c "! grep -q '%, ' '$SCRATCH/plain.err'"
"$TD" report "$SCRATCH/p.dat" --no-symbolize -o "$SCRATCH/p.jsonl" --progress 0.000001 \
	2>"$SCRATCH/p.err"
check "--progress: exits 0 (got $?)" [ $? = 0 ]
# Nor the process ids: a thread's is looked up in /proc while it runs
# (t_report.sh met that beside a kernel build, 2026-12-03).
without_pid() { jq -c 'del(.pid)' "$1" || echo "jq failed on $1"; }
check "--progress: the same output" \
	cmp -s <(without_pid "$SCRATCH/plain.jsonl") <(without_pid "$SCRATCH/p.jsonl")
total=$(trace-cmd report "$SCRATCH/p.dat" 2>/dev/null | grep -c ': [a-z_]*: ')
check "--progress: lines of share, records, events ($total records in the file)" \
	python3 - "$SCRATCH/p.err" "$total" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if "%, " in l]
total = int(sys.argv[2])
pat = re.compile(r"report: (\d+)%, [0-9.]+ of [0-9.]+ s of trace, (\d+) records, (\d+) events, "
                 r"\d+ records/s$")
seen = [pat.search(l.rstrip("\n")) for l in lines]
assert len(lines) >= 2 and all(seen), lines[:3]
pct = [int(m.group(1)) for m in seen]
rec = [int(m.group(2)) for m in seen]
assert pct == sorted(pct) and rec == sorted(rec) and pct[-1] <= 100, (pct, rec)
# The share is of the file's records: what trace-cmd counts.
for p, r in zip(pct, rec):
    assert abs(p - 100.0 * r / total) <= 1, (p, r, total)
PY

# On a terminal (script's pty): rewritten in place, cleared at the end.
script -qec "'$TD' report '$SCRATCH/p.dat' -o /dev/null --progress 0.000001" /dev/null \
	>"$SCRATCH/tty.out"
check "terminal: exits 0 (got $?)" [ $? = 0 ]
check "terminal: one line rewritten (\\r, erase to end of line)" \
	grep -q $'\rtrace-defer: report: [0-9]*%, .*\e\\[K' "$SCRATCH/tty.out"
check "terminal: the line cleared at the end" grep -q $'\r\e\\[K' "$SCRATCH/tty.out"
# By default a line a second: the report must take longer than that for
# the default, and -q, to show (to /dev/null it takes 0.3 s). Its JSON
# goes to a FIFO whose reader waits 2 s before draining it.
slow_tty() {	# OUT ARGS...: the report on a terminal, its JSON read late; SLOW_RC, SLOW_MS
	local out=$1 t0 reader
	shift
	rm -f "$SCRATCH/slow.fifo"
	mkfifo "$SCRATCH/slow.fifo"
	(sleep 2; exec cat >/dev/null) <"$SCRATCH/slow.fifo" &
	reader=$!
	BG_PIDS+=("$reader")
	t0=$(date +%s%N)
	script -qec "'$TD' report '$SCRATCH/p.dat' -o '$SCRATCH/slow.fifo' $*" /dev/null >"$out"
	SLOW_RC=$?
	SLOW_MS=$((($(date +%s%N) - t0) / 1000000))
	# Still in its open if the report never opened the FIFO.
	kill "$reader" 2>/dev/null
	wait "$reader" 2>/dev/null
}
slow_tty "$SCRATCH/tty-slow.out"
check "terminal, a report of over 1 s ($SLOW_MS ms, status $SLOW_RC): progress by default" \
	eval '[ "$SLOW_RC" = 0 ] && grep -q "%, " "$SCRATCH/tty-slow.out"'
slow_tty "$SCRATCH/tty-q.out" -q
check "terminal, -q, a report of over 1 s ($SLOW_MS ms, status $SLOW_RC): no progress" \
	eval '[ "$SLOW_RC" = 0 ] && [ "$SLOW_MS" -ge 1500 ] && ! grep -q "%, " "$SCRATCH/tty-q.out"'

# Its text piped to a pager (or grep) reaches the terminal too: no progress
# by default, even when the reader is slow and the report waits on it for
# longer than the progress period.
script -qec "'$TD' report '$SCRATCH/p.dat' | (sleep 3; wc -c >'$SCRATCH/piped.bytes')" /dev/null \
	>"$SCRATCH/tty-pipe.out"
piped=$(cat "$SCRATCH/piped.bytes")
check "terminal, text piped to a slow pager: more than a pipe's buffer ($piped bytes)" \
	[ "$piped" -gt 1048576 ]
check "terminal, text piped to a pager: no progress by default" \
	sh -c "! grep -q '%, ' '$SCRATCH/tty-pipe.out'"

"$TD" report "$SCRATCH/p.dat" -o /dev/null --progress soon 2>"$SCRATCH/bad.err"
check "--progress soon: status 2 (got $?)" [ $? = 2 ]
check "--progress soon: says what it takes" grep -q "progress takes seconds" "$SCRATCH/bad.err"
check "instance removed" instance_gone
finish
