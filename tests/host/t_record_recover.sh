#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A recording that never reaches its end: `trace-defer record` killed with
# SIGKILL while short-lived programs run. Its sub-buffers stay in
# FILE.dat.raw.XXXXXX with the headers taken at the start; the next
# recording to the same file says so; `trace-defer record --recover`
# makes a trace.dat that trace-cmd report and trace-defer report read,
# with the programs' events, after they all exited. Also: a sub-buffer cut
# by the kill, a recovery after a reboot (the saved headers), and the
# errors.
. "$(dirname "$0")/lib.sh"

command -v trace-cmd >/dev/null || { fail "trace-cmd not installed"; finish; }
td_record() { "$TD" record -i "$NAME" --run-dir "$RUN_DIR" "$@"; }

# killed_run FILE: a recording to FILE killed while 30 programs and a JIT
# (jit_sleep, which removes its perf map at exit) come and go.
killed_run() {
	"$TD" record -i "$NAME" --run-dir "$RUN_DIR" -o "$1" -d 120 2>"$1.err" &
	local pid=$! i	# the daemon's own pid: a function would run in a subshell
	BG_PIDS+=("$pid")
	# This run's own start: a killed run before it left its instance on.
	for i in $(seq 100); do
		compgen -G "$1.raw.*/head.dat" >/dev/null && break
		sleep 0.1
	done
	compgen -G "$1.raw.*/head.dat" >/dev/null ||
		fail "recording saved no headers in 10 s: $(tail -n 2 "$1.err")"
	wait_tracing || fail "recording did not start: $(tail -n 2 "$1.err")"
	: >"$1.pids"
	for i in $(seq 30); do
		"$FP_CHAIN" sleep 1 2 >/dev/null &
		echo $! >>"$1.pids"
		wait $!
	done
	# A JIT whose map the recording keeps; it removes its own at exit.
	"$BUILD/progs/jit_sleep" 10 30 >"$1.jit"
	sleep 1.5	# the loop reads every CPU at least every 200 ms
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
}

killed_run "$SCRATCH/k.dat"
dir=$(ls -d "$SCRATCH"/k.dat.raw.* 2>/dev/null)
check "killed: no trace.dat" [ ! -e "$SCRATCH/k.dat" ]
check "killed: one scratch directory left ($dir)" [ -n "$dir" -a "$(echo "$dir" | wc -l)" = 1 ]
check "killed: headers saved at the start" [ -s "$dir/head.dat" ]
check "killed: info says the trace.dat meant" grep -qx "output $SCRATCH/k.dat" "$dir/info"
jpid=$(sed -n 's/^jit_sleep pid=\([0-9]*\) .*/\1/p' "$SCRATCH/k.dat.jit")
check "killed: the JIT's perf map kept in the scratch directory" \
	[ -n "$jpid" -a -s "$dir/perf-maps/perf-$jpid.map" ]
check "killed: raw files and headers private (0600)" \
	[ "$(stat -c %a "$dir/cpu0.raw" "$dir/head.dat" "$dir/info" | sort -u)" = 600 ]
nnames=$(grep -c ' fp_chain$' "$dir/names" 2>/dev/null)
check "killed: the names learned from exec kept as they came ($nnames fp_chain)" \
	[ "${nnames:-0}" -ge 30 ]
check "killed: the names instance left behind" instance_exists "$NAME-names"
# The kill may cut a write; make sure one is cut: part of a sub-buffer at the end.
head -c 100 /dev/urandom >> "$dir/cpu0.raw"

# The next recording to the same file points at it, and cleans the instance.
td_record -o "$SCRATCH/k.dat" -d 0.5 2>"$SCRATCH/next.err"
check "next recording exits 0" [ $? = 0 ]
check "next recording names the leftover and the way out" \
	grep -q "$dir holds the sub-buffers .*trace-defer record --recover $dir -o OTHER.dat" \
	"$SCRATCH/next.err"
check "next recording: stale instance removed" grep -q "removing stale tracefs instance" \
	"$SCRATCH/next.err"
check "instance removed" instance_gone
check "names instance removed" instance_gone "$NAME-names"

# The meant trace.dat exists now (the second run's): not replaced unasked.
"$TD" record --recover "$dir" 2>"$SCRATCH/r0.err"
check "recover onto an existing file: status 2 (got $?)" [ $? = 2 ]
check "recover onto an existing file: says -o" grep -q "exists; give the trace.dat" \
	"$SCRATCH/r0.err"
check "recover onto an existing file: directory kept" [ -d "$dir" ]

# The names the run learned, as the trace.dat's command lines must begin:
# each pid's last, by pid. And a DIR/tracing a run killed while it made the
# trace.dat left behind: made again.
awk '{ n[$1] = $0 } END { for (p in n) print n[p] }' "$dir/names" | sort -n > "$SCRATCH/r.learned"
mkdir "$dir/tracing" && echo "1 stale" > "$dir/tracing/saved_cmdlines"
"$TD" record --recover "$dir" -o "$SCRATCH/r.dat" 2>"$SCRATCH/r.err"
check "recover: status 0 (got $?)" [ $? = 0 ]
trace-cmd dump --cmd-lines "$SCRATCH/r.dat" 2>/dev/null |
	sed -n '/Saved command lines/,$p' | sed 1d > "$SCRATCH/r.cmdlines"
check "recover: the command lines begin with the names learned ($(wc -l < "$SCRATCH/r.learned"))" \
	[ -s "$SCRATCH/r.learned" -a "$(head -n "$(wc -l < "$SCRATCH/r.learned")" \
		"$SCRATCH/r.cmdlines")" = "$(cat "$SCRATCH/r.learned")" ]
check "recover: says what it wrote" grep -q "wrote $SCRATCH/r.dat" "$SCRATCH/r.err"
check "recover: scratch directory removed" [ ! -e "$dir" ]
check "recover: the run's JIT perf map next to the trace.dat it made" \
	[ -s "$SCRATCH/r.dat.perf-maps/perf-$jpid.map" ]
"$TD" report "$SCRATCH/r.dat" -o "$SCRATCH/r.jsonl" --json-layout=full 2>/dev/null
njit=$(jq -r --argjson p "$jpid" --arg m "$SCRATCH/r.dat.perf-maps/perf-$jpid.map" \
	'select(.pid == $p and (.user_stack | length) > 0) | .user_stack[0] |
	 select(.sym == "jit_sleeper" and .obj == $m) | .sym' "$SCRATCH/r.jsonl" | wc -l)
log "report of the recovered file: $njit stacks of jit_sleep named from its saved map"
check "recover: report names jit_sleep's JIT code from the map the run saved" [ "$njit" -ge 10 ]
trace-cmd report "$SCRATCH/r.dat" >"$SCRATCH/r.report" 2>"$SCRATCH/r.report.err"
check "trace-cmd report reads it" [ $? = 0 ]
check "trace-cmd report: nothing on stderr ($(head -c 80 "$SCRATCH/r.report.err"))" \
	[ ! -s "$SCRATCH/r.report.err" ]
# This run's 30 (an fp_chain of another test on the machine is not counted).
tc_pids=$(grep -o 'fp_chain-[0-9]*' "$SCRATCH/r.report" | cut -d- -f2 | sort -u |
	grep -cxF -f "$SCRATCH/k.dat.pids")
# Named from the names the run kept, though gone from the kernel's list.
check "trace-cmd report: the short-lived programs' events, named ($tc_pids of 30 pids)" \
	[ "$tc_pids" = 30 ]
"$TD" report "$SCRATCH/r.dat" -o "$SCRATCH/r.jsonl" 2>"$SCRATCH/r.td.err"
check "trace-defer report reads it" [ $? = 0 ]
# A cut sub-buffer left in is read as one: libtracecmd says "bad page read".
check "trace-defer report: no bad sub-buffer" sh -c "! grep -q 'bad page' '$SCRATCH/r.td.err'"
read -r td_pids td_ev td_stack < <(python3 - "$SCRATCH/r.jsonl" <<'EOF'
import json, sys
pids, n, st = set(), 0, 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("type") == "event" and d.get("comm") == "fp_chain":
        pids.add(d["pid"]); n += 1; st += d.get("stack") is not None
print(len(pids), n, st)
EOF
)
check "trace-defer report: fp_chain events of $td_pids pids" [ "${td_pids:-0}" -ge 25 ]
check "trace-defer report: every one with its stacks ($td_stack of $td_ev)" \
	[ "${td_ev:-0}" -gt 0 -a "$td_stack" = "$td_ev" ]

# After a reboot: the headers saved at the start, not the running system's.
# Recorded with a relative path, recovered from elsewhere, the directory
# given as a shell completes it (trailing /): the file goes next to it.
rm -f "$SCRATCH/k.dat"
(cd "$SCRATCH" && killed_run k.dat)
dir=$(ls -d "$SCRATCH"/k.dat.raw.*)
sed -i 's/^boot_id .*/boot_id 00000000-0000-0000-0000-000000000000/' "$dir/info"
# With a configuration whose output (JSON lines) is not the trace.dat.
echo '{"old":1}' > "$SCRATCH/svc.jsonl"
echo "output = $SCRATCH/svc.jsonl" > "$SCRATCH/svc.conf"
(cd / && "$TD" record --recover "$dir/" -c "$SCRATCH/svc.conf") 2>"$SCRATCH/b.err"
check "recover after a reboot: status 0 (got $?)" [ $? = 0 ]
check "recover after a reboot: the meant file, next to the directory" \
	[ -s "$SCRATCH/k.dat" -a ! -e /k.dat ]
check "recover -c CONF: the configuration's output left as it was" \
	[ "$(cat "$SCRATCH/svc.jsonl")" = '{"old":1}' ]
check "recover after a reboot: says it used the saved headers" \
	grep -q "headers saved when the recording started" "$SCRATCH/b.err"
# Headers of before the programs ran: their names are in the events' fields
# only (sched_switch's prev_comm), not in the saved cmdlines.
check "recover after a reboot: trace-cmd report reads it" \
	sh -c "trace-cmd report '$SCRATCH/k.dat' 2>/dev/null | grep -q ' fp_chain:[0-9]'"

# After a reboot without saved headers: nothing to read them with, kept.
rm -f "$SCRATCH/k.dat"
killed_run "$SCRATCH/k.dat"
dir=$(ls -d "$SCRATCH"/k.dat.raw.*)
sed -i 's/^boot_id .*/boot_id 00000000-0000-0000-0000-000000000000/' "$dir/info"
rm "$dir/head.dat"
"$TD" record --recover "$dir" 2>"$SCRATCH/n.err"
check "no headers, other boot: status 1 (got $?)" [ $? = 1 ]
check "no headers, other boot: says why" grep -q "booted since it was recorded" "$SCRATCH/n.err"
check "no headers, other boot: directory kept" [ -s "$dir/cpu0.raw" ]
check "no headers, other boot: no trace.dat" [ ! -e "$SCRATCH/k.dat" ]

# The last killed run's instance: what --cleanup (or the next start) is for.
td --cleanup
check "--cleanup after the last killed run: instance removed" instance_gone
check "--cleanup after the last killed run: names instance removed" instance_gone "$NAME-names"

# A running recording's directory is left alone: --recover refuses it, and
# another recording to the same file (another instance) does not call it
# unfinished.
"$TD" record -i "$NAME" --run-dir "$RUN_DIR" -o "$SCRATCH/live.dat" -d 60 2>"$SCRATCH/live-a.err" &
lpid=$!
BG_PIDS+=("$lpid")
wait_tracing
ldir=$(ls -d "$SCRATCH"/live.dat.raw.*)
"$TD" record --recover "$ldir" -o "$SCRATCH/stolen.dat" 2>"$SCRATCH/live.err"
check "running recording: --recover refuses, status 2 (got $?)" [ $? = 2 ]
check "running recording: says why" grep -q "is in use: a running recording's" "$SCRATCH/live.err"
check "running recording: its files untouched" [ -e "$ldir/cpu0.raw" -a ! -e "$SCRATCH/stolen.dat" ]
"$TD" record -i "$NAME-b" --run-dir "$RUN_DIR" -o "$SCRATCH/live.dat" -d 0.3 \
	2>"$SCRATCH/live-b.err" -p "$lpid"
rc=$?
check "another recording to the same file: exits 0 (got $rc), not calling it unfinished" \
	eval '[ "$rc" = 0 ] && ! grep -q "did not finish" "$SCRATCH/live-b.err"'
kill -INT "$lpid"
check "running recording: ends with its trace.dat" \
	eval 'wait_exit "$lpid" && [ "$WAIT_RC" = 0 ] && [ -s "$SCRATCH/live.dat" ]'

# A names instance a killed recording left: the next run of the instance
# name removes it though it records nothing.
killed_run "$SCRATCH/s.dat"
check "killed again: the names instance left behind" instance_exists "$NAME-names"
td -d 0.3 -o /dev/null 2>"$SCRATCH/s.err"
check "a run that records nothing: exits 0 ($?)" [ $? = 0 ]
check "... removes the names instance left" instance_gone "$NAME-names"
check "... and says so" grep -q "removing stale tracefs instance '$NAME-names'" "$SCRATCH/s.err"
rm -rf "$SCRATCH"/s.dat.raw.*

# Usage errors.
mkdir "$SCRATCH/notraw"
cp -r "$dir" "$SCRATCH/renamed"
"$TD" record --recover "$SCRATCH/renamed" 2>"$SCRATCH/u0.err"
check "recover of a renamed directory without -o: status 2 (got $?)" [ $? = 2 ]
check "recover of a renamed directory without -o: asks for -o" grep -q "give the trace.dat" \
	"$SCRATCH/u0.err"
"$TD" record --recover "$SCRATCH/notraw" 2>"$SCRATCH/u1.err"
check "recover of another directory: status 2 (got $?)" [ $? = 2 ]
check "recover of another directory: says so" grep -q "not a trace-defer recording" \
	"$SCRATCH/u1.err"
"$TD" --recover "$dir" 2>"$SCRATCH/u2.err"
check "--recover without record: status 2 (got $?)" [ $? = 2 ]
"$TD" record --recover "$dir" -o - 2>"$SCRATCH/u3.err"
check "recover to stdout: status 2 (got $?)" [ $? = 2 ]
# -o is checked as every output is: never a program, never in the directory.
cp /bin/true "$SCRATCH/prog"
"$TD" record --recover "$dir" -o "$SCRATCH/prog" 2>"$SCRATCH/u5.err"
check "recover -o a program: status 2 (got $?)" [ $? = 2 ]
check "recover -o a program: says so" grep -q "is a program: not overwritten" "$SCRATCH/u5.err"
check "recover -o a program: the program left as it was" cmp -s /bin/true "$SCRATCH/prog"
"$TD" record --recover "$dir" -o "$dir/cpu0.raw" 2>"$SCRATCH/u6.err"
check "recover -o DIR/cpu0.raw: status 2 (got $?)" [ $? = 2 ]
check "recover -o DIR/cpu0.raw: says it is in the directory" \
	grep -q "is in $dir, the scratch directory the trace.dat is made of" "$SCRATCH/u6.err"
check "recover -o DIR/cpu0.raw: the directory left as it was" \
	[ -s "$dir/cpu0.raw" -a -e "$dir/info" ]
# A recording's options mean nothing to --recover: refused, not ignored.
"$TD" record --recover "$dir" -o "$SCRATCH/o.dat" -d 1 2>"$SCRATCH/u4.err"
check "recover with -d: status 2 (got $?)" [ $? = 2 ]
check "recover with -d: says -d is a recording's" \
	grep -q "record --recover takes only -o (and -c, -v, -q): -d is for a recording" "$SCRATCH/u4.err"
check "recover with -d: nothing written" [ ! -e "$SCRATCH/o.dat" ]
check "instance removed" instance_gone
finish
