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
# And a recording (--record) read after jit_sleep exited and removed its
# map: the copy the recording saved names the frames, and nothing else
# could (moved away, they stay raw; --perf-maps finds it again).
. "$(dirname "$0")/lib.sh"

JIT="$BUILD/progs/jit_sleep"
TD_EXTRA=()

# run_jit OUT MAPDIR MODE [LAUNCHER...]: the daemon around 60 sleeps of
# 10 ms through the JIT's code (MODE anon, or memfd). JPID is the pid
# jit_sleep saw (1 in a pid namespace); its events are found by its name.
# TD_EXTRA: more options for the daemon.
run_jit() {
	local out=$1 dir=$2 mode=$3
	shift 3
	td_bg -o "$SCRATCH/$out.jsonl" --json-layout=full "${TD_EXTRA[@]}" 2>"$SCRATCH/$out.err"
	check "$out: tracing" wait_tracing
	"$@" "$JIT" 10 60 "$dir" "$mode" >"$SCRATCH/$out.out"
	check "$out: jit_sleep exits 0" [ $? = 0 ]
	sleep 0.5
	kill -TERM "$D"
	check "$out: the daemon exits 0" eval 'wait_exit "$D" 100 && [ "$WAIT_RC" = 0 ]'
	read -r _ JPID CODE SIZE < <(sed -n 's/^jit_sleep pid=\([0-9]*\) code=\(0x[0-9a-f]*\) size=\([0-9]*\)/x \1 \2 \3/p' \
		"$SCRATCH/$out.out")
	sleep_frames "$SCRATCH/$out.jsonl" >"$SCRATCH/$out.frames"
}

# sleep_frames FILE.jsonl: the innermost user frame of jit_sleep's switches
# out of its sleeps (layout full).
sleep_frames() {
	jq -r 'select(.comm == "jit_sleep" and .event == "sched:sched_switch"
		and .fields.prev_state == 1 and (.user_stack | length) > 0) |
		.user_stack[0] | [.addr, .sym // "-", .off // "-", .obj // "-"] | @tsv' "$1"
}

# in_code ADDR: is ADDR inside the JIT's code?
in_code() { (( $1 >= CODE && $1 < CODE + SIZE )); }

# check_named OUT WHAT [MAP]: every frame of OUT's run in the JIT's code is
# named jit_sleeper from MAP (default /tmp/perf-JPID.map), at its offset.
# NO_DAEMON: OUT's frames come from a report, not from the live daemon.
check_named() {
	local out=$1 what=$2 map=${3:-/tmp/perf-$JPID.map} n=0 named=0 bad=
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
	[ -n "${NO_DAEMON:-}" ] && return
	check "$what: the counters count JIT frames named" \
		grep -qE 'names: .* jit_named=[1-9]' "$SCRATCH/$out.err"
	# The JIT's names and the files named are kept: the counters say how many.
	check "$what: the counters say what the symbolizer holds" \
		grep -qE 'held: processes=[0-9]+ objects=[1-9][0-9]* symtabs=[1-9][0-9]* strings=[1-9][0-9]* string_bytes=[1-9]' \
		"$SCRATCH/$out.err"
	check "$what: jit_sleep removed its map" [ ! -e "$map" ]
	# Made in the /tmp watched: opened at once by the watch's thread.
	[ "$map" = "/tmp/perf-$JPID.map" ] &&
		check "$what: the map was opened as it was made (jit_maps_watched)" \
			grep -qE 'names: .* jit_maps_watched=[1-9]' "$SCRATCH/$out.err"
}

# --- with the map ---------------------------------------------------------
run_jit named /tmp anon
check_named named "with the map"

# --- without one ----------------------------------------------------------
mkdir -p "$SCRATCH/nomap"
# jit_sleep's events alone: the counters then say nothing of other JITs
# that run on the machine with maps of their own (a JVM's, say).
TD_EXTRA=(--comm jit_sleep)
run_jit unnamed "$SCRATCH/nomap" anon
TD_EXTRA=()
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

# --- recorded, read after the process and its map are gone ----------------
rec="$SCRATCH/rec.dat"
maps="$rec.perf-maps"
TD_EXTRA=(--record "$rec")
run_jit recorded /tmp anon
TD_EXTRA=()
rec_jpid=$JPID	# the recording's JIT (later runs set JPID again)
check_named recorded "recording, live"
check "the recording saved jit_sleep's perf map, $maps/perf-$JPID.map" [ -s "$maps/perf-$JPID.map" ]
check "the counters count the perf maps saved" \
	grep -qE 'names: .* jit_maps_saved=[1-9][0-9]* jit_map_save_errors=0' "$SCRATCH/recorded.err"
"$TD" report "$rec" -o "$SCRATCH/rep.jsonl" --json-layout=full 2>"$SCRATCH/rep.err"
check "report of the recording exits 0" [ $? = 0 ]
sleep_frames "$SCRATCH/rep.jsonl" >"$SCRATCH/rep.frames"
NO_DAEMON=1 check_named rep "report, jit_sleep and its map gone" "$maps/perf-$JPID.map"

# Without the copies nothing names them: the copy is what did.
mv "$maps" "$SCRATCH/moved-maps"
"$TD" report "$rec" -o "$SCRATCH/rep2.jsonl" --json-layout=full 2>/dev/null
n=0 unnamed=0
while IFS=$'\t' read -r addr sym off obj; do
	in_code "$addr" || continue
	n=$((n + 1))
	[ "$sym" = - ] && unnamed=$((unnamed + 1))
done < <(sleep_frames "$SCRATCH/rep2.jsonl")
log "report without the saved maps: $n frames in the JIT's code, $unnamed unnamed"
check "report without the saved maps: frames in the JIT's code seen" [ "$n" -ge 30 ]
check "report without the saved maps: none named" [ "$unnamed" = "$n" ]

"$TD" report "$rec" --perf-maps "$SCRATCH/moved-maps" -o "$SCRATCH/rep3.jsonl" \
	--json-layout=full 2>/dev/null
sleep_frames "$SCRATCH/rep3.jsonl" >"$SCRATCH/rep3.frames"
NO_DAEMON=1 check_named rep3 "report --perf-maps DIR" "$SCRATCH/moved-maps/perf-$JPID.map"

"$TD" report "$rec" --perf-maps "$SCRATCH/no-such-dir" -o /dev/null 2>"$SCRATCH/rep4.err"
check "report --perf-maps with no such directory: status 2" [ $? = 2 ]
check "report --perf-maps with no such directory: says so" \
	grep -q -- "--perf-maps $SCRATCH/no-such-dir: No such file or directory" "$SCRATCH/rep4.err"

# --- trace-defer record, which names nothing: the map is saved all the same
"$TD" record -i "$NAME" --run-dir "$RUN_DIR" -o "$SCRATCH/rc.dat" 2>"$SCRATCH/rc.err" &
D=$!
BG_PIDS+=("$D")
check "record: tracing" wait_tracing
"$JIT" 10 60 /tmp anon >"$SCRATCH/rc.out"
sleep 0.5
kill -TERM "$D"
check "record: exits 0" eval 'wait_exit "$D" 150 && [ "$WAIT_RC" = 0 ]'
read -r _ JPID CODE SIZE < <(sed -n 's/^jit_sleep pid=\([0-9]*\) code=\(0x[0-9a-f]*\) size=\([0-9]*\)/x \1 \2 \3/p' \
	"$SCRATCH/rc.out")
check "record: saved jit_sleep's perf map" [ -s "$SCRATCH/rc.dat.perf-maps/perf-$JPID.map" ]
"$TD" report "$SCRATCH/rc.dat" -o "$SCRATCH/rc.jsonl" --json-layout=full 2>/dev/null
check "record: report exits 0" [ $? = 0 ]
sleep_frames "$SCRATCH/rc.jsonl" >"$SCRATCH/rc.frames"
NO_DAEMON=1 check_named rc "trace-defer record, then report" "$SCRATCH/rc.dat.perf-maps/perf-$JPID.map"

# --- short-lived JITs: exited long before their records are read ---------
# Ten runs of 2 sleeps of 5 ms, each leaving its map behind as Node and
# CPython do: the daemon reads their records after they exited (their
# /proc/PID/maps gone), names the frames from the maps left in /tmp and
# saves them; once those are removed, the report still names every one.
# short_named FILE.jsonl OBJDIR: "N NAMED" over the frames in each run's
# JIT code, named jit_sleeper from OBJDIR/perf-PID.map at their offset.
short_named() {
	jq -r 'select(.comm == "jit_sleep" and .event == "sched:sched_switch"
		and .fields.prev_state == 1 and (.user_stack | length) > 0) |
		[.pid, .user_stack[0].addr, .user_stack[0].sym // "-",
		 .user_stack[0].off // "-", .user_stack[0].obj // "-"] | @tsv' "$1" |
	awk -F'\t' -v dir="$2" '
		FILENAME != "-" { code[$1] = strtonum($2); size[$1] = $3; next }
		($1 in code) {
			a = strtonum($2)
			if (a < code[$1] || a >= code[$1] + size[$1]) next
			n++
			if ($3 == "jit_sleeper" && $4 == a - code[$1] &&
			    $5 == dir "/perf-" $1 ".map") named++
		}
		END { print n + 0, named + 0 }' "$SCRATCH/short.pids" -
}
short="$SCRATCH/short.dat"
td_bg -o "$SCRATCH/short.jsonl" --json-layout=full --record "$short" 2>"$SCRATCH/short.err"
check "short-lived: tracing" wait_tracing
for i in $(seq 10); do "$JIT" 5 2 /tmp anon keep; done >"$SCRATCH/short.out"
sleep 0.5
kill -TERM "$D"
check "short-lived: the daemon exits 0" eval 'wait_exit "$D" 100 && [ "$WAIT_RC" = 0 ]'
sed -n 's/^jit_sleep pid=\([0-9]*\) code=\(0x[0-9a-f]*\) size=\([0-9]*\)/\1\t\2\t\3/p' \
	"$SCRATCH/short.out" >"$SCRATCH/short.pids"
check "short-lived: ten runs" [ "$(wc -l <"$SCRATCH/short.pids")" = 10 ]
read -r n named < <(short_named "$SCRATCH/short.jsonl" /tmp)
log "short-lived, live: $n frames in the runs' JIT code, $named named from the maps left in /tmp"
check "short-lived, live: frames in the JIT code seen (at least 10 of 20)" [ "$n" -ge 10 ]
check "short-lived, live: every one named" [ "$named" = "$n" ]
check "short-lived, live: read after they exited (the counters say processes_gone)" \
	grep -qE 'names: .* processes_gone=[1-9]' "$SCRATCH/short.err"
cut -f1 "$SCRATCH/short.pids" | while read -r p; do rm -f "/tmp/perf-$p.map"; done
"$TD" report "$short" -o "$SCRATCH/short-rep.jsonl" --json-layout=full 2>/dev/null
check "short-lived: report exits 0" [ $? = 0 ]
read -r n named < <(short_named "$SCRATCH/short-rep.jsonl" "$short.perf-maps")
log "short-lived, report: $n frames in the runs' JIT code, $named named from the saved maps"
check "short-lived, report: frames in the JIT code seen (at least 10 of 20)" [ "$n" -ge 10 ]
check "short-lived, report: every one named from the recording's copies" [ "$named" = "$n" ]

# Where the copies should go is taken (a file): they stay in the scratch
# directory, which says so, and report --perf-maps reads them there.
touch "$SCRATCH/pf.dat.perf-maps"
TD_EXTRA=(--record "$SCRATCH/pf.dat")
run_jit pf /tmp anon
TD_EXTRA=()
check "perf maps' place taken: the recording says where they stay" \
	grep -q "pf.dat.perf-maps is not a directory: the JIT perf maps stay in $SCRATCH/pf.dat.raw" \
	"$SCRATCH/pf.err"
kept=$(ls -d "$SCRATCH"/pf.dat.raw.*/perf-maps 2>/dev/null)
check "perf maps' place taken: kept in the scratch directory" [ -s "$kept/perf-$JPID.map" ]
check "perf maps' place taken: the file there left alone" [ -f "$SCRATCH/pf.dat.perf-maps" ]
"$TD" report "$SCRATCH/pf.dat" --perf-maps "$kept" -o "$SCRATCH/pf-rep.jsonl" --json-layout=full \
	2>/dev/null
sleep_frames "$SCRATCH/pf-rep.jsonl" >"$SCRATCH/pf-rep.frames"
NO_DAEMON=1 check_named pf-rep "report --perf-maps of the maps kept" "$kept/perf-$JPID.map"

# A new recording to the same file replaces the copies of the old one.
mkdir -p "$maps"
cp "$SCRATCH/moved-maps/perf-$rec_jpid.map" "$maps/"
touch "$maps/keep.txt"
check "the old recording's perf map put back" [ -s "$maps/perf-$rec_jpid.map" ]
td -d 0.5 -o /dev/null --record "$rec" 2>/dev/null
check "a new recording to the same path exits 0" [ $? = 0 ]
check "a new recording removes the old recording's perf maps" \
	[ ! -e "$maps/perf-$rec_jpid.map" ]
check "... and nothing else" [ -e "$maps/keep.txt" ]

finish
