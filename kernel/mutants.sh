#!/usr/bin/env bash
# Show that the series' tests can fail: build the kernel with one
# deliberate bug at a time and run the tests that should catch it. Every
# mutant must make at least one of them fail.
#
#   kernel/mutants.sh [NAME...]        (default: all mutants below)
#
# Two kinds of mutant:
#   ftracetest  the patched kernel; the series' new ftracetest cases run
#   stress      the debug kernel (KASAN, lockdep, PROVE_RCU, the sample
#               module); tests/vm/guest-stress.sh runs, and the mutant is
#               caught if it fails or the kernel reports anything
#
# Uses the tree of kernel/check-series.sh ($KCACHE/tree-series; build
# directories build-series and, for stress mutants, build-series-debug) and
# puts the tree back afterwards. Slow (a kernel build and a VM boot per
# mutant, 6 to 20 minutes each under TCG; the first debug build ~12), so
# not part of make check.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export KCACHE=${KCACHE:-$top/.cache/kernel}
out=${MUTANT_OUT:-$top/vm-out/mutants}

# name@file@sed expression@what it breaks[@kind, default ftracetest]
mutants=(
"no_frames@kernel/trace/trace_user_unwind.c@s/nr = min_t(unsigned long, trace->nr, max \/ (sizeof(long) + 1));/nr = 0;/@every stack recorded empty"
"top_buffer@kernel/trace/trace_user_unwind.c@0,/trace_user_unwind_record(tr, trace, cookie, maps,/s//trace_user_unwind_record(top_trace_array(), trace, cookie, maps,/@stacks of the first 63 instances go to the top buffer"
"no_exec_unwind@fs/exec.c@/^\tunwind_deferred_task_exec(me);$/d@an execve() entry event gets the new program's stack"
"no_cookie@kernel/trace/trace_user_unwind.c@/^void trace_user_unwind_request/,/^}/s/entry->cookie = cookie;/entry->cookie = 0;/@cookie records carry no cookie"
"zero_cookies@kernel/trace/trace_user_unwind.c@s/entry->cookie = cookie;/entry->cookie = 0;/@every record carries cookie 0"
"no_release@kernel/trace/trace.c@/^\ttrace_user_unwind_release(tr);$/d@an instance removed after its module event's trigger keeps its unwind reference@stress"
)
want=("$@")

. "$top/kernel/series-tree.sh"
# KREPORTS: what no test may make the kernel print (shared with the guests)
eval "$(grep '^KREPORTS=' "$top/tests/vm/lib.sh")"
build=$series_build
mkdir -p "$out"
git -C "$tree" checkout -q --detach "$full"
trap 'git -C "$tree" checkout -q -- .' EXIT

# build_debug: the mutated tree with the debug flavour's configuration
# (kernel/build.sh debug makes it), bzImage and modules.
build_debug() {
	local dbuild=$KCACHE/build-series-debug
	"$top/kernel/build.sh" debug > /dev/null
	mkdir -p "$dbuild"
	cmp -s "$KCACHE/build-debug/.config" "$dbuild/.config" ||
		cp "$KCACHE/build-debug/.config" "$dbuild/.config"
	make -s -C "$tree" O="$dbuild" -j"$(nproc)" bzImage modules
}

# run_stress NAME: the stress stage's guest on the mutated debug kernel;
# caught when the guest fails or the console has a kernel report.
run_stress() {
	local name=$1 dbuild=$KCACHE/build-series-debug rc=0 res
	VM_APPEND="acpi=noirq ${VM_APPEND:-}" VM_MEM=2048 VM_TIMEOUT=1500 \
		"$top/kernel/run-vm.sh" "$dbuild/arch/x86/boot/bzImage" "$out/$name" \
		"$top/tests/vm/guest-stress.sh" "$top/${BUILD:-build}" "${STRESS_SECONDS:-60}" \
		"$dbuild/samples/trace_events/trace_custom_sched.ko" > /dev/null 2>&1 || rc=$?
	res=$(grep -c '^FAIL' "$out/$name/guest.log" 2>/dev/null || true)
	if grep -q -E "$KREPORTS" "$out/$name/console.log" 2>/dev/null; then
		echo "mutant $name ($what): caught [kernel report: $(grep -m 1 -E \
			"$KREPORTS" "$out/$name/console.log" | tr -d '\r')]"
	elif [ "$rc" -ne 0 ] || [ "${res:-0}" -gt 0 ]; then
		echo "mutant $name ($what): caught [guest exit $rc, $res failed checks]"
	else
		echo "mutant $name ($what): NOT caught [guest exit 0, no kernel report]"
		bad=1
	fi
}

bad=0 debug_built=
for m in "${mutants[@]}"; do
	IFS='@' read -r name file expr what kind <<< "$m"
	if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $name "* ]]; then
		continue
	fi
	git -C "$tree" checkout -q -- .
	sed -i "$expr" "$tree/$file"
	if git -C "$tree" diff --quiet; then
		echo "mutant $name: the expression no longer changes $file"
		bad=1
		continue
	fi
	if [ "${kind:-ftracetest}" = stress ]; then
		debug_built=1
		if ! build_debug > "$out/$name-build.log" 2>&1; then
			echo "mutant $name: does not build, see $out/$name-build.log"
			bad=1
			continue
		fi
		run_stress "$name"
		continue
	fi
	if ! make -s -C "$tree" O="$build" -j"$(nproc)" bzImage > "$out/$name-build.log" 2>&1; then
		echo "mutant $name: does not build, see $out/$name-build.log"
		bad=1
		continue
	fi
	"$top/kernel/run-vm.sh" "$build/arch/x86/boot/bzImage" "$out/$name" \
		"$top/tests/vm/guest-ftracetest.sh" "$tree" "mutant" \
		trigger/trigger-user-stacktrace.tc ftrace/userstacktrace-delay.tc \
		instances/instance-user-unwind.tc > /dev/null 2>&1 || true
	res=$(cut -f1 "$out/$name/ftracetest-mutant.txt" 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')
	if grep -q '^FAIL' "$out/$name/ftracetest-mutant.txt" 2>/dev/null; then
		echo "mutant $name ($what): caught [$res]"
	else
		echo "mutant $name ($what): NOT caught [$res]"
		bad=1
	fi
done
# The tree goes back to the series, and its build with it
git -C "$tree" checkout -q -- .
make -s -C "$tree" O="$build" -j"$(nproc)" bzImage > /dev/null 2>&1 || true
[ -z "$debug_built" ] || build_debug > /dev/null 2>&1 || true
exit "$bad"
