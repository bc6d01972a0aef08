#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# ftrace takes an event's kernel stack inside the probe that writes it: the
# JSON lines keep those frames as recorded (trace_event_raw_event_CLASS,
# ftrace_syscall_enter, maybe __traceiter_NAME), while folded stacks, flame
# graphs and pprof profiles start at the traced code (__schedule), live
# and read back from the recording alike.
. "$(dirname "$0")/lib.sh"

TRACER='trace_event_raw_event_|__traceiter_|__probestub_|ftrace_syscall_(enter|exit)'
out=$SCRATCH/out
mkdir "$out"
td_bg -d 3 -e sched:sched_switch -e syscalls:sys_enter_clock_nanosleep --json-layout full \
	-o "$out/a.jsonl" -f "$out/a.folded" --pprof "$out/a.pb.gz" --record "$out/a.dat" \
	2>"$SCRATCH/d.err"
check "daemon: tracing" wait_tracing
"$FP_CHAIN" sleep 20 30 >/dev/null
check "daemon: exits 0" eval 'wait_exit "$D" 100 && [ "$WAIT_RC" = 0 ]' ||
	cat "$SCRATCH/d.err"

# The first kernel frame of each event, counted by event and frame.
first_frames() {
	python3 -c '
import collections, json, sys
c = collections.Counter()
for line in open(sys.argv[1]):
    ev = json.loads(line)
    ks = ev.get("kernel_stack") or []
    if ks and ks[0].get("sym"):
        c[ev["event"] + " " + ks[0]["sym"]] += 1
for k, n in sorted(c.items()):
    print(n, k)' "$1"
}
first_frames "$out/a.jsonl" >"$SCRATCH/first"
log "JSON, first kernel frames: $(sort -rn "$SCRATCH/first" | head -4 | tr '\n' ' ')"
check "JSON: sched_switch stacks start in ftrace's probe, as recorded" \
	grep -q ' sched:sched_switch trace_event_raw_event_sched_switch$' "$SCRATCH/first"
check "JSON: clock_nanosleep stacks start in ftrace_syscall_enter, as recorded" \
	grep -q ' syscalls:sys_enter_clock_nanosleep ftrace_syscall_enter' "$SCRATCH/first"

# folded: COMM;user...;kernel outermost;...;innermost COUNT
no_tracer_folded() {
	[ -s "$1" ] && ! grep -Eq "(^|;)($TRACER)" "$1"
}
innermost() { awk '{ n = split($1, f, ";"); print f[n] }' "$1" | sort | uniq -c | sort -rn; }
log "folded, innermost frames: $(innermost "$out/a.folded" | head -4 | tr '\n' ' ')"
check "folded: no frame of the tracer ($(wc -l <"$out/a.folded") lines)" \
	no_tracer_folded "$out/a.folded"
check "folded: sched_switch stacks end in __schedule" \
	grep -Eq ';__schedule [0-9]+$' "$out/a.folded"
check "folded: clock_nanosleep stacks end where the syscall is traced" \
	grep -Eq ';(syscall_trace_enter|trace_sys_enter)[^;]* [0-9]+$' "$out/a.folded"

go tool pprof -top -nodecount=1000 "$out/a.pb.gz" >"$SCRATCH/top" 2>&1
log "pprof: $(grep -m1 -A1 'flat  flat%' "$SCRATCH/top" | tail -1)"
check "pprof: go tool pprof reads it" grep -q 'flat  flat%' "$SCRATCH/top"
check "pprof: no frame of the tracer" eval '! grep -Eq "$TRACER" "$SCRATCH/top"'
check "pprof: __schedule is a leaf (flat > 0)" \
	eval 'awk '\''$NF == "__schedule" && $1 + 0 > 0 { f = 1 } END { exit !f }'\'' "$SCRATCH/top"'

"$TD" report "$out/a.dat" --json-layout full -o "$out/r.jsonl" -f "$out/r.folded" \
	2>"$SCRATCH/r.err"
check "report: exits 0 (got $?)" [ $? = 0 ]
first_frames "$out/r.jsonl" >"$SCRATCH/rfirst"
check "report, JSON: the recorded probe frames kept" \
	grep -q ' sched:sched_switch trace_event_raw_event_sched_switch$' "$SCRATCH/rfirst"
check "report, folded: no frame of the tracer ($(wc -l <"$out/r.folded") lines)" \
	no_tracer_folded "$out/r.folded"
check "report, folded: sched_switch stacks end in __schedule" \
	grep -Eq ';__schedule [0-9]+$' "$out/r.folded"
finish
