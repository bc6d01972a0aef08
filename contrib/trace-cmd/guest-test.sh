#!/bin/bash
# Guest side of apply-and-test.sh: exercise a trace-cmd built with
# 0001-trace-cmd-Add-T-deferred.patch inside the VM (kernel/run-vm.sh).
#
#   guest-test.sh patched|base BINDIR TOP
#
# BINDIR holds the built trace-cmd (and, in BINDIR/lib, any shared library it
# needs that is not the system's); TOP is the trace-defer tree (for
# build/progs/fp_chain and build/plugins). Results go to $TD_OUT/results as
# "PASS name" / "FAIL name: why" lines; the exit status is 1 if any failed.
#
# patched: a kernel with the deferred user stack series. Checks -T deferred
#          for record, start, set, stream and instances, that plain -T keeps
#          its meaning, and that fp_chain's stack reads main -> a -> b -> c.
# base:    a kernel without it. -T deferred must refuse, and touch nothing.
mode=$1 bindir=$2 top=$3
T=/sys/kernel/tracing
TC=$bindir/trace-cmd
FP=$top/build/progs/fp_chain
RESULTS=${TD_OUT:-/tmp}/results
export LD_LIBRARY_PATH=$bindir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
: > "$RESULTS"

pass() { echo "PASS $1" | tee -a "$RESULTS"; }
fail() { echo "FAIL $1: $2" | tee -a "$RESULTS"; }
# check NAME CMD...: PASS if the command succeeds, else FAIL with its output
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "$(echo "$out" | tail -n 5 | tr '\n' ' ')"
	fi
}
# The two options of an instance directory, as "stacktrace delay"
opts() { echo "$(cat "$1/options/stacktrace") $(cat "$1/options/userstacktrace_delay")"; }
# Put both options of the top instance back to 0 (between cases)
clear_opts() {
	echo 0 > "$T/options/stacktrace"
	echo 0 > "$T/options/userstacktrace_delay" 2> /dev/null
}
# names BINARY: for each line of addresses on stdin, the functions of a
# non-PIE binary they are in; every address but the first is a return
# address, looked up at addr - 1. One nm for any number of stacks.
names() {
	gawk '
		NR == FNR {
			if ($2 ~ /^[Tt]$/) { n++; start[n] = strtonum("0x" $1); name[n] = $3 }
			next
		}
		{
			for (i = 1; i <= NF; i++) {
				x = strtonum($i) - (i > 1 ? 1 : 0)
				r = "?"
				for (j = n; j >= 1; j--)
					if (start[j] <= x) { r = name[j]; break }
				printf "%s%s", (i > 1 ? " " : ""), r
			}
			print ""
		}' <(nm -n "$1") -
}

# norm FILE: trace-cmd report lines as "TASK-PID EVENT: FIELDS...", whatever
# columns (CPU, latency flags) sit between; other lines unchanged, so line
# numbers stay those of FILE.
norm() {
	gawk '{
		for (i = 2; i < NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/)
				break
		if (i >= NF) { print; next }
		out = $1
		for (j = i + 1; j <= NF; j++)
			out = out " " $j
		print out
	}' "$1"
}

# gawk function addrs(): the addresses of a normalized user_unwind_stack
# line, space separated, whether libtraceevent printed them as
# "stack=1 2 3" (1.7) or "stack={0x1,0x2,0x3}" (1.8)
ADDRS='
function addrs(   i, s) {
	for (i = 4; i <= NF; i++)
		s = s (i > 4 ? " " : "") $i
	sub(/^stack=/, "", s)
	gsub(/[{}]/, "", s)
	gsub(/,/, " ", s)
	return s
}'

# Every trace-cmd run is bounded: a hang fails its check instead of the VM
tcmd() { timeout -k 10 120 "$TC" "$@"; }
# And if the whole script hangs anyway, show the blocked tasks in dmesg
( sleep 600; echo "guest-test: 600 s, blocked tasks:"; echo w > /proc/sysrq-trigger ) &
watchdog=$!
trap 'kill $watchdog 2> /dev/null' EXIT

[ -x "$TC" ] || { fail setup "no trace-cmd at $TC"; exit 1; }
[ -x "$FP" ] || { fail setup "no $FP (make progs)"; exit 1; }
cd /tmp || exit 1
tcmd version 2>&1 | head -n 3

if [ "$mode" = base ]; then
	# --- a kernel without the series: refuse before changing anything ----
	check base_has_no_option test ! -e "$T/options/userstacktrace_delay"
	tcmd record -o /tmp/b.dat -e sched:sched_switch -T deferred true > /tmp/b.out 2>&1
	rc=$?
	cat /tmp/b.out
	check base_record_refused test "$rc" -ne 0
	check base_refusal_says_why grep -q 'no deferred user space stack traces' /tmp/b.out
	check base_no_file_written test ! -e /tmp/b.dat
	check base_stacktrace_untouched test "$(cat $T/options/stacktrace)" = 0
	check base_event_untouched test "$(cat $T/events/sched/sched_switch/enable)" = 0
	tcmd start -e sched:sched_switch -T deferred > /tmp/b2.out 2>&1
	check base_start_refused test $? -ne 0
	tcmd record -o /tmp/p.dat -e sched:sched_switch -T true > /tmp/p.out 2>&1
	check base_plain_T_still_works test $? -eq 0
	grep -q 'Failed\|Error' /tmp/p.out && cat /tmp/p.out
	grep -q FAIL "$RESULTS" && exit 1
	exit 0
fi

# --- record: fp_chain with -T deferred (what the issue asks) -------------
clear_opts
tcmd record -o /tmp/d.dat -e sched:sched_switch -T deferred "$FP" sleep 50 3 \
	> /tmp/rec.out 2>&1
rc=$?
cat /tmp/rec.out
pid=$(sed -n 's/^fp_chain pid=//p' /tmp/rec.out)
check record_deferred_ok test "$rc" -eq 0 -a -n "$pid"
check record_restores_options test "$(opts $T)" = "0 0"
tcmd report -i /tmp/d.dat > /tmp/d.txt 2> /tmp/d.err
rc=$?
check report_ok test "$rc" -eq 0
check report_no_warnings test ! -s /tmp/d.err
cp /tmp/d.dat /tmp/d.txt "$TD_OUT/" 2> /dev/null
for ev in kernel_stack user_unwind_cookie user_unwind_stack; do
	check "report_has_$ev" grep -q "fp_chain-$pid .*: $ev: " /tmp/d.txt
done
# fp_chain sleeping in nanosleep (state S): its sched_switch, the kernel
# stack, then the cookie record; the task's stack record carries the cookie.
norm /tmp/d.txt > /tmp/d.norm
cookie=$(gawk -v p="fp_chain-$pid" '
	$1 == p && $2 == "sched_switch:" && /[ =]S ==> / { want = 1; from = NR; next }
	want && $1 == p && $2 == "user_unwind_cookie:" {
		sub(/^cookie=(0x)?/, "", $3); print $3, from, NR; exit }
	want && $1 != "=>" && $2 != "kernel_stack:" { want = 0 }' /tmp/d.norm)
read -r cookie from to <<< "$cookie"
stack=$(gawk -v p="fp_chain-$pid" -v c="$cookie" "$ADDRS"'
	$1 == p && $2 == "user_unwind_stack:" {
		k = $3; sub(/^cookie=(0x)?/, "", k)
		if (k != c) next
		print addrs() " " NR; exit }' /tmp/d.norm)
fn=$(echo "${stack% *}" | names "$FP")
echo "sleeping switch: cookie $cookie stack: ${stack% *} = $fn"
check sleep_switch_has_cookie test -n "$cookie"
check sleep_stack_c_b_a_main test "$(echo "$fn" | cut -d' ' -f1-4)" = "c b a main"
# The whole sequence as trace-cmd printed it, for the documentation's example
if [ -n "$cookie" ] && [ -n "$stack" ]; then
	sed -n "${from},${to}p;${stack##* }p" /tmp/d.txt | tee "$TD_OUT/example.txt"
fi

# The distribution's trace-cmd (stock 3.1.6) reads such a file too. Record
# it uncompressed: Debian's libtracecmd only knows zstd, and a build without
# libzstd-dev compresses with zlib.
if [ -x /usr/bin/trace-cmd ]; then
	tcmd record -q -o /tmp/u.dat --compression none -e sched:sched_switch \
		-T deferred "$FP" sleep 50 2 > /dev/null 2>&1
	tcmd report -i /tmp/u.dat > /tmp/u.txt 2> /dev/null
	/usr/bin/trace-cmd report -i /tmp/u.dat > /tmp/s.txt 2> /tmp/s.err
	check stock_report_ok test $? -eq 0 -a ! -s /tmp/s.err
	check stock_report_same_stacks test "$(grep -c user_unwind_stack: /tmp/s.txt)" = \
		"$(grep -c user_unwind_stack: /tmp/u.txt)" -a -s /tmp/u.txt
fi
# With trace-defer's plugin, the one-line decoded form.
if [ -e "$top/build/plugins/plugin_user_unwind.so" ]; then
	TRACEEVENT_PLUGIN_DIR=$top/build/plugins tcmd report -i /tmp/d.dat \
		> /tmp/pl.txt 2> /tmp/pl.err
	grep -m 1 "fp_chain-$pid .*user_unwind_stack: *cookie=0x$cookie " /tmp/pl.txt
	want="user_unwind_stack: *cookie=0x$cookie cpu=[0-9]* seq=[0-9]* frames="
	check plugin_report_decodes grep -q "$want" /tmp/pl.txt
else
	echo "NOTE plugin_report_decodes not run: no build/plugins/plugin_user_unwind.so"
fi

# --- the options while the command runs ------------------------------------
show=(sh -c "echo \$(cat $T/options/stacktrace $T/options/userstacktrace_delay)")
clear_opts
out=$(tcmd record -q -o /tmp/o1.dat -e sched:sched_switch -T deferred "${show[@]}" \
	2> /dev/null | tail -n 1)
check record_T_deferred_sets_both test "$out" = "1 1"
out=$(tcmd record -q -o /tmp/o2.dat -e sched:sched_switch -T "${show[@]}" \
	2> /dev/null | tail -n 1)
check record_plain_T_only_stacktrace test "$out" = "1 0"
check plain_T_no_deferred_records \
	sh -c "'$TC' report -i /tmp/o2.dat | grep -q kernel_stack: && \
	       ! '$TC' report -i /tmp/o2.dat | grep -q user_unwind_"
# A command really named "deferred", after a plain -T: end options with --
mkdir -p /tmp/bin
printf '#!/bin/sh\necho ran $(cat %s/options/userstacktrace_delay)\n' "$T" > /tmp/bin/deferred
chmod +x /tmp/bin/deferred
out=$(PATH=/tmp/bin:$PATH tcmd record -q -o /tmp/o3.dat -e sched:sched_switch -T -- deferred \
	2> /dev/null | tail -n 1)
check record_T_dashdash_runs_deferred test "$out" = "ran 0"
check options_restored_after_records test "$(opts $T)" = "0 0"

# --- start, set, instances -------------------------------------------------
tcmd start -e sched:sched_switch -T deferred > /dev/null 2>&1
check start_T_deferred test "$(opts $T)" = "1 1"
tcmd stop > /dev/null 2>&1
tcmd reset > /dev/null 2>&1
clear_opts
tcmd set -T deferred > /dev/null 2>&1
check set_T_deferred test "$(opts $T)" = "1 1"
clear_opts
tcmd set -T > /dev/null 2>&1
check set_plain_T test "$(opts $T)" = "1 0"
clear_opts
tcmd start -B tdx -e sched:sched_switch -T deferred > /dev/null 2>&1
check instance_T_deferred test "$(opts $T/instances/tdx)" = "1 1"
check instance_leaves_top_alone test "$(opts $T)" = "0 0"
tcmd stop -B tdx > /dev/null 2>&1
tcmd reset -B tdx > /dev/null 2>&1
rmdir "$T/instances/tdx" 2> /dev/null
tcmd reset > /dev/null 2>&1
clear_opts

# --- stream: the records show live ----------------------------------------
# Upstream stream (3.1.7 and 3.3.4 alike, with plain -T too) has a race at
# exit: stop_threads() stops draining the recorders' pipes as soon as none
# has data ready, then wait_threads() waits for recorders that are still
# flushing, so the end of the trace is lost, or, when a pipe fills, both
# wait for ever. So: up to 5 runs, each bounded, the first complete one is
# checked; every run's outcome is printed.
ok=
for try in 1 2 3 4 5; do
	timeout -k 5 45 "$TC" stream -e sched:sched_switch -T deferred "$FP" sleep 20 50 \
		> /tmp/st.txt 2> /tmp/st.err
	rc=$?
	spid=$(sed -n 's/^fp_chain pid=//p' /tmp/st.txt)
	during=$(opts $T)
	# stream names the task from the comm it had before exec (trace-cmd): go by pid
	norm /tmp/st.txt | gawk -v p="-$spid" "$ADDRS"'
		$2 == "user_unwind_stack:" && substr($1, length($1) - length(p) + 1) == p {
			print addrs() }' > /tmp/st.stacks
	n=$(names "$FP" < /tmp/st.stacks | grep -n -m 1 '^c b a main' | cut -d: -f1)
	found=${n:+$(sed -n "${n}p" /tmp/st.stacks)}
	echo "stream run $try: exit $rc, $(wc -l < /tmp/st.txt) lines," \
		"$(wc -l < /tmp/st.stacks) stacks of pid $spid, options after: $during"
	if [ "$rc" -eq 0 ] && [ -n "$found" ]; then
		ok=1
		break
	fi
	clear_opts
	tcmd reset > /dev/null 2>&1
done
echo "stream: a stack of pid $spid: $found"
check stream_ok test -n "$ok"
check stream_shows_c_b_a_main test -n "$found"
check stream_restores_options test "$during" = "0 0"
cp /tmp/st.txt "$TD_OUT/stream.txt" 2> /dev/null
clear_opts

# --- not for profile or extract -------------------------------------------
out=$(tcmd profile -T deferred true 2>&1)
check profile_refuses sh -c "! '$TC' profile -T deferred true > /dev/null 2>&1"
check profile_says_why grep -q 'only for record, start, set and stream' <<< "$out"
tcmd reset > /dev/null 2>&1

grep -q FAIL "$RESULTS" && exit 1
exit 0
