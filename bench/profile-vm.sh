#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make bench-profile: where the always-on daemon's CPU goes in deferred
# mode, inside the patched kernel under QEMU, against the drain loop on
# the same uncapped ping-pong (bench/guest-profile.sh). Prints each
# reader's events, CPU per event and their ratio (the live target's
# figure, from one step: coarse), then the top of each `perf report`.
# The whole reports stay in $BENCH_PROFILE_OUT (default build/bench/profile).
#
# Environment: KIMAGE (bzImage; default `kernel/build.sh patched`),
# BENCH_PROFILE_SECS (load seconds per reader, default 10), BENCH_PROFILE_TOP
# (report lines printed, default 25).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
BUILD=$(realpath "$BUILD")
out=${BENCH_PROFILE_OUT:-$BUILD/bench/profile}
secs=${BENCH_PROFILE_SECS:-10}
lines=${BENCH_PROFILE_TOP:-25}

command -v qemu-system-x86_64 > /dev/null ||
	{ echo "bench-profile: qemu-system-x86_64 is not installed" >&2; exit 77; }
command -v perf > /dev/null || { echo "bench-profile: perf is not installed" >&2; exit 77; }
case "$BUILD/" in
"$top"/*) ;;
/tmp/* | /run/* | /proc/* | /sys/* | /dev/*)
	echo "bench-profile: $BUILD is hidden in the guest; build inside the checkout" >&2
	exit 2 ;;
esac
kimage=${KIMAGE:-}
if [ -z "$kimage" ]; then
	kimage=$("$top/kernel/build.sh" patched | tail -n 1) || exit 1
fi
[ -r "$kimage" ] || { echo "bench-profile: no kernel image at '$kimage'" >&2; exit 1; }

VM_TIMEOUT=${VM_TIMEOUT:-600} "$top/kernel/run-vm.sh" "$kimage" "$out" \
	"$top/bench/guest-profile.sh" "$BUILD" "$secs" > /dev/null
rc=$?
if [ "$rc" -ne 0 ] || [ ! -s "$out/summary" ]; then
	echo "bench-profile: guest exit $rc; see $out/guest.log" >&2
	tail -n 5 "$out/guest.log" >&2 2>/dev/null
	exit 1
fi
cat "$out/summary"
awk '{for (i = 2; i <= NF; i++) { split($i, kv, "="); v[$1, kv[1]] = kv[2] } }
     END { d = v["drain", "ns_per_event"]; a = v["profiles", "ns_per_event"];
	   if (d > 0) printf "always-on daemon / drain loop, CPU per event: %.2fx (target 1.5x)\n", a / d }' \
	"$out/summary"
for r in drain profiles; do
	printf '\n== %s: perf report (cpu-clock samples, by symbol)\n' "$r"
	head -n "$lines" "$out/$r.report"
done
