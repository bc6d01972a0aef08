#!/bin/bash
# Guest side of the file identity tests (issue 9) on the patched kernel:
# user frames are named from the file the kernel recorded for them, not
# from /proc/PID/maps, so short-lived processes and traces read later are
# named too, and a file that is not the one that ran is never used.
# Usage: guest-names.sh BUILD_DIR
build=$1
. "$(dirname "$0")/lib.sh"
td=$build/trace-defer
fp=$build/progs/fp_chain
fppie=$build/progs/fp_chain_pie
fpalt=$build/progs/fp_chain_altid
plugins=$build/plugins

# Ground truth from the binaries' own symbol tables: "S start end name"
# per function, "L offset vaddr filesz" per PT_LOAD.
elfinfo() {
	nm -n -S "$1" | gawk '$3 ~ /^[Tt]$/ {
		s = strtonum("0x" $1); print "S", s, s + strtonum("0x" $2), $4 }'
	readelf -lW "$1" | gawk '$1 == "LOAD" {
		print "L", strtonum($2), strtonum($3), strtonum($5) }'
}
elfinfo "$fp" > /tmp/fp.elf
elfinfo "$fppie" > /tmp/fppie.elf

# user_frames JSONL: "index addr sym file_off obj" for every user frame of
# every fp_chain record ("-" for null).
user_frames() {
	jq -r 'select(.comm // "" | startswith("fp_chain")) | .user_stack // [] | to_entries[]
		| "\(.key) \(.value.addr) \(.value.sym // "-") \(.value.file_off // "-") \(.value.obj // "-")"' "$1"
}

# score MODE ELF FRAMES: "total named wrong" for the frames that lie in
# the binary. MODE addr: a non-PIE binary, where the address alone says
# whether a frame lies in it and which function it is in, whatever the
# trace says. MODE obj BASENAME: a PIE, frames whose recorded object is
# BASENAME, their function found from the recorded file offset.
score() {
	local mode=$1 elf=$2 frames=$3 base=${4:-}
	gawk -v mode="$mode" -v base="$base" '
		FILENAME == ARGV[1] && $1 == "S" { n++; s[n] = $2; e[n] = $3; nm[n] = $4
			if (!lo || $2 < lo) lo = $2; if ($3 > hi) hi = $3; next }
		FILENAME == ARGV[1] && $1 == "L" { m++; lo_off[m] = $2; va[m] = $3; sz[m] = $4; next }
		FILENAME == ARGV[1] { next }
		function fn(x,   j) { for (j = n; j >= 1; j--) if (s[j] <= x) return x < e[j] ? nm[j] : "?"; return "?" }
		function vaddr(off,   j) { for (j = 1; j <= m; j++)
			if (off >= lo_off[j] && off < lo_off[j] + sz[j]) return off - lo_off[j] + va[j]
			return -1 }
		{
			idx = $1; addr = strtonum($2); sym = $3; off = $4; obj = $5
			if (mode == "addr") {
				if (addr < lo || addr >= hi) next
				want = fn(addr - (idx > 0))
			} else {
				k = split(obj, parts, "/")
				if (parts[k] != base || off == "-") next
				want = fn(vaddr(strtonum(off)) - (idx > 0))
			}
			total++
			if (sym == "-") next
			named++
			if (sym != want) { wrong++; if (wrong <= 5) print "wrong:", $0, "want", want > "/dev/stderr" }
		}
		END { print total + 0, named + 0, wrong + 0 }' "$elf" "$frames"
}

# check_names NAME MODE ELF JSONL [BASENAME] [MIN]: at least MIN (default
# 100) frames in the binary, at least 99% of them named, none wrongly.
check_names() {
	local name=$1 mode=$2 elf=$3 jsonl=$4 base=${5:-} min=${6:-100} res t nd w
	user_frames "$jsonl" > /tmp/$name.frames
	res=$(score "$mode" "$elf" /tmp/$name.frames "$base")
	read -r t nd w <<< "$res"
	echo "$name: $t frames in the binary, $nd named, $w wrongly"
	if [ "$t" -ge "$min" ] && [ "$w" -eq 0 ] && [ $((nd * 100)) -ge $((t * 99)) ]; then
		pass "$name"
	else
		fail "$name" "$t frames in the binary (want >= $min), $nd named (want >= 99%), $w wrong"
	fi
}

# check_unnamed NAME ELF JSONL BASENAME: frames recorded in BASENAME, none named.
check_unnamed() {
	local name=$1 elf=$2 jsonl=$3 base=$4 res t nd w
	user_frames "$jsonl" > /tmp/$name.frames
	res=$(score obj "$elf" /tmp/$name.frames "$base")
	read -r t nd w <<< "$res"
	echo "$name: $t frames recorded in $base, $nd named"
	if [ "$t" -ge 20 ] && [ "$nd" -eq 0 ]; then
		pass "$name"
	else
		fail "$name" "$t frames in $base (want >= 20), $nd named (want 0)"
	fi
}

run_daemon() {
	local out=$1
	shift
	"$td" "$@" > "$out.stdout" 2> "$out.stderr" &
	dpid=$!
	for _ in $(seq 100); do
		[ -d $T/instances/trace-defer ] && break
		sleep 0.1
	done
	sleep 0.3
}
stop_daemon() {
	kill -TERM "$dpid"
	wait "$dpid"
	drc=$?
	tail -n 5 "$1.stderr"
}

# The load: a fork storm of short-lived children (each main->a->b->c->
# nanosleep once, then exit), threads recursing up to 5 deep while they
# hop CPUs, and the same storm from a PIE. Everything has exited before
# the daemon is stopped, so /proc/PID/maps of none of them is left.
workload() {
	"$fp" spawn 300 > /dev/null
	"$fp" threads 5 1 20 > /dev/null
	"$fppie" spawn 100 > /dev/null
	sleep 1
}

# --- live, option and trigger mode -------------------------------------
for mode in option trigger; do
	run_daemon /tmp/n-$mode -e sched:sched_switch -m $mode -o /tmp/n-$mode.jsonl \
		--record /tmp/n-$mode.dat
	workload
	stop_daemon /tmp/n-$mode
	check "names_${mode}_daemon_ok" test "$drc" -eq 0
	check_names "names_${mode}_live_nopie" addr /tmp/fp.elf /tmp/n-$mode.jsonl "" 1000
	check_names "names_${mode}_live_pie" obj /tmp/fppie.elf /tmp/n-$mode.jsonl fp_chain_pie 300
	cp /tmp/n-$mode.jsonl "$TD_OUT/" 2>/dev/null
done

# --- offline: the trace.dat of the option run, read after all exited ----
"$td" report /tmp/n-option.dat -o /tmp/n-report.jsonl 2> /tmp/n-report.stderr
check names_report_ok test $? -eq 0
check_names names_report_nopie addr /tmp/fp.elf /tmp/n-report.jsonl "" 1000
check_names names_report_pie obj /tmp/fppie.elf /tmp/n-report.jsonl fp_chain_pie 300

# --- the binary moved away, kept under a debug directory by build-id ------
mkdir -p /tmp/mv /tmp/dbg
cp "$fp" /tmp/mv/fp_chain
run_daemon /tmp/n-mv -e sched:sched_switch -o /tmp/n-mv-live.jsonl --record /tmp/n-mv.dat
/tmp/mv/fp_chain spawn 100 > /dev/null
sleep 1
stop_daemon /tmp/n-mv
bid=$(readelf -n /tmp/mv/fp_chain | sed -n 's/.*Build ID: //p')
mkdir -p "/tmp/dbg/.build-id/${bid:0:2}"
mv /tmp/mv/fp_chain "/tmp/dbg/.build-id/${bid:0:2}/${bid:2}.debug"
"$td" report /tmp/n-mv.dat --debug-dir /tmp/dbg -o /tmp/n-mv.jsonl 2> /tmp/n-mv.rstderr
check_names names_moved_debug_dir addr /tmp/fp.elf /tmp/n-mv.jsonl "" 300

# --- the binary replaced by one with another build-id: never used ---------
mkdir -p /tmp/rp
cp "$fp" /tmp/rp/fp_chain
run_daemon /tmp/n-rp -e sched:sched_switch -o /tmp/n-rp-live.jsonl --record /tmp/n-rp.dat
/tmp/rp/fp_chain spawn 50 > /dev/null
sleep 1
stop_daemon /tmp/n-rp
cp "$fpalt" /tmp/rp/fp_chain
"$td" report /tmp/n-rp.dat -o /tmp/n-rp.jsonl 2> /tmp/n-rp.rstderr
check_unnamed names_replaced_not_used /tmp/fp.elf /tmp/n-rp.jsonl fp_chain

# --- a trace recorded with stock trace-cmd -----------------------------
trace-cmd record -q -e sched:sched_switch -O userstacktrace_delay -o /tmp/n-tc.dat \
	"$fp" spawn 100 > /tmp/n-tc.log 2>&1
"$td" report /tmp/n-tc.dat -o /tmp/n-tc.jsonl 2> /tmp/n-tc.rstderr
check_names names_trace_cmd_record addr /tmp/fp.elf /tmp/n-tc.jsonl "" 300

grep -q FAIL "$RESULTS" && exit 1
exit 0
