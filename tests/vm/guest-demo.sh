#!/bin/bash
# The demo: trace fp_chain (main -> a -> b -> c -> nanosleep, and a
# 40-deep recursion) with trace-defer and print its stitched stacks.
# Usage: guest-demo.sh BUILD_DIR   (outputs in $TD_OUT)
build=$1
out=${TD_OUT:-/tmp}
td=$build/trace-defer
fp=$build/progs/fp_chain
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T

"$td" -e sched:sched_switch -e syscalls:sys_enter_nanosleep \
	-o "$out/demo.jsonl" -f "$out/demo.folded" -F "$out/demo.svg" &
dpid=$!
while [ ! -d $T/instances/trace-defer ]; do sleep 0.1; done
sleep 0.3
pid=$("$fp" sleep 100 2 | sed -n 's/^fp_chain pid=//p')
rpid=$("$fp" recurse 40 100 | sed -n 's/^fp_chain pid=//p')
sleep 1.5
kill -TERM $dpid
wait $dpid
# demo.jsonl has each distinct stack once (layout interned): the queries
# below read it with every event's stacks in its line (layout full)
v1=/tmp/demo.v1.jsonl
"$(dirname "$0")/../../contrib/td-json-resolve" "$out/demo.jsonl" > $v1

echo
echo "=== fp_chain ($pid): its events, each with the one user stack of its system call"
# Its sleeps in c(): the nanosleep entry and the switch out of it (the
# other records of its start are the dynamic loader's page faults)
jq -r --argjson p "$pid" 'select(.tid == $p and (.event == "syscalls:sys_enter_nanosleep"
	or (.event == "sched:sched_switch" and .fields.prev_state == 1))) |
	"\(.event) cookie=\(.cookie) status=\(.status)\n  user:   \([.user_stack[] | .sym // .addr] | join(" <- "))\n  kernel: \([.kernel_stack[] | .sym // .addr] | join(" <- "))"' \
	$v1 | head -n 12
echo
echo "=== fp_chain recurse 40 ($rpid): user stack depth (its deepest stack)"
jq -s -r --argjson p "$rpid" 'map(select(.tid == $p and .status == "stitched")) |
	max_by(.user_stack | length) // empty |
	"\(.event): \(.user_stack | length) user frames: \([.user_stack[0:6][] | .sym // .addr] | join(" <- ")) <- ... <- \([.user_stack[-3:][] | .sym // .addr] | join(" <- "))"' \
	$v1
echo
echo "=== statuses of all $(wc -l < $v1) records ($(stat -c %s "$out/demo.jsonl") bytes" \
	"of JSON, $(grep -c '"type":"stack"' "$out/demo.jsonl") distinct stacks)"
jq -r .status $v1 | sort | uniq -c
echo
echo "=== folded stacks of fp_chain's sleeps in c() (flame graph input: root first, then the count)"
grep '^fp_chain;.*;main;a;b;c;' "$out/demo.folded" | sort -t' ' -k2 -nr | head -n 2
echo "    ($(grep -c '^fp_chain;' "$out/demo.folded") distinct stacks of fp_chain in all, $(wc -l < "$out/demo.folded") of every task)"

# The demo is only a demo if the stacks are named: check it, after both
# programs have exited, instead of printing whatever came.
echo
bad=0
chain=$(jq -r --argjson p "$pid" 'select(.tid == $p and .status == "stitched"
	and .event == "syscalls:sys_enter_nanosleep")
	| [.user_stack[0:4][] | .sym // "?"] | join(" <- ")' $v1 | sort | uniq -c |
	sort -nr | head -n 1 | sed 's/^ *[0-9]* //')
if [ "$chain" = "c <- b <- a <- main" ]; then
	echo "demo: fp_chain's stack is named: $chain"
else
	echo "demo: FAILED: fp_chain's stack reads '$chain', not 'c <- b <- a <- main'" >&2
	bad=1
fi
nrec=$(jq -r --argjson p "$rpid" 'select(.tid == $p and .status == "stitched")
	| [.user_stack[] | select(.sym == "rec")] | length' $v1 | sort -n | tail -n 1)
if [ "${nrec:-0}" -eq 40 ]; then
	echo "demo: the recursion is named: 40 frames in rec()"
else
	echo "demo: FAILED: the 40-deep recursion shows ${nrec:-no} frames named rec" >&2
	bad=1
fi
exit "$bad"
