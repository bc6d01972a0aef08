#!/bin/bash
# Guest side of the kernel series tests (issue 2): deferred user stacks
# through the option and the trigger, checked against fp_chain's symbols.
# Usage: guest-kernel.sh BUILD_DIR
build=$1
. "$(dirname "$0")/lib.sh"
fp=$build/progs/fp_chain
td=$build/trace-defer
[ -x "$fp" ] || { fail setup "no $fp"; exit 1; }

# --- option: main -> a -> b -> c -> nanosleep ------------------------------
d=$(new_instance opt)
echo 1 > "$d/events/sched/sched_switch/enable"
echo 1 > "$d/events/sched/sched_process_exit/enable"
echo 1 > "$d/events/syscalls/sys_enter_exit_group/enable"
echo 1 > "$d/options/userstacktrace_delay"
pid=$("$fp" sleep 30 3 | sed -n 's/^fp_chain pid=//p')
echo 0 > "$d/events/sched/sched_switch/enable"
echo 0 > "$d/events/sched/sched_process_exit/enable"
echo 0 > "$d/events/syscalls/sys_enter_exit_group/enable"
echo 0 > "$d/options/userstacktrace_delay"
records "$d" > /tmp/opt.rec
cp /tmp/opt.rec "$TD_OUT/"
# The switches of fp_chain sleeping in nanosleep (S), not those of its exec
cookie=$(gawk -v p="$pid" '$1 == "E" && $3 == p && $5 == "sched_switch" && $7 == "S" { print $6; exit }' /tmp/opt.rec)
stack=$(gawk -v p="$pid" -v c="$cookie" '$1 == "S" && $3 == p && $5 == c { print $7; exit }' /tmp/opt.rec)
names=$(funcs "$fp" ${stack//,/ } | head -n 4 | tr '\n' ' ')
check option_cookie_follows_event test -n "$cookie"
check option_stack_c_b_a_main test "$names" = "c b a main "
echo "option: pid $pid cookie $cookie frames: $names"

# Every switch of the task has a cookie until it calls exit_group(), none
# once it has traced its exit. In between, do_exit() sets PF_EXITING before
# the exit event, and a preemption there (CI saw one on a loaded host) is a
# switch that rightly has no cookie: no time in that window is checked.
ex=$(gawk -v p="$pid" '$1 == "E" && $3 == p && $5 == "sched_process_exit" { print $4 " " $6 }' /tmp/opt.rec)
ex_ts=${ex% *}
eg_ts=$(gawk -v p="$pid" '$1 == "E" && $3 == p && $5 == "sys_enter:sys_exit_group" { print $4; exit }' /tmp/opt.rec)
sel='$1 == "E" && $3 == p && $5 == "sched_switch"'
n_ev=$(gawk -v p="$pid" -v t="$eg_ts" "$sel && \$4 < t" /tmp/opt.rec | wc -l)
n_ck=$(gawk -v p="$pid" -v t="$eg_ts" "$sel && \$4 < t && \$6 != \"-\"" /tmp/opt.rec | wc -l)
n_ex=$(gawk -v p="$pid" -v t="$ex_ts" "$sel && \$4 > t && \$6 != \"-\"" /tmp/opt.rec | wc -l)
echo "option: $n_ev switches before exit_group() at $eg_ts, $n_ck with a cookie, $n_ex after exit at $ex_ts"
check option_exit_group_traced test -n "$eg_ts"
check option_exit_event_no_cookie test -n "$ex_ts" -a "${ex#* }" = "-"
check option_every_event_has_cookie test "$n_ev" -ge 3 -a "$n_ev" -eq "$n_ck"
check option_no_cookie_when_exiting test "$n_ex" -eq 0
orph=$(gawk '$1 == "S" { s[$3 " " $5] = 1 } $1 == "E" && $6 != "-" { c[$3 " " $6] = 1 }
	END { n = 0; for (k in s) if (!(k in c)) n++; print n }' /tmp/opt.rec)
check option_no_stack_without_cookie test "$orph" -eq 0
kt=$(gawk '$1 == "E" && $6 != "-" && $3 == 0' /tmp/opt.rec | wc -l)
check option_no_cookie_for_idle test "$kt" -eq 0

# --- 40-deep recursion ---------------------------------------------------
echo 1 > "$d/options/userstacktrace_delay"
echo 0 > "$d/trace"
echo 1 > "$d/events/sched/sched_switch/enable"
pid=$("$fp" recurse 40 30 | sed -n 's/^fp_chain pid=//p')
echo 0 > "$d/events/sched/sched_switch/enable"
echo 0 > "$d/options/userstacktrace_delay"
records "$d" > /tmp/rec.rec
cookie=$(gawk -v p="$pid" '$1 == "E" && $3 == p && $5 == "sched_switch" && $7 == "S" { print $6; exit }' /tmp/rec.rec)
nfr=$(gawk -v p="$pid" -v c="$cookie" '$1 == "S" && $3 == p && $5 == c { print $6; exit }' /tmp/rec.rec)
stack=$(gawk -v p="$pid" -v c="$cookie" '$1 == "S" && $3 == p && $5 == c { print $7; exit }' /tmp/rec.rec)
nrec=$(funcs "$fp" ${stack//,/ } | grep -cx rec)
check recursion_40_frames test "${nfr:-0}" -ge 40 -a "$nrec" -eq 40
echo "recursion: $nfr frames, $nrec in rec()"

# --- 600-deep: cut to one sub-buffer, said in the record and the text ----
echo 1 > "$d/options/userstacktrace_delay"
echo 0 > "$d/trace"
echo 1 > "$d/events/sched/sched_switch/enable"
pid=$("$fp" recurse 600 30 | sed -n 's/^fp_chain pid=//p')
echo 0 > "$d/events/sched/sched_switch/enable"
echo 0 > "$d/options/userstacktrace_delay"
cp "$d/trace" /tmp/deep.trace
# The deepest cut stack of the pid: a switch while it still recursed (a
# preemption, more likely on a loaded host) gives a cut stack of less depth
# first, which is how this check failed twice in CI (426 + 32).
hdr=$(grep -- "-$pid .*<user stack unwind cookie=0x[0-9a-f]* frames=[0-9]* dropped=[1-9]" \
	/tmp/deep.trace | gawk 'match($0, /frames=[0-9]+ dropped=[0-9]+/) {
		split(substr($0, RSTART, RLENGTH), f, /[= ]/)
		if (f[2] + f[4] > best) { best = f[2] + f[4]; line = $0 }
	} END { if (line != "") print line }')
nfr=$(echo "$hdr" | sed -n 's/.* frames=\([0-9]*\) dropped=\([0-9]*\).*/\1/p')
ndr=$(echo "$hdr" | sed -n 's/.* frames=\([0-9]*\) dropped=\([0-9]*\).*/\2/p')
# The unwinder stops at about 500 frames; the record keeps what fits
echo "deep: pid $pid frames $nfr dropped $ndr; $(grep -c 'LINE TOO BIG' /tmp/deep.trace) lines too big"
cp /tmp/deep.trace "$TD_OUT/"
if [ -z "$nfr" ]; then
	# Say what there was instead: this check failed once in CI, unexplained
	echo "deep: no cut stack of pid $pid; its stacks and every one over 100 frames:"
	grep -- "<user stack unwind" /tmp/deep.trace |
		gawk -v p="-$pid " 'index($0, p) || match($0, /frames=[0-9]+/) &&
			substr($0, RSTART + 7, RLENGTH - 7) + 0 > 100' | head -n 20
	grep -c -- "<user stack unwind" /tmp/deep.trace
fi
check deep_stack_cut_and_counted test -n "$nfr" -a "$((${nfr:-0} + ${ndr:-0}))" -ge 500
check deep_stack_no_line_too_big test "$(grep -c 'LINE TOO BIG' /tmp/deep.trace)" -eq 0
check deep_stack_text_says_more grep -q '^ => \.\.\. [1-9][0-9]* more frames$' /tmp/deep.trace
rmdir "$d"

# --- an execve() gets the stack of the program that called it ------------
# fp_chain exec: main -> a -> b -> c -> execve(/bin/true). The unwind runs
# before the new program is mapped, so the syscall's entry event gets c, b,
# a, main, unmarked, not the stack of /bin/true on the way out.
d=$(new_instance exec)
if [ -d "$d/events/syscalls/sys_enter_execve" ]; then
	echo 1 > "$d/events/syscalls/sys_enter_execve/enable"
	echo 1 > "$d/options/userstacktrace_delay"
	pids=$(for _ in 1 2 3; do "$fp" exec /bin/true; done | sed -n 's/^fp_chain pid=//p')
	echo 0 > "$d/events/enable"
	echo 0 > "$d/options/userstacktrace_delay"
	records "$d" > /tmp/exec.rec
	cp /tmp/exec.rec "$TD_OUT/"
	nexec=$(grep -c -- '-[0-9]* .*<user stack unwind cookie=0x[0-9a-f]* frames=[1-9][0-9]* exec>$' \
		"$d/trace")
	good=0
	for pid in $pids; do
		# The last execve() of the pid in time (the records come CPU by CPU):
		# the first is the shell's child running fp_chain
		cookie=$(gawk -v p="$pid" '$1 == "E" && $3 == p && $5 == "sys_enter:sys_execve" &&
			(c == "" || $4 + 0 > t) { t = $4 + 0; c = $6 } END { print c }' /tmp/exec.rec)
		stack=$(gawk -v p="$pid" -v c="$cookie" '$1 == "S" && $3 == p && $5 == c { print $7; exit }' /tmp/exec.rec)
		names=$(funcs "$fp" ${stack//,/ } | head -n 4 | tr '\n' ' ')
		echo "exec: pid $pid cookie $cookie frames: $names"
		[ "$names" = "c b a main " ] && good=$((good + 1))
	done
	check exec_stack_is_the_callers test "$good" -eq 3
	check exec_stack_not_marked test "$nexec" -eq 0
	rmdir "$d"
	# The daemon: the execve events are stitched, fp_chain's named c <- b <- a <- main
	# (each pid also has the execve() of the shell's child that ran fp_chain)
	run_daemon /tmp/exec -e syscalls:sys_enter_execve --mode option --json-layout=full \
		-o /tmp/exec.json
	pids=$(for _ in 1 2 3; do "$fp" exec /bin/true; done | sed -n 's/^fp_chain pid=//p')
	sleep 0.5
	stop_daemon
	cp /tmp/exec.json /tmp/exec.stderr "$TD_OUT/" 2>/dev/null
	sel=$(echo $pids | sed 's/ /, /g')
	jq -r "select(.tid == ($sel) and .event == \"syscalls:sys_enter_execve\") |
		.status + \":\" + ([.user_stack[:4][].sym] | join(\",\"))" /tmp/exec.json \
		> /tmp/exec.status 2>/dev/null
	nfp=$(sort /tmp/exec.status | uniq -c | tr '\n' ' ')
	ncba=$(grep -c '^stitched:c,b,a,main$' /tmp/exec.status)
	nother=$(grep -vc '^stitched:' /tmp/exec.status)
	nst=$(sed -n 's/.* exec_stacks=\([0-9]*\).*/\1/p' /tmp/exec.stderr | tail -n 1)
	echo "exec: daemon exit $drc, fp_chain's execve events: $nfp; exec_stacks=$nst"
	check exec_daemon_exit test "$drc" -eq 0
	check exec_daemon_execve_stitched_c_b_a_main test "$ncba" -eq 3
	check exec_daemon_every_execve_stitched test "$nother" -eq 0 -a -s /tmp/exec.status
	check exec_daemon_no_exec_stacks test "${nst:-x}" = 0
else
	fail exec_stack "no syscall events (CONFIG_FTRACE_SYSCALLS)"
	rmdir "$d"
fi

# --- one kernel entry, several events: one cookie, one stack --------------
d=$(new_instance shared)
if [ -d "$d/events/syscalls/sys_enter_nanosleep" ]; then
	echo 1 > "$d/events/syscalls/sys_enter_nanosleep/enable"
	echo 1 > "$d/events/syscalls/sys_exit_nanosleep/enable"
	echo 1 > "$d/events/sched/sched_switch/enable"
	echo 1 > "$d/options/userstacktrace_delay"
	pid=$("$fp" sleep 30 1 | sed -n 's/^fp_chain pid=//p')
	echo 0 > "$d/events/enable"
	echo 0 > "$d/options/userstacktrace_delay"
	records "$d" > /tmp/shared.rec
	cp /tmp/shared.rec "$TD_OUT/"
	cat "$d"/per_cpu/cpu*/trace > "$TD_OUT/shared.trace"
	gawk -v p="$pid" '$1 == "E" && $3 == p' /tmp/shared.rec | sort -k4 > /tmp/shared.ev
	enter=$(gawk '$5 == "sys_enter:sys_nanosleep" { print $6; exit }' /tmp/shared.ev)
	exitc=$(gawk '$5 == "sys_exit:sys_nanosleep" { print $6; exit }' /tmp/shared.ev)
	# The switch inside nanosleep: between its enter and its exit
	swc=$(gawk '$5 == "sys_enter:sys_nanosleep" { inside = 1 } $5 == "sys_exit:sys_nanosleep" { inside = 0 }
		inside && $5 == "sched_switch" { print $6; exit }' /tmp/shared.ev)
	nst=$(gawk -v p="$pid" -v c="$enter" '$1 == "S" && $3 == p && $5 == c' /tmp/shared.rec | wc -l)
	echo "shared: enter $enter switch $swc exit $exitc stacks $nst"
	check shared_cookie_enter_switch_exit test -n "$enter" -a "$enter" != "-" \
		-a "$enter" = "$swc" -a "$enter" = "$exitc"
	check shared_cookie_one_stack test "$nst" -eq 1
else
	fail shared_cookie "no syscall events (CONFIG_FTRACE_SYSCALLS)"
fi
rmdir "$d"

# --- trigger with a filter, and with a count ------------------------------
d=$(new_instance trig)
"$fp" sleep 100 6 > /tmp/trig.out &
bg=$!
"$fp" sleep 50 12 > /dev/null &
other=$!
echo "user_stacktrace if common_pid == $bg" > "$d/events/sched/sched_switch/trigger"
echo 1 > "$d/events/sched/sched_switch/enable"
wait $bg $other
echo 0 > "$d/events/sched/sched_switch/enable"
echo '!user_stacktrace' > "$d/events/sched/sched_switch/trigger"
records "$d" > /tmp/trig.rec
mine=$(gawk -v p="$bg" '$1 == "E" && $6 != "-" && $3 == p' /tmp/trig.rec | wc -l)
others=$(gawk -v p="$bg" '($1 == "E" && $6 != "-" && $3 != p) || ($1 == "C" && $3 != p)' /tmp/trig.rec | wc -l)
stk=$(gawk -v p="$bg" '$1 == "S" && $3 == p' /tmp/trig.rec | wc -l)
echo "trigger filter: $mine cookies for $bg, $others for others, $stk stacks"
check trigger_filter_matching_task test "$mine" -ge 3 -a "$stk" -ge 3
check trigger_filter_excludes_others test "$others" -eq 0

echo 0 > "$d/trace"
"$fp" sleep 50 8 > /tmp/trig2.out &
bg=$!
echo "user_stacktrace:2 if common_pid == $bg" > "$d/events/sched/sched_switch/trigger"
echo 1 > "$d/events/sched/sched_switch/enable"
wait $bg
echo 0 > "$d/events/sched/sched_switch/enable"
left=$(grep -o '^user_stacktrace:[a-z=0-9]*' "$d/events/sched/sched_switch/trigger")
echo '!user_stacktrace' > "$d/events/sched/sched_switch/trigger"
records "$d" > /tmp/trig2.rec
n=$(gawk -v p="$bg" '($1 == "E" && $6 != "-" && $3 == p) || $1 == "C"' /tmp/trig2.rec | wc -l)
echo "trigger count: $n cookies, trigger now $left"
check trigger_count_2 test "$n" -eq 2 -a "$left" = "user_stacktrace:count=0"
rmdir "$d"

# --- removing an instance while an unwind is pending ----------------------
a=$(new_instance pend_a)
b=$(new_instance pend_b)
for x in "$a" "$b"; do
	echo 1 > "$x/events/sched/sched_switch/enable"
	echo 1 > "$x/options/userstacktrace_delay"
done
mkfifo /tmp/pend.fifo
"$fp" read < /tmp/pend.fifo > /tmp/pend.out &
bg=$!
exec 7> /tmp/pend.fifo
sleep 0.3
grep -q "fp_chain-$bg .*<user stack unwind cookie=0x[0-9a-f]*>" "$a/trace"
check pending_cookie_recorded test $? -eq 0
check pending_rmdir rmdir "$a"
echo go >&7
exec 7>&-
wait $bg
sleep 0.2
stk=$(records "$b" | gawk -v p="$bg" '$1 == "S" && $3 == p' | wc -l)
check pending_other_instance_independent test "$stk" -ge 1
echo 0 > "$b/events/sched/sched_switch/enable"
rmdir "$b"

# --- trace-cmd and libtraceevent parse the formats ------------------------
if command -v trace-cmd > /dev/null; then
	cd /tmp
	trace-cmd record -q -o /tmp/tc.dat -e sched:sched_switch -O userstacktrace_delay \
		"$fp" sleep 30 2 > /tmp/tc-record.log 2>&1
	trace-cmd report -i /tmp/tc.dat > /tmp/tc.txt 2> /tmp/tc.err
	rc=$?
	grep -m 3 user_unwind /tmp/tc.txt
	check tracecmd_report_ok test "$rc" -eq 0
	check tracecmd_no_warnings test ! -s /tmp/tc.err
	check tracecmd_prints_cookie grep -q 'user_unwind_cookie: *cookie=0x[0-9a-f]' /tmp/tc.txt
	check tracecmd_prints_stack grep -Eq \
		'user_unwind_stack: *cookie=0x[0-9a-f]+ dropped=0 flags=0x[01] tgid=[0-9]+ stack=[0-9]+' \
		/tmp/tc.txt
	# fp_chain is one thread: every stack of it says its pid as the tgid
	check tracecmd_prints_tgid gawk '/ fp_chain-[0-9]+ .* user_unwind_stack:/ {
		match($0, /fp_chain-[0-9]+/); p = substr($0, RSTART + 9, RLENGTH - 9)
		match($0, / tgid=-?[0-9]+/); t = substr($0, RSTART + 6, RLENGTH - 6)
		n++; if (p != t) { bad++; print "pid " p " tgid " t } }
		END { print n + 0, "stacks of fp_chain"; exit !(n > 0 && !bad) }' /tmp/tc.txt
	cp /tmp/tc.dat /tmp/tc.txt /tmp/tc.err "$TD_OUT/" 2>/dev/null
	echo 0 > "$T/options/userstacktrace_delay"
else
	fail tracecmd "trace-cmd not installed"
fi

grep -q FAIL "$RESULTS" && exit 1
exit 0
