#!/usr/bin/env bash
# Check the kernel series as a maintainer would: every patch passes
# scripts/checkpatch.pl --strict, and the tree builds after every patch
# (incrementally, in $KCACHE/build-series, with the test configuration).
#
#   kernel/check-series.sh [--no-build]
#
# checkpatch's "added, moved or deleted file(s), does MAINTAINERS need
# updating?" reminder is reported but not counted: the new files live in
# kernel/trace/ and tools/testing/selftests/ftrace/, which the TRACING
# entry of MAINTAINERS already covers.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export KCACHE=${KCACHE:-$top/.cache/kernel}
"$top/kernel/fetch-source.sh" >&2
src=$KCACHE/src tree=$KCACHE/tree-series out=$KCACHE/build-series
build=1
[ "${1:-}" = --no-build ] && build=0

if [ ! -e "$tree/.git" ]; then
	git -C "$src" worktree prune
	git -C "$src" worktree add -q --detach "$tree" pristine
fi
git -C "$tree" am --abort >/dev/null 2>&1 || true
git -C "$tree" reset -q --hard pristine

bad=0
n=0
while read -r p; do
	case "$p" in '' | '#'*) continue ;; esac
	n=$((n + 1))
	echo "== $p"
	# Python helpers of checkpatch (spdxcheck) want the system python3.
	res=$(PATH=/usr/bin:/bin:$PATH "$tree/scripts/checkpatch.pl" --strict -q \
		"$top/kernel-patches/$p" 2>&1 || true)
	real=$(echo "$res" | grep -E '^(ERROR|WARNING|CHECK):' |
		grep -v 'does MAINTAINERS need updating' || true)
	if [ -n "$real" ]; then
		echo "$res"
		bad=1
	else
		echo "   checkpatch --strict: clean${res:+ (MAINTAINERS reminder only)}"
	fi
	git -C "$tree" -c user.name=trace-defer -c user.email=trace-defer@localhost \
		am -q "$top/kernel-patches/$p"
	if [ "$build" -eq 1 ]; then
		if [ ! -e "$out/.config" ]; then
			mkdir -p "$out"
			cp "$KCACHE/build-patched/.config" "$out/.config" 2>/dev/null ||
				"$top/kernel/build.sh" patched > /dev/null
			cp "$KCACHE/build-patched/.config" "$out/.config"
		fi
		t0=$SECONDS
		if make -s -C "$tree" O="$out" olddefconfig > /dev/null &&
		   make -s -C "$tree" O="$out" -j"$(nproc)" bzImage 2> "$out/build-$n.log"; then
			w=$(grep -c 'warning:' "$out/build-$n.log" || true)
			echo "   builds ($((SECONDS - t0)) s, $w warnings)"
			[ "$w" -eq 0 ] || { cat "$out/build-$n.log"; bad=1; }
		else
			tail -n 30 "$out/build-$n.log"
			echo "   DOES NOT BUILD"
			bad=1
		fi
	fi
done < "$top/kernel-patches/series"
[ "$bad" -eq 0 ] && echo "series: $n patches, all clean${build:+ and building}"
exit "$bad"
