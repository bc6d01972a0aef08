#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The benchmark's replay as a test: synthesized captures of a loaded
# machine (bench/capgen.c: late events, stacks never written, empty stacks,
# idle CPUs) through every stitching stage of the library's pipeline. The
# generator knows which status each event must get; replay exits non-zero
# when a stage's counts differ, so this runs the stitcher against an oracle
# that is not the stitcher, at rates and spacings the VM cannot produce.
# Several seeds and shapes: few and many tasks, dense and sparse events.
# The stack records are the kernel series' current ones (tgid, file
# identity, file records as the kernel repeats them).
. "$(dirname "$0")/lib.sh"

REPLAY="$BUILD/bench/replay"
[ -x "$REPLAY" ] || { echo "missing $REPLAY (make bench-progs)"; exit 1; }
check "event formats from this machine's tracefs" "$TOP/bench/formats.sh" "$SCRATCH/formats"

# field FILE STAGE KEY: a figure of the replay's JSON ("capture" for STAGE: the generator's).
field() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
o = d["capture"] if sys.argv[2] == "capture" else d["stages"][sys.argv[2]]
print(o[sys.argv[3]])' "$@"
}

run() {	# run NAME REPLAY-ARGS...
	local name=$1 out="$SCRATCH/$1.json"
	shift
	if ! "$REPLAY" --formats "$SCRATCH/formats" --prog "$FP_CHAIN" --repeat 1 \
		--stages stitch,symbol,json_interned,pprof "$@" >"$out" 2>"$SCRATCH/$name.err"; then
		fail "$name: replay $*: $(tail -n 1 "$SCRATCH/$name.err")"
		return
	fi
	pass "$name: every stage's statuses as generated ($(field "$out" stitch stitched) stitched," \
		"$(field "$out" stitch user_lost) user_lost, $(field "$out" capture late_events) late)"
	check "$name: some events came after their stack" \
		[ "$(field "$out" capture late_events)" -gt 0 ]
	check "$name: some stacks were never written" \
		[ "$(field "$out" stitch user_lost)" -gt 0 ]
	# Lost stacks are known from the task's next entry, not 60 s later
	# (the statuses above show no stack that came was taken for lost).
	check "$name: events of lost stacks let go early ($(field "$out" stitch superseded))" \
		[ "$(field "$out" stitch superseded)" -gt 0 -a \
		  "$(field "$out" stitch superseded)" -le "$(field "$out" stitch user_lost)" ]
	check "$name: no record left unjoined or bad" \
		[ "$(field "$out" stitch orphan_records)$(field "$out" stitch bad_records)" = 00 ]
	check "$name: every user frame named" \
		[ "$(field "$out" symbol user_frames_named)" = 1.0 ]
	# The series' current records: frames are named from the file
	# identity they carry, never through /proc.
	check "$name: file records written ($(field "$out" capture file_records))" \
		[ "$(field "$out" capture file_records)" -gt 0 ]
	check "$name: every user frame named from its file id, no maps read" \
		[ "$(field "$out" symbol user_frames_by_file_id)" = "$(field "$out" symbol user_frames)" \
		  -a "$(field "$out" symbol sym_maps_reads)" = 0 ]
	check "$name: interned JSON written without error, stacks once" \
		[ "$(field "$out" json_interned json_errors)" = 0 -a \
		  "$(field "$out" json_interned json_stack_lines)" -lt "$(field "$out" stitch stitched)" ]
	check "$name: pprof counted every event" \
		[ "$(field "$out" pprof pprof_events)" = "$(field "$out" capture events)" ]
}

for seed in 1 2 3; do
	run "seed$seed" --events 40000 --seed "$seed"
done
run two-tasks --events 30000 --procs 2
run many-tasks-sparse --events 20000 --procs 16 --gap-ns 1000,200000
run dense --events 40000 --gap-ns 3000,8000
# Fed as the live daemon feeds it: rounds of both CPUs' pages merged by
# record time, the records past each round's cut kept for the next (large
# rounds, and rounds of one page a CPU: a cut in nearly every page).
run rounds --events 40000 --seed 4 --batch 64
run rounds-small-dense --events 40000 --seed 5 --gap-ns 3000,8000 --batch 1

# Bad input: a clear message and a non-zero exit, not a crash.
"$REPLAY" --formats "$SCRATCH/nowhere" --prog "$FP_CHAIN" --events 10 >/dev/null 2>"$SCRATCH/bad.err"
rc=$?
check "missing formats directory: exit 1 (rc $rc)" [ "$rc" = 1 ]
check "missing formats directory: says so" grep -q 'cannot read the formats' "$SCRATCH/bad.err"
"$REPLAY" --formats "$SCRATCH/formats" >/dev/null 2>&1
check "no --prog: usage, exit 2" [ "$?" = 2 ]
"$REPLAY" --formats "$SCRATCH/formats" --prog "$FP_CHAIN" --procs 17 >/dev/null 2>"$SCRATCH/procs.err"
rc=$?
check "--procs 17: exit 2 with the range ($(cat "$SCRATCH/procs.err"))" [ "$rc" = 2 ]
"$REPLAY" --formats "$SCRATCH/formats" --prog "$FP_CHAIN" --batch 0 >/dev/null 2>&1
check "--batch 0: usage, exit 2" [ "$?" = 2 ]
"$REPLAY" --help >"$SCRATCH/help.out" 2>&1
rc=$?
check "--help: exit 0 (rc $rc)" [ "$rc" = 0 ]
check "--help: says each option, --stages too" grep -q -- '--stages LIST' "$SCRATCH/help.out"
finish
