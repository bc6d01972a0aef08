#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Events are named after what their task runs now. A shell that has run
# (and been switched out as "bash") execs fp_chain, which sleeps 40 times:
# with sched:sched_process_exec traced, every nanosleep event of that pid,
# and its exec event, says "fp_chain", none the shell's name, though
# fp_chain's first nanosleep comes before any switch names it so. And with
# no traced event that names tasks, the daemon traces their exec for it,
# writes none of those: programs run one after another and 200 run in
# bursts of 10 are named all the same, though gone when read. It traces
# the fork with it: a shell's children are named bash at their execve.
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

# exec_named FILE.v1.jsonl PID...: NAMED programs of these pids named
# td-shortlived from their exec on (their first event so named, every one
# after it too), NEVER never so named, BEFORE events before the exec (the
# shell's child: bash opens a redirection's file, and is gone when read,
# named from the kernel's saved_cmdlines if it kept the pid, else
# "<...>"), OTHER the other names after the exec (pid:names).
exec_named() {
	local f=$1 p ok bad pre
	shift
	jq -r 'select(.event == "syscalls:sys_enter_openat") | "\(.tid) \(.ts) \(.comm)"' "$f" |
		sort -k1,1n -k2,2n > "$f.names"
	NAMED=0 NEVER=0 BEFORE=0 OTHER=
	for p in "$@"; do
		read -r ok bad pre < <(awk -v p="$p" '$1 == p {
				c = $3; for (i = 4; i <= NF; i++) c = c " " $i
				if (c == "td-shortlived") seen = 1
				else if (seen) bad = bad "," c
				else pre++
			} END { print seen + 0, (bad == "" ? "-" : substr(bad, 2)), pre + 0 }' \
			"$f.names")
		BEFORE=$((BEFORE + pre))
		if [ "$ok" = 1 ] && [ "$bad" = - ]; then
			NAMED=$((NAMED + 1))
		elif [ "$ok" = 0 ]; then
			NEVER=$((NEVER + 1))
		else
			OTHER+=" $p:$bad"
		fi
	done
}

# Only a syscall traced: no record names anybody. Programs that exit at
# once, gone before their events are read, are named all the same (from
# their exec, which the daemon traces for it), and one that still runs
# from /proc; none left "<...>", none given another task's name.
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
check "the daemon exits 0" eval 'wait_exit "$D" 100 && [ "$WAIT_RC" = 0 ]'
wait "$live"
resolve "$SCRATCH/sys.jsonl"
exec_named "$SCRATCH/sys.v1.jsonl" "${pids[@]}"
log "short-lived programs named: $NAMED of 20, $NEVER never; $BEFORE events before exec;" \
	"${OTHER:-no other name}"
check "all 20 short-lived programs named, gone before they were read" [ "$NAMED" = 20 ]
check "... and given no other name" [ -z "$OTHER" ]
# Its events from its exec on say fp_chain; one before it (the shell's
# child opening its redirection) is the shell's, as its fork said, or, the
# fork's record read after it (another CPU's), fp_chain, from /proc.
live_names=$(jq -r --argjson p "$live" 'select(.tid == $p) | "\(.ts) \(.comm)"' \
	"$SCRATCH/sys.v1.jsonl" | sort -n | awk '{ print $2 }' | uniq | tr '\n' ' ')
check "a running program is named fp_chain from its exec on ($live_names)" \
	[ "$live_names" = "bash fp_chain " -o "$live_names" = "fp_chain " ]

# The same in bursts, as a build or a shell loop runs them: 20 times 10
# programs at once, gone when read. /proc has them no more, and the
# kernel's saved_cmdlines misses many (a task's last switch does not wait
# for a reader of the list): the daemon traces their exec to name them.
td_bg -e syscalls:sys_enter_openat -o "$SCRATCH/burst.jsonl" 2>"$SCRATCH/burst.err"
check "tracing a syscall alone, again" wait_tracing
pids=()
# On CPU 0, this shell and what it starts: see guest-names.sh's names_burst_*.
mask=$(taskset -p $$ | sed 's/.*: //')
taskset -p 1 $$ >/dev/null
exec 3>&1 >/dev/null	# no redirection in the children: they exec at once
for i in $(seq 20); do
	burst=()
	for j in $(seq 10); do
		"$SCRATCH/td-shortlived" /etc/hostname &
		burst+=($!)
	done
	wait "${burst[@]}"	# not the daemon
	pids+=("${burst[@]}")
done
exec >&3 3>&-
taskset -p "$mask" $$ >/dev/null
sleep 1.5
kill -TERM "$D"
check "the daemon exits 0" eval 'wait_exit "$D" 100 && [ "$WAIT_RC" = 0 ]'
resolve "$SCRATCH/burst.jsonl"
exec_named "$SCRATCH/burst.v1.jsonl" "${pids[@]}"
log "in bursts: $NAMED of 200 named, $NEVER never; $BEFORE events before exec;" \
	"${OTHER:-no other name}"
check "all 200 programs run in bursts are named, from their exec on" [ "$NAMED" = 200 ]
nexec=$(jq -r 'select(.event == "sched:sched_process_exec") | .tid' "$SCRATCH/burst.v1.jsonl" |
	grep -c .)
nnaming=$(sed -n 's/.* naming_events=\([0-9]*\).*/\1/p' "$SCRATCH/burst.err" | tail -n 1)
log "exec events written: $nexec; naming_events=${nnaming:-none}"
check "... from exec events traced for that and not written" \
	test "$nexec" = 0 -a "${nnaming:-0}" -ge 200

# A shell's children are named as the shell until they exec: their execve
# entries, traced alone, say bash, not the program each starts (which /proc
# would say when the records are read, the exec done by then). The fork
# says so, traced for that with the exec. Unpinned: a child often starts
# on another CPU than its shell's, whose fork record the daemon may read
# after the child's (CPU 0 first); each round's records are merged by time
# (before, such a child was named from /proc: true, or <...> once gone).
td_bg -e syscalls:sys_enter_execve -o "$SCRATCH/ex.jsonl" --json-layout=full 2>"$SCRATCH/ex.err"
check "tracing execve alone" wait_tracing
check "... the exec and the fork traced to name tasks, said" \
	grep -q 'sched_process_exec and sched_process_fork only to name tasks' "$SCRATCH/ex.err"
bash -c 'for i in $(seq 30); do /bin/true; done'
sleep 1
kill -TERM "$D"
check "the daemon exits 0" eval 'wait_exit "$D" 100 && [ "$WAIT_RC" = 0 ]'
execs() {	# COMM: the execve entries so named
	jq -r --arg c "$1" 'select(.event == "syscalls:sys_enter_execve" and .comm == $c) | .tid' \
		"$SCRATCH/ex.jsonl" | grep -c .
}
n_bash=$(execs bash) n_true=$(execs true)
log "execve entries named bash: $n_bash, true: $n_true"
check "the shell's 30 children and its seq are named bash at their execve" \
	[ "$n_bash" -ge 31 -a "$n_true" = 0 ]
forks=$(jq -r 'select(.event == "sched:sched_process_fork")' "$SCRATCH/ex.jsonl" | grep -c .)
check "... from fork events traced for that and not written" [ "$forks" = 0 ]
finish
