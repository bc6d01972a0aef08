#!/usr/bin/env bash
# Show that the series' selftests can fail: build the patched kernel with
# one deliberate bug at a time and run the new ftracetest cases on it.
# Every mutant must make at least one of them fail.
#
#   kernel/mutants.sh [NAME...]        (default: all mutants below)
#
# Uses the tree and build directory of kernel/check-series.sh
# ($KCACHE/tree-series, build-series; run that first, or this builds them)
# and puts the tree back afterwards. Slow (a kernel build and a VM boot per
# mutant, some 6 minutes each under TCG), so not part of make check.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export KCACHE=${KCACHE:-$top/.cache/kernel}
out=${MUTANT_OUT:-$top/vm-out/mutants}

# name@file@sed expression@what it breaks
mutants=(
"no_frames@kernel/trace/trace_user_unwind.c@s/nr = min_t(unsigned long, trace->nr, max \/ (sizeof(long) + 1));/nr = 0;/@every stack recorded empty"
"top_buffer@kernel/trace/trace_user_unwind.c@0,/trace_user_unwind_record(tr, trace, cookie, maps,/s//trace_user_unwind_record(top_trace_array(), trace, cookie, maps,/@stacks of the first 63 instances go to the top buffer"
"no_exec_flag@kernel/trace/trace_user_unwind.c@s/flags |= USER_UNWIND_STACK_EXEC;/flags = 0;/@a stack unwound after execve() is not marked"
"no_cookie@kernel/trace/trace_user_unwind.c@/^void trace_user_unwind_request/,/^}/s/entry->cookie = cookie;/entry->cookie = 0;/@cookie records carry no cookie"
"zero_cookies@kernel/trace/trace_user_unwind.c@s/entry->cookie = cookie;/entry->cookie = 0;/@every record carries cookie 0"
)
want=("$@")

. "$top/kernel/series-tree.sh"
build=$series_build
mkdir -p "$out"
git -C "$tree" checkout -q --detach "$full"
trap 'git -C "$tree" checkout -q -- .' EXIT

bad=0
for m in "${mutants[@]}"; do
	IFS='@' read -r name file expr what <<< "$m"
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
exit "$bad"
