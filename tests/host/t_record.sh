#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Recording a trace.dat: `trace-defer record -o FILE.dat` and --record next
# to the JSON output. trace-cmd report must read the file and show as many
# sched_switch events and user stacks as the daemon itself parsed, for the
# same run; without trace-cmd the raw sub-buffers are kept, the daemon
# says how to finish, and `record --recover` does.
. "$(dirname "$0")/lib.sh"

command -v trace-cmd >/dev/null || { fail "trace-cmd not installed"; finish; }
start_fp_chain 20

# The subcommand comes first.
td_record() { "$TD" record -i "$NAME" --run-dir "$RUN_DIR" "$@"; }
# Meanwhile: the names instance follows the same pids.
(for _ in $(seq 50); do
	cat "$TRACEFS/instances/$NAME-names/set_event_pid" > "$SCRATCH/a.names-pids" 2>/dev/null
	[ -s "$SCRATCH/a.names-pids" ] && break
	sleep 0.1
done) &
td_record -p "$FP_PID" -d 1.5 -o "$SCRATCH/a.dat" 2>"$SCRATCH/a.err"
rc=$?
wait $!
check "the names instance follows -p's process (its set_event_pid)" grep -qx "$FP_PID" "$SCRATCH/a.names-pids"
check "record exits 0 (got $rc)" [ "$rc" = 0 ]
check "trace.dat written" [ -s "$SCRATCH/a.dat" ]
check "says what it wrote" grep -q "wrote $SCRATCH/a.dat ([1-9][0-9]* sub-buffers)" "$SCRATCH/a.err"
check "scratch directory removed" [ -z "$(ls -d "$SCRATCH"/a.dat.raw.* 2>/dev/null)" ]
trace-cmd report "$SCRATCH/a.dat" >"$SCRATCH/a.report" 2>"$SCRATCH/a.report.err"
check "trace-cmd report reads it" [ $? = 0 ]
parsed=$(grep -o 'read: records=[0-9]* events=[0-9]*' "$SCRATCH/a.err" | sed 's/.*events=//')
switches=$(grep -c ' sched_switch: ' "$SCRATCH/a.report")
ustacks=$(grep -c ' user_stack: ' "$SCRATCH/a.report")
check "report: $switches sched_switch = $parsed parsed by the daemon" \
	[ "$switches" = "$parsed" -a "$switches" -gt 10 ]
check "report: a user stack per switch ($ustacks)" [ "$ustacks" = "$switches" ]
check "report: fp_chain's switches are there" grep -q "fp_chain:$FP_PID " "$SCRATCH/a.report"
check "instance removed" instance_gone

# Every file the daemon opens is close-on-exec (O_CLOEXEC, 02000000 in
# fdinfo's octal flags): trace-cmd, which it runs, must hold neither the
# instances' files (an instance cannot be removed while one is open) nor
# the recording's. Looked at while it runs, the names instance read.
"$TD" record -i "$NAME" --run-dir "$RUN_DIR" -p "$FP_PID" -d 2 -o "$SCRATCH/fd.dat" \
	2>"$SCRATCH/fd.err" &
td_pid=$!
for _ in $(seq 100); do
	ls -l "/proc/$td_pid/fd" 2>/dev/null | grep -q "instances/$NAME-names/per_cpu/" && break
	sleep 0.05
done
inherited="" names_fds=0
for fd in "/proc/$td_pid/fd/"*; do
	target=$(readlink "$fd") || continue
	n=${fd##*/}
	# Its own, not what this shell passed on (0, 1, 2, and any the harness gave).
	case $target in "$TRACEFS"/* | "$RUN_DIR"/* | "$SCRATCH"/*) ;; *) continue ;; esac
	[ "$n" -gt 2 ] || continue
	case $target in */instances/"$NAME"-names/per_cpu/*) names_fds=$((names_fds + 1)) ;; esac
	flags=$(awk '$1 == "flags:" { print $2 }' "/proc/$td_pid/fdinfo/$n" 2>/dev/null)
	[ -n "$flags" ] && ! (((8#$flags) & 8#2000000)) && inherited="$inherited $target"
done
wait $td_pid
rc=$?
check "record for its fds: exits 0 (got $rc)" [ "$rc" = 0 ]
check "the names instance's readers were open then ($names_fds)" [ "$names_fds" -gt 0 ]
check "every file the daemon opens is close-on-exec${inherited:+ (not:$inherited)}" \
	[ -z "$inherited" ]
check "instance removed" instance_gone

# --record next to live JSON: the same events in both.
td -p "$FP_PID" -d 1.5 -o "$SCRATCH/b.jsonl" --record "$SCRATCH/b.dat" 2>/dev/null
check "--record with -o exits 0" [ $? = 0 ]
json=$(grep -c '"type":"event"' "$SCRATCH/b.jsonl")
# The file also holds the switches into fp_chain from other tasks (set_event_pid).
dat=$(trace-cmd report "$SCRATCH/b.dat" 2>/dev/null |
	grep -c "fp_chain-$FP_PID *\[.* sched_switch: ")
check "JSON and trace.dat hold the same events of fp_chain ($json, $dat)" \
	[ "$json" = "$dat" -a "$json" -gt 10 ]

# Usage errors.
td_record -d 1 2>"$SCRATCH/c.err"
check "record without -o: status 2" [ $? = 2 ]
check "record without -o: says so" grep -q "give the trace.dat to write with -o" "$SCRATCH/c.err"
td_record -o "$SCRATCH/c1.dat" --record "$SCRATCH/c2.dat" -d 1 2>"$SCRATCH/c.err"
check "record with -o and --record: status 2 (got $?)" [ $? = 2 ]
check "record with -o and --record: says which is which" \
	grep -q "record: -o names the trace.dat; --record is the live daemon's" "$SCRATCH/c.err"
# A configuration file's output is JSON lines (the service's log), not the
# trace.dat: record without -o is refused, and writes nothing there.
echo "output = $SCRATCH/svc.jsonl" > "$SCRATCH/svc.conf"
td_record -c "$SCRATCH/svc.conf" -d 1 2>"$SCRATCH/c.err"
check "record -c CONF (its output set) without -o: status 2 (got $?)" [ $? = 2 ]
check "record -c CONF without -o: says the configuration's output is not it" \
	grep -q "with -o FILE.dat (the configuration's output is JSON lines" "$SCRATCH/c.err"
check "record -c CONF without -o: nothing written to the configuration's output" \
	[ ! -e "$SCRATCH/svc.jsonl" ]
# A directory as the trace.dat: refused before tracing, nothing made next to it.
mkdir "$SCRATCH/adir"
for target in "$SCRATCH/adir" "$SCRATCH/adir/" "$SCRATCH/nodir/"; do
	td_record -o "$target" -d 5 2>"$SCRATCH/c.err"
	rc=$?
	check "record -o $target: status 1 (got $rc)" [ "$rc" = 1 ]
	check "record -o $target: says it names a directory" \
		grep -q "cannot write the trace.dat to $target: it names a directory" "$SCRATCH/c.err"
done
td_record -o "$SCRATCH/nodir/x.dat" -d 5 2>"$SCRATCH/c.err"
check "record -o in a directory that is not there: status 1 (got $?)" [ $? = 1 ]
check "record -o in a directory that is not there: says which" \
	grep -q "cannot write the trace.dat to $SCRATCH/nodir/x.dat: its directory $SCRATCH/nodir: No such file" \
	"$SCRATCH/c.err"
check "no scratch directory made for them" \
	[ -z "$(ls -d "$SCRATCH"/adir.raw.* 2>/dev/null; ls -A "$SCRATCH/adir")" ]
check "instance removed" instance_gone

# No trace-cmd on PATH: raw files kept, the way out printed, status 1.
mkdir "$SCRATCH/bin"
PATH="$SCRATCH/bin" "$TD" record -i "$NAME" --run-dir "$RUN_DIR" -p "$FP_PID" -d 1 \
	-o "$SCRATCH/d.dat" 2>"$SCRATCH/d.err"
rc=$?
check "without trace-cmd: status 1 (got $rc)" [ "$rc" = 1 ]
check "without trace-cmd: raw sub-buffers kept" ls "$SCRATCH"/d.dat.raw.*/cpu0.raw
check "without trace-cmd: how to finish is printed" \
	grep -q "to retry: trace-defer record --recover $SCRATCH/d.dat.raw.* -o $SCRATCH/d.dat" \
	"$SCRATCH/d.err"
check "... and warned of at the start, before tracing" \
	sh -c "grep -n -e 'cannot run trace-cmd restore now' -e 'tracing 1 event' '$SCRATCH/d.err' |
		head -n 1 | grep -q 'cannot run trace-cmd restore now'"
check "instance removed" instance_gone
# ... and with trace-cmd back, that makes the trace.dat.
"$TD" record --recover "$SCRATCH"/d.dat.raw.* -o "$SCRATCH/d.dat" 2>"$SCRATCH/e.err"
check "recover once trace-cmd is back: status 0 (got $?)" [ $? = 0 ]
check "recover once trace-cmd is back: trace-cmd report reads it" \
	sh -c "trace-cmd report '$SCRATCH/d.dat' 2>/dev/null | grep -q 'fp_chain:$FP_PID '"

# trace-cmd failing half way through the trace.dat (the disk full, killed):
# the earlier file there left as it was, no part of a new one anywhere, the
# raw sub-buffers kept for the retry printed.
mkdir "$SCRATCH/badbin"
cat > "$SCRATCH/badbin/trace-cmd" <<EOF
#!/bin/sh
# restore -i HEAD -o OUT RAW...: fails, having written part of OUT
[ "\$2" = -i ] || exec $(command -v trace-cmd) "\$@"
echo partial > "\$5"
echo "fake trace-cmd: No space left on device" >&2
exit 1
EOF
chmod +x "$SCRATCH/badbin/trace-cmd"
echo OLD > "$SCRATCH/f.dat"
PATH="$SCRATCH/badbin:$PATH" "$TD" record -i "$NAME" --run-dir "$RUN_DIR" -p "$FP_PID" -d 1 \
	-o "$SCRATCH/f.dat" 2>"$SCRATCH/f.err"
rc=$?
check "trace-cmd failing half way: status 1 (got $rc)" [ "$rc" = 1 ]
check "trace-cmd failing half way: the earlier trace.dat left as it was" \
	[ "$(cat "$SCRATCH/f.dat")" = OLD ]
check "trace-cmd failing half way: no temporary file left" \
	[ -z "$(ls "$SCRATCH"/f.dat.tmp.* 2>/dev/null)" ]
check "trace-cmd failing half way: says so, with its log" \
	grep -q "fake trace-cmd: No space left on device" "$SCRATCH/f.err"
check "trace-cmd failing half way: raw sub-buffers kept" ls "$SCRATCH"/f.dat.raw.*/cpu0.raw
check "instance removed" instance_gone
"$TD" record --recover "$SCRATCH"/f.dat.raw.* -o "$SCRATCH/f.dat" 2>"$SCRATCH/f2.err"
check "... the retry printed makes it: status 0 (got $?)" [ $? = 0 ]
check "... trace-cmd report reads it" \
	sh -c "trace-cmd report '$SCRATCH/f.dat' 2>/dev/null | grep -q 'fp_chain:$FP_PID '"

# A second SIGINT while the trace.dat is built (a Ctrl-C again, trace-cmd
# taking long): trace-cmd stopped at once, the earlier file left as it
# was, no temporary file, the raw sub-buffers kept; status 1.
mkdir "$SCRATCH/slowbin"
cat > "$SCRATCH/slowbin/trace-cmd" <<EOF
#!/bin/sh
# restore -i HEAD -o OUT RAW...: writes part of OUT, then takes its time
[ "\$2" = -i ] || exec $(command -v trace-cmd) "\$@"
echo partial > "\$5"
echo \$\$ > "$SCRATCH/slow.pid"
exec sleep 60
EOF
chmod +x "$SCRATCH/slowbin/trace-cmd"
echo OLD > "$SCRATCH/g.dat"
PATH="$SCRATCH/slowbin:$PATH" "$TD" record -i "$NAME" --run-dir "$RUN_DIR" -p "$FP_PID" -d 60 \
	-o "$SCRATCH/g.dat" 2>"$SCRATCH/g.err" &
gpid=$!
BG_PIDS+=("$gpid")
check "second SIGINT: recording" wait_tracing
kill -INT "$gpid"
for _ in $(seq 150); do
	[ -s "$SCRATCH/slow.pid" ] && break
	sleep 0.1
done
check "second SIGINT: trace-cmd building the trace.dat" [ -s "$SCRATCH/slow.pid" ]
kill -INT "$gpid"
check "second SIGINT: the run ends within 3 s" wait_exit "$gpid" 30
check "second SIGINT: status 1 (got ${WAIT_RC:-})" [ "${WAIT_RC:-}" = 1 ]
check "second SIGINT: trace-cmd stopped too" \
	sh -c "! kill -0 $(cat "$SCRATCH/slow.pid" 2>/dev/null || echo 0) 2>/dev/null"
check "second SIGINT: the earlier trace.dat left as it was" [ "$(cat "$SCRATCH/g.dat")" = OLD ]
check "second SIGINT: no temporary file left" [ -z "$(ls "$SCRATCH"/g.dat.tmp.* 2>/dev/null)" ]
check "second SIGINT: says so, and how to finish" \
	grep -q "Interrupt: $SCRATCH/g.dat not written (trace-cmd stopped)" "$SCRATCH/g.err"
check "second SIGINT: raw sub-buffers kept" ls "$SCRATCH"/g.dat.raw.*/cpu0.raw
check "instance removed" instance_gone
rm -rf "$SCRATCH"/g.dat.raw.*

# A syscall recorded alone while more programs run, in bursts of 10, than
# the kernel's saved_cmdlines holds (1500 more than saved_cmdlines_size),
# all gone when the trace.dat is made: each is named in its command lines
# (so by trace-cmd report and trace-defer report) from the exec traced in
# the names instance. From the kernel's list alone 4,718 of 8,000 were
# (the rest "<...>"). And trace-cmd taking the headers at the start is not
# in the recording.
if [ -d "$TRACEFS/events/syscalls/sys_enter_openat" ]; then
	cp /bin/cat "$SCRATCH/td-shortlived"
	"$TD" record -i "$NAME" --run-dir "$RUN_DIR" -e syscalls:sys_enter_openat -d 60 \
		-o "$SCRATCH/n.dat" 2>"$SCRATCH/n.err" &	# not td_record: its own pid
	rpid=$!
	BG_PIDS+=("$rpid")
	check "names: recording a syscall alone" wait_tracing
	check "names: the names instance traces" \
		[ "$(cat "$TRACEFS/instances/$NAME-names/tracing_on" 2>/dev/null)" = 1 ]
	# Whether or not it is done by now: its events would be the file's.
	check "names: trace-cmd taking the headers is kept out (set_event_notrace_pid)" \
		grep -qx '[0-9][0-9]*' "$TRACEFS/instances/$NAME/set_event_notrace_pid"
	nprog=$(( ($(cat "$TRACEFS/saved_cmdlines_size") + 1500) / 10 * 10 ))
	pids=()
	exec 3>&1 >/dev/null	# no redirection in the children: they exec at once
	for i in $(seq $((nprog / 10))); do
		burst=()
		for j in $(seq 10); do
			"$SCRATCH/td-shortlived" /etc/hostname &
			burst+=($!)
		done
		wait "${burst[@]}"
		pids+=("${burst[@]}")
	done
	exec >&3 3>&-
	sleep 1
	kill -TERM "$rpid"
	check "names: record exits 0" wait_exit "$rpid" 150
	check "names: ... with status 0 ($WAIT_RC)" [ "$WAIT_RC" = 0 ]
	printf '%s\n' "${pids[@]}" > "$SCRATCH/n.pids"
	# named FILE: how many of the pids FILE ("PID NAME" lines) calls td-shortlived
	named() {
		awk 'NR == FNR { p[$1] = 1; next }
		     ($1 in p) && $2 == "td-shortlived" && !seen[$1]++ { n++ }
		     END { print n + 0 }' "$SCRATCH/n.pids" "$1"
	}
	# Read once: the names, and later what the recording must not hold.
	trace-cmd report "$SCRATCH/n.dat" >"$SCRATCH/n.tcr" 2>"$SCRATCH/n.tcr.err"
	tcrc=$?
	grep ' sys_enter_openat: ' "$SCRATCH/n.tcr" |
		sed -n 's/^ *\(.*\)-\([0-9]*\) *\[.*/\2 \1/p' | sort -u > "$SCRATCH/n.tc"
	"$TD" report "$SCRATCH/n.dat" -o - 2>/dev/null |
		jq -r 'select(.type == "event") | "\(.tid) \(.comm)"' | sort -u > "$SCRATCH/n.td"
	ntc=$(named "$SCRATCH/n.tc") ntd=$(named "$SCRATCH/n.td")
	nexec=$(sed -n 's/.* \([0-9]*\) program(s) named from their exec.*/\1/p' "$SCRATCH/n.err")
	log "named td-shortlived: trace-cmd report $ntc, trace-defer report $ntd of $nprog;" \
		"the run named ${nexec:-no} program(s) from their exec"
	check "names: trace-cmd report names all $nprog programs" [ "$ntc" = "$nprog" ]
	check "names: trace-defer report names all $nprog programs" [ "$ntd" = "$nprog" ]
	check "names: the run says it named them from their exec" [ "${nexec:-0}" -ge "$nprog" ]
	check "names: no event of trace-cmd taking the headers recorded" \
		[ "$tcrc" = 0 -a "$(awk '$2 == "trace-cmd"' "$SCRATCH/n.tc" | wc -l)" = 0 ]
	check "names: the names instance removed" instance_gone "$NAME-names"
	check "names: no exec event in the recording (trace-cmd report status $tcrc)" \
		eval '[ "$tcrc" = 0 ] && ! grep -q sched_process_exec "$SCRATCH/n.tcr"'
else
	fail "this kernel has no syscalls:sys_enter_openat event"
fi
finish
