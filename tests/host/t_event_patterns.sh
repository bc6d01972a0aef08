#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# -e as trace-cmd users write it: shell patterns ("sched:sched_wak*"), a
# bare system ("irq": all its events), a bare event name ("sched_switch",
# found in whatever system has it), "all" (every event). What is enabled in the instance is
# checked against tracefs's own list of events, not against the daemon's
# words; an event also given by name keeps its own filter; a pattern that
# matches nothing is an error before anything is made.
. "$(dirname "$0")/lib.sh"

inst="$TRACEFS/instances/$NAME"
# The events of tracefs under events/$1 whose names match pattern $2.
count_events() {
	local n=0 d
	for d in "$TRACEFS"/events/$1/$2/; do
		[ -f "$d/format" ] && n=$((n + 1))
	done
	echo $n
}
# The events enabled in our instance, as SYS/NAME lines, but for those
# the daemon adds to name tasks when none of those asked for does (exec, in
# $NAMING: 1 when enabled, and fork with it).
enabled() {
	grep -l '^1' "$inst"/events/*/*/enable 2>/dev/null |
		sed "s|^$inst/events/||; s|/enable$||" |
		grep -vx 'sched/sched_process_exec\|sched/sched_process_fork' | sort
}
# run_with ARGS...: the daemon for 5 s; the events enabled meanwhile in $ON.
# Reading 2,300 enable files takes a while on a loaded machine: with 2 s,
# the daemon once ended (and took its instance away) while they were read.
# With -e all beside a kernel build, it took 4 s to start and 6 s after
# its 5 to drain and take 2,300 events down: 11 s after tracing began, more
# than the 10 s once waited, and the next case then met its instance
# (2026-12-02). The wait ends when the daemon does; one that never does
# is stopped, so that it fails its own case and not the next.
run_with() {
	td_bg -d 5 -o /dev/null --stats-interval 0 "$@" 2>"$SCRATCH/err"
	WAIT_RC=
	wait_tracing || { ON=; reap_daemon; return 1; }
	ON=$(enabled)
	NAMING=$(cat "$inst/events/sched/sched_process_exec/enable")
	reap_daemon
}
# reap_daemon: wait up to 60 s for $D, else SIGINT it (its status is then
# not 0) and wait for it to clean up.
reap_daemon() {
	wait_exit "$D" 600 && return 0
	log "the daemon did not end within 60 s of its -d 5: stopped"
	kill -INT "$D" 2>/dev/null
	wait_exit "$D" 300 || kill -KILL "$D" 2>/dev/null
	WAIT_RC=timeout
}

run_with -e 'sched:sched_wak*'
want=$(count_events sched 'sched_wak*')
check "sched:sched_wak* enables the $want sched_wak* events of tracefs" \
	test "$(echo "$ON" | grep -c .)" = "$want" -a "$want" -ge 2
check "... and says how many it traces" grep -q "tracing $want event(s)" "$SCRATCH/err"
check "... sched_switch not among them" [ -z "$(echo "$ON" | grep -x sched/sched_switch)" ]
check "... with sched_process_exec to name tasks, said" \
	test "$NAMING" = 1 -a -n "$(grep 'sched:sched_process_exec.* only to name tasks' "$SCRATCH/err")"
check "... exit 0, instance removed" eval '[ "${WAIT_RC:-1}" = 0 ] && instance_gone'

run_with -e irq
want=$(count_events irq '*')
check "a bare system (irq) enables each of its $want events" \
	test "$(echo "$ON" | grep -c '^irq/')" = "$want" -a "$(echo "$ON" | grep -c .)" = "$want"
check "... exit 0, instance removed" eval '[ "${WAIT_RC:-1}" = 0 ] && instance_gone'

# As trace-cmd record -e all: every event of tracefs, the ftrace system's
# records excepted (enabled() leaves out sched_process_exec and _fork).
run_with -e all
want=$(( $(count_events '*' '*') - $(count_events ftrace '*') - 2 ))
check "all enables every event but the ftrace system's ($want, the exec and the fork)" \
	test "$(echo "$ON" | grep -c .)" = "$want" -a "$want" -ge 100 -a "$NAMING" = 1
check "... exit 0, instance removed" eval '[ "${WAIT_RC:-1}" = 0 ] && instance_gone'

run_with -e sched_switch
# With in-place stacks, named from the maps, the exec is traced too: it
# says when those became another program's (t_exec_maps).
want_naming=0
grep -q '(in-place user stacks)' "$SCRATCH/err" && want_naming=1
check "a bare event name (sched_switch) enables sched:sched_switch alone" \
	test "$ON" = sched/sched_switch -a "$NAMING" = "$want_naming"
check "... exit 0, instance removed" eval '[ "${WAIT_RC:-1}" = 0 ] && instance_gone'

# The filter of the event named on its own stays; the pattern's others
# have only the daemon's own (common_pid != its pid).
WAIT_RC=
td_bg -d 5 -o /dev/null --stats-interval 0 -e 'sched:sched_switch:prev_pid == 0' \
	-e sched 2>"$SCRATCH/err"
check "tracing with a pattern and a filtered event" wait_tracing
check "... the named event keeps its filter" \
	grep -q 'prev_pid == 0' "$inst/events/sched/sched_switch/filter"
check "... the pattern's other events (sched_wakeup) are on, without it" \
	test "$(cat "$inst/events/sched/sched_wakeup/enable")" = 1 \
	-a -z "$(grep prev_pid "$inst/events/sched/sched_wakeup/filter")"
reap_daemon
check "... exit 0, instance removed" eval '[ "${WAIT_RC:-1}" = 0 ] && instance_gone'

before=$(ls "$TRACEFS/instances" | sort)
td -d 1 -o /dev/null -e 'sched:no_such_*' 2>"$SCRATCH/err"
rc=$?
check "a pattern that matches nothing: exit 3 (got $rc)" [ "$rc" = 3 ]
check "... says which" grep -q "no event matches sched:no_such_\*" "$SCRATCH/err"
td -d 1 -o /dev/null -e no_such_word 2>"$SCRATCH/err"
rc=$?
check "a bare word that is no system nor event: exit 3 (got $rc)" [ "$rc" = 3 ]
check "... says so" grep -q "no event system or event is named no_such_word" "$SCRATCH/err"
check "... and nothing was made in tracefs" [ "$before" = "$(ls "$TRACEFS/instances" | sort)" ]
td -d 1 -o /dev/null -e ftrace 2>"$SCRATCH/err"
rc=$?
check "the ftrace system: exit 3 (got $rc)" [ "$rc" = 3 ]
check "... saying its records cannot be traced as events" \
	grep -q "ftrace system holds the tracer's own records" "$SCRATCH/err"
finish
