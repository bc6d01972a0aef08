#!/usr/bin/env bash
# Check the kernel series as a maintainer would: every patch passes
# scripts/checkpatch.pl --strict, and the kernel builds after every patch
# with the test configuration, without warnings.
#
#   kernel/check-series.sh [--no-build]
#
# The builds walk a tree of their own ($KCACHE/tree-series, build-series)
# through the series, one patch at a time, rebuilding incrementally with the
# patched flavour's configuration. The trees the VM tests boot are never
# touched: moving them back and forth would make their next build start
# over (every file a patch touched gets a new time stamp).
#
# checkpatch's "added, moved or deleted file(s), does MAINTAINERS need
# updating?" reminder is reported but not counted: the new files are in
# kernel/trace/ and tools/testing/selftests/ftrace/, which the TRACING
# entry of MAINTAINERS already covers. So are one CHECK on a macro that the
# rename patch only renames, and checkpatch's failure to look up the
# upstream commit of a Fixes: tag (below, with why).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export KCACHE=${KCACHE:-$top/.cache/kernel}
build=1
[ "${1:-}" = --no-build ] && build=0

. "$top/kernel/series-tree.sh"
out=$series_build
mapfile -t commits < <(git -C "$tree" rev-list --reverse pristine.."$full")

# accept REGEX: move the lines of $real matching REGEX (whole line) to $known.
accept() {
	local hit
	hit=$(echo "$real" | grep -x "$1" || true)
	[ -n "$hit" ] || return 0
	known="${known:+$known; }$hit"
	real=$(echo "$real" | grep -vx "$1" || true)
}

bad=0 n=0
while read -r p; do
	case "$p" in '' | '#'*) continue ;; esac
	echo "== $p"
	# checkpatch's Python helper (spdxcheck) wants the system python3.
	# From the kernel tree: run inside this repository, checkpatch would
	# take a patch file that git tracks for a source file and check that.
	res=$(cd "$tree" && PATH=/usr/bin:/bin:$PATH ./scripts/checkpatch.pl --strict -q \
		"$top/kernel-patches/$p" 2>&1 || true)
	real=$(echo "$res" | grep -E '^(ERROR|WARNING|CHECK):' |
		grep -v 'does MAINTAINERS need updating' || true)
	known=
	case "$p" in
	*Rename-__dynamic_array-to-__dynamic_field*)
		# The rename keeps the body of 7.3's description macro,
		# whose argument is a type: sizeof/alignof/is_signed_type of
		# a type have no side effects. Its name "_type" (checkpatch
		# spares "type") cannot change: ".type =" is in the body.
		accept "CHECK: Macro argument reuse '_type' - possible side-effects?"
		;;
	esac
	# Fixes: tags name upstream commits, which a tree unpacked from
	# Debian's linux-source package (no history) cannot look up.
	accept "WARNING: Unknown commit id '[0-9a-f]\{12\}', maybe rebased or not pulled?"
	if [ -n "$real" ]; then
		echo "$res"
		bad=1
	else
		reminder=$(echo "$res" | grep 'does MAINTAINERS need updating' || true)
		echo "   checkpatch --strict: clean${reminder:+ but for the MAINTAINERS reminder}${known:+ but for the known $known}"
	fi
	if [ "$build" -eq 1 ]; then
		git -C "$tree" checkout -q --detach "${commits[$n]}"
		t0=$SECONDS
		if make -s -C "$tree" O="$out" -j"$(nproc)" bzImage 2> "$out/series-$n.log"; then
			w=$(grep -c 'warning:' "$out/series-$n.log" || true)
			echo "   builds ($((SECONDS - t0)) s, $w warnings)"
			[ "$w" -eq 0 ] || { cat "$out/series-$n.log"; bad=1; }
		else
			tail -n 30 "$out/series-$n.log"
			echo "   DOES NOT BUILD"
			bad=1
		fi
	fi
	n=$((n + 1))
done < "$top/kernel-patches/series"
[ "$n" -eq "${#commits[@]}" ] || { echo "series: $n patches but ${#commits[@]} commits"; bad=1; }
if [ "$bad" -eq 0 ]; then
	echo "series: $n patches, checkpatch --strict clean$([ "$build" -eq 1 ] && echo ", each builds")"
fi
exit "$bad"
