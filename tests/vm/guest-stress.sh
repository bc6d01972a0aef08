#!/bin/bash
# Stress the deferred unwind paths (meant for the debug kernel: KASAN,
# lockdep, PROVE_RCU): short-lived processes and threads traced with the
# option and the trigger while instances come and go.
# Usage: guest-stress.sh BUILD_DIR SECONDS [MODULE]
# MODULE: samples/trace_events' trace_custom_sched.ko of the debug kernel.
build=$1 secs=${2:-60} mod=${3:-}
. "$(dirname "$0")/lib.sh"
fp=$build/progs/fp_chain

# --- an unwind that finds nothing: a stack record with zero IPs -----------
# The unwinder's per-task cache is allocated at a task's first unwind; make
# that allocation (and only it: failslab's stack filter on the function
# that does it, and only for tasks marked make-it-fail) fail.
zero_ips() {
	local F=/sys/kernel/debug/failslab d pid lo hi
	mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
	if [ ! -d $F ]; then
		fail zero_ips_setup "no $F (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)"
		return
	fi
	# From unwind_user_faultable() to unwind_deferred_request(): the
	# allocating function and its callers in kernel/unwind/deferred.c, in
	# case the compiler inlined it into them.
	read -r lo hi < <(gawk '
		$3 == "unwind_user_faultable" { lo = "0x" $1 }
		$3 == "unwind_deferred_request" { hi = "0x" $1 }
		END { if (lo != "" && hi != "" && strtonum(lo) < strtonum(hi)) print lo, hi }
		' /proc/kallsyms)
	if [ -z "$hi" ]; then
		fail zero_ips_setup "unwind_user_faultable/unwind_deferred_request not in /proc/kallsyms"
		return
	fi
	echo "$lo" > $F/require-start
	echo "$hi" > $F/require-end
	echo N > $F/ignore-gfp-wait
	echo Y > $F/task-filter
	echo 0 > $F/verbose
	echo 1 > $F/interval
	echo -1 > $F/times
	echo 100 > $F/probability
	d=$(new_instance zero)
	echo 1 > "$d/events/sched/sched_switch/enable"
	echo 1 > "$d/options/userstacktrace_delay"
	# A child of the marked shell: the cache lives as long as the task, and
	# the shell itself may have been unwound before it was marked.
	pid=$(sh -c 'echo 1 > /proc/self/make-it-fail && "$0" sleep 20 3' "$fp" |
		sed -n 's/^fp_chain pid=//p')
	"$fp" sleep 20 3 > /dev/null	# not marked: full stacks
	echo 0 > $F/probability
	echo 0 > "$d/options/userstacktrace_delay"
	echo 0 > "$d/events/sched/sched_switch/enable"
	records "$d" > /tmp/zero.rec
	cp /tmp/zero.rec "$TD_OUT/"
	rmdir "$d"
	# Every stack record of the marked task has 0 frames, and follows a cookie.
	local st zero ck full
	st=$(gawk -v p="$pid" '$1 == "S" && $3 == p' /tmp/zero.rec | wc -l)
	zero=$(gawk -v p="$pid" '$1 == "S" && $3 == p && $6 == 0' /tmp/zero.rec | wc -l)
	ck=$(gawk -v p="$pid" '$1 == "E" && $3 == p && $6 != "-" { c[$6] = 1 }
		END { print length(c) }' /tmp/zero.rec)
	full=$(gawk -v p="$pid" '$1 == "S" && $3 != p && $3 != 0 && $6 > 0' /tmp/zero.rec | wc -l)
	echo "zero ips: pid ${pid:-?}: $ck cookies, $st stack records, $zero with 0 IPs;" \
	     "$full full stack records of other tasks"
	check zero_ips_stack_record_written test -n "$pid" -a "$st" -ge 1 -a "$st" -eq "$ck"
	check zero_ips_no_frames test "$st" -ge 1 -a "$zero" -eq "$st"
	check zero_ips_other_tasks_unaffected test "$full" -ge 1
}
zero_ips

end=$(( $(date +%s) + secs ))

echo 1 > $T/events/sched/sched_switch/enable
echo 1 > $T/events/sched/sched_process_exit/enable
[ -d $T/events/syscalls ] && echo 1 > $T/events/syscalls/sys_enter_nanosleep/enable
echo 1 > $T/options/userstacktrace_delay

# w FILE VALUE: write, counting failures in $errs (the first few are shown)
w() {
	if ! echo "$2" > "$1" 2> /tmp/w.err; then
		errs=$((errs + 1))
		[ "$errs" -le 3 ] && echo "write '$2' > $1: $(cat /tmp/w.err)"
	fi
}

# The churn loops run for the time given, and at least a few rounds: on a
# loaded host, TCG and KASAN may leave time for very few.
churn_instances() {
	local k=0 d errs=0
	while [ "$(date +%s)" -lt "$end" ] || [ "$k" -lt 4 ]; do
		d=$T/instances/stress$((k % 4))
		if mkdir "$d"; then
			w "$d/events/sched/sched_switch/enable" 1
			w "$d/options/userstacktrace_delay" 1
			w "$d/events/sched/sched_switch/trigger" 'user_stacktrace if prev_state & 1'
			sleep 0.0$((k % 7))
			rmdir "$d" || errs=$((errs + 1))
		else
			errs=$((errs + 1))
		fi
		k=$((k + 1))
	done
	echo "instances created and removed: $k, failed steps: $errs"
	echo "$k $errs" > /tmp/churn_instances
}

churn_trigger() {
	local k=0 errs=0
	while [ "$(date +%s)" -lt "$end" ] || [ "$k" -lt 10 ]; do
		w $T/events/sched/sched_process_exit/trigger 'user_stacktrace'
		w $T/options/userstacktrace_delay 0
		sleep 0.02
		w $T/events/sched/sched_process_exit/trigger '!user_stacktrace'
		w $T/options/userstacktrace_delay 1
		k=$((k + 1))
	done
	echo "option/trigger toggles: $k, failed writes: $errs"
	echo "$k $errs" > /tmp/churn_trigger
}

# An event that goes away with its module. custom/sched_switch (from
# samples/trace_events) fires at every context switch, so user tasks hit
# it. Each round loads the module and makes an instance use the module's
# event, even rounds through the option, odd ones through a user_stacktrace
# trigger; then unloads the module while tasks run with requests pending,
# and removes the instance. Unloading drops the event's directory without
# freeing its triggers: the module's probe must not outlive it (the
# series' patch 1), and the instance must still give back all it holds
# (its slot of the unwind work) when it goes, or a later callback writes
# into a freed trace_array (KASAN).
# ballast N: N instances holding an unwind slot each (the option set, no
# event enabled, tiny buffers); "ballast 0" removes them.
ballast() {
	local i=0 b
	if [ "$1" -eq 0 ]; then
		for b in $T/instances/ballast*; do [ -d "$b" ] && { rmdir "$b" || errs=$((errs + 1)); }; done
		return
	fi
	while [ $i -lt "$1" ]; do
		b=$T/instances/ballast$i
		mkdir "$b" || errs=$((errs + 1))
		w "$b/buffer_size_kb" 16
		w "$b/options/userstacktrace_delay" 1
		i=$((i + 1))
	done
}

# Rounds 0 and 1 run with free unwind slots (the module's instance gets
# one), the later ones with every slot taken by ballast instances, so that
# the module's instance is served through the shared slot's list: an
# instance freed while still listed there (an unwind reference a trigger
# of the removed event kept) is then met by the next request that walks
# the list, the probe instance's at the end (KASAN: use-after-free).
churn_module() {
	local k=0 errs=0 d=$T/instances/modstress n opt=0 trig=0 probe=-1
	while [ "$(date +%s)" -lt "$end" ] || [ "$k" -lt 4 ]; do
		[ "$k" -eq 2 ] && ballast 63
		if ! insmod "$mod" 2> /tmp/insmod.err; then
			echo "insmod $mod: $(cat /tmp/insmod.err)"
			errs=$((errs + 1))
			break
		fi
		mkdir "$d" || errs=$((errs + 1))
		w "$d/events/custom/sched_switch/enable" 1
		if [ $((k % 2)) -eq 0 ]; then
			w "$d/options/userstacktrace_delay" 1
		else
			w "$d/events/custom/sched_switch/trigger" 'user_stacktrace'
		fi
		sleep 0.3
		n=$(grep -c 'user stack unwind cookie=.*frames=[1-9]' "$d/trace")
		if [ "$n" -gt 0 ]; then
			[ $((k % 2)) -eq 0 ] && opt=$((opt + 1)) || trig=$((trig + 1))
		fi
		rmmod trace_custom_sched || errs=$((errs + 1))
		[ -d "$d/events/custom" ] && { echo "custom/ left after rmmod"; errs=$((errs + 1)); }
		sleep 0.0$((k % 5))
		rmdir "$d" || errs=$((errs + 1))
		k=$((k + 1))
	done
	# An instance on the shared slot's list records stacks too.
	d=$T/instances/modprobe
	mkdir "$d" || errs=$((errs + 1))
	w "$d/buffer_size_kb" 64
	w "$d/events/sched/sched_switch/enable" 1
	w "$d/options/userstacktrace_delay" 1
	"$fp" sleep 10 4 > /dev/null
	probe=$(grep -c 'user stack unwind cookie=.*frames=[1-9]' "$d/trace")
	w "$d/options/userstacktrace_delay" 0
	w "$d/events/sched/sched_switch/enable" 0
	rmdir "$d" || errs=$((errs + 1))
	ballast 0
	echo "module rounds: $k (with stacks: $opt by the option, $trig by the trigger)," \
	     "the last $((k - 2)) through the shared slot; probe after them: $probe stacks;" \
	     "failed steps: $errs"
	echo "$k $errs $opt $trig $probe" > /tmp/churn_module
}

load() {
	local k=0
	while [ "$(date +%s)" -lt "$end" ]; do
		"$fp" threads 6 2 5 > /dev/null
		"$fp" spawn 20 > /dev/null
		# execve() unwinds what its entry asked for before the new program
		"$fp" exec "$fp" sleep 1 1 > /dev/null
		"$fp" recurse 100 1 > /dev/null
		k=$((k + 1))
	done
	echo "load rounds: $k"
}

churn_instances &
churn_trigger &
if [ -r "$mod" ]; then
	churn_module &
else
	echo "no module to load: '$mod'"
	echo "0 1 0 0 0" > /tmp/churn_module
fi
load &
load &
wait

echo 0 > $T/options/userstacktrace_delay
echo 0 > $T/events/enable
reset=$(cat $T/events/sched/sched_process_exit/trigger | grep -v '^#')
[ -n "$reset" ] && echo "!${reset%%:*}" > $T/events/sched/sched_process_exit/trigger
for d in $T/instances/stress*; do [ -d "$d" ] && rmdir "$d"; done
sleep 1
read -r n e < /tmp/churn_instances
check stress_instances_churned test "${n:-0}" -ge 4 -a "${e:-1}" -eq 0
read -r n e < /tmp/churn_trigger
check stress_option_trigger_toggled test "${n:-0}" -ge 10 -a "${e:-1}" -eq 0
read -r n e o t p < /tmp/churn_module
check stress_module_event_churned test "${n:-0}" -ge 4 -a "${e:-1}" -eq 0
check stress_module_event_stacks test "${o:-0}" -ge 1 -a "${t:-0}" -ge 1
check stress_shared_slot_stacks test "${p:-0}" -ge 1
echo "stack records in the top buffer: $(grep -c 'user stack unwind cookie=.*frames=' $T/trace)"
check stress_recorded_stacks grep -q 'user stack unwind cookie=.*frames=' $T/trace
splats=$(dmesg | grep -E "$KREPORTS" | head -n 20)
if [ -n "$splats" ]; then
	fail stress_no_kernel_reports "$splats"
	dmesg | tail -n 80
else
	pass stress_no_kernel_reports
fi
grep -q FAIL "$RESULTS" && exit 1
exit 0
