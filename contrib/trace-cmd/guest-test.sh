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
# names BINARY ADDR...: the function of each address of a non-PIE binary;
# every address but the first is a return address, looked up at addr - 1.
names() {
	local bin=$1
	shift
	nm -n "$bin" | gawk -v addrs="$*" '
		$2 ~ /^[Tt]$/ { n++; start[n] = strtonum("0x" $1); name[n] = $3 }
		END {
			k = split(addrs, a, " ")
			for (i = 1; i <= k; i++) {
				x = strtonum(a[i]) - (i > 1 ? 1 : 0)
				r = "?"
				for (j = n; j >= 1; j--)
					if (start[j] <= x) { r = name[j]; break }
				printf "%s%s", (i > 1 ? " " : ""), r
			}
		}'
}

[ -x "$TC" ] || { fail setup "no trace-cmd at $TC"; exit 1; }
[ -x "$FP" ] || { fail setup "no $FP (make progs)"; exit 1; }
cd /tmp || exit 1
"$TC" version 2>&1 | head -n 3

if [ "$mode" = base ]; then
	# --- a kernel without the series: refuse before changing anything ----
	check base_has_no_option test ! -e "$T/options/userstacktrace_delay"
	"$TC" record -o /tmp/b.dat -e sched:sched_switch -T deferred true > /tmp/b.out 2>&1
	rc=$?
	cat /tmp/b.out
	check base_record_refused test "$rc" -ne 0
	check base_refusal_says_why grep -q 'no deferred user space stack traces' /tmp/b.out
	check base_no_file_written test ! -e /tmp/b.dat
	check base_stacktrace_untouched test "$(cat $T/options/stacktrace)" = 0
	check base_event_untouched test "$(cat $T/events/sched/sched_switch/enable)" = 0
	"$TC" start -e sched:sched_switch -T deferred > /tmp/b2.out 2>&1
	check base_start_refused test $? -ne 0
	"$TC" record -o /tmp/p.dat -e sched:sched_switch -T true > /tmp/p.out 2>&1
	check base_plain_T_still_works test $? -eq 0
	grep -q 'Failed\|Error' /tmp/p.out && cat /tmp/p.out
	grep -q FAIL "$RESULTS" && exit 1
	exit 0
fi

# --- record: fp_chain with -T deferred (what the issue asks) -------------
clear_opts
"$TC" record -o /tmp/d.dat -e sched:sched_switch -T deferred "$FP" sleep 50 3 \
	> /tmp/rec.out 2>&1
rc=$?
cat /tmp/rec.out
pid=$(sed -n 's/^fp_chain pid=//p' /tmp/rec.out)
check record_deferred_ok test "$rc" -eq 0 -a -n "$pid"
check record_restores_options test "$(opts $T)" = "0 0"
"$TC" report -i /tmp/d.dat > /tmp/d.txt 2> /tmp/d.err
rc=$?
check report_ok test "$rc" -eq 0
check report_no_warnings test ! -s /tmp/d.err
cp /tmp/d.dat /tmp/d.txt "$TD_OUT/" 2> /dev/null
for ev in kernel_stack user_unwind_cookie user_unwind_stack; do
	check "report_has_$ev" grep -q "fp_chain-$pid .*: $ev: " /tmp/d.txt
done
# fp_chain sleeping in nanosleep (state S): its sched_switch, the kernel
# stack, then the cookie record; the task's stack record carries the cookie.
cookie=$(gawk -v p="fp_chain-$pid" '
	$1 == p && $4 == "sched_switch:" && / S ==> / { want = 1; next }
	want && $1 == p && $4 == "user_unwind_cookie:" {
		sub(/^cookie=(0x)?/, "", $5); print $5; exit }
	want && $1 != "=>" && $4 != "kernel_stack:" { want = 0 }' /tmp/d.txt)
stack=$(gawk -v p="fp_chain-$pid" -v c="$cookie" '
	$1 == p && $4 == "user_unwind_stack:" {
		k = $5; sub(/^cookie=(0x)?/, "", k)
		if (k != c) next
		sub(/^stack=/, "", $6)
		for (i = 6; i <= NF; i++) printf "%s%s", (i > 6 ? " " : ""), $i
		exit }' /tmp/d.txt)
fn=$(names "$FP" $stack)
echo "sleeping switch: cookie $cookie stack: $stack = $fn"
check sleep_switch_has_cookie test -n "$cookie"
check sleep_stack_c_b_a_main test "$(echo "$fn" | cut -d' ' -f1-4)" = "c b a main"
# The whole sequence, for the documentation's example
gawk -v p="fp_chain-$pid" '
	$1 == p && $4 == "sched_switch:" && / S ==> / { buf = $0; keep = 1; next }
	keep && ($1 == "=>" || ($1 == p && $4 == "kernel_stack:")) { buf = buf "\n" $0; next }
	keep && $1 == p && $4 == "user_unwind_cookie:" { print buf "\n" $0; exit }
	{ keep = 0 }' /tmp/d.txt > "$TD_OUT/example.txt"
grep -m 1 "fp_chain-$pid .*user_unwind_stack: *cookie=\(0x\)\?$cookie " /tmp/d.txt \
	>> "$TD_OUT/example.txt"
cat "$TD_OUT/example.txt"

# The distribution's trace-cmd (stock 3.1.6) reads such a file too. Record
# it uncompressed: Debian's libtracecmd only knows zstd, and a build without
# libzstd-dev compresses with zlib.
if [ -x /usr/bin/trace-cmd ]; then
	"$TC" record -q -o /tmp/u.dat --compression none -e sched:sched_switch \
		-T deferred "$FP" sleep 50 2 > /dev/null 2>&1
	"$TC" report -i /tmp/u.dat > /tmp/u.txt 2> /dev/null
	/usr/bin/trace-cmd report -i /tmp/u.dat > /tmp/s.txt 2> /tmp/s.err
	check stock_report_ok test $? -eq 0 -a ! -s /tmp/s.err
	check stock_report_same_stacks test "$(grep -c user_unwind_stack: /tmp/s.txt)" = \
		"$(grep -c user_unwind_stack: /tmp/u.txt)" -a -s /tmp/u.txt
fi
# With trace-defer's plugin, the one-line decoded form.
if [ -e "$top/build/plugins/plugin_user_unwind.so" ]; then
	TRACEEVENT_PLUGIN_DIR=$top/build/plugins "$TC" report -i /tmp/d.dat \
		> /tmp/pl.txt 2> /tmp/pl.err
	grep -m 2 "fp_chain-$pid .*user_unwind_" /tmp/pl.txt
	check plugin_report_decodes \
		grep -q "user_unwind_stack: *cookie=0x$cookie cpu=[0-9]* seq=[0-9]* frames=" /tmp/pl.txt
else
	echo "NOTE plugin_report_decodes not run: no build/plugins/plugin_user_unwind.so"
fi

# --- the options while the command runs ------------------------------------
show=(sh -c "echo \$(cat $T/options/stacktrace $T/options/userstacktrace_delay)")
clear_opts
out=$("$TC" record -q -o /tmp/o1.dat -e sched:sched_switch -T deferred "${show[@]}" \
	2> /dev/null | tail -n 1)
check record_T_deferred_sets_both test "$out" = "1 1"
out=$("$TC" record -q -o /tmp/o2.dat -e sched:sched_switch -T "${show[@]}" \
	2> /dev/null | tail -n 1)
check record_plain_T_only_stacktrace test "$out" = "1 0"
check plain_T_no_deferred_records \
	sh -c "'$TC' report -i /tmp/o2.dat | grep -q kernel_stack: && \
	       ! '$TC' report -i /tmp/o2.dat | grep -q user_unwind_"
# A command really named "deferred", after a plain -T: end options with --
mkdir -p /tmp/bin
printf '#!/bin/sh\necho ran $(cat %s/options/userstacktrace_delay)\n' "$T" > /tmp/bin/deferred
chmod +x /tmp/bin/deferred
out=$(PATH=/tmp/bin:$PATH "$TC" record -q -o /tmp/o3.dat -e sched:sched_switch -T -- deferred \
	2> /dev/null | tail -n 1)
check record_T_dashdash_runs_deferred test "$out" = "ran 0"
check options_restored_after_records test "$(opts $T)" = "0 0"

# --- start, set, instances -------------------------------------------------
"$TC" start -e sched:sched_switch -T deferred > /dev/null 2>&1
check start_T_deferred test "$(opts $T)" = "1 1"
"$TC" stop > /dev/null 2>&1
"$TC" reset > /dev/null 2>&1
clear_opts
"$TC" set -T deferred > /dev/null 2>&1
check set_T_deferred test "$(opts $T)" = "1 1"
clear_opts
"$TC" set -T > /dev/null 2>&1
check set_plain_T test "$(opts $T)" = "1 0"
clear_opts
"$TC" start -B tdx -e sched:sched_switch -T deferred > /dev/null 2>&1
check instance_T_deferred test "$(opts $T/instances/tdx)" = "1 1"
check instance_leaves_top_alone test "$(opts $T)" = "0 0"
"$TC" stop -B tdx > /dev/null 2>&1
"$TC" reset -B tdx > /dev/null 2>&1
rmdir "$T/instances/tdx" 2> /dev/null
"$TC" reset > /dev/null 2>&1
clear_opts

# --- stream: the records show live ----------------------------------------
# stream may drop what is still buffered when the command ends: give it a
# second of sleeps to read while they happen
timeout 120 "$TC" stream -e sched:sched_switch -T deferred "$FP" sleep 20 50 \
	> /tmp/st.txt 2> /tmp/st.err
rc=$?
spid=$(sed -n 's/^fp_chain pid=//p' /tmp/st.txt)
check stream_ok test "$rc" -eq 0 -a -n "$spid"
# stream names the task from the comm it had before exec (trace-cmd): go by pid
found=
while read -r st; do
	if [ "$(names "$FP" $st | cut -d' ' -f1-4)" = "c b a main" ]; then
		found=$st
		break
	fi
done < <(gawk -v p="-$spid" '
	$4 == "user_unwind_stack:" && substr($1, length($1) - length(p) + 1) == p {
		sub(/^stack=/, "", $6)
		for (i = 6; i <= NF; i++) printf "%s%s", (i > 6 ? " " : ""), $i
		print "" }' /tmp/st.txt)
echo "stream: a stack of pid $spid: $found"
check stream_shows_c_b_a_main test -n "$found"
check stream_restores_options test "$(opts $T)" = "0 0"
cp /tmp/st.txt "$TD_OUT/stream.txt" 2> /dev/null

# --- not for profile or extract -------------------------------------------
out=$("$TC" profile -T deferred true 2>&1)
check profile_refuses sh -c "! '$TC' profile -T deferred true > /dev/null 2>&1"
check profile_says_why grep -q 'only for record, start, set and stream' <<< "$out"
"$TC" reset > /dev/null 2>&1

grep -q FAIL "$RESULTS" && exit 1
exit 0
