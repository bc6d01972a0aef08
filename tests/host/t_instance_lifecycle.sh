#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The instance is gone after a normal exit, after SIGTERM (which drains),
# after SIGKILL followed by a restart (stale detection, not for a marker of
# an earlier boot) or by --cleanup; a
# second daemon cannot take a live one's instance; an instance of the same
# name that trace-defer did not make is left alone; SIGHUP reopens the
# output, unless the terminal hung up, which stops the daemon; SIGUSR1
# prints counters; a daemon whose instance another program turned off
# stops with status 3; a refused run says nothing of its mode,
# and neither a refused run nor one that fails before tracing touches the
# outputs (a running daemon's, or the files of an earlier run); a live
# instance cannot be removed by --cleanup --force, even before its readers open.
. "$(dirname "$0")/lib.sh"

start_fp_chain 10

# --- SIGTERM: drain, write, remove.
td_bg -p "$FP_PID" -o "$SCRATCH/term.jsonl" 2>"$SCRATCH/term.err"
check "daemon turned tracing on" wait_tracing
check "lock file names the daemon" [ "$(cut -d' ' -f1 "$RUN_DIR/$NAME.lock")" = "$D" ]
sleep 1
kill -TERM "$D"
check "daemon exits after SIGTERM" wait_exit "$D"
check "exit status 0 after SIGTERM (got $WAIT_RC)" [ "$WAIT_RC" = 0 ]
check "records written before exit" [ "$(wc -l <"$SCRATCH/term.jsonl")" -ge 20 ]
check "instance removed after SIGTERM" instance_gone
check "marker cleared after SIGTERM" marker_clear

# --- a second daemon while one runs: refused, first one untouched.
td_bg -p "$FP_PID" -o "$SCRATCH/first.jsonl" 2>/dev/null
check "first daemon tracing" wait_tracing
td -d 1 -o "$SCRATCH/second.jsonl" 2>"$SCRATCH/second.err"
rc=$?
check "second daemon refused with status 3 (got $rc)" [ "$rc" = 3 ]
check "refusal says who holds it" grep -q "in use by a running trace-defer (pid $D" \
	"$SCRATCH/second.err"
# On a kernel without deferred user stacks, auto says it falls back to the
# in-place mode: not for a run refused before it starts.
check "... and no fallback notice for the refused run" \
	[ "$(grep -c 'no deferred user stacks' "$SCRATCH/second.err")" = 0 ]
check "first daemon's instance still there" instance_exists
check "first daemon still tracing" [ "$(cat "$TRACEFS/instances/$NAME/tracing_on")" = 1 ]

# --- A refused start leaves the outputs alone: the running daemon's JSON
# file is not cut (truncated under its writer, it would start with a hole
# of NULs), a whole-run file from before is not emptied.
for i in $(seq 100); do [ -s "$SCRATCH/first.jsonl" ] && break; sleep 0.1; done
echo "last good profile" >"$SCRATCH/keep.pb.gz"
td -d 1 -o "$SCRATCH/first.jsonl" --pprof "$SCRATCH/keep.pb.gz" 2>/dev/null
rc=$?
check "refused start on the first's outputs: status 3 (got $rc)" [ "$rc" = 3 ]
sleep 1
check "... the first's JSON file not cut" [ "$(head -c 1 "$SCRATCH/first.jsonl")" = "{" ]
check "... a whole-run file from before left as it was" \
	grep -qx "last good profile" "$SCRATCH/keep.pb.gz"

# --- The same name from another run directory (no lock to see): a second
# daemon and --cleanup both find the instance read by a live process and
# leave it alone; before, --cleanup turned its tracing off under it.
"$TD" -i "$NAME" --run-dir "$SCRATCH/run2" -d 1 -o /dev/null 2>"$SCRATCH/other.err"
rc=$?
check "other run dir: second daemon refused with status 3 (got $rc)" [ "$rc" = 3 ]
check "... saying which process reads it" grep -q "is in use: pid $D (trace-defer)" \
	"$SCRATCH/other.err"
check "... and no fallback notice for the refused run" \
	[ "$(grep -c 'no deferred user stacks' "$SCRATCH/other.err")" = 0 ]
"$TD" -i "$NAME" --run-dir "$SCRATCH/run2" --cleanup 2>"$SCRATCH/other-clean.err"
rc=$?
check "other run dir: --cleanup refuses with status 3 (got $rc)" [ "$rc" = 3 ]
check "... saying which process reads it" grep -q "is in use: pid $D (trace-defer)" \
	"$SCRATCH/other-clean.err"
check "first daemon still tracing after both" \
	[ "$(cat "$TRACEFS/instances/$NAME/tracing_on")" = 1 ]
check "... its events still enabled" \
	[ "$(cat "$TRACEFS/instances/$NAME/events/enable")" != 0 ]
# --- SIGUSR1 and SIGHUP on the first daemon.
for i in $(seq 50); do [ -s "$SCRATCH/first.jsonl" ] && break; sleep 0.1; done
mv "$SCRATCH/first.jsonl" "$SCRATCH/first.jsonl.1"
kill -HUP "$D"
sleep 1.5
check "SIGHUP: output reopened and written" [ -s "$SCRATCH/first.jsonl" ]
check "SIGHUP: rotated file kept its records" [ -s "$SCRATCH/first.jsonl.1" ]

# --- SIGKILL: instance left behind, the next start cleans it.
{ kill -KILL "$D"; wait "$D"; } 2>/dev/null
check "instance left behind by SIGKILL" instance_exists
check "stale instance still has its event enabled" \
	grep -q 1 "$TRACEFS/instances/$NAME/events/sched/sched_switch/enable"
check "marker still names the dead daemon" [ "$(cut -d' ' -f1 "$RUN_DIR/$NAME.lock")" = "$D" ]
td -p "$FP_PID" -d 1 -o "$SCRATCH/restart.jsonl" 2>"$SCRATCH/restart.err"
rc=$?
check "restart after SIGKILL exits 0 (got $rc)" [ "$rc" = 0 ]
check "restart says it removed the stale instance" \
	grep -q "removing stale tracefs instance '$NAME' left by trace-defer pid $D" \
	"$SCRATCH/restart.err"
check "restart captured records" [ -s "$SCRATCH/restart.jsonl" ]
check "instance removed after restart" instance_gone

# --- A marker of an earlier boot (a --run-dir that outlived a reboot)
# names no owner: the instance of that name now, made since (at boot with
# trace_instance=, say), is someone else's, and is left alone.
mkdir "$TRACEFS/instances/$NAME"
echo "999999 12345 00000000-0000-0000-0000-000000000000" >"$RUN_DIR/$NAME.lock"
td -d 1 -o /dev/null 2>"$SCRATCH/oldboot.err"
rc=$?
check "marker of another boot: start refused with status 3 (got $rc)" [ "$rc" = 3 ]
check "... the instance not taken as stale" grep -q "was not made by trace-defer" \
	"$SCRATCH/oldboot.err"
check "... and left alone" instance_exists
rmdir "$TRACEFS/instances/$NAME"
: >"$RUN_DIR/$NAME.lock"

# --- A stale instance read by a process whose open files cannot be seen
# (here: another uid's, and no CAP_SYS_PTRACE to look): its removal is
# tried as it is, and when the kernel refuses (a file is open) it is left
# as it was, still tracing, rather than turned off first.
mkdir "$TRACEFS/instances/$NAME"
echo 1 >"$TRACEFS/instances/$NAME/events/sched/sched_switch/enable"
echo "999999 1 $(cat /proc/sys/kernel/random/boot_id)" >"$RUN_DIR/$NAME.lock"
python3 -c 'import os, sys, time
f = open(sys.argv[1])
os.setgid(65534); os.setuid(65534)
time.sleep(30)' "$TRACEFS/instances/$NAME/tracing_on" &
reader=$!
# the file is open once the reader has changed uid
for i in $(seq 100); do
	[ "$(awk '/^Uid:/ {print $2}' "/proc/$reader/status" 2>/dev/null)" = 65534 ] && break
	sleep 0.1
done
setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace \
	"$TD" -i "$NAME" --run-dir "$RUN_DIR" -d 1 -o /dev/null 2>"$SCRATCH/hidden.err"
rc=$?
check "stale instance with a hidden reader: refused with status 3 (got $rc)" [ "$rc" = 3 ]
check "... saying a file of it is open" grep -q "a file of it is open" "$SCRATCH/hidden.err"
check "... its tracing left on" [ "$(cat "$TRACEFS/instances/$NAME/tracing_on")" = 1 ]
check "... its event left enabled" \
	grep -q 1 "$TRACEFS/instances/$NAME/events/sched/sched_switch/enable"
kill "$reader"; wait "$reader" 2>/dev/null
td --cleanup 2>/dev/null
check "... removed once the reader is gone" instance_gone

# --- SIGKILL then --cleanup.
td_bg -p "$FP_PID" -o /dev/null 2>/dev/null
check "daemon tracing" wait_tracing
kill -USR1 "$D"
sleep 0.5
{ kill -KILL "$D"; wait "$D"; } 2>/dev/null
check "instance left behind by SIGKILL" instance_exists
td --cleanup -v 2>"$SCRATCH/cleanup.err"
rc=$?
check "--cleanup exits 0 (got $rc)" [ "$rc" = 0 ]
check "--cleanup removed the instance" instance_gone
check "--cleanup cleared the marker" marker_clear
td --cleanup
check "--cleanup with nothing to do exits 0" [ $? = 0 ]
"$TD" -i "$NAME" --run-dir "$SCRATCH/never" --cleanup
check "--cleanup with nothing to do in a new run dir exits 0 (got $?)" [ $? = 0 ]
check "... and makes no run dir" [ ! -e "$SCRATCH/never" ]

# --- --cleanup --force from another run directory between the instance's
# mkdir and the readers' open: the daemon holds a file of its instance
# open from the mkdir, so the kernel refuses to remove it. strace holds
# the daemon before it opens its event's filter (delay_enter: no file of
# the instance open then but the one it holds) while the cleanup runs.
# Without the held file the instance went, and the daemon failed (3).
# Not -p: the daemon keeps set_event_pid open, which holds it too.
filter=$TRACEFS/instances/$NAME/events/sched/sched_switch/filter
strace -f -o /dev/null -P "$filter" -e trace=openat \
	-e inject=openat:delay_enter=3000000:when=1 \
	"$TD" -i "$NAME" --run-dir "$RUN_DIR" -e sched:sched_switch --comm fp_chain -d 1 \
	-o "$SCRATCH/window.jsonl" 2>"$SCRATCH/window.err" &
W=$!
BG_PIDS+=("$W")
for i in $(seq 200); do instance_exists && break; sleep 0.02; done
check "set-up held: instance made, tracing not on yet" \
	[ "$(cat "$TRACEFS/instances/$NAME/tracing_on" 2>/dev/null)" = 0 ]
"$TD" -i "$NAME" --run-dir "$SCRATCH/run2" --cleanup --force 2>"$SCRATCH/window-clean.err"
rc=$?
check "--cleanup --force in the set-up window refuses with status 3 (got $rc)" [ "$rc" = 3 ]
check "... the instance still there" instance_exists
wait "$W"
rc=$?
check "the daemon it was held in finishes its run (status $rc)" [ "$rc" = 0 ]
check "... and traced" [ "$(wc -l <"$SCRATCH/window.jsonl" 2>/dev/null)" -ge 1 ]
check "... its instance removed at exit" instance_gone

# --- SIGUSR1 output (own run, stderr captured).
td_bg -p "$FP_PID" -o /dev/null 2>"$SCRATCH/usr1.err"
wait_tracing
sleep 0.5
kill -USR1 "$D"
sleep 0.5
check "SIGUSR1 prints counters" grep -q "trace-defer: counters after" "$SCRATCH/usr1.err"
kill -INT "$D"
check "SIGINT stops the daemon" wait_exit "$D"
check "exit status 0 after SIGINT (got $WAIT_RC)" [ "$WAIT_RC" = 0 ]
check "instance removed after SIGINT" instance_gone

# --- another program turns the instance off, or its events (trace-cmd
# record -B NAME does both on leaving), or the one event asked for (the
# events that only name tasks stay on): the daemon would read nothing
# more, looking healthy; it stops with a tracefs error instead.
for knob in tracing_on events/enable events/sched/sched_switch/enable; do
	td_bg -p "$FP_PID" -o /dev/null 2>"$SCRATCH/changed.err"
	check "$knob: daemon tracing" wait_tracing
	echo 0 >"$TRACEFS/instances/$NAME/$knob"
	check "$knob turned off: the daemon stops" wait_exit "$D" 150
	check "$knob turned off: status 3 (got $WAIT_RC)" [ "$WAIT_RC" = 3 ]
	check "$knob turned off: says what changed" grep -q \
		"instance '$NAME' was changed by another program" "$SCRATCH/changed.err"
	[ "$knob" = events/sched/sched_switch/enable ] &&
		check "$knob turned off: names the event" grep -q \
			"its event sched:sched_switch is disabled" "$SCRATCH/changed.err"
	check "$knob turned off: instance removed" instance_gone
	check "$knob turned off: marker cleared" marker_clear
done

# --- an instance of our name that trace-defer did not make: not touched.
mkdir "$TRACEFS/instances/$NAME"
td -d 1 -o /dev/null 2>"$SCRATCH/foreign.err"
rc=$?
check "foreign instance: refused with status 3 (got $rc)" [ "$rc" = 3 ]
check "foreign instance: message explains" grep -q "was not made by trace-defer" \
	"$SCRATCH/foreign.err"
check "foreign instance left alone" instance_exists
check "foreign instance: says how to remove it" grep -q "cleanup --force -i $NAME" \
	"$SCRATCH/foreign.err"
# The unit's ExecStopPost runs --cleanup after every stop, a refused start
# included: another program's instance is not its to remove.
echo 1 >"$TRACEFS/instances/$NAME/events/sched/sched_wakeup/enable"
td --cleanup -q 2>"$SCRATCH/foreign-clean.err"
rc=$?
check "foreign instance: --cleanup refuses with status 3 (got $rc)" [ "$rc" = 3 ]
check "foreign instance: --cleanup says why, even with -q" grep -q \
	"was not made by trace-defer.*--force" "$SCRATCH/foreign-clean.err"
check "foreign instance: --cleanup left it, its event still on" \
	grep -q 1 "$TRACEFS/instances/$NAME/events/sched/sched_wakeup/enable"
td --force 2>"$SCRATCH/force-alone.err"
check "--force without --cleanup: status 2 (got $?)" [ $? = 2 ]
td --cleanup --force
check "--cleanup --force removes it on request" instance_gone

# --- A run that fails before it traces leaves the files from before as
# they were: an unknown event (refused before the instance is made) and a
# filter the kernel refuses (after it is).
for spec in nosuch:nosuch 'sched:sched_switch:no_such_field == 1'; do
	echo '{"kept":1}' >"$SCRATCH/prev.jsonl"
	echo "last good" >"$SCRATCH/prev.svg"
	td -e "$spec" -d 1 -o "$SCRATCH/prev.jsonl" -F "$SCRATCH/prev.svg" 2>/dev/null
	rc=$?
	check "failed start ($spec): status 3 (got $rc)" [ "$rc" = 3 ]
	check "... the JSON file from before left as it was" \
		grep -qx '{"kept":1}' "$SCRATCH/prev.jsonl"
	check "... the flame graph from before left as it was" \
		grep -qx "last good" "$SCRATCH/prev.svg"
	check "... no instance left" instance_gone
done

# --- The terminal hangs up (an ssh session that drops): the daemon stops
# as on SIGTERM, rather than trace unseen until killed; a SIGHUP with the
# terminal still there reopens the outputs (checked above).
res=$(python3 "$TOP/tests/host/pty_hangup.py" "$TD" "$NAME" "$RUN_DIR" "$SCRATCH/hup.jsonl" \
	"$TRACEFS")
check "terminal hung up: the daemon exits 0 (got '$res')" [ "$res" = "exit 0" ]
check "terminal hung up: instance removed" instance_gone
check "terminal hung up: marker cleared" marker_clear
res=$(python3 "$TOP/tests/host/pty_hangup.py" "$TD" "$NAME" "$RUN_DIR" "$SCRATCH/hup.jsonl" \
	"$TRACEFS" nohup)
check "under nohup: the daemon outlives the hang-up (got '$res')" \
	[ "$res" = "outlived, exit 0" ]
check "under nohup: instance removed at the end" instance_gone

# --- normal exit with --duration.
td -p "$FP_PID" -d 1 -o /dev/null 2>/dev/null
check "--duration run exits 0" [ $? = 0 ]
check "instance removed after --duration" instance_gone

# --- stdout reader going away stops the daemon cleanly.
timeout 20 bash -c "'$TD' -i '$NAME' --run-dir '$RUN_DIR' -p $FP_PID -o - 2>'$SCRATCH/head.err' | head -n 3 >'$SCRATCH/head.out'; exit \${PIPESTATUS[0]}"
check "piped into head: exit 0 (got $?)" [ $? = 0 ]
check "piped into head: 3 lines seen" [ "$(wc -l <"$SCRATCH/head.out")" = 3 ]
check "piped into head: no write error said" \
	[ -z "$(grep -v '^trace-defer:   ' "$SCRATCH/head.err" | grep -i -e error -e dropped)" ]
for i in $(seq 50); do instance_exists || break; sleep 0.1; done
check "piped into head: daemon gone, instance removed" instance_gone
finish
