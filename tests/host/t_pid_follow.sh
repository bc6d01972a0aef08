#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# -p follows the process, not the threads it had at start: a shell waits,
# the daemon starts with -p on it, then the shell execs fp_chain, which
# starts three threads. Every thread's events are there, with its own
# stack (thread i recurses i deep), and nothing else: not the `sleep`
# children the shell ran while waiting (the kernel follows them too, with
# event-fork), not the switches into the process from other tasks
# (set_event_pid records those): counted as other_processes. Then
# `trace-defer record -p` and `report -p` read later the same way.
. "$(dirname "$0")/lib.sh"

GO="$SCRATCH/go"
start_waiting() {	# OUT: a shell that execs fp_chain threads once $GO exists
	rm -f "$GO"
	bash -c 'while [ ! -e "$1" ]; do sleep 0.05; done; exec "$0" threads 3 5 40' \
		"$FP_CHAIN" "$GO" >"$1" &
	P=$!
	BG_PIDS+=("$P")
}

start_waiting "$SCRATCH/prog.out"
td_bg -p "$P" -o "$SCRATCH/out.jsonl" 2>"$SCRATCH/err"
check "the daemon starts tracing" wait_tracing
sleep 0.3
touch "$GO"
wait "$P"
sleep 0.5
kill -TERM "$D"
check "the daemon exits 0" wait_exit "$D" 100
check "... with status 0" [ "$WAIT_RC" = 0 ]
check "every stack id resolves" resolve "$SCRATCH/out.jsonl"
V1="$SCRATCH/out.v1.jsonl"
mapfile -t tids < <(sed -n 's/^fp_chain thread tid=\([0-9]*\) depth=.*/\1/p' "$SCRATCH/prog.out")
check "fp_chain started 3 threads" [ "${#tids[@]}" = 3 ]
for t in "${tids[@]}"; do
	depth=$(sed -n "s/^fp_chain thread tid=$t depth=//p" "$SCRATCH/prog.out")
	n=$(jq -r --argjson t "$t" 'select(.tid == $t) | .tid' "$V1" | wc -l)
	log "thread $t (depth $depth): $n events"
	check "thread $t, started after the daemon, has events" [ "$n" -ge 10 ]
	# Its user stacks: c, then rec x depth, then b, a (frame-pointer unwind).
	want="c $(for ((i = 0; i < depth; i++)); do printf 'rec '; done)b a"
	got=$(jq -r --argjson t "$t" 'select(.tid == $t and .status == "inplace") |
		[.user_stack[].sym] | map(select(. == "a" or . == "b" or . == "c" or
		. == "rec")) | join(" ")' "$V1" | sort | uniq -c | sort -rn | head -1 |
		sed 's/^ *[0-9]* //')
	check "thread $t's stack is its own: '$want' (got '$got')" [ "$got" = "$want" ]
done
check "only the process's events (pid $P)" [ "$(jq -r .pid "$V1" | sort -u)" = "$P" ]
other=$(grep -o 'other_processes=[0-9]*' "$SCRATCH/err" | tail -1 | cut -d= -f2)
log "dropped: other_processes=${other:-?}"
check "the sleep children's and other tasks' events were dropped and counted" \
	[ "${other:-0}" -gt 0 ]
# The per-status counts are of the events written, not of those dropped.
emitted=0
for s in stitched inplace no_user user_lost unwind_failed; do
	emitted=$((emitted + $(grep -o " $s=[0-9]*" "$SCRATCH/err" | tail -n 1 | cut -d= -f2)))
done
written=$(grep -o ' written=[0-9]*' "$SCRATCH/err" | tail -n 1 | cut -d= -f2)
check "statuses add up to the events written ($emitted, written=$written)" \
	[ "$emitted" = "${written:-x}" ]
check "instance removed" instance_gone

# Recorded, read later: the trace.dat holds what the kernel recorded
# (switches into the process too, as trace-cmd record -P's); report -p
# keeps the process's.
start_waiting "$SCRATCH/prog2.out"
"$TD" record -i "$NAME" --run-dir "$RUN_DIR" -p "$P" -o "$SCRATCH/p.dat" \
	2>"$SCRATCH/rec.err" &
R=$!
BG_PIDS+=("$R")
check "record starts tracing" wait_tracing
sleep 0.3
touch "$GO"
wait "$P"
sleep 0.5
kill -INT "$R"
check "record exits" wait_exit "$R" 300
check "... with status 0" [ "$WAIT_RC" = 0 ]
"$TD" report "$SCRATCH/p.dat" -p "$P" --json-layout=full -o "$SCRATCH/rep.jsonl" \
	2>"$SCRATCH/rep.err"
check "report -p exits 0" [ $? = 0 ]
n=$(jq -r 'select(.tid != .pid) | .tid' "$SCRATCH/rep.jsonl" | sort -u | wc -l)
check "report -p: the 3 threads started after the recording began ($n)" [ "$n" = 3 ]
check "report -p: only the process's events" \
	[ "$(jq -r .pid "$SCRATCH/rep.jsonl" | sort -u)" = "$P" ]
"$TD" report "$SCRATCH/p.dat" --json-layout=full -o "$SCRATCH/all.jsonl" 2>/dev/null
all=$(wc -l <"$SCRATCH/all.jsonl")
mine=$(wc -l <"$SCRATCH/rep.jsonl")
log "report: $all events, of them $mine of pid $P"
check "report without -p shows more (the kernel's selection)" [ "$all" -gt "$mine" ]
"$TD" report "$SCRATCH/p.dat" -p "$P" -v -o /dev/null 2>"$SCRATCH/rep-v.err"
rother=$(grep -o 'other_processes=[0-9]*' "$SCRATCH/rep-v.err" | tail -n 1 | cut -d= -f2)
remitted=0
for s in stitched inplace no_user user_lost unwind_failed; do
	remitted=$((remitted + $(grep -o " $s=[0-9]*" "$SCRATCH/rep-v.err" | tail -n 1 |
		cut -d= -f2)))
done
check "report -p -v: counts the others (other_processes=${rother:-none} = $all - $mine)" \
	[ "${rother:-x}" = $((all - mine)) ]
check "... and statuses of the events written only ($remitted = $mine)" [ "$remitted" = "$mine" ]
# A pid none of whose events the file holds (mistyped, or reused since):
# said as such, not taken for a file without user stacks.
"$TD" report "$SCRATCH/p.dat" -p 999999 -o "$SCRATCH/none.jsonl" 2>"$SCRATCH/none.err"
check "report -p of a pid not in the file exits 0, writes nothing" \
	[ $? = 0 -a ! -s "$SCRATCH/none.jsonl" ]
check "... and says no event of it is there" grep -q 'holds no event of the process given with -p' \
	"$SCRATCH/none.err"
check "... not that the file has no user stacks" \
	eval "! grep -q 'no user stack records' '$SCRATCH/none.err'"
finish
