#!/usr/bin/env bash
# The one command a new user runs on a fresh Debian machine (as root):
# install dependencies, build trace-defer, and show deferred user stacks
# stitched to kernel events.
#
# On a kernel that has the deferred stack events (the kernel-patches/
# series), the demo runs here. Otherwise it fetches Linux 7.3, applies the
# series, builds it (cached in .cache/kernel, a few minutes the first time)
# and runs the demo in a QEMU guest that sees this machine's files.
# Outputs land in demo-out/: demo.jsonl, demo.folded, demo.svg.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: run as root (it installs packages and uses tracefs): sudo $0" >&2
	exit 1
fi
bash scripts/install-deps.sh
make -s all

out=$top/demo-out
if [ -e /sys/kernel/tracing/events/ftrace/user_unwind_cookie ] ||
   [ -e /sys/kernel/debug/tracing/events/ftrace/user_unwind_cookie ]; then
	echo "demo: this kernel has deferred user stacks; running here"
	rm -rf "$out"
	mkdir -p "$out"
	TD_OUT=$out tests/vm/guest-demo.sh "$top/build"
else
	echo "demo: $(uname -r) has no deferred user stack events;" \
	     "booting the patched Linux 7.3 under QEMU"
	image=$(kernel/build.sh patched | tail -n 1)
	VM_TIMEOUT=600 kernel/run-vm.sh "$image" "$out" tests/vm/guest-demo.sh "$top/build" ||
		{ echo "demo: the guest failed, see $out/console.log" >&2; cat "$out/guest.log" >&2; exit 1; }
	cat "$out/guest.log"
fi
echo
echo "demo: outputs in $out/: demo.jsonl (JSON lines), demo.folded (folded stacks), demo.svg (flame graph)"
