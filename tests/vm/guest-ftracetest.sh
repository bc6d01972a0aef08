#!/bin/bash
# Run ftracetest from a kernel tree on the running kernel.
# Usage: guest-ftracetest.sh TREE LABEL [TEST...]   (no TEST: the whole suite)
# Writes $TD_OUT/ftracetest-LABEL.txt: one "RESULT<TAB>description" line per case.
tree=$1 label=$2
shift 2
. "$(dirname "$0")/lib.sh"
ft=$tree/tools/testing/selftests/ftrace
# What some cases need besides the kernel, else they are UNRESOLVED: the
# inter-event histogram cases ping the loopback address, and "poll wait on
# histogram" runs the suite's poll helper, which the suite does not build
# (next to ftracetest: the tree is read-only here, so a copy of the suite).
ip link set lo up 2>/dev/null
if [ ! -x "$ft/poll" ]; then
	rm -rf /tmp/ftrace-suite
	if cp -r "$ft" /tmp/ftrace-suite &&
	   gcc -O2 -o /tmp/ftrace-suite/poll "$ft/poll.c"; then
		ft=/tmp/ftrace-suite
	else
		echo "ftracetest: could not build the poll helper: the hist poll case will be UNRESOLVED"
	fi
fi
args=()
for t in "$@"; do args+=("$ft/test.d/$t"); done
# Straight to the host's directory: a run cut short by the VM's timeout
# still leaves the results of the cases it finished.
"$ft/ftracetest" -l /tmp/ftlog-"$label" "${args[@]}" > "$TD_OUT/ftracetest-$label.log" 2>&1
rc=$?
# "[12] description	[PASS]"
sed -n 's/^\[[0-9]*\] \(.*\)\t\[\([A-Z]*\)\]$/\2\t\1/p' "$TD_OUT/ftracetest-$label.log" \
	> "$TD_OUT/ftracetest-$label.txt"
cp -r /tmp/ftlog-"$label" "$TD_OUT/" 2>/dev/null
echo "ftracetest $label exit $rc: $(grep -c . "$TD_OUT/ftracetest-$label.txt") cases"
tail -n 8 "$TD_OUT/ftracetest-$label.log"
exit 0
