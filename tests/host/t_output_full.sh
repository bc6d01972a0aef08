#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The disk under the JSON output fills up, then gets room again: what an
# always-on daemon writing to /var/log meets sooner or later. The file must
# stay readable (whole lines, every stack id it uses defined), the counters
# must say what reached it and what did not, the daemon must say so in
# words and go on writing once there is room, and exit non-zero at the end
# (events were lost). `trace-defer report` into a full disk stops with the
# file whole and a non-zero exit. A file a killed run left cut mid-line is
# cut back to whole lines by the next run that appends to it.
. "$(dirname "$0")/lib.sh"

PINGPONG="$BUILD/progs/pingpong"
[ -x "$PINGPONG" ] || { fail "missing $PINGPONG (run make progs)"; finish; }

FULL="$SCRATCH/full"
mkdir -p "$FULL"
mount -t tmpfs -o size=64k tmpfs "$FULL" || { fail "cannot mount a tmpfs on $FULL"; finish; }
trap 'umount -l "$FULL" 2>/dev/null; cleanup' EXIT

# Lines of @1 that are not JSON texts (python3: the json module is the oracle).
bad_lines() {
	python3 -c 'import json, sys
n = 0
for line in open(sys.argv[1]):
    try:
        json.loads(line)
    except ValueError:
        n += 1
print(n)' "$1"
}
# A counter of the daemon's last report on stderr file @1.
counter() { grep -o " $2=[0-9]*" "$1" | tail -n 1 | cut -d= -f2; }

# About 4,000 switches a second: a few MiB in all.
bg "$PINGPONG" 30 0 1 1000 >/dev/null
td_bg -d 6 -o "$FULL/o.jsonl" --stats-interval 0 2>"$SCRATCH/o.err"
check "tracing started" wait_tracing
# 64 KiB hold a few hundred lines: full within the first second.
sleep 2.5
mount -o remount,size=64m "$FULL"
wait_exit "$D" 150
check "daemon exits 1 after dropping lines (got ${WAIT_RC:-none})" [ "${WAIT_RC:-0}" = 1 ]
check "instance removed" instance_gone
grep -E 'cannot write|writing again' "$SCRATCH/o.err" | sed 's/^/    /'

check "says the disk is full and how many lines were dropped" \
	grep -Eq "cannot write $FULL/o.jsonl: No space left on device: [0-9]+ event lines dropped" \
	"$SCRATCH/o.err"
check "... and that the file was cut back to its last whole line" \
	grep -q 'the file cut back to its last whole line' "$SCRATCH/o.err"
check "says when it writes again, once there is room" \
	grep -Eq "$FULL/o.jsonl: writing again \([0-9]+ event lines dropped so far\)" \
	"$SCRATCH/o.err"
size=$(stat -c %s "$FULL/o.jsonl")
check "... and did write again (file of $size bytes, over 64 KiB)" [ "$size" -gt 65536 ]
check "every line of the file is a whole JSON text" [ "$(bad_lines "$FULL/o.jsonl")" = 0 ]
cp "$FULL/o.jsonl" "$SCRATCH/o.jsonl"
check "every stack id the file uses is defined before (td-json-resolve)" resolve "$SCRATCH/o.jsonl"

events=$(grep -c '"type":"event"' "$FULL/o.jsonl")
written=$(counter "$SCRATCH/o.err" written)
errors=$(counter "$SCRATCH/o.err" write_errors)
emitted=0
for s in stitched inplace no_user user_lost unwind_failed; do
	emitted=$((emitted + $(counter "$SCRATCH/o.err" "$s")))
done
check "written= counts the event lines in the file ($written, $events in it)" \
	[ "${written:-x}" = "$events" ]
check "write_errors= counts the others (${written:-?} + ${errors:-?} = $emitted emitted)" \
	test $((written + errors)) = "$emitted" -a "${errors:-0}" -gt 0

# trace-defer report into a disk already full: stops, file whole, exit 1.
"$TD" record -i "$NAME" --run-dir "$RUN_DIR" -d 1.5 -o "$SCRATCH/r.dat" 2>"$SCRATCH/rec.err"
check "recorded a trace.dat to report" [ -s "$SCRATCH/r.dat" ]
umount "$FULL" && mount -t tmpfs -o size=64k tmpfs "$FULL"
"$TD" report "$SCRATCH/r.dat" -o "$FULL/r.jsonl" 2>"$SCRATCH/r.err"
rc=$?
grep 'cannot write' "$SCRATCH/r.err" | sed 's/^/    /'
check "report into a full disk exits 1 (got $rc)" [ "$rc" = 1 ]
check "... says so" grep -q "cannot write $FULL/r.jsonl: No space left on device" "$SCRATCH/r.err"
check "... and never that it writes again: nothing went out since" \
	[ "$(grep -c "writing again" "$SCRATCH/r.err")" = 0 ]
check "... and leaves whole lines only" [ "$(bad_lines "$FULL/r.jsonl")" = 0 ]
cp "$FULL/r.jsonl" "$SCRATCH/r.jsonl"
check "... whose stack ids are all defined" resolve "$SCRATCH/r.jsonl"

# logrotate's SIGHUP finds the JSON file's directory gone (moved, not made
# again yet): events are counted as write errors, the file is opened again
# at a tick once the directory is back, and the run exits 1.
umount "$FULL"
mkdir -p "$SCRATCH/rot/d"
td_bg -d 6 -o "$SCRATCH/rot/d/e.jsonl" --stats-interval 0 2>"$SCRATCH/rot.err"
check "tracing to be rotated" wait_tracing
sleep 1
mv "$SCRATCH/rot/d" "$SCRATCH/rot/old"
kill -HUP "$D"
sleep 1.5
mkdir "$SCRATCH/rot/d"
sleep 1.5
kill -HUP "$D"
check "exits once the rotation failed (got ${WAIT_RC:-none})" wait_exit "$D" 100
check "... with status 1" [ "${WAIT_RC:-0}" = 1 ]
grep -E 'cannot open|open again' "$SCRATCH/rot.err" | sed 's/^/    /'
check "says the reopen failed" grep -q "cannot open output $SCRATCH/rot/d/e.jsonl" "$SCRATCH/rot.err"
check "... and when the file is open again" grep -q "e.jsonl: open again, writing" "$SCRATCH/rot.err"
rot_lines=$(grep -c '"type":"event"' "$SCRATCH/rot/d/e.jsonl")
check "the new file got events after the gap ($rot_lines)" [ "${rot_lines:-0}" -gt 0 ]
errors=$(counter "$SCRATCH/rot.err" write_errors)
emitted=0
for s in stitched inplace no_user user_lost unwind_failed; do
	emitted=$((emitted + $(counter "$SCRATCH/rot.err" "$s")))
done
written=$(counter "$SCRATCH/rot.err" written)
events=$(cat "$SCRATCH/rot/old/e.jsonl" "$SCRATCH/rot/d/e.jsonl" | grep -c '"type":"event"')
check "events of the gap are write_errors ($errors), written the rest ($written = $events)" \
	test "${errors:-0}" -gt 0 -a "$written" = "$events" -a $((written + errors)) = "$emitted"
mount -t tmpfs -o size=64k tmpfs "$FULL"

# Files written whole at exit (pprof, folded): on a full disk the one
# already there (from an earlier run, or SIGHUP) stays as it was, not cut.
umount "$FULL" && mount -t tmpfs -o size=64k tmpfs "$FULL"
echo previous > "$FULL/p.pb.gz"
echo previous > "$FULL/f.folded"
dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null
td -d 1 --pprof "$FULL/p.pb.gz" --folded "$FULL/f.folded" 2>"$SCRATCH/p.err"
rc=$?
grep 'cannot write' "$SCRATCH/p.err" | sed 's/^/    /'
check "pprof and folded on a full disk: exit 1 (got $rc)" [ "$rc" = 1 ]
check "... says the pprof file was left as it was" \
	grep -q "cannot write $FULL/p.pb.gz: No space left on device (the file there, if any, is left as it was)" \
	"$SCRATCH/p.err"
check "... and the folded file" grep -q "cannot write $FULL/f.folded: No space left" "$SCRATCH/p.err"
check "... both still hold what they held" \
	[ "$(cat "$FULL/p.pb.gz" "$FULL/f.folded")" = "$(printf 'previous\nprevious')" ]
check "... and no temporary file is left" [ -z "$(ls "$FULL" | grep '\.tmp\.')" ]

# A run that died between two writes left half a line (stdio writes 64 KiB
# at a time): the next --append run cuts it before writing, rather than
# glue its first line (a stack definition) to it.
a="$SCRATCH/append.jsonl"
printf '{"v":2,"type":"stack","id":1,"kernel_stack":[],"user_stack":[]}\n' >"$a"
printf '{"v":2,"type":"stack","id":2,"kernel_st' >>"$a"
td -d 1 -a -o "$a" 2>"$SCRATCH/append.err"
rc=$?
check "append to a file cut mid-line: exit 0 (got $rc)" [ "$rc" = 0 ]
check "... says it cut the unfinished line" \
	grep -q "$a ended in an unfinished line (a run that died wrote it): 39 bytes cut" \
	"$SCRATCH/append.err"
check "... every line a JSON text ($(bad_lines "$a") not)" [ "$(bad_lines "$a")" = 0 ]
check "... the earlier whole line kept, the new run's lines after it" \
	[ "$(head -n 1 "$a" | cut -c1-30)" = '{"v":2,"type":"stack","id":1,"' -a \
	  "$(sed -n 2p "$a" | cut -c1-30)" = '{"v":2,"type":"stack","id":1,"' ]
check "... every stack id used defined before" resolve "$a"
finish
