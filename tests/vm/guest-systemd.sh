#!/bin/bash
# Guest side of the systemd stage (issue 12): systemd 252 is PID 1
# (kernel/guest-init-systemd.sh) and this runs from a unit, as root, doing
# what an administrator does: make install, systemctl start, status,
# journalctl, reload after a logrotate-style move, and what systemd does
# when the daemon stalls or dies: watchdog, restart, ExecStopPost.
# Usage: guest-systemd.sh BUILD_DIR
build=$1
. "$(dirname "$0")/lib.sh"
top=$TD_TOP
fp=$build/progs/fp_chain
unit=trace-defer
conf=/etc/trace-defer/trace-defer.conf
logdir=/var/log/trace-defer
inst=$T/instances/trace-defer
lock=/run/trace-defer/trace-defer.lock

# wait_for SECONDS CMD...: until CMD succeeds (every 0.2 s); its status
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}
prop() { systemctl show -p "$1" --value "$unit"; }
main_pid() { prop MainPID; }
# The pid recorded in the instance's lock file ("pid starttime boot_id")
lock_pid() { cut -d' ' -f1 "$lock" 2>/dev/null; }
is_active() { [ "$(systemctl is-active "$unit")" = active ]; }
# The first lines of JSON lines file $1 with their stacks (ids resolved):
# enough to find fp_chain's records, and quick under TCG however long the
# daemon has been writing.
resolved_head() { head -n 5000 "$1" | "$TD_RESOLVE" 2>/dev/null; }
# A record of fp_chain in JSON lines file $1, stitched, user frames named
# (a last line still being written is left out)
stitched_in() {
	[ -s "$1" ] && resolved_head "$1" | jq -c 'select(.comm == "fp_chain" and
		.status == "stitched" and ([.user_stack[0:4][].sym] | join(" ")) == "c b a main")' \
		2>/dev/null | grep -q .
}
# Event lines of JSON lines file $1 (stack lines left out)
nr_events() { grep -c '"type":"event"' "$1"; }
# No user_stacktrace trigger nor userstacktrace_delay left at the top level
top_level_clean() {
	[ "$(cat $T/options/userstacktrace_delay)" = 0 ] &&
		! grep -l '^user_stacktrace' $T/events/*/*/trigger 2>/dev/null | grep -q .
}
# The counter KEY of the last report printed by process $1, from the journal
journal_counter() {
	journalctl _PID="$1" -o cat --no-pager | grep -o "$2=[0-9]*" | tail -n 1 | cut -d= -f2
}

# --- systemd as PID 1 --------------------------------------------------------
check systemd_is_pid1 test "$(cat /proc/1/comm)" = systemd
# "starting" until this unit, part of the boot transaction, is done
echo "system state: $(systemctl is-system-running); failed units:"
systemctl --failed --no-legend --no-pager | sed 's/^/  /'
check systemd_basic_target test "$(systemctl is-active basic.target)" = active
check tracefs_mounted_by_systemd test "$(systemctl is-active sys-kernel-tracing.mount)" = active

# --- make install into the guest's root (the overlay's writable layer) ----
check make_install make -C "$top" BUILD="$build" install
check installed test -x /usr/local/bin/trace-defer -a -f /lib/systemd/system/$unit.service \
	-a -f $conf
systemctl daemon-reload
# The shipped configuration: a profile per minute, bounded; no JSON
eff() { /usr/local/bin/trace-defer --config $conf --print-config; }
check shipped_profiles_on eval "eff | grep -qx 'profile_dir = /var/lib/trace-defer/profiles'"
check shipped_profiles_bounded eval "eff | grep -q '^profile_keep = [1-9]' &&
	eff | grep -q '^profile_max_kb = [1-9]'"
check shipped_json_off eval "! eff | grep -q '^output ='"
# What this test reads besides: JSON lines on, 2 s intervals, at most 3
# kept, and only fp_chain's switches: with every switch of the system the
# JSON files grow by ~100k lines in the minutes this stage runs, and jq
# reading them on TCG took most of the stage's 15 minutes.
sed -i -e 's|^#output = |output = |' -e 's/^profile_interval = .*/profile_interval = 2/' \
	-e 's/^profile_keep = .*/profile_keep = 3/' -e 's/^#comm = .*/comm = fp_chain/' $conf
check test_conf_fp_chain_only eval "eff | grep -qx 'comm = fp_chain'"
profdir=/var/lib/trace-defer/profiles
nr_profiles() { find $profdir -maxdepth 1 -name 'profile-*.pb.gz' 2>/dev/null | wc -l; }
check unit_enable systemctl enable $unit
check unit_enabled test "$(systemctl is-enabled $unit)" = enabled

# --- start, status, journal, outputs of the shipped configuration ------------
"$fp" sleep 20 1000000 > /tmp/fp.out &
fpid=$!
check start systemctl start $unit
check active is_active
pid=$(main_pid)
echo "main pid $pid"
check instance_created test -d $inst
check lock_names_main_pid test "$(lock_pid)" = "$pid"
status_counters() {
	systemctl status $unit --no-pager > /tmp/status.txt 2>&1
	grep -Eq 'Status: "events [0-9]+, stitched [1-9][0-9]*' /tmp/status.txt
}
wait_for 20 status_counters
cat /tmp/status.txt
cp /tmp/status.txt "$TD_OUT/status.txt"
check status_live_counters grep -Eq 'Status: "events [0-9]+, stitched [1-9]' /tmp/status.txt
check journal_daemon_message wait_for 5 eval "journalctl -u $unit -o cat --no-pager |
	grep -q \"tracing 1 event(s) in instance 'trace-defer', mode\""
check output_stitched_named wait_for 20 stitched_in $logdir/events.jsonl
rec=$(resolved_head $logdir/events.jsonl |
	jq -c 'select(.comm == "fp_chain" and .status == "stitched")' 2>/dev/null | head -n 1)
echo "record: $(echo "$rec" | cut -c1-400)"
check output_kernel_frames_named grep -qE '^(entry_SYSCALL_64|do_syscall_64)' \
	<<< "$(echo "$rec" | jq -r '.kernel_stack[-1].sym')"

# --- interval profiles: cut, bounded, private, read by go tool pprof -------
check profiles_cut wait_for 30 eval '[ "$(nr_profiles)" -ge 3 ]'
most=0
for i in $(seq 40); do		# 8 s: four more cuts
	n=$(nr_profiles)
	[ "$n" -gt "$most" ] && most=$n
	sleep 0.2
done
echo "profiles: at most $most in $profdir (profile_keep = 3)"
check profiles_bounded test "$most" -le 3
check profiles_private eval "[ -z \"\$(find $profdir -name 'profile-*' -perm /go=rwx)\" ]"
# The newest, copied first: every 2 s the daemon removes the oldest.
for i in 1 2 3 4 5; do
	newest=$(ls -1 $profdir | grep '^profile-.*\.pb\.gz$' | tail -n 1)
	cp "$profdir/$newest" /tmp/prof.pb.gz 2>/dev/null && break
done
HOME=/tmp GOCACHE=/tmp/gocache go tool pprof -top -nodecount=1000 -tagfocus=comm=fp_chain \
	/tmp/prof.pb.gz > /tmp/prof.top 2>&1
head -n 10 /tmp/prof.top
check profiles_pprof_c_b_a_main eval "awk '\$6 ~ /^(c|b|a|main)\$/ && \$4 > 0' /tmp/prof.top |
	wc -l | grep -qx 4"

# --- rotation: the shipped logrotate configuration moves the file away and
# reloads the service; nothing lost ----------------------------------------
check logrotate_installed test -f /etc/logrotate.d/$unit
sleep 1		# some lines before the rotation
check logrotate_runs logrotate -f -s /tmp/logrotate.state /etc/logrotate.d/$unit
check logrotate_moved test -s $logdir/events.jsonl.1
check reload_same_process test "$(main_pid)" = "$pid"
check logrotate_reloaded wait_for 10 eval "journalctl -u $unit -o cat --no-pager |
	grep -q 'SIGHUP: reopening outputs'"
check reload_new_file wait_for 20 stitched_in $logdir/events.jsonl
check stop systemctl stop $unit
check stopped test "$(systemctl is-active $unit)" = inactive
wait_for 5 eval "journalctl _PID=$pid -o cat --no-pager | grep -q 'written='"
written=$(journal_counter "$pid" written)
n1=$(nr_events $logdir/events.jsonl.1)
n2=$(nr_events $logdir/events.jsonl)
echo "written=$written; events: $n1 before the reload, $n2 after"
check reload_nothing_lost test -n "$written" -a "$written" = "$((n1 + n2))"
check reload_whole_lines eval "cat $logdir/events.jsonl.1 $logdir/events.jsonl | jq -e -c . > /dev/null"
# Each file on its own: every stack id it uses defined in it
check reload_files_self_contained eval "$TD_RESOLVE $logdir/events.jsonl.1 > /dev/null &&
	$TD_RESOLVE $logdir/events.jsonl > /dev/null"
check journal_exit_counters test "$(journal_counter "$pid" write_errors)" = 0
check stop_instance_removed test ! -d $inst
check stop_top_level_untouched top_level_clean

# --- trigger mode, folded stacks and flame graph, set in the file ------------
cp $conf /tmp/conf.shipped
sed -i -e 's/^mode = .*/mode = trigger/' -e 's/^#\(folded = \)/\1/' \
	-e 's/^#\(flamegraph = \)/\1/' $conf
mv $logdir/events.jsonl $logdir/events.jsonl.2
check trigger_start systemctl start $unit
check trigger_set grep -q '^user_stacktrace' $inst/events/sched/sched_switch/trigger
check trigger_stitched wait_for 20 stitched_in $logdir/events.jsonl
rm -f $logdir/stacks.folded $logdir/stacks.svg
check trigger_reload systemctl reload $unit
check reload_rewrites_folded wait_for 10 grep -q '^fp_chain;.*main;a;b;c' $logdir/stacks.folded
check reload_rewrites_flamegraph wait_for 10 grep -q fp_chain $logdir/stacks.svg
check trigger_stop systemctl stop $unit
check trigger_instance_removed test ! -d $inst
check trigger_top_level_untouched top_level_clean
cp /tmp/conf.shipped $conf

# --- short-lived JITs under PrivateTmp=: the maps they left name their code --
# Each jit_sleep exits before its records are read (its /proc gone) and
# leaves /tmp/perf-PID.map in the system's /tmp, which the service's
# private /tmp does not show: read as init sees it.
sed -i -e 's/^comm = .*/comm = jit_sleep/' $conf
mv $logdir/events.jsonl $logdir/events.jsonl.3
check jit_start systemctl start $unit
for i in 1 2 3 4 5; do "$build/progs/jit_sleep" 5 2 /tmp anon keep; done > /tmp/jits.out
sleep 2
check jit_stop systemctl stop $unit
njit=0
for jpid in $(sed -n 's/^jit_sleep pid=\([0-9]*\) .*/\1/p' /tmp/jits.out); do
	n=$("$TD_RESOLVE" $logdir/events.jsonl 2> /dev/null | jq -r --argjson p "$jpid" \
		'select(.tid == $p and .status == "stitched") | .user_stack[0] // {} |
		 select(.sym == "jit_sleeper" and .obj == "/tmp/perf-\($p).map") | .sym' | wc -l)
	njit=$((njit + n))
	rm -f "/tmp/perf-$jpid.map"
done
echo "jit: $njit stacks of 5 short-lived jit_sleep runs innermost in their JIT code, named"
check jit_short_lived_named_private_tmp test "$njit" -ge 5
mv $logdir/events.jsonl $logdir/events.jsonl.jit
cp /tmp/conf.shipped $conf

# --- watchdog: a stalled daemon is killed and restarted ----------------------
systemctl start $unit
pid=$(main_pid)
nr=$(prop NRestarts)
# Marks this run's instance: a fresh one has irq-info 1
echo 0 > $inst/options/irq-info
kill -STOP "$pid"
t0=$SECONDS
restarted() { local p; p=$(main_pid); [ "$p" != 0 ] && [ "$p" != "$pid" ] && is_active; }
# WatchdogSec=30s, then SIGABRT, which a stopped process leaves pending:
# SIGKILL after TimeoutStopSec=30s; RestartSec=2s
check watchdog_restart wait_for 150 restarted
n=$(nr_events $logdir/events.jsonl)
echo "watchdog: restarted after $((SECONDS - t0)) s as pid $(main_pid)"
journalctl -u $unit -o short-monotonic --no-pager | tail -n 12
check watchdog_logged eval "journalctl -u $unit -o cat --no-pager | grep -q 'Watchdog timeout'"
check watchdog_nrestarts test "$(prop NRestarts)" = "$((nr + 1))"
check watchdog_old_gone test ! -d /proc/"$pid"
check watchdog_fresh_instance wait_for 10 eval "[ \"\$(cat $inst/options/irq-info)\" = 1 ]"
check watchdog_lock_new_pid test "$(lock_pid)" = "$(main_pid)"
# The events after the first n, their stacks resolved (appended runs define ids anew)
check watchdog_stitched_after wait_for 20 eval "$TD_RESOLVE $logdir/events.jsonl 2> /dev/null |
	tail -n +$((n + 1)) > /tmp/new.jsonl; stitched_in /tmp/new.jsonl"

# --- kill -9: ExecStopPost removes the instance, then a restart --------------
pid=$(main_pid)
nr=$(prop NRestarts)
echo 0 > $inst/options/irq-info
kill -9 "$pid"
gap=no
end=$((SECONDS + 30))
while [ "$SECONDS" -lt "$end" ]; do
	[ -d $inst ] || gap=yes
	restarted && break
	sleep 0.05
done
check kill9_instance_removed_before_restart test $gap = yes
check kill9_restart restarted
check kill9_nrestarts test "$(prop NRestarts)" = "$((nr + 1))"
check kill9_fresh_instance wait_for 10 eval "[ \"\$(cat $inst/options/irq-info)\" = 1 ]"
check kill9_no_stale_found eval "! journalctl _PID=$(main_pid) -o cat --no-pager | grep -q stale"

# --- the restarted daemon cleans a dead run's instance itself ----------------
# Without ExecStopPost (a drop-in clears it), the lock file kept over the
# restart (RuntimeDirectoryPreserve=yes) names the dead run.
mkdir -p /run/systemd/system/$unit.service.d
printf '[Service]\nExecStopPost=\n' > /run/systemd/system/$unit.service.d/no-cleanup.conf
systemctl daemon-reload
pid=$(main_pid)
echo 0 > $inst/options/irq-info
kill -9 "$pid"
check stale_restart wait_for 30 restarted
check stale_removed_by_restarted eval "journalctl _PID=$(main_pid) -o cat --no-pager |
	grep -q \"removing stale tracefs instance 'trace-defer' left by trace-defer pid $pid\""
check stale_fresh_instance wait_for 10 eval "[ \"\$(cat $inst/options/irq-info)\" = 1 ]"
rm -r /run/systemd/system/$unit.service.d
systemctl daemon-reload

# --- stop: nothing left in tracefs -------------------------------------------
check final_stop systemctl stop $unit
check final_instance_removed test ! -d $inst
# kept until reboot: a cleanup that failed is finished by the next start
check final_lock_file_kept test -e $lock
check final_top_level_untouched top_level_clean
check final_no_instances eval "! ls $T/instances | grep -q ."
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null

# --- systemd-analyze security ------------------------------------------------
systemd-analyze security $unit --no-pager > "$TD_OUT/security.txt" 2>&1
score=$(sed -n "s/.*Overall exposure level for $unit.service: \([0-9.]*\).*/\1/p" \
	"$TD_OUT/security.txt")
tail -n 3 "$TD_OUT/security.txt"
echo "exposure: $score"
check security_exposure_at_most_2.2 awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 2.2) }'

journalctl -u $unit -o short-monotonic --no-pager > "$TD_OUT/unit-journal.log"
dmesg | grep -E "$KREPORTS" > /tmp/reports
check no_kernel_reports test ! -s /tmp/reports
grep -q '^FAIL' "$RESULTS" && exit 1
exit 0
