#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Events are named after what their task runs now. A shell that has run
# (and been switched out as "bash") execs fp_chain, which sleeps 40 times:
# with sched:sched_process_exec traced, every nanosleep event of that pid,
# and its exec event, says "fp_chain", none the shell's name, though
# fp_chain's first nanosleep comes before any switch names it so. And with
# no record that names tasks, /proc and the kernel's saved_cmdlines do.
. "$(dirname "$0")/lib.sh"

ev=syscalls/sys_enter_nanosleep
if [ ! -d "$TRACEFS/events/$ev" ]; then
	# A kernel without syscall events cannot run this test: a failure, not a pass.
	fail "this kernel has no $ev event"
	finish
fi
td_bg -e sched:sched_switch -e sched:sched_process_exec -e syscalls:sys_enter_nanosleep \
	-q -o "$SCRATCH/out.jsonl"
check "the daemon starts tracing" wait_tracing
bash -c 'sleep 0.2; exec "$0" sleep 5 40' "$FP_CHAIN" >/dev/null &
sh_pid=$!
wait "$sh_pid"
sleep 0.5
kill -TERM "$D"
check "the daemon exits 0" wait_exit "$D" 100
check "... with status 0" [ "$WAIT_RC" = 0 ]
resolve "$SCRATCH/out.jsonl"
names() {	# EVENT: the comms of that event of the shell's pid, counted
	jq -r --argjson p "$sh_pid" --arg e "$1" \
		'select(.tid == $p and .event == $e) | .comm' "$SCRATCH/out.v1.jsonl" |
		sort | uniq -c
}
log "nanosleep: $(names syscalls:sys_enter_nanosleep | tr '\n' ' ')"
log "exec: $(names sched:sched_process_exec | tr '\n' ' ')"
n=$(names syscalls:sys_enter_nanosleep | awk '$2 == "fp_chain" {print $1}')
check "at least 30 nanosleep events of fp_chain" [ "${n:-0}" -ge 30 ]
check "every nanosleep event of that pid is fp_chain's" \
	[ "$(names syscalls:sys_enter_nanosleep | awk '$2 != "fp_chain"' | wc -l)" = 0 ]
# Its two execs: "bash -c" (named bash), then fp_chain's (named fp_chain).
check "each exec event names what it runs" \
	[ "$(names sched:sched_process_exec | awk '{print $1, $2}' | tr '\n' ' ')" = \
		"1 bash 1 fp_chain " ]
switched_as_bash=$(jq -r --argjson p "$sh_pid" 'select(.event == "sched:sched_switch"
	and .fields.prev_pid == $p and .fields.prev_comm == "bash") | .ts' \
	"$SCRATCH/out.v1.jsonl" | wc -l)
check "the shell was named bash before (a switch said so)" [ "$switched_as_bash" -ge 1 ]

# Only a syscall traced: no record names anybody. Programs that exit at
# once, gone before their events are read, are named all the same (the
# kernel's saved_cmdlines, read after their events), and one that still
# runs from /proc; none left "<...>", none given another task's name.
cp /bin/cat "$SCRATCH/td-shortlived"
td_bg -e syscalls:sys_enter_openat -q -o "$SCRATCH/sys.jsonl"
check "tracing a syscall alone" wait_tracing
pids=()
for i in $(seq 20); do
	"$SCRATCH/td-shortlived" /etc/hostname >/dev/null &
	pids+=($!)
	wait $!
done
"$FP_CHAIN" sleep 100 30 >/dev/null &
live=$!
sleep 1.5
kill -TERM "$D"
check "the daemon exits 0" wait_exit "$D" 100
wait "$live"
resolve "$SCRATCH/sys.jsonl"
comms_of() {	# PID: the names its openat events were given, one per line
	jq -r --argjson p "$1" 'select(.tid == $p) | .comm' "$SCRATCH/sys.v1.jsonl" | sort -u
}
named=0 other=
for p in "${pids[@]}"; do
	c=$(comms_of "$p")
	[ "$c" = td-shortlived ] && named=$((named + 1))
	[ -n "$c" ] && [ "$c" != td-shortlived ] && other+=" $p:$(echo $c | tr ' ' ,)"
done
log "short-lived programs named: $named of 20;${other:- no other name}"
check "all 20 short-lived programs named, gone before they were read" [ "$named" = 20 ]
check "... and given no other name" [ -z "$other" ]
check "a running program is named from /proc (fp_chain)" \
	[ "$(comms_of "$live")" = fp_chain ]
finish
