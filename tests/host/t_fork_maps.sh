#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A shell's child runs the shell's code from its fork to its exec: its
# execve() entry is the shell's call. In the fallback mode (user frames
# named from /proc/PID/maps, read when the records are), the child has
# exec'd and often exited by the time its records are read: its maps were
# the next program's, or none, and its frames from before the exec were
# named from the wrong program, or not at all (hex). The daemon traces
# fork with exec to name tasks; a child first met after its fork now
# starts from its parent's maps, and its exec keeps them for its events
# before the exec only.
#
# fp_chain forks 10 children one after the other; each calls execve()
# through main, a, b, c and becomes fp_chain_altid (the same code at the
# same addresses in another file), which sleeps 30 times. The parent
# lingers, as a shell does.
. "$(dirname "$0")/lib.sh"

ALTID="$BUILD/progs/fp_chain_altid"
check "fp_chain_altid is built" [ -x "$ALTID" ]
td_bg --mode inplace -e syscalls:sys_enter_execve -e sched:sched_switch -o "$SCRATCH/out.jsonl" \
	--json-layout=full --stats-interval 0 2>"$SCRATCH/err"
check "the daemon starts tracing" wait_tracing
check "... and traces exec and fork to name tasks, said" \
	grep -q 'sched_process_exec and sched_process_fork only to name tasks' "$SCRATCH/err"
"$FP_CHAIN" spawn-exec 10 1500 "$ALTID" sleep 10 30 >"$SCRATCH/prog.out"
check "fp_chain and its 10 children exit 0" [ $? = 0 ]
parent=$(sed -n '1s/^fp_chain pid=//p' "$SCRATCH/prog.out")
sleep 0.5
kill -TERM "$D"
check "the daemon exits 0" wait_exit "$D" 100
check "... with status 0" [ "$WAIT_RC" = 0 ]

# The children's execve() entries: their first four user frames, one line
# each, as function@file.
jq -r --argjson p "$parent" 'select(.event == "syscalls:sys_enter_execve" and .pid != $p and
	.comm == "fp_chain") | [.user_stack[0:4][] | "\(.sym // .addr)@\(.obj // "-" |
	split("/") | last)"] | join(" ")' "$SCRATCH/out.jsonl" >"$SCRATCH/execve"
log "the children's execve entries: $(sort "$SCRATCH/execve" | uniq -c | tr '\n' ' ')"
n_named=$(grep -c '^c@fp_chain b@fp_chain a@fp_chain main@fp_chain$' "$SCRATCH/execve")
check "10 children's execve entries, each named c b a main in fp_chain ($n_named)" \
	[ "$n_named" = 10 -a "$(grep -c . "$SCRATCH/execve")" = 10 ]

# After the exec, the children are fp_chain_altid: not named from the copy.
jq -r --argjson p "$parent" 'select(.pid != $p and .comm == "fp_chain_altid" and
	.fields.prev_state == 1) | .user_stack[] | .obj // "-"' "$SCRATCH/out.jsonl" >"$SCRATCH/new"
log "fp_chain_altid's frames: $(sort "$SCRATCH/new" | uniq -c | tr '\n' ' ')"
n_new=$(grep -c "/fp_chain_altid$" "$SCRATCH/new")
# Each child sleeps 0.3 s: most are read while they run (one gone first
# has its frames unnamed, as any short-lived process in this mode; at
# least one child's 30 sleeps, 4 frames each, on a loaded machine).
check "the children's sleeps after the exec have frames in fp_chain_altid ($n_new)" \
	[ "$n_new" -ge 120 ]
check "none of those frames is named from fp_chain, the parent's program" \
	eval "! grep -q '/fp_chain$' '$SCRATCH/new'"
forked=$(sed -n 's/.* maps_from_parent=\([0-9]*\).*/\1/p' "$SCRATCH/err" | tail -n 1)
check "children met with their parent's maps, counted (maps_from_parent=${forked:-none})" \
	[ "${forked:-0}" -ge 10 ]
finish
