#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end check of plugin_user_unwind.so with the system's trace-cmd, on
# a kernel that does not have the deferred unwind events.
#
# In a private mount namespace (nothing changes outside it), the tracefs
# events directory is covered by a copy holding the frozen formats of
# ftrace:user_unwind_cookie and ftrace:user_unwind_stack, and
# saved_cmdlines by a file naming the test program. `trace-cmd restore -c`
# then writes a trace.dat head with those formats, and one sub-buffer made
# here (sched_switch, cookie, stack of a live fp_chain) is added to it with
# `trace-cmd restore -i`. The report is checked three ways: stock (no
# plugin: parses, no errors), with the plugin (cookie decoded, frames named
# from /proc/PID/maps), and with the plugin after the program has exited
# (raw addresses: nothing is named from a process that is gone).
#
# Needs root (unshare -m, mount), trace-cmd, python3, and $BUILD/progs/fp_chain
# and $BUILD/plugins/plugin_user_unwind.so (make plugin-check builds them).
# KEEP=FILE keeps a copy of the trace.dat (e.g. to open it in KernelShark).
set -euo pipefail

BUILD=${BUILD:-build}
plugin_dir=$(cd "$BUILD/plugins" && pwd)
fp_chain=$(cd "$BUILD/progs" && pwd)/fp_chain
fail=0
tmp=
fp_pid=

die() { echo "check-report: $*" >&2; exit 1; }

cleanup() {
	exec 3>&- 2>/dev/null || true
	if [ -n "$fp_pid" ]; then
		kill "$fp_pid" 2>/dev/null || true
		wait "$fp_pid" 2>/dev/null || true
	fi
	[ -z "$tmp" ] || rm -rf "$tmp"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || die "needs root (unshare -m)"
for t in trace-cmd unshare python3 nm; do
	command -v "$t" >/dev/null || die "$t not found"
done
[ -f "$plugin_dir/plugin_user_unwind.so" ] || die "no $plugin_dir/plugin_user_unwind.so"
[ -x "$fp_chain" ] || die "no $fp_chain"

tmp=$(mktemp -d /tmp/check-report.XXXXXX)

# A live task with a known chain: main -> a -> b -> c -> read(0).
mkfifo "$tmp/in"
"$fp_chain" read <"$tmp/in" >"$tmp/fp.out" 2>&1 &
fp_pid=$!
exec 3>"$tmp/in"
for _ in $(seq 50); do
	grep -q 'pid=' "$tmp/fp.out" 2>/dev/null && break
	sleep 0.1
done
grep -q "pid=$fp_pid" "$tmp/fp.out" || die "fp_chain did not start"
comm=$(cat "/proc/$fp_pid/comm")

addr() { printf '0x%x' $((0x$(nm "$fp_chain" | awk -v s="$1" '$3 == s { print $1 }') + $2)); }
ip_c=$(addr c 4)
ip_b=$(addr b 4)
ip_a=$(addr a 4)
ip_main=$(addr main 4)

# The events directory the head is written from: the real formats of the
# events kept, and the frozen ones of the kernel series.
ev=$tmp/events
mkdir -p "$ev/ftrace/user_unwind_cookie" "$ev/ftrace/user_unwind_stack" "$ev/sched/sched_switch"
common='	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;
'
printf 'name: user_unwind_cookie\nID: 1001\nformat:\n%s\n%s\n\nprint fmt: %s\n' "$common" \
	'	field:u64 cookie;	offset:8;	size:8;	signed:0;' \
	'"cookie=%llx", REC->cookie' >"$ev/ftrace/user_unwind_cookie/format"
stack_fmt='"cookie=%llx stack=%s", REC->cookie, __print_array(__get_dynamic_array(stack), '
stack_fmt+='__get_dynamic_array_len(stack) / 8, 8)'
printf 'name: user_unwind_stack\nID: 1002\nformat:\n%s\n%b\n%b\n\nprint fmt: %s\n' "$common" \
	'\tfield:u64 cookie;\toffset:8;\tsize:8;\tsigned:0;' \
	'\tfield:__data_loc unsigned long[] stack;\toffset:16;\tsize:4;\tsigned:0;' \
	"$stack_fmt" >"$ev/ftrace/user_unwind_stack/format"
# sched_switch with the layout the sub-buffer below is written in (ID 372).
switch_fmt='"prev_comm=%s prev_pid=%d prev_state=%ld ==> next_comm=%s next_pid=%d", '
switch_fmt+='REC->prev_comm, REC->prev_pid, REC->prev_state, REC->next_comm, REC->next_pid'
printf 'name: sched_switch\nID: 372\nformat:\n%s\n%s\n\nprint fmt: %s\n' "$common" \
	'	field:char prev_comm[16];	offset:8;	size:16;	signed:0;
	field:pid_t prev_pid;	offset:24;	size:4;	signed:1;
	field:int prev_prio;	offset:28;	size:4;	signed:1;
	field:long prev_state;	offset:32;	size:8;	signed:1;
	field:char next_comm[16];	offset:40;	size:16;	signed:0;
	field:pid_t next_pid;	offset:56;	size:4;	signed:1;
	field:int next_prio;	offset:60;	size:4;	signed:1;' \
	"$switch_fmt" >"$ev/sched/sched_switch/format"
printf '%s %s\n' "$fp_pid" "$comm" >"$tmp/saved_cmdlines"

# One sub-buffer: u64 time stamp, u64 commit, then events with a 4-byte
# header {type_len:5 = body/4, time_delta:27}.
python3 - "$tmp/cpu0.raw" "$fp_pid" "$comm" "$ip_c" "$ip_b" "$ip_a" "$ip_main" <<'EOF'
import struct, sys
out, pid, comm = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
ips = [int(x, 16) for x in sys.argv[4:]]
def event(body, delta):
    return struct.pack('<I', (len(body) // 4) | (delta << 5)) + body
def common(etype):
    return struct.pack('<HBBi', etype, 0, 0, pid)
cookie = (5 << 32) | 2
sw = (common(372) + comm[:15].ljust(16, b'\0') + struct.pack('<iiq', pid, 120, 1) +
      b'swapper/1'.ljust(16, b'\0') + struct.pack('<ii', 0, 120))
ck = common(1001) + struct.pack('<Q', cookie)
st = (common(1002) + struct.pack('<QI', cookie, (8 * len(ips)) << 16 | 24) + bytes(4) +
      b''.join(struct.pack('<Q', ip) for ip in ips))
data = event(sw, 0) + event(ck, 1000) + event(st, 50000)
with open(out, 'wb') as f:
    f.write((struct.pack('<QQ', 1000000000, len(data)) + data).ljust(4096, b'\0'))
EOF

# The head, from the events above; the covering mounts live only as long as
# this namespace. tracefs is mounted in it if the host has none mounted.
unshare -m bash -euc '
	t=/sys/kernel/tracing
	mount --make-rprivate /
	grep -q " $t tracefs " /proc/mounts || mount -t tracefs nodev "$t"
	cp "$t/events/header_page" "$t/events/header_event" "$1/events/"
	mount --bind "$1/events" "$t/events"
	mount --bind "$1/saved_cmdlines" "$t/saved_cmdlines"
	trace-cmd restore -c -o "$1/head.dat"
' check-report "$tmp" >"$tmp/restore.log" 2>&1 &&
	trace-cmd restore -i "$tmp/head.dat" -o "$tmp/trace.dat" "$tmp/cpu0.raw" \
		>>"$tmp/restore.log" 2>&1 || {
	cat "$tmp/restore.log" >&2
	die "trace-cmd restore failed"
}
[ -z "${KEEP:-}" ] || cp "$tmp/trace.dat" "$KEEP"

check() {
	local what=$1 file=$2 want=$3

	if [ -n "$want" ] && grep -qF -- "$want" "$file"; then
		echo "ok   $what"
	else
		echo "FAIL $what: no line with '$want' in:" >&2
		cat "$file" >&2
		fail=1
	fi
}

# report OUT [VAR=value...] [-- trace-cmd report options]
report() {
	local out=$1 vars=() opts=()

	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	[ $# -eq 0 ] || { shift; opts=("$@"); }
	# HOME: no plugins from ~/.local/lib/traceevent/plugins.
	if ! env HOME="$tmp" "${vars[@]}" trace-cmd report "${opts[@]}" -i "$tmp/trace.dat" \
		>"$out" 2>"$out.err"; then
		echo "FAIL trace-cmd report ${vars[*]} ${opts[*]}: failed" >&2
		cat "$out.err" >&2
		fail=1
	elif [ -s "$out.err" ]; then
		echo "FAIL trace-cmd report ${vars[*]} ${opts[*]}: errors" >&2
		cat "$out.err" >&2
		fail=1
	fi
}

cookie='cookie=0x500000002 cpu=1 seq=5'
frames="frames=4 $ip_c c+0x4 <- $ip_b b+0x4 <- $ip_a a+0x4 <- $ip_main main+0x4"
raw="frames=4 $ip_c <- $ip_b <- $ip_a <- $ip_main"

report "$tmp/stock"
check "stock trace-cmd prints the stack with its print fmt" "$tmp/stock" \
	"cookie=500000002 stack=$((ip_c)) $((ip_b)) $((ip_a)) $((ip_main))"

report "$tmp/plugin" TRACEEVENT_PLUGIN_DIR="$plugin_dir"
check "plugin decodes the cookie" "$tmp/plugin" "user_unwind_cookie:   $cookie"
check "plugin names the frames of the live task" "$tmp/plugin" \
	"user_unwind_stack:    $cookie $frames"
check "plugin leaves sched_switch alone" "$tmp/plugin" "$(grep sched_switch "$tmp/stock")"

report "$tmp/nosym" TRACEEVENT_PLUGIN_DIR="$plugin_dir" TRACE_DEFER_PLUGIN_SYMS=0
check "TRACE_DEFER_PLUGIN_SYMS=0 gives raw frames" "$tmp/nosym" "$cookie $raw"
report "$tmp/opt" TRACEEVENT_PLUGIN_DIR="$plugin_dir" -- -O user_unwind:sym=0
check "-O user_unwind:sym=0 gives raw frames" "$tmp/opt" "$cookie $raw"

exec 3>&-
kill "$fp_pid"
wait "$fp_pid" 2>/dev/null || true
fp_pid=
report "$tmp/gone" TRACEEVENT_PLUGIN_DIR="$plugin_dir"
check "raw frames once the task is gone" "$tmp/gone" "$cookie $raw"

[ "$fail" = 0 ] && echo "check-report: all passed"
exit "$fail"
