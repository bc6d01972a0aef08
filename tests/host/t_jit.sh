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
# anonymous memory, and nothing is made up.
. "$(dirname "$0")/lib.sh"

JIT="$BUILD/progs/jit_sleep"

# run_jit OUT MAPDIR: the daemon around 60 sleeps of 10 ms through the JIT's code.
run_jit() {
	td_bg -o "$SCRATCH/$1.jsonl" --json-layout=full 2>"$SCRATCH/$1.err"
	check "$1: tracing" wait_tracing
	"$JIT" 10 60 "$2" >"$SCRATCH/$1.out"
	check "$1: jit_sleep exits 0" [ $? = 0 ]
	sleep 0.5
	kill -TERM "$D"
	check "$1: the daemon exits 0" eval 'wait_exit "$D" 100 && [ "$WAIT_RC" = 0 ]'
	read -r _ JPID CODE SIZE < <(sed -n 's/^jit_sleep pid=\([0-9]*\) code=\(0x[0-9a-f]*\) size=\([0-9]*\)/x \1 \2 \3/p' \
		"$SCRATCH/$1.out")
	# The innermost user frame of jit_sleep's switches out of its sleeps.
	jq -r --argjson p "${JPID:-0}" 'select(.tid == $p and .event == "sched:sched_switch"
		and .fields.prev_state == 1 and (.user_stack | length) > 0) |
		.user_stack[0] | [.addr, .sym // "-", .off // "-", .obj // "-"] | @tsv' \
		"$SCRATCH/$1.jsonl" >"$SCRATCH/$1.frames"
}

# in_code ADDR: is ADDR inside the JIT's code?
in_code() { (( $1 >= CODE && $1 < CODE + SIZE )); }

# --- with the map ---------------------------------------------------------
run_jit named /tmp
map="/tmp/perf-$JPID.map"
n=0 named=0 bad=
while IFS=$'\t' read -r addr sym off obj; do
	in_code "$addr" || continue
	n=$((n + 1))
	if [ "$sym" = jit_sleeper ] && [ "$obj" = "$map" ] && [ "$off" = $((addr - CODE)) ]; then
		named=$((named + 1))
	elif [ "$((n - named))" -le 3 ]; then
		bad+=" $addr:$sym+$off:$obj"
	fi
done <"$SCRATCH/named.frames"
log "with the map: $n switches in the JIT's code, $named named jit_sleeper${bad:+; other:$bad}"
check "jit_sleep slept in its JIT code (at least 30 of 60 switches seen there)" [ "$n" -ge 30 ]
check "every such frame is named jit_sleeper, from $map, at its offset" [ "$named" = "$n" ]
check "the counters count JIT frames named" grep -qE 'names: .* jit_named=[1-9]' "$SCRATCH/named.err"
check "jit_sleep removed its map" [ ! -e "$map" ]

# --- without one ----------------------------------------------------------
mkdir -p "$SCRATCH/nomap"
run_jit unnamed "$SCRATCH/nomap"
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

finish
