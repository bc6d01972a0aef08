#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Recording a trace.dat: `trace-defer record -o FILE.dat` and --record next
# to the JSON output. trace-cmd report must read the file and show as many
# sched_switch events and user stacks as the daemon itself parsed, for the
# same run; without trace-cmd the raw sub-buffers are kept, the daemon
# says how to finish, and `record --recover` does.
. "$(dirname "$0")/lib.sh"

command -v trace-cmd >/dev/null || { fail "trace-cmd not installed"; finish; }
start_fp_chain 20

# The subcommand comes first.
td_record() { "$TD" record -i "$NAME" --run-dir "$RUN_DIR" "$@"; }
td_record -p "$FP_PID" -d 1.5 -o "$SCRATCH/a.dat" 2>"$SCRATCH/a.err"
rc=$?
check "record exits 0 (got $rc)" [ "$rc" = 0 ]
check "trace.dat written" [ -s "$SCRATCH/a.dat" ]
check "says what it wrote" grep -q "wrote $SCRATCH/a.dat ([1-9][0-9]* sub-buffers)" "$SCRATCH/a.err"
check "scratch directory removed" [ -z "$(ls -d "$SCRATCH"/a.dat.raw.* 2>/dev/null)" ]
trace-cmd report "$SCRATCH/a.dat" >"$SCRATCH/a.report" 2>"$SCRATCH/a.report.err"
check "trace-cmd report reads it" [ $? = 0 ]
parsed=$(grep -o 'read: records=[0-9]* events=[0-9]*' "$SCRATCH/a.err" | sed 's/.*events=//')
switches=$(grep -c ' sched_switch: ' "$SCRATCH/a.report")
ustacks=$(grep -c ' user_stack: ' "$SCRATCH/a.report")
check "report: $switches sched_switch = $parsed parsed by the daemon" \
	[ "$switches" = "$parsed" -a "$switches" -gt 10 ]
check "report: a user stack per switch ($ustacks)" [ "$ustacks" = "$switches" ]
check "report: fp_chain's switches are there" grep -q "fp_chain:$FP_PID " "$SCRATCH/a.report"
check "instance removed" instance_gone

# --record next to live JSON: the same events in both.
td -p "$FP_PID" -d 1.5 -o "$SCRATCH/b.jsonl" --record "$SCRATCH/b.dat" 2>/dev/null
check "--record with -o exits 0" [ $? = 0 ]
json=$(grep -c '"type":"event"' "$SCRATCH/b.jsonl")
# The file also holds the switches into fp_chain from other tasks (set_event_pid).
dat=$(trace-cmd report "$SCRATCH/b.dat" 2>/dev/null |
	grep -c "fp_chain-$FP_PID *\[.* sched_switch: ")
check "JSON and trace.dat hold the same events of fp_chain ($json, $dat)" \
	[ "$json" = "$dat" -a "$json" -gt 10 ]

# Usage errors.
td_record -d 1 2>"$SCRATCH/c.err"
check "record without -o: status 2" [ $? = 2 ]
check "record without -o: says so" grep -q "give the trace.dat to write with -o" "$SCRATCH/c.err"

# No trace-cmd on PATH: raw files kept, the way out printed, status 1.
mkdir "$SCRATCH/bin"
PATH="$SCRATCH/bin" "$TD" record -i "$NAME" --run-dir "$RUN_DIR" -p "$FP_PID" -d 1 \
	-o "$SCRATCH/d.dat" 2>"$SCRATCH/d.err"
rc=$?
check "without trace-cmd: status 1 (got $rc)" [ "$rc" = 1 ]
check "without trace-cmd: raw sub-buffers kept" ls "$SCRATCH"/d.dat.raw.*/cpu0.raw
check "without trace-cmd: how to finish is printed" \
	grep -q "to retry: trace-defer record --recover $SCRATCH/d.dat.raw.* -o $SCRATCH/d.dat" \
	"$SCRATCH/d.err"
check "instance removed" instance_gone
# ... and with trace-cmd back, that makes the trace.dat.
"$TD" record --recover "$SCRATCH"/d.dat.raw.* -o "$SCRATCH/d.dat" 2>"$SCRATCH/e.err"
check "recover once trace-cmd is back: status 0 (got $?)" [ $? = 0 ]
check "recover once trace-cmd is back: trace-cmd report reads it" \
	sh -c "trace-cmd report '$SCRATCH/d.dat' 2>/dev/null | grep -q 'fp_chain:$FP_PID '"
finish
