# Helpers for guest test scripts (sourced). Results go to $TD_OUT/results
# as "PASS name" or "FAIL name: why" lines; the host side reads them.
T=/sys/kernel/tracing
RESULTS=${TD_OUT:-/tmp}/results
AWKDIR=$(dirname "${BASH_SOURCE[0]}")
# Lines of a kernel log that no test may cause (grep -E / awk regex); used
# in the guest on dmesg and on the host on the console log.
KREPORTS='BUG:|WARNING:|KASAN|circular locking|suspicious RCU|inconsistent lock|lock held when returning|Oops|Call Trace'

# resolve DIR/X.jsonl: writes DIR/X.v1.jsonl, the same events with their
# stacks in every line (layout full), through contrib/td-json-resolve;
# fails when an event refers to a stack id no line before it defined.
TD_RESOLVE=$(cd "$AWKDIR/../.." && pwd)/contrib/td-json-resolve
resolve() { "$TD_RESOLVE" "$1" > "${1%.jsonl}.v1.jsonl"; }

# The guest log gives each result the script's time so far: a stage near
# its time limit shows where the time went.
pass() { echo "PASS $1" >> "$RESULTS"; echo "PASS $1 [${SECONDS}s]"; }
fail() { echo "FAIL $1: $2" >> "$RESULTS"; echo "FAIL $1: $2 [${SECONDS}s]"; }

# check NAME CMD...: PASS if the command succeeds, else FAIL with its output
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "$(echo "$out" | tail -n 5 | tr '\n' ' ')"
	fi
}

# Records (see trace2rec.awk) of every CPU buffer of instance directory $1
records() {
	local dir=$1 c
	for c in "$dir"/per_cpu/cpu*; do
		gawk -v cpu="${c##*cpu}" -f "$AWKDIR/trace2rec.awk" "$c/trace"
	done
}

# funcs BINARY ADDR...: the function of each address in a non-PIE binary,
# one per line ("?" when none). Every address but the first is a return
# address and is looked up at addr - 1.
funcs() {
	local bin=$1
	shift
	nm -n "$bin" | gawk -v addrs="$*" '
		$2 ~ /^[Tt]$/ { n++; start[n] = strtonum("0x" $1); name[n] = $3 }
		END {
			k = split(addrs, a, " ")
			for (i = 1; i <= k; i++) {
				x = strtonum(a[i]) - (i > 1 ? 1 : 0)
				r = "?"
				for (j = n; j >= 1; j--)
					if (start[j] <= x) { r = name[j]; break }
				print r
			}
		}'
}

# A fresh instance with the given name; echoes its directory.
new_instance() {
	rmdir "$T/instances/$1" 2>/dev/null
	mkdir "$T/instances/$1" && echo "$T/instances/$1"
}

# run_daemon OUT ARGS...: start trace-defer ($td) with ARGS in the
# background (stdout/stderr to OUT.stdout/OUT.stderr, $PRIO in front if
# set), wait until its instance exists; sets dpid, and started=yes|no.
run_daemon() {
	local out=$1
	shift
	${PRIO:-} "$td" "$@" > "$out.stdout" 2> "$out.stderr" &
	dpid=$!
	started=no
	for _ in $(seq 100); do
		[ -d $T/instances/trace-defer ] && { started=yes; break; }
		sleep 0.1
	done
	sleep 0.3
}

# stop_daemon: SIGTERM and wait for it; sets drc to its exit status.
stop_daemon() {
	kill -TERM "$dpid"
	wait "$dpid"
	drc=$?
}
