#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A process that execs another program keeps its pid, not its maps. Here,
# in the fallback mode (user frames named from /proc/PID/maps, read when
# the records are), fp_chain sleeps 80 times (0.8 s: the daemon reads the
# ring buffer at least every 0.2 s, and so its maps), then execs fp_chain_altid: the same code at the same
# addresses (both are linked at 0x400000, as most non-PIE programs are) in
# another file. With only sched:sched_switch asked for, the daemon traces
# the exec too, and drops the maps it read for the pid there: every frame
# of the new program's switches must be named from fp_chain_altid, none
# from the fp_chain it replaced (before this, the first program's maps
# named the second's frames: another file, and for two programs that are
# not the same code, other functions). And every frame of fp_chain's own
# switches is fp_chain's, though the daemon reads the maps again after the
# exec for an address they lack (an unwind's last word is often garbage):
# the re-read finds another program, and the old maps stay until the exec's
# event comes. (Maps read for the first time only after the exec name the
# events before it with the new program's: a program that runs less than
# one read of the buffer, documented in trace-defer(8).)
. "$(dirname "$0")/lib.sh"

ALTID="$BUILD/progs/fp_chain_altid"
check "fp_chain_altid is built" [ -x "$ALTID" ]
td_bg --mode inplace -e sched:sched_switch -o "$SCRATCH/out.jsonl" --json-layout=full \
	--stats-interval 0 2>"$SCRATCH/err"
check "the daemon starts tracing" wait_tracing
check "... and traces the exec too, said" grep -q 'sched_process_exec.* only to name tasks' \
	"$SCRATCH/err"
# fp_chain sleeps on CPU 1 and execs there; fp_chain_altid moves to CPU 0
# at once and sleeps there (the first two CPUs this test may use). The
# daemon reads CPU 0 before CPU 1: the exec
# is read after the events that follow it, in the same round, unless the
# rounds' pages are merged by time (before they were, fp_chain_altid's
# first switches were named from fp_chain's maps).
cpus=($(allowed_cpus))
if [ "${#cpus[@]}" -ge 2 ]; then
	taskset -c "${cpus[1]}" "$FP_CHAIN" sleep-exec 10 80 "$ALTID" cpu "${cpus[0]}" sleep 10 30 \
		>"$SCRATCH/prog.out"
else
	log "one CPU: the exec and the events after it share it (no merge to test)"
	"$FP_CHAIN" sleep-exec 10 80 "$ALTID" sleep 10 30 >"$SCRATCH/prog.out"
fi
check "fp_chain, then fp_chain_altid, exit 0" [ $? = 0 ]
pid=$(sed -n '1s/^fp_chain pid=//p' "$SCRATCH/prog.out")
sleep 0.5
kill -TERM "$D"
check "the daemon exits 0" wait_exit "$D" 100
check "... with status 0" [ "$WAIT_RC" = 0 ]

# objs COMM: the object of each user frame of COMM's switches out of its
# sleeps (the pid's), one line each
objs() {
	jq -r --argjson p "$pid" --arg c "$1" 'select(.tid == $p and .comm == $c and
		.fields.prev_state == 1) | .user_stack[] | .obj // "-"' "$SCRATCH/out.jsonl"
}
objs fp_chain >"$SCRATCH/old"
objs fp_chain_altid >"$SCRATCH/new"
log "fp_chain's frames: $(sort "$SCRATCH/old" | uniq -c | tr '\n' ' ')"
log "fp_chain_altid's frames: $(sort "$SCRATCH/new" | uniq -c | tr '\n' ' ')"
n_old=$(grep -c "/fp_chain$" "$SCRATCH/old")
n_new=$(grep -c "/fp_chain_altid$" "$SCRATCH/new")
check "fp_chain's switches have frames in fp_chain ($n_old)" [ "$n_old" -ge 60 ]
check "fp_chain_altid's switches have frames in fp_chain_altid ($n_new)" [ "$n_new" -ge 60 ]
check "none of fp_chain_altid's frames is named from fp_chain" \
	eval "! grep -q '/fp_chain$' '$SCRATCH/new'"
check "none of fp_chain's frames is named from fp_chain_altid" \
	eval "! grep -q '/fp_chain_altid$' '$SCRATCH/old'"
dropped=$(sed -n 's/.* exec_maps_dropped=\([0-9]*\).*/\1/p' "$SCRATCH/err" | tail -n 1)
check "the exec dropped the maps, counted (exec_maps_dropped=${dropped:-none})" \
	[ "${dropped:-0}" -ge 1 ]
finish
