#!/usr/bin/env bash
# Host side of the VM tests: boot the kernels built by kernel/build.sh under
# QEMU and run the guest scripts of tests/vm/. Every stage's files land in
# vm-out/STAGE/ (results, guest.log, console.log, dmesg.log).
#
#   VM_TESTS="kernel ftrace daemon report names systemd" tests/vm/run.sh
#   (default: those; stress, on its own kernel, is `make check-debug`)
#
# kernel  deferred stacks through option and trigger (patched kernel)
# ftrace  ftracetest: the new cases, and trigger/ + event/ compared case by
#         case with the unpatched kernel's results (tests/vm/ftrace-base.expected)
# ftrace-base (not in the default set) the unpatched kernel's trigger/ +
#         event/ results, compared with ftrace-base.expected (rewritten
#         with VM_UPDATE_BASELINE=1)
# ftrace-full, ftrace-full-base (not in the default set) ftracetest on the
#         test kernels (kernel/config/ftracetest.config): the test.d paths
#         in FTRACE_FULL_TESTS (default: those the baseline file names;
#         FTRACE_FULL_TESTS="" for the whole suite); patched compared case by
#         case with tests/vm/ftrace-full-base.expected, which
#         ftrace-full-base measures (and rewrites with VM_UPDATE_BASELINE=1).
#         Under this host's TCG (QEMU 7.2) the unpatched test kernel
#         cannot run the cases that patch function call sites while they
#         run: it oopses, a CPU jumping into a call site as it is rewritten
#         (measured 2026-11-24: ftrace/fgraph-filter-stack.tc, the first
#         fgraph case, with 1 vCPU and with 2; ftrace/func-filter-notrace-
#         pid.tc after func-filter-glob.tc PASSed; dynevent/
#         add_remove_fprobe.tc; direct/ on modprobe), and turning the
#         wakeup_rt tracer on after wakeup_dl does not end (00basic/
#         basic2.tc, tracer/wakeup_rt.tc; a signal does not stop that
#         write). Turning the function tracer on alone takes 2 s, function
#         graph 6-8 s. Those cases are left out, FTRACE_FULL_SKIP (test.d
#         paths; default: the baseline's): an oops ends the guest and the
#         run with it. They need KVM: neither -cpu qemu64 nor
#         multi-threaded TCG changes it, nor test kernels without
#         X86_KERNEL_IBT (tried 2026-11-24, stop 22, both kernels): the
#         kprobe cases and most fgraph, func-filter and dynevent cases
#         then PASS one by one, but the kernel still oopses now and then,
#         a call from a traced entry (kernel_clone+0x5, vfs_read+0x5, the
#         sched_switch trace point) landing at 0, 2 or a heap address, on
#         a case that PASSed in the boot before (func-filter-pid.tc,
#         func-filter-notrace-pid.tc, kprobe/kprobe_ftrace.tc, fprobe and
#         tprobe cases), and the whole guest hangs in func_cpumask.tc,
#         func_hotplug.tc and func_profiler.tc. Each case file runs on its own,
#         stopped after FTRACE_CASE_TIMEOUT seconds (default: the
#         baseline's, else 240) and recorded as TIMEOUT;
#         vm-out/STAGE/ftracetest-*.times has every case's time. The test
#         kernels have modules: the sample modules that the module cases
#         modprobe (trace-events-sample, trace-printk, ftrace-direct),
#         installed by kernel/build.sh in build-test-*/modroot and made
#         the guest's /lib/modules by guest-ftracetest.sh (-m); the guest
#         log says so when there are none for the running kernel.
# daemon  trace-defer end to end on the patched kernel
# report  trace-defer record, then report of the trace.dat (and trace-cmd report)
# names   user frames named from the recorded file identity: short-lived
#         processes, traces read later, moved and replaced binaries
# systemd trace-defer.service under systemd 252 as PID 1 (patched kernel):
#         make install, start, status, journal, reload, watchdog, kill -9
# stress  (not in the default set: `make check-debug`) churn under KASAN,
#         lockdep and PROVE_RCU (debug kernel); when other stages come
#         before it, the debug kernel is built beside them (niced, one job)
#         unless VM_DEBUG_BESIDE=0. Not in `make check`: with that build
#         beside them the stages took 2.7 times as long (names: 1,120 s,
#         not 409 s), and CI's clean clone ran out of its 90 minutes in
#         the systemd stage (stop 60, 2026-12-04).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$top/${BUILD:-build}" && pwd)
outtop=${VM_OUT:-$top/vm-out}
stages=${VM_TESTS:-kernel ftrace daemon report names systemd}
failed=()
tails=()		# what the summary repeats for a failed stage
digests=()		# one short line per kernel report, printed last
stage_times=()		# "stage: N s", each boot's time, for the summary

# Each header says how long the run has taken so far: when CI stops a run
# at its time limit, the end of the output is all it shows.
say() { printf '\n== %s [vm-test at %d s, %s]\n' "$*" "$SECONDS" "$(date +%T)"; }

. "$top/tests/vm/lib.sh"	# KREPORTS

# Kernel reports in a console log that no test should ever cause.
splats() {
	grep -E "$KREPORTS" "$1" | head -n 20
}

# digest STAGE LOG: the first kernel report of LOG in three lines (what,
# where, called from), for the very end of the output, which is all CI shows.
digest() {
	awk -v stage="$1" -v re="$KREPORTS" '
	{ sub(/^\[ *[0-9.]+\] /, "") }
	!what && $0 ~ re { what = $0; next }
	!what { next }
	/^RIP: / && !rip { rip = $0 }
	/Call Trace:/ { intrace = 1; next }
	intrace && /^ +[a-z_0-9.]+\+0x/ && n < 8 {
		f = $1; sub(/\+.*/, "", f); trace = trace (n++ ? " < " : "") f
	}
	intrace && /^ *<\/TASK>/ { exit }
	END {
		if (!what) exit
		printf "%s: %s\n  %s\n  called from: %s\n", stage, what, rip, trace
	}' "$2"
}

# boot FLAVOR STAGE SCRIPT ARGS...: run one guest script; record failures.
boot() {
	local flavor=$1 stage=$2 script=$3 image rc s
	shift 3
	image=$("$top/kernel/build.sh" "$flavor" 2>"$outtop/build-$flavor.log" | tail -n 1)
	if [ ! -r "$image" ]; then
		echo "vm: $flavor kernel did not build, see $outtop/build-$flavor.log"
		tail -n 20 "$outtop/build-$flavor.log"
		failed+=("$stage: kernel build")
		return 1
	fi
	local t0=$SECONDS
	"$top/kernel/run-vm.sh" "$image" "$outtop/$stage" "$top/tests/vm/$script" "$@"
	rc=$?
	echo "vm: $stage: guest exit $rc after $((SECONDS - t0)) s"
	stage_times+=("$stage: $((SECONDS - t0)) s")
	cat "$outtop/$stage/guest.log" 2>/dev/null | sed 's/^/  | /'
	s=$(splats "$outtop/$stage/console.log")
	if [ -n "$s" ]; then
		echo "vm: $stage: kernel reports in the console log:"
		echo "$s"
		failed+=("$stage: kernel report")
		# CI shows only the end of the output: repeat the first report there
		tails+=("== $stage: first kernel report" "$(grep -m 1 -A 25 -E "$KREPORTS" \
			"$outtop/$stage/console.log")")
		digests+=("$(digest "$stage" "$outtop/$stage/console.log")")
	fi
	if [ "$rc" -ne 0 ]; then
		failed+=("$stage: exit $rc")
		[ "$rc" -ge 124 ] && tails+=("== $stage: end of the console (exit $rc)" \
			"$(tail -n 15 "$outtop/$stage/console.log")")
	fi
	return "$rc"
}

# Did the first kernel report in console log $1 come before the guest script ran?
boot_report() {
	gawk -v re="$KREPORTS" '/^guest: running/ { exit }
	      $0 ~ re { found = 1; exit }
	      END { exit !found }' "$1"
}

stress_boot() {
	VM_APPEND="acpi=noirq ${VM_APPEND:-}" VM_MEM=2048 VM_TIMEOUT=1500 \
		boot debug stress guest-stress.sh "$build" "${STRESS_SECONDS:-60}" \
		"$kc/build-debug/samples/trace_events/trace_custom_sched.ko"
}

# The series' own ftracetest cases, left out of the comparisons.
NEW_CASES='deferred user|user_stacktrace|Test deferred user stack'

# ftracetest_results RESULTS: RESULTS ("RESULT<TAB>case" lines), made here
# from the log next to it when the guest was stopped before it wrote them.
ftracetest_results() {
	[ -s "$1" ] || [ ! -s "${1%.txt}.log" ] ||
		sed -n 's/^\[[0-9]*\] \(.*\)\t\[\([A-Z]*\)\]$/\2\t\1/p' "${1%.txt}.log" > "$1"
	cat "$1" 2>/dev/null
}

# compare_existing STAGE RESULTS EXPECTED: the patched kernel's results of
# the cases that exist without the series, case by case against the
# unpatched kernel's (EXPECTED).
compare_existing() {
	local stage=$1 res=$2 exp=$3
	ftracetest_results "$res" | grep -v -E "$NEW_CASES" | sort > "$outtop/$stage-patched.cmp"
	grep -v '^#' "$exp" | sort > "$outtop/$stage-base.cmp"
	if [ ! -s "$outtop/$stage-patched.cmp" ]; then
		failed+=("$stage: no results for the existing cases")
	elif ! diff -u "$outtop/$stage-base.cmp" "$outtop/$stage-patched.cmp"; then
		failed+=("$stage: results differ from the unpatched kernel's")
	else
		echo "vm: $(wc -l < "$outtop/$stage-base.cmp") existing cases, the same results" \
		     "as the unpatched kernel's" \
		     "($(cut -f1 "$outtop/$stage-base.cmp" | sort | uniq -c | tr '\n' ' '))"
	fi
}

# check_baseline STAGE RESULTS EXPECTED: the unpatched kernel's results
# against EXPECTED, which VM_UPDATE_BASELINE=1 rewrites instead.
check_baseline() {
	local stage=$1 res=$2 exp=$3
	ftracetest_results "$res" | sort > "$outtop/$stage.fresh"
	if [ ! -s "$outtop/$stage.fresh" ]; then
		failed+=("$stage: no results")
	elif [ -n "${VM_UPDATE_BASELINE:-}" ]; then
		{ grep '^#' "$exp" | grep -v '^# FTRACE_\(FULL_TESTS\|FULL_SKIP\|CASE_TIMEOUT\)='
		  if [ "$stage" = ftrace-full-base ]; then
			echo "# FTRACE_FULL_TESTS=\"$ft_tests\""
			echo "# FTRACE_FULL_SKIP=\"$ft_skip\""
			echo "# FTRACE_CASE_TIMEOUT=\"$ft_timeout\""
		  fi
		  cat "$outtop/$stage.fresh"; } > "$outtop/$stage.new"
		mv "$outtop/$stage.new" "$exp"
		echo "vm: ${exp#"$top"/} rewritten"
	elif ! diff -u <(grep -v '^#' "$exp") "$outtop/$stage.fresh"; then
		failed+=("$stage: ${exp#"$top"/} is out of date")
	else
		echo "vm: the unpatched kernel's results match ${exp#"$top"/}"
	fi
}

mkdir -p "$outtop"
kc=${KCACHE:-$top/.cache/kernel}	# as kernel/build.sh
# ftrace-full(-base): by default the test.d paths the baseline was made
# with (its "# FTRACE_FULL_TESTS=" line); FTRACE_FULL_TESTS="" for all.
ft_tests=${FTRACE_FULL_TESTS-$(sed -n 's/^# FTRACE_FULL_TESTS="\(.*\)"$/\1/p' \
	"$top/tests/vm/ftrace-full-base.expected")}
ft_skip=${FTRACE_FULL_SKIP-$(sed -n 's/^# FTRACE_FULL_SKIP="\(.*\)"$/\1/p' \
	"$top/tests/vm/ftrace-full-base.expected")}
# A case near its limit may end in time or not: the baseline's limit, so
# that both kernels run under the same one.
ft_timeout=${FTRACE_CASE_TIMEOUT:-$(sed -n 's/^# FTRACE_CASE_TIMEOUT="\(.*\)"$/\1/p' \
	"$top/tests/vm/ftrace-full-base.expected")}
ft_timeout=${ft_timeout:-240}

# The debug kernel is built while the other stages run: each guest is one
# TCG thread, so one core is free beside it, and a second kernel build
# after them would take 15 of CI's 90 minutes on a slow machine (902 s
# for the patched kernel there, 2026-12-02). Niced, one job: the guests
# and their timing come first.
debug_pid=
case " $stages " in
*" stress "*)
	if [ "${VM_DEBUG_BESIDE:-1}" = 1 ] && [ "$stages" != stress ]; then
		echo "vm: building the debug kernel beside the other stages" \
		     "(vm-out/build-debug-beside.log)"
		JOBS=1 nice -n 19 "$top/kernel/build.sh" debug \
			> "$outtop/build-debug-beside.log" 2>&1 &
		debug_pid=$!
	fi
	;;
esac

for stage in $stages; do
	case "$stage" in
	kernel)
		say "kernel: option, trigger, shared cookies, instances, trace-cmd"
		boot patched kernel guest-kernel.sh "$build"
		;;
	ftrace)
		say "ftrace: ftracetest on the patched kernel"
		boot patched ftrace guest-ftracetest.sh "$kc/tree-patched" patched \
			trigger event ftrace/userstacktrace-delay.tc \
			instances/instance-user-unwind.tc
		new=$(grep -E "$NEW_CASES" "$outtop/ftrace/ftracetest-patched.txt")
		echo "$new" | sed 's/^/  new: /'
		if [ "$(echo "$new" | grep -c '^PASS')" -ne 3 ]; then
			failed+=("ftrace: new ftracetest cases")
		fi
		# The existing cases against the unpatched kernel's results,
		# recorded in tests/vm/ftrace-base.expected (stage ftrace-base
		# measures them again): building that kernel too took 10 of CI's
		# 90 minutes.
		compare_existing ftrace "$outtop/ftrace/ftracetest-patched.txt" \
			"$top/tests/vm/ftrace-base.expected"
		;;
	ftrace-base)
		say "ftrace-base: the trigger/ and event/ cases on the unpatched kernel"
		boot base ftrace-base guest-ftracetest.sh "$kc/src" base trigger event
		check_baseline ftrace-base "$outtop/ftrace-base/ftracetest-base.txt" \
			"$top/tests/vm/ftrace-base.expected"
		;;
	ftrace-full)
		say "ftrace-full: ftracetest (${ft_tests:-the whole suite}) on the patched test kernel"
		# shellcheck disable=SC2086 # a list of test.d paths
		VM_TIMEOUT=${VM_TIMEOUT:-5400} boot test-patched ftrace-full guest-ftracetest.sh \
			"$kc/tree-patched" full-patched -m "$kc/build-test-patched/modroot" \
			-t "$ft_timeout" -s "$ft_skip" $ft_tests
		grep -E "$NEW_CASES" "$outtop/ftrace-full/ftracetest-full-patched.txt" |
			sed 's/^/  new: /'
		compare_existing ftrace-full "$outtop/ftrace-full/ftracetest-full-patched.txt" \
			"$top/tests/vm/ftrace-full-base.expected"
		;;
	ftrace-full-base)
		say "ftrace-full-base: ftracetest (${ft_tests:-the whole suite}) on the unpatched test kernel"
		# shellcheck disable=SC2086 # a list of test.d paths
		VM_TIMEOUT=${VM_TIMEOUT:-5400} boot test-base ftrace-full-base \
			guest-ftracetest.sh "$kc/src" full-base -m "$kc/build-test-base/modroot" \
			-t "$ft_timeout" -s "$ft_skip" $ft_tests
		check_baseline ftrace-full-base \
			"$outtop/ftrace-full-base/ftracetest-full-base.txt" \
			"$top/tests/vm/ftrace-full-base.expected"
		;;
	daemon)
		say "daemon: trace-defer on the patched kernel"
		if [ -x "$top/tests/vm/guest-daemon.sh" ]; then
			boot patched daemon guest-daemon.sh "$build"
		else
			failed+=("daemon: tests/vm/guest-daemon.sh missing")
		fi
		;;
	report)
		say "report: trace-defer report of a trace.dat on the patched kernel"
		# 564 s of TCG on an idle machine (2026-11-27; 1,457 s before the
		# interrupt checks stopped resolving 100,000 events with jq, and
		# CI timed out at 1500 s on a busier one): 1500 s leaves room.
		VM_TIMEOUT=${VM_TIMEOUT:-1500} boot patched report guest-report.sh "$build"
		;;
	names)
		say "names: user frames named from the file identity in the records"
		# About 345 s of TCG on an idle machine (2026-11-30); over 900 s
		# on a slower one (2026-12-02: the daemon stage took 232 s there
		# against 94-112 s): 1800 s leaves room.
		VM_TIMEOUT=${VM_TIMEOUT:-1800} boot patched names guest-names.sh "$build"
		;;
	systemd)
		say "systemd: trace-defer.service with systemd as PID 1"
		VM_INIT=$top/kernel/guest-init-systemd.sh VM_TIMEOUT=${VM_TIMEOUT:-900} \
			boot patched systemd guest-systemd.sh "$build"
		;;
	stress)
		say "stress: debug kernel (KASAN, lockdep, PROVE_RCU)"
		if [ -n "$debug_pid" ]; then
			t0=$SECONDS
			wait "$debug_pid"
			echo "vm: the debug kernel built beside the other stages" \
			     "(exit $?, waited $((SECONDS - t0)) s more for it)"
			tail -n 1 "$outtop/build-debug-beside.log"
		fi
		# Under KASAN and lockdep, TCG runs ACPI's AML so slowly that the
		# PCI interrupt routing method (_PRT) hits ACPICA's 30 s loop
		# timeout and virtio gets no IRQ; acpi=noirq takes the routing
		# from the BIOS tables instead (ACPI still enumerates the CPUs).
		nf=${#failed[@]} nt=${#tails[@]} nd=${#digests[@]} try=1
		# A KASAN report from an interrupt in start_kernel, at about
		# 0.005 s, before any tracing (seen in 1 of 6 boots, and twice in
		# a row on a loaded host): kept, shown, and the stage booted
		# again, up to three boots; a report after the guest script
		# started is never retried.
		while ! stress_boot && boot_report "$outtop/stress/console.log" &&
			[ "$try" -lt 3 ]; do
			echo "vm: stress: boot $try met a kernel report before the test ran;" \
			     "kept in vm-out/stress-boot$try/, booting again"
			rm -rf "$outtop/stress-boot$try"
			mv "$outtop/stress" "$outtop/stress-boot$try"
			mv "$outtop/stress-boot$try/results" "$outtop/stress-boot$try/results.boot$try"
			failed=("${failed[@]:0:$nf}")
			tails=("${tails[@]:0:$nt}")
			digests=("${digests[@]:0:$nd}")
			try=$((try + 1))
		done
		;;
	*)
		echo "vm: unknown stage $stage" >&2
		failed+=("$stage: unknown")
		;;
	esac
done

say "summary"
cat "$outtop"/*/results 2>/dev/null | sort | uniq -c | awk '{ print "  " $0 }' | grep -v " PASS " || true
echo "  guests: ${stage_times[*]/%/,} $SECONDS s in all" | sed 's/, *\([0-9]* s in all\)/; \1/'
echo "  $(cat "$outtop"/*/results 2>/dev/null | grep -c '^PASS') checks passed," \
     "$(cat "$outtop"/*/results 2>/dev/null | grep -c '^FAIL') failed"
if [ "${#failed[@]}" -ne 0 ]; then
	[ "${#tails[@]}" -ne 0 ] && printf '%s\n' "${tails[@]}" | cut -c1-160
	[ "${#digests[@]}" -ne 0 ] && printf '%s\n' "== kernel reports" "${digests[@]}" |
		cut -c1-200
	printf 'vm-test FAILED:\n'
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "vm-test: all stages passed ($stages)"
