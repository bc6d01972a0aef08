#!/bin/bash
# Run ftracetest from a kernel tree on the running kernel.
# Usage: guest-ftracetest.sh TREE LABEL [-m MODROOT] [-t SECS [-s "SKIP..."]]
#                            [TEST...]
#   (no TEST: the whole suite; -m: the kernel's modules as installed by
#   kernel/build.sh, MODROOT/lib/modules/RELEASE, made the guest's
#   /lib/modules for the cases that modprobe a sample module; -t: one
#   ftracetest run per case file, each stopped after SECS seconds and
#   recorded as TIMEOUT; -s: test.d path globs, directories or case files,
#   not run)
# Writes $TD_OUT/ftracetest-LABEL.txt: one "RESULT<TAB>description" line per
# case, and with -t ftracetest-LABEL.times: "SECONDS<TAB>test.d path".
tree=$1 label=$2
shift 2
case_timeout='' skip='' modroot=''
if [ "${1:-}" = -m ]; then
	modroot=$2
	shift 2
fi
if [ "${1:-}" = -t ]; then
	case_timeout=$2
	shift 2
fi
if [ "${1:-}" = -s ]; then
	skip=$2
	shift 2
fi
. "$(dirname "$0")/lib.sh"
ft=$tree/tools/testing/selftests/ftrace
# What some cases need besides the kernel, else they are UNRESOLVED: the
# inter-event histogram cases ping the loopback address, "poll wait on
# histogram" runs the suite's poll helper, which the suite does not build
# (next to ftracetest: the tree is read-only here, so a copy of the suite),
# the module cases modprobe sample modules (-m, below) and "Meta-selftest:
# Checkbashisms" runs the host's checkbashisms (devscripts, installed by
# scripts/install-deps.sh).
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
# The guest's root is the host's, read-only, where /lib/modules may not
# even exist: the kernel's own modules are put there with an overlay of
# /lib's directory (/usr/lib with a merged /usr) under a layer that holds
# only a "modules" symbolic link to MODROOT/lib/modules, so that
# ftracetest's "modprobe NAME" finds them.
if [ -n "$modroot" ]; then
	rel=$(uname -r)
	lib=$(realpath /lib)
	if [ ! -e "$modroot/lib/modules/$rel/modules.dep" ]; then
		echo "ftracetest: NO MODULES for $rel in $modroot/lib/modules:" \
			"the cases that modprobe a sample module will be UNRESOLVED"
	elif mkdir -p /run/modlayer &&
	     ln -sfn "$modroot/lib/modules" /run/modlayer/modules &&
	     mount -t overlay -o "lowerdir=/run/modlayer:$lib" overlay "$lib"; then
		echo "ftracetest: modules for $rel from $modroot/lib/modules" \
			"($(grep -c . "$modroot/lib/modules/$rel/modules.order" 2>/dev/null) modules)"
	else
		echo "ftracetest: could not put $modroot/lib/modules at /lib/modules:" \
			"the cases that modprobe a sample module will be UNRESOLVED"
	fi
fi
args=()
for t in "$@"; do args+=("$ft/test.d/$t"); done
log=$TD_OUT/ftracetest-$label.log

# skipped PATH: does test.d path PATH match a pattern of the skip list
# (a glob: a case file, or a directory and what is under it)?
skipped() {
	local s
	for s in $skip; do
		# shellcheck disable=SC2254 # the patterns are globs
		case "$1" in $s | $s/*) return 0 ;; esac
	done
	return 1
}

# One ftracetest per case file, in ftracetest's own order, so that a case
# that does not end costs SECS and is recorded, instead of stopping the run
# (a case stuck in a system call, as turning the function tracer on under
# TCG, is not stopped by a signal: those are skipped instead). The log
# keeps ftracetest's "[N] description<TAB>[RESULT]" lines for the host.
per_case() {
	local cases=() c n=0 rc t0 desc nskip=0
	[ ${#args[@]} -gt 0 ] || args=("$ft/test.d")
	for c in "${args[@]}"; do
		if [ -d "$c" ]; then
			mapfile -t -O ${#cases[@]} cases < <(find "$c" -name '*.tc' | sort)
		else
			cases+=("$c")
		fi
	done
	: > "$log"
	: > "$TD_OUT/ftracetest-$label.times"
	for c in "${cases[@]}"; do
		if skipped "${c#"$ft"/test.d/}"; then
			nskip=$((nskip + 1))
			continue
		fi
		n=$((n + 1))
		t0=$SECONDS
		timeout -k 10 "$case_timeout" "$ft/ftracetest" -l "/tmp/ftlog-$label/$n" "$c" \
			> /tmp/ftcase.log 2>&1
		rc=$?
		grep -E '^\[[0-9]+\] ' /tmp/ftcase.log >> "$log"
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			desc=$(sed -n 's/^# description: *//p' "$c" | head -n 1)
			printf '[%d] %s\t[TIMEOUT]\n' "$n" "$desc" >> "$log"
			# What the stopped case left on: the next case starts clean.
			echo nop > /sys/kernel/tracing/current_tracer 2>/dev/null
			rmdir /sys/kernel/tracing/instances/ftracetest* 2>/dev/null
		fi
		printf '%d\t%s\n' $((SECONDS - t0)) "${c#"$ft"/test.d/}" \
			>> "$TD_OUT/ftracetest-$label.times"
	done
	echo "ftracetest: $n case files, one run each (timeout $case_timeout s)," \
		"$nskip skipped ($skip)" >> "$log"
}

# Straight to the host's directory: a run cut short by the VM's timeout
# still leaves the results of the cases it finished.
if [ -n "$case_timeout" ]; then
	per_case
	rc=0
else
	"$ft/ftracetest" -l /tmp/ftlog-"$label" "${args[@]}" > "$log" 2>&1
	rc=$?
fi
# "[12] description	[PASS]"
sed -n 's/^\[[0-9]*\] \(.*\)\t\[\([A-Z]*\)\]$/\2\t\1/p' "$log" > "$TD_OUT/ftracetest-$label.txt"
cp -r /tmp/ftlog-"$label" "$TD_OUT/" 2>/dev/null
echo "ftracetest $label exit $rc: $(grep -c . "$TD_OUT/ftracetest-$label.txt") cases"
tail -n 8 "$log"
exit 0
