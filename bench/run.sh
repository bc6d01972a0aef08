#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make bench: figures and ratios measured in one run, printed as a table and
# saved as JSON in $BUILD/bench/results.json. Never a pass/fail on absolute
# time: targets are reported as met or missed, a section that cannot run
# says "SKIPPED: why". Exit status: 0, or 1 when a section broke.
#
#   1. replay  synthesized capture (bench/replay.c) through parse, stitch,
#              symbolize, JSON; the same pages as a trace.dat through stock
#              `trace-cmd report`
#   1b.        the same stages and trace-cmd report in instructions per
#              event (callgrind), unmoved by the machine's load
#   2. live    host tracefs, fallback mode (userstacktrace): trace-defer vs a
#              plain tracefs_cpu_read drain loop (bench/drain.c) under a
#              pinned ping-pong at rising rates, then short-lived processes
#   3. vm      the patched kernel under QEMU (bench/guest-bench.sh): ring
#              buffer bytes/event, slowdown and user frames per stack for no
#              user stacks, in-place and deferred
#   4. memory  RSS with the default stitcher bounds and a million pending events
#   5. profiles the pprof sink on the events of short-lived processes
#              against the same events from one process (bench/profiles.c):
#              per event, and the interval's cut
#
# Environment: BENCH_SECTIONS (default "replay live vm memory profiles"),
# BENCH_EVENTS (replay events, default 2000000), BENCH_REPEAT (3: the replay
# section's rounds, each every stage and trace-cmd report once),
# BENCH_LIVE_SECS (3), BENCH_LIVE_WARMUP (2: seconds of the same load each
# live reader runs before its step is measured; its CPU is reported apart as
# start-up), BENCH_LIVE_RATES (round trips/s caps, 0 = none),
# BENCH_LIVE_ROUNDS (3: the readers one after the other this many times at
# the uncapped rate, 0, once at each capped one; the always-on/drain ratio
# is then the median of the rounds': one pair of 3 s steps on this host
# moved it between 1.21x and 1.51x),
# BENCH_LIVE_LOADS ("pingpong spawn": the capped ping-pong steps, then one
# uncapped step of short-lived processes, bench/progs/spawn.c),
# KIMAGE (bzImage to boot instead of `kernel/build.sh patched`),
# BENCH_VM_ROUNDS (2), BENCH_PROFILE_INTERVAL (the always-on reader's
# --profile-interval, default 60 as shipped), BENCH_VM_LIVE_SECS (seconds per step of the live
# readers in the guest, deferred mode; 0: not run; default 10),
# BENCH_VM_LIVE_ROUNDS (their rounds, default 3: a TCG guest on a shared
# machine moves one step's figure by half),
# BENCH_VM_LIVE_INPLACE (1: the guest's live readers once more in fallback
# mode, ping-pong only, to tell what TCG adds to the ratio from what the
# deferred mode does; 0: not run),
# BENCH_LIVE_MODE (auto: deferred where the kernel has the deferred events,
# else fallback; inplace: fallback mode, in-place user stacks, for both
# readers on any kernel),
# BENCH_INSTR_EVENTS (events of the instruction count, default 100000;
# 0: not run), BENCH_WORK and BENCH_RESULTS (where the figures go; the guest's live run
# uses them).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
out=$BUILD/bench
work=${BENCH_WORK:-$out/work}
results=${BENCH_RESULTS:-$out/results.json}
sections=${BENCH_SECTIONS:-replay live vm memory profiles}
events=${BENCH_EVENTS:-2000000}
repeat=${BENCH_REPEAT:-3}
live_secs=${BENCH_LIVE_SECS:-3}
live_warmup=${BENCH_LIVE_WARMUP:-2}
live_rates=${BENCH_LIVE_RATES:-10000 25000 50000 100000 0}
live_loads=${BENCH_LIVE_LOADS:-pingpong spawn}
live_rounds=${BENCH_LIVE_ROUNDS:-3}
vm_rounds=${BENCH_VM_ROUNDS:-2}
vm_live_secs=${BENCH_VM_LIVE_SECS:-10}
vm_live_rounds=${BENCH_VM_LIVE_ROUNDS:-3}
vm_live_inplace=${BENCH_VM_LIVE_INPLACE:-1}
live_force=${BENCH_LIVE_MODE:-auto}
profile_interval=${BENCH_PROFILE_INTERVAL:-60}
instr_events=${BENCH_INSTR_EVENTS:-100000}
T=/sys/kernel/tracing
broken=0
drain_mode= live_mode=inplace daemon_mode=()
child=
instances=()

say() { printf '\n== %s\n' "$*" >&2; }
note() { printf 'bench: %s\n' "$*" >&2; }

# skip SECTION WHY: recorded for the report (a skip is never a pass).
skip() {
	printf '{"section":"%s","skipped":"%s"}\n' "$1" "${2//\"/\'}" >> "$work/skips.jsonl"
	printf 'SKIPPED: %s: %s\n' "$1" "$2" >&2
}

# The reader still running if interrupted (only ours, by pid), our instances.
cleanup() {
	local i
	if [ -n "$child" ]; then
		kill "$child" 2>/dev/null && wait "$child" 2>/dev/null
	fi
	for i in "${instances[@]}"; do
		[ -d "$T/instances/$i" ] && rmdir "$T/instances/$i" 2>/dev/null
	done
}
trap cleanup EXIT

for b in replay drain rbstat loadgen profiles; do
	if [ ! -x "$out/$b" ]; then
		make -C "$top" -s BUILD="$BUILD" bench-progs >&2 || { echo "bench: build failed" >&2; exit 1; }
		break
	fi
done
rm -rf "$work"
mkdir -p "$work"
: > "$work/skips.jsonl"

tracefs_ok() {
	[ "$(id -u)" -eq 0 ] || return 1
	mountpoint -q "$T" || mount -t tracefs nodev "$T" 2>/dev/null || return 1
	[ -r "$T/events/sched/sched_switch/format" ]
}

want() { case " $sections " in *" $1 "*) return 0 ;; esac; return 1; }

# ---- formats for the synthesized capture -----------------------------------
make_formats() { "$top/bench/formats.sh" "$1"; }

# ---- 1. replay --------------------------------------------------------------
replay_section() {
	local fmt=$work/formats raw=$work/raw tc=$work/tracecmd rc t round tc_ok=1
	say "replay: $events synthesized events through the library, and trace-cmd report"
	if ! tracefs_ok; then
		skip replay "no tracefs (needs root) for the event formats"
		return
	fi
	make_formats "$fmt" || { skip replay "cannot copy the host's event formats"; return; }
	mkdir -p "$raw" "$tc"
	command -v trace-cmd > /dev/null || { tc_ok=; skip replay-trace-cmd "trace-cmd is not installed"; }
	# BENCH_REPEAT rounds, each every stage of the replay once, then stock
	# trace-cmd report once on the same pages: each side's best (least CPU)
	# is taken from runs spread over the whole section, not from runs back to
	# back, which a few seconds of other work on the machine could all slow.
	for round in $(seq "$repeat"); do
		local rawopt=()
		[ "$round" -eq 1 ] && rawopt=(--raw-dir "$raw")
		"$out/replay" --formats "$fmt" --prog "$BUILD/progs/fp_chain" --events "$events" \
			--repeat 1 "${rawopt[@]}" > "$work/replay.$round.json"
		rc=$?
		if [ "$rc" -ne 0 ]; then
			note "replay failed (exit $rc)"
			broken=1
			return
		fi
		[ -n "$tc_ok" ] || continue
		# The same pages as a trace.dat: trace-cmd writes the headers itself
		# from the formats directory (-t), with the host's kallsyms so that
		# it names the kernel frames as we do.
		if [ "$round" -eq 1 ] && ! (cd "$tc" &&
			trace-cmd restore -c -t "$fmt" -k /proc/kallsyms -o head.dat \
				> restore.log 2>&1 &&
			trace-cmd restore -i head.dat -o trace.dat "$raw/cpu0.raw" "$raw/cpu1.raw" \
				>> restore.log 2>&1); then
			skip replay-trace-cmd "trace-cmd restore failed: $(tail -n 1 "$tc/restore.log")"
			tc_ok=
			continue
		fi
		rm -f "$raw"/cpu*.raw
		# Stock trace-cmd: its own plugins only, not ours (not installed by
		# make bench).
		t=$( { TIMEFORMAT='%R %U %S'; time trace-cmd report -i "$tc/trace.dat" \
			> /dev/null 2> "$tc/report.err"; } 2>&1 )
		rc=$?
		if [ "$rc" -ne 0 ]; then
			skip replay-trace-cmd "trace-cmd report exit $rc: $(tail -n 1 "$tc/report.err")"
			rm -f "$work/tracecmd.jsonl"
			tc_ok=
			continue
		fi
		set -- $t
		printf '{"round":%s,"wall_s":%s,"user_s":%s,"sys_s":%s,"trace_dat_bytes":%s,"version":"%s"}\n' \
			"$round" "$1" "$2" "$3" "$(stat -c %s "$tc/trace.dat")" \
			"$(trace-cmd --version 2>/dev/null | sed -n 's/.*version \([^ ]*\).*/\1/p' | head -n 1)" \
			>> "$work/tracecmd.jsonl"
	done
	rm -rf "$raw" "$tc/trace.dat" "$tc/head.dat"
}

# ---- 1b. instructions ---------------------------------------------------------
# The replay's stages and trace-cmd report counted in instructions by
# callgrind: figures that do not move with the load of a shared machine,
# for telling whether a change made the per-event work smaller (a CPU-time
# ratio needs a quiet machine). Only the pipeline's calls are counted in
# the replay (td_pipeline_page, _advance, _flush, each called from a
# function of the replay's own that LTO cannot inline), not the capture's
# synthesis; trace-cmd report's fixed cost (its start-up: headers, kallsyms)
# is measured on a trace.dat of the same headers and no events, and taken
# out. pprof_rounds is the pprof stage fed as the live daemon feeds its
# pipeline: rounds of pages of both CPUs merged by record time
# (td_pipeline_pages_until(), replay --batch 64), not page by page.
instr_stages="parse stitch symbol pprof json_interned json_compact json pprof_rounds"
instr_section() {
	local fmt=$work/formats iw=$work/instr n=$instr_events s ir ev raw tc_ev=
	say "instructions: $n synthesized events under callgrind, and trace-cmd report"
	if ! command -v valgrind > /dev/null; then
		skip instructions "valgrind is not installed"
		return
	fi
	mkdir -p "$iw/raw"
	# callgrind's output: "summary: N" is the count of what was collected.
	cg_total() { sed -n 's/^summary: //p' "$1"; }
	# cg_run STAGE EVENTS TAG [replay args]: the pipeline's instructions, and its events.
	cg_run() {
		local s=$1 events=$2 tag=$3
		shift 3
		if ! valgrind --tool=callgrind --callgrind-out-file="$iw/cg.$tag" \
			--toggle-collect=replay_page --toggle-collect=replay_pages \
			--toggle-collect=replay_advance --toggle-collect=replay_flush \
			"$out/replay" --formats "$fmt" --prog "$BUILD/progs/fp_chain" --events "$events" \
			--repeat 1 --stages "$s" "$@" > "$iw/$tag.json" 2> "$iw/$tag.err"; then
			note "instructions: replay --stages $s --events $events failed: $(tail -n 1 "$iw/$tag.err")"
			return 1
		fi
		ir=$(cg_total "$iw/cg.$tag")
		ev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stages"][sys.argv[2]]["events"])' \
			"$iw/$tag.json" "$s")
	}
	for s in $instr_stages; do
		local rs=$s feed=()
		[ "$s" = pprof_rounds ] && rs=pprof feed=(--batch 64)
		# The pages of the first run for trace-cmd.
		raw=()
		[ -z "$tc_ev" ] && raw=(--raw-dir "$iw/raw")
		cg_run "$rs" "$n" "$s" "${raw[@]}" "${feed[@]}" || { broken=1; return; }
		local ir_all=$ir ev_all=$ev
		# A tenth of the events again: what both runs cost alike (the
		# symbolizer reading and sorting each binary's symbols, tables
		# set up) is start-up, taken out of the per-event figure.
		cg_run "$rs" $((n / 10)) "$s.small" "${feed[@]}" || { broken=1; return; }
		printf '{"stage":"%s","events":%s,"instructions":%s,"events_small":%s,"instructions_small":%s}\n' \
			"$s" "$ev_all" "$ir_all" "$ev" "$ir" >> "$work/instr.jsonl"
		[ -z "$tc_ev" ] && tc_ev=$ev_all
	done
	if ! command -v trace-cmd > /dev/null; then
		skip instructions-trace-cmd "trace-cmd is not installed"
	elif ! (cd "$iw" && : > e0.raw && : > e1.raw &&
		trace-cmd restore -c -t "$fmt" -k /proc/kallsyms -o head.dat > restore.log 2>&1 &&
		trace-cmd restore -i head.dat -o trace.dat raw/cpu0.raw raw/cpu1.raw >> restore.log 2>&1 &&
		trace-cmd restore -i head.dat -o empty.dat e0.raw e1.raw >> restore.log 2>&1); then
		skip instructions-trace-cmd "trace-cmd restore failed: $(tail -n 1 "$iw/restore.log")"
	elif ! valgrind --tool=callgrind --callgrind-out-file="$iw/cg.tc" \
			trace-cmd report -i "$iw/trace.dat" > /dev/null 2> "$iw/tc.err" ||
		! valgrind --tool=callgrind --callgrind-out-file="$iw/cg.tc0" \
			trace-cmd report -i "$iw/empty.dat" > /dev/null 2>> "$iw/tc.err"; then
		skip instructions-trace-cmd "trace-cmd report failed: $(tail -n 1 "$iw/tc.err")"
	else
		printf '{"stage":"trace-cmd report","events":%s,"instructions":%s,"fixed":%s}\n' \
			"$tc_ev" "$(cg_total "$iw/cg.tc")" "$(cg_total "$iw/cg.tc0")" >> "$work/instr.jsonl"
	fi
	rm -rf "$iw"
}

# ---- 2. live ------------------------------------------------------------------
# cpu_ticks PID: "UTIME STIME" in clock ticks (/proc/PID/stat), "0 0" if gone.
# The split of the step's CPU into user and system time: whether a
# reader's cost over the drain loop is its own code or its system calls.
cpu_ticks() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $12, $13}' | grep . || echo 0 0
}

# CPU time of a process in ns, summed over its threads: the scheduler's
# own count (schedstat) when the kernel keeps it, else utime + stime in
# clock ticks (10 ms each: too coarse for a reader using a few ms a second).
cpu_ns() {
	local hz
	if [ -r "/proc/$1/schedstat" ]; then
		cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d\n", s}'
		return
	fi
	hz=$(getconf CLK_TCK)
	awk -v hz="$hz" '{printf "%d\n", ($14 + $15) * 1e9 / hz}' "/proc/$1/stat" 2>/dev/null ||
		echo 0
}

# run_load LOAD SECS RATE: the load's rate line (round trips/s or processes/s).
run_load() {
	if [ "$1" = spawn ]; then
		"$out/spawn" "$2" 0 1 | sed -n 's/.*: \([0-9]*\) processes.*/\1/p'
	else
		"$BUILD/progs/pingpong" "$2" 0 1 "$3" | sed -n 's/.*: \([0-9]*\) round.*/\1/p'
	fi
}

# reader_events READER ERR N: the events the reader had read at its Nth
# SIGUSR1 (the daemon's counters, or the drain loop's line).
reader_events() {
	if [ "$1" != drain ]; then
		grep -o 'read: records=[0-9]* events=[0-9]*' "$2" | sed -n "$3p" | sed 's/.*events=//'
	else
		grep -o 'drain: events=[0-9]*' "$2" | sed -n "$3p" | sed 's/.*events=//'
	fi
}

live_step() {	# READER RATE [LOAD: pingpong (default) or spawn] [ROUND]
	local reader=$1 rate=$2 load=${3:-pingpong} round=${4:-1} name="td-bench-$$-$1"
	local pid t0 t1 w0 trips over dropped ev i procs=0 wev=0 u0 s0 u1 s1
	local err=$work/live-$reader-$load-$rate.err
	instances+=("$name")
	if [ "$reader" = daemon ]; then
		"$BUILD/trace-defer" -i "$name" --run-dir "$work/run" -q -o /dev/null \
			"${daemon_mode[@]}" --stats-interval 0 2> "$err" &
	elif [ "$reader" = profiles ]; then
		# The shipped always-on configuration: interval profiles (per
		# minute: the step's one profile is cut at exit), no JSON.
		"$BUILD/trace-defer" -i "$name" --run-dir "$work/run" -q "${daemon_mode[@]}" \
			--profile-dir "$work/profiles-$load-$rate-$round" --profile-interval "$profile_interval" \
			--stats-interval 0 2> "$err" &
	else
		"$out/drain" -i "$name" $drain_mode 2> "$err" &
	fi
	pid=$!
	child=$pid
	for i in $(seq 100); do
		[ "$(cat "$T/instances/$name/tracing_on" 2>/dev/null)" = 1 ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ "$(cat "$T/instances/$name/tracing_on" 2>/dev/null)" != 1 ]; then
		note "live: $reader did not start: $(tail -n 2 "$err")"
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		child=
		return 1
	fi
	# Start-up apart: what a reader does once, when it first meets the
	# load (the daemon reads kallsyms and each binary's symbols then), is
	# not what it costs per event while it runs for weeks. The same load
	# for $live_warmup s first, its CPU and events reported apart; the
	# step measures from the counters the reader printed after it.
	w0=$(cpu_ns "$pid")
	[ "$live_warmup" -gt 0 ] && run_load "$load" "$live_warmup" "$rate" > /dev/null
	sleep 0.5	# both readers drain every CPU at least every 200 ms
	kill -USR1 "$pid"
	sleep 0.2
	t0=$(cpu_ns "$pid")
	read -r u0 s0 < <(cpu_ticks "$pid")
	wev=$(reader_events "$reader" "$err" 1)
	if [ "$load" = spawn ]; then
		trips=0
		procs=$(run_load spawn "$live_secs" 0)
	else
		trips=$(run_load pingpong "$live_secs" "$rate")
	fi
	t1=$(cpu_ns "$pid")
	read -r u1 s1 < <(cpu_ticks "$pid")
	over=$(cat "$T/instances/$name"/per_cpu/cpu*/stats | awk '/^overrun:/ {s += $2} END {print s + 0}')
	dropped=$(cat "$T/instances/$name"/per_cpu/cpu*/stats |
		awk '/^dropped events:/ {s += $3} END {print s + 0}')
	kill -USR1 "$pid"
	sleep 0.5
	kill -TERM "$pid"
	wait "$pid"
	child=
	ev=$(reader_events "$reader" "$err" 2)
	ev=$(( ${ev:-0} - ${wev:-0} ))
	# The always-on reader's output: one gzipped pprof profile per second.
	local pfiles=0 pbytes=0
	if [ "$reader" = profiles ]; then
		read -r pfiles pbytes < <(find "$work/profiles-$load-$rate-$round" -name 'profile-*.pb.gz' \
			-printf '%s\n' 2>/dev/null | awk '{ n++; s += $1 } END { print n + 0, s + 0 }')
	fi
	printf '{"reader":"%s","mode":"%s","load":"%s","rate_cap":%s,"round":%s,"secs":%s,"round_trips_per_s":%s,"processes_per_s":%s,"events":%s,"cpu_s":%s,"warmup_secs":%s,"warmup_events":%s,"warmup_cpu_s":%s,"overruns":%s,"dropped":%s,"profile_files":%s,"profile_bytes":%s,"profile_interval":%s,"user_ticks":%s,"sys_ticks":%s,"clk_tck":%s}\n' \
		"$reader" "$live_mode" "$load" "$rate" "$round" "$live_secs" \
		"${trips:-0}" "${procs:-0}" "$ev" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f", (b - a) / 1e9}')" \
		"$live_warmup" "${wev:-0}" \
		"$(awk -v a="$w0" -v b="$t0" 'BEGIN {printf "%.6f", (b - a) / 1e9}')" \
		"$over" "$dropped" "$pfiles" "$pbytes" "$profile_interval" \
		"$((u1 - u0))" "$((s1 - s0))" "$(getconf CLK_TCK)" >> "$work/live.jsonl"
	note "live: $reader $load cap ${rate/#0/none}: ${trips:-?} trips/s, ${procs:-?} processes/s, ${ev:-?} events, cpu $(( (t1 - t0) / 1000000 )) ms, overruns $over"
}

live_section() {
	local rate reader round rounds
	say "live: trace-defer (fallback, in-place user stacks) vs a tracefs_cpu_read drain loop"
	if ! tracefs_ok; then
		skip live "no tracefs (needs root)"
		return
	fi
	case "$live_force" in
	auto | inplace) ;;
	*)
		note "live: BENCH_LIVE_MODE must be auto or inplace, not '$live_force'"
		broken=1
		return ;;
	esac
	drain_mode= live_mode=inplace daemon_mode=()
	if [ "$live_force" = inplace ]; then
		# Both readers in fallback mode even where deferred stacks exist.
		[ -e "$T/events/ftrace/user_unwind_cookie" ] &&
			note "live: BENCH_LIVE_MODE=inplace: both readers trace in-place user stacks"
		daemon_mode=(-m inplace)
	elif [ -e "$T/events/ftrace/user_unwind_cookie" ]; then
		note "live: this kernel has the deferred events: both readers trace deferred stacks"
		drain_mode=--deferred live_mode=deferred
	fi
	mkdir -p "$work/run"
	: > "$work/live.jsonl"
	case " $live_loads " in *" pingpong "*)
		for rate in $live_rates; do
			rounds=1
			# The target's ratio is the uncapped steps': those are repeated.
			[ "$rate" = 0 ] && rounds=$live_rounds
			for round in $(seq "$rounds"); do
				for reader in daemon profiles drain; do
					live_step "$reader" "$rate" pingpong "$round" || broken=1
				done
			done
		done
	esac
	# Short-lived processes: every one a new pid, gone before it is read.
	case " $live_loads " in *" spawn "*)
		for reader in profiles drain; do
			live_step "$reader" 0 spawn || broken=1
		done
	esac
}

# ---- 3. vm ---------------------------------------------------------------------
vm_section() {
	local kimage=${KIMAGE:-} rc
	say "vm: ring-buffer bytes, slowdown and frames: none, in-place, deferred"
	if ! command -v qemu-system-x86_64 > /dev/null; then
		skip vm "qemu-system-x86_64 is not installed"
		return
	fi
	# The guest mounts its own /tmp, /run, /proc, /sys and /dev, and binds
	# a checkout under /tmp back (kernel/guest-init.sh): a build in the
	# checkout is seen, one elsewhere under those is not.
	local hidden=
	case "$BUILD/" in
	/run/* | /proc/* | /sys/* | /dev/*) hidden=yes ;;
	/tmp/*) case "$BUILD/" in "$top"/*) ;; *) hidden=yes ;; esac ;;
	esac
	if [ -n "$hidden" ]; then
		skip vm "$BUILD is hidden in the guest (it mounts its own /tmp, /run, /proc, /sys, /dev; only a checkout under /tmp is bound back)"
		return
	fi
	if [ -z "$kimage" ]; then
		kimage=$("$top/kernel/build.sh" patched 2> "$work/kernel-build.log" | tail -n 1)
	fi
	if [ -z "$kimage" ] || [ ! -r "$kimage" ]; then
		skip vm "no patched kernel image (kernel/build.sh patched: $(tail -n 1 "$work/kernel-build.log" 2>/dev/null))"
		return
	fi
	note "vm: booting $kimage"
	VM_MEM=${VM_MEM:-2048} VM_TIMEOUT=${VM_TIMEOUT:-720} \
		"$top/kernel/run-vm.sh" "$kimage" "$work/vm" "$top/bench/guest-bench.sh" \
		"$BUILD" 200000 3000 30 "$vm_rounds" "$vm_live_secs" "$vm_live_rounds" "$live_warmup" "$vm_live_inplace" \
		> /dev/null 2> "$work/vm-run.err"
	rc=$?
	sed 's/^/  | /' "$work/vm/guest.log" >&2 2>/dev/null
	if [ "$rc" -ne 0 ] || [ ! -s "$work/vm/vm-bench.jsonl" ]; then
		note "vm: guest exit $rc: $(tail -n 3 "$work/vm-run.err")"
		broken=1
		return
	fi
	cp "$work/vm/vm-bench.jsonl" "$work/vm.jsonl"
	[ -s "$work/vm/live/live.jsonl" ] && cp "$work/vm/live/live.jsonl" "$work/vm-live.jsonl"
	[ -s "$work/vm/live-inplace/live.jsonl" ] &&
		cp "$work/vm/live-inplace/live.jsonl" "$work/vm-live-inplace.jsonl"
	printf '{"image":"%s"}\n' "$kimage" > "$work/vm-image.json"
}

# ---- 4. memory -------------------------------------------------------------------
memory_section() {
	local fmt=$work/formats
	say "memory: a million events waiting for their stacks, default bounds"
	if [ ! -d "$fmt" ]; then
		if ! tracefs_ok || ! make_formats "$fmt"; then
			skip memory "no tracefs (needs root) for the event formats"
			return
		fi
	fi
	if ! "$out/replay" --formats "$fmt" --prog "$BUILD/progs/fp_chain" --memory \
		--events 1000000 > "$work/memory.json"; then
		note "memory: replay failed"
		broken=1
	fi
}

# ---- 5. profiles -----------------------------------------------------------------
profiles_section() {
	say "profiles: the pprof sink, short-lived processes vs one process"
	if ! "$out/profiles" --repeat "$repeat" > "$work/profiles.json"; then
		note "profiles: failed"
		broken=1
	fi
}

start=$SECONDS
want replay && replay_section
want replay && [ "$instr_events" -gt 0 ] && [ -d "$work/formats" ] && instr_section
want live && live_section
want vm && vm_section
want memory && memory_section
want profiles && profiles_section
note "sections done in $((SECONDS - start)) s"

python3 "$top/bench/report.py" "$work" "$results" || broken=1
exit "$broken"
