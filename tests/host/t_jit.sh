#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# JIT-compiled code is named from the perf map its JIT writes: jit_sleep
# copies a function that sleeps into anonymous executable memory, writes
# /tmp/perf-PID.map ("START SIZE jit_sleeper"), as V8, CPython's -X perf
# and the JVM's agents do, and sleeps through it 60 times. The innermost
# user frame of its switches out of the sleep lies in that memory, which
# no ELF file names: each must be named jit_sleeper, its object the map,
# its offset that of the address in the code; the counters say so. Then
# the same program with the map left out: the frames stay unnamed, in
# anonymous memory, and nothing is made up. Last, the program in a pid
# namespace of its own, as in a container: it is pid 1 there and writes
# /tmp/perf-1.map, which names its frames, not a file of our pid 1. And
# the code mapped from a memfd, written through one view and run from the
# other as .NET's W^X does: a file, but no ELF file; the map names it.
. "$(dirname "$0")/lib.sh"

JIT="$BUILD/progs/jit_sleep"

# run_jit OUT MAPDIR MODE [LAUNCHER...]: the daemon around 60 sleeps of
# 10 ms through the JIT's code (MODE anon, or memfd). JPID is the pid
# jit_sleep saw (1 in a pid namespace); its events are found by its name.
run_jit() {
	local out=$1 dir=$2 mode=$3
	shift 3
	td_bg -o "$SCRATCH/$out.jsonl" --json-layout=full 2>"$SCRATCH/$out.err"
	check "$out: tracing" wait_tracing
	"$@" "$JIT" 10 60 "$dir" "$mode" >"$SCRATCH/$out.out"
	check "$out: jit_sleep exits 0" [ $? = 0 ]
	sleep 0.5
	kill -TERM "$D"
	check "$out: the daemon exits 0" eval 'wait_exit "$D" 100 && [ "$WAIT_RC" = 0 ]'
	read -r _ JPID CODE SIZE < <(sed -n 's/^jit_sleep pid=\([0-9]*\) code=\(0x[0-9a-f]*\) size=\([0-9]*\)/x \1 \2 \3/p' \
		"$SCRATCH/$out.out")
	# The innermost user frame of jit_sleep's switches out of its sleeps.
	jq -r 'select(.comm == "jit_sleep" and .event == "sched:sched_switch"
		and .fields.prev_state == 1 and (.user_stack | length) > 0) |
		.user_stack[0] | [.addr, .sym // "-", .off // "-", .obj // "-"] | @tsv' \
		"$SCRATCH/$out.jsonl" >"$SCRATCH/$out.frames"
}

# in_code ADDR: is ADDR inside the JIT's code?
in_code() { (( $1 >= CODE && $1 < CODE + SIZE )); }

# check_named OUT WHAT: every frame of OUT's run in the JIT's code is named
# jit_sleeper from /tmp/perf-JPID.map, at its offset.
check_named() {
	local out=$1 what=$2 map="/tmp/perf-$JPID.map" n=0 named=0 bad=
	while IFS=$'\t' read -r addr sym off obj; do
		in_code "$addr" || continue
		n=$((n + 1))
		if [ "$sym" = jit_sleeper ] && [ "$obj" = "$map" ] &&
			[ "$off" = $((addr - CODE)) ]; then
			named=$((named + 1))
		elif [ "$((n - named))" -le 3 ]; then
			bad+=" $addr:$sym+$off:$obj"
		fi
	done <"$SCRATCH/$out.frames"
	log "$what: $n switches in the JIT's code, $named named jit_sleeper${bad:+; other:$bad}"
	check "$what: jit_sleep slept in its JIT code (at least 30 of 60 switches seen there)" \
		[ "$n" -ge 30 ]
	check "$what: every such frame is named jit_sleeper, from $map, at its offset" \
		[ "$named" = "$n" ]
	check "$what: the counters count JIT frames named" \
		grep -qE 'names: .* jit_named=[1-9]' "$SCRATCH/$out.err"
	check "$what: jit_sleep removed its map" [ ! -e "$map" ]
}

# --- with the map ---------------------------------------------------------
run_jit named /tmp anon
check_named named "with the map"

# --- without one ----------------------------------------------------------
mkdir -p "$SCRATCH/nomap"
run_jit unnamed "$SCRATCH/nomap" anon
n=0 unnamed=0
while IFS=$'\t' read -r addr sym off obj; do
	in_code "$addr" || continue
	n=$((n + 1))
	[ "$sym" = - ] && [ "$obj" = "[anon]" ] && unnamed=$((unnamed + 1))
done <"$SCRATCH/unnamed.frames"
log "without a map in /tmp: $n switches in the JIT's code, $unnamed unnamed in [anon]"
check "without a map: frames in the JIT's code seen" [ "$n" -ge 30 ]
check "without a map: none named, each in [anon]" [ "$unnamed" = "$n" ]
check "without a map: the counters name no JIT frame" \
	grep -qE 'names: .* jit_named=0( |$)' "$SCRATCH/unnamed.err"

# --- in a pid namespace of its own ----------------------------------------
if unshare --pid --fork true 2>/dev/null; then
	run_jit pidns /tmp anon unshare --pid --fork
	check "in a pid namespace, jit_sleep is its pid 1" [ "$JPID" = 1 ]
	check_named pidns "in a pid namespace"
else
	# Root on Linux can: a failure, not a pass.
	fail "unshare --pid --fork does not work here"
fi

# --- mapped from a memfd --------------------------------------------------
run_jit memfd /tmp memfd
check_named memfd "in a memfd"

finish
