#!/bin/bash
# Guest side of contrib/kernelshark/show.sh: record trace.dat files with the
# distribution's trace-cmd (3.1.6) and the deferred user stack option on,
# for KernelShark to open on the host. Run by kernel/run-vm.sh on a kernel
# with the deferred user stack series.
#
#   guest-record.sh TOP
#
# $TD_OUT/trace.dat     the command: every sched_switch of the
#                       machine asks for the user stack
# $TD_OUT/fp_chain.dat  the same, only fp_chain's switches to sleep (an event
#                       filter), so its records open at the top of
#                       KernelShark's list
# $TD_OUT/fp_chain.pid  fp_chain's pid in each run ("trace" and "fp_chain")
top=$1
fp=$top/build/progs/fp_chain
[ -x "$fp" ] || { echo "no $fp"; exit 1; }
command -v trace-cmd > /dev/null || { echo "no trace-cmd"; exit 1; }
cd /tmp || exit 1
rc=0

trace-cmd record -o /tmp/trace.dat -e sched:sched_switch -O userstacktrace_delay \
	"$fp" sleep 50 3 > /tmp/trace.out 2>&1 || rc=1
cat /tmp/trace.out
echo "trace $(sed -n 's/^fp_chain pid=//p' /tmp/trace.out)" > "$TD_OUT/fp_chain.pid"

# prev_state 1 (S): the switches of fp_chain asleep in c(), whose user
# stack is main -> a -> b -> c; not those of ld.so and libc starting it
trace-cmd record -o /tmp/fp_chain.dat -e sched:sched_switch \
	-f 'prev_comm == "fp_chain" && prev_state == 1' \
	-O userstacktrace_delay "$fp" sleep 50 3 > /tmp/fp.out 2>&1 || rc=1
cat /tmp/fp.out
echo "fp_chain $(sed -n 's/^fp_chain pid=//p' /tmp/fp.out)" >> "$TD_OUT/fp_chain.pid"

# What trace-cmd report prints for them, without and with the plugin
for f in trace fp_chain; do
	trace-cmd report -i "/tmp/$f.dat" > "$TD_OUT/$f.report.txt" 2>&1 || rc=1
	TRACEEVENT_PLUGIN_DIR=$top/build/plugins trace-cmd report -i "/tmp/$f.dat" \
		> "$TD_OUT/$f.plugin.txt" 2>&1 || rc=1
	cp "/tmp/$f.dat" "$TD_OUT/" || rc=1
done
grep -c 'user_unwind_stack:' "$TD_OUT"/*.report.txt
exit $rc
