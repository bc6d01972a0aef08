#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host tests: trace-defer against this machine's real tracefs (root).
# Runs every tests/host/t_*.sh, prints a summary, fails if any failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export BUILD=${BUILD:-build}

if [ "$(id -u)" != 0 ]; then
	echo "host-test: needs root (tracefs instances)" >&2
	exit 1
fi
if ! mountpoint -q /sys/kernel/tracing; then
	mount -t tracefs nodev /sys/kernel/tracing || exit 1
fi

passed=() failed=()
for t in "$here"/t_*.sh; do
	name=$(basename "$t" .sh)
	echo "== $name"
	start=$(date +%s)
	if "$t"; then
		passed+=("$name")
	else
		failed+=("$name")
	fi
	echo "   ($(($(date +%s) - start)) s)"
done

echo
echo "host-test summary: ${#passed[@]} passed, ${#failed[@]} failed"
for n in "${failed[@]}"; do
	echo "  FAILED: $n"
done
[ "${#failed[@]}" -eq 0 ] && [ "${#passed[@]}" -gt 0 ]
