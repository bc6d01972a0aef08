#!/bin/bash
# Stress the deferred unwind paths (meant for the debug kernel: KASAN,
# lockdep, PROVE_RCU): short-lived processes and threads traced with the
# option and the trigger while instances come and go.
# Usage: guest-stress.sh BUILD_DIR SECONDS
build=$1 secs=${2:-60}
. "$(dirname "$0")/lib.sh"
fp=$build/progs/fp_chain
end=$(( $(date +%s) + secs ))

echo 1 > $T/events/sched/sched_switch/enable
echo 1 > $T/events/sched/sched_process_exit/enable
[ -d $T/events/syscalls ] && echo 1 > $T/events/syscalls/sys_enter_nanosleep/enable
echo 1 > $T/options/userstacktrace_delay

churn_instances() {
	local k=0 d
	while [ "$(date +%s)" -lt "$end" ]; do
		d=$T/instances/stress$((k % 4))
		mkdir "$d" 2>/dev/null
		echo 1 > "$d/events/sched/sched_switch/enable" 2>/dev/null
		echo 1 > "$d/options/userstacktrace_delay" 2>/dev/null
		echo 'user_stacktrace if prev_state & 1' > "$d/events/sched/sched_process_exit/trigger" 2>/dev/null
		sleep 0.0$((k % 7))
		rmdir "$d" 2>/dev/null
		k=$((k + 1))
	done
	echo "instances created and removed: $k"
}

churn_trigger() {
	local k=0
	while [ "$(date +%s)" -lt "$end" ]; do
		echo 'user_stacktrace' > $T/events/sched/sched_process_exit/trigger 2>/dev/null
		echo 0 > $T/options/userstacktrace_delay
		sleep 0.02
		echo '!user_stacktrace' > $T/events/sched/sched_process_exit/trigger 2>/dev/null
		echo 1 > $T/options/userstacktrace_delay
		k=$((k + 1))
	done
	echo "option/trigger toggles: $k"
}

load() {
	local k=0
	while [ "$(date +%s)" -lt "$end" ]; do
		"$fp" threads 6 2 5 > /dev/null
		"$fp" spawn 20 > /dev/null
		"$fp" recurse 100 1 > /dev/null
		k=$((k + 1))
	done
	echo "load rounds: $k"
}

churn_instances &
churn_trigger &
load &
load &
wait

echo 0 > $T/options/userstacktrace_delay
echo 0 > $T/events/enable
reset=$(cat $T/events/sched/sched_process_exit/trigger | grep -v '^#')
[ -n "$reset" ] && echo "!${reset%%:*}" > $T/events/sched/sched_process_exit/trigger
for d in $T/instances/stress*; do [ -d "$d" ] && rmdir "$d"; done
sleep 1
echo "stack records in the top buffer: $(grep -c 'user stack unwind cookie=.*frames=' $T/trace)"
check stress_recorded_stacks grep -q 'user stack unwind cookie=.*frames=' $T/trace
splats=$(dmesg | grep -E 'BUG:|WARNING:|KASAN|circular locking|suspicious RCU|inconsistent lock|lock held when returning|Call Trace' | head -n 20)
if [ -n "$splats" ]; then
	fail stress_no_kernel_reports "$splats"
	dmesg | tail -n 80
else
	pass stress_no_kernel_reports
fi
grep -q FAIL "$RESULTS" && exit 1
exit 0
