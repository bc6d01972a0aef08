# SPDX-License-Identifier: GPL-2.0
# Helpers for the host tests (sourced). Each test gets its own instance
# name and run directory, so tests never touch a real trace-defer service
# or each other, and a scratch directory removed at exit.

set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
TD="$BUILD/trace-defer"
FP_CHAIN="$BUILD/progs/fp_chain"
TRACEFS=/sys/kernel/tracing
NAME="td-host-$$-$(basename "$0" .sh)"
SCRATCH=$(mktemp -d /tmp/td-host.XXXXXX)
RUN_DIR="$SCRATCH/run"
failures=0
BG_PIDS=()

log() { echo "  $*"; }
fail() { echo "  FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "  ok: $*"; }
check() {	# check "what" command...
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}

# Background processes we started, killed at exit (by pid, never by name).
bg() { "$@" & BG_PIDS+=($!); }

cleanup() {
	local p
	# The shell reports jobs it reaps after a kill ("Killed"): not news here.
	exec 2>/dev/null
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ -d "$TRACEFS/instances/$NAME" ] || [ -d "$TRACEFS/instances/$NAME-names" ]; then
		"$TD" --cleanup -q -i "$NAME" --run-dir "$RUN_DIR" ||
			rmdir "$TRACEFS/instances/$NAME" "$TRACEFS/instances/$NAME-names"
	fi
	[ -n "${TD_KEEP_SCRATCH:-}" ] || rm -rf "$SCRATCH"
}
trap cleanup EXIT

ensure_tracefs() {
	if ! mountpoint -q "$TRACEFS"; then
		mount -t tracefs nodev "$TRACEFS" || { echo "cannot mount tracefs"; exit 1; }
	fi
}

instance_exists() { [ -d "$TRACEFS/instances/${1:-$NAME}" ]; }
instance_gone() { ! instance_exists "$@"; }

# The lock file of our instance holds a pid only while the instance exists.
marker_clear() { [ ! -s "$RUN_DIR/$NAME.lock" ]; }

# Wait until the daemon has turned tracing on in its instance (up to ~10 s).
wait_tracing() {
	local i
	for i in $(seq 100); do
		if [ "$(cat "$TRACEFS/instances/$NAME/tracing_on" 2>/dev/null)" = 1 ]; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# Wait for process $1 to exit (up to $2 tenths of a second); its status in $WAIT_RC.
wait_exit() {
	local pid=$1 n=${2:-200} i
	for i in $(seq "$n"); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			WAIT_RC=$?
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# Start fp_chain blocking in c() every MS ms; sets FP_PID.
start_fp_chain() {
	local ms=${1:-20}
	"$FP_CHAIN" sleep "$ms" 100000 >"$SCRATCH/fp_chain.out" &
	FP_PID=$!
	BG_PIDS+=("$FP_PID")
}

td() { "$TD" -i "$NAME" --run-dir "$RUN_DIR" "$@"; }

# The CPUs this shell may run on, in order, one per word ("0-2,5": 0 1 2 5).
allowed_cpus() {
	local list range
	list=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
	for range in ${list//,/ }; do
		seq "${range%-*}" "${range#*-}"
	done
}

# resolve DIR/X.jsonl: writes DIR/X.v1.jsonl, the same events with their
# stacks in every line (layout full), through contrib/td-json-resolve;
# fails when an event refers to a stack id no line before it defined.
resolve() { "$TOP/contrib/td-json-resolve" "$1" >"${1%.jsonl}.v1.jsonl"; }
# The daemon in the background, its own pid in $D (not a subshell's).
td_bg() {
	"$TD" -i "$NAME" --run-dir "$RUN_DIR" "$@" &
	D=$!
	BG_PIDS+=("$D")
}

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$(basename "$0"): $failures check(s) failed"
		exit 1
	fi
	echo "$(basename "$0"): all checks passed"
	exit 0
}

ensure_tracefs
[ -x "$TD" ] || { echo "missing $TD (run make)"; exit 1; }
[ -x "$FP_CHAIN" ] || { echo "missing $FP_CHAIN (run make)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "host tests need root"; exit 1; }
