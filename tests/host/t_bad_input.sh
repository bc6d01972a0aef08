#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bad input: a clear message, the documented non-zero exit status, and
# nothing left in tracefs (no instance, no marker).
. "$(dirname "$0")/lib.sh"

before=$(ls "$TRACEFS/instances" | grep -v '^td-host-' | sort)

# expect STATUS PATTERN what -- args...
expect() {
	local status=$1 pattern=$2 what=$3 rc
	shift 4
	"$@" >"$SCRATCH/out" 2>"$SCRATCH/err"
	rc=$?
	if [ "$rc" != "$status" ]; then
		fail "$what: exit status $rc, expected $status"
		sed 's/^/    | /' "$SCRATCH/err"
	elif ! grep -Eq -- "$pattern" "$SCRATCH/err"; then
		fail "$what: message does not match /$pattern/"
		sed 's/^/    | /' "$SCRATCH/err"
	elif instance_exists; then
		fail "$what: instance left behind"
	elif ! marker_clear; then
		fail "$what: marker left behind"
	else
		pass "$what (status $rc: $(head -n 1 "$SCRATCH/err" | cut -c1-90))"
	fi
}

expect 3 "unknown event sched:no_such_event" "unknown event" -- \
	td -e sched:no_such_event -d 1 -o /dev/null
expect 3 "unknown event nosys:sched_switch" "unknown system" -- \
	td -e nosys:sched_switch -d 1 -o /dev/null
expect 3 "refused filter.*prev_pidd|Field not found" "bad filter: field" -- \
	td -e 'sched:sched_switch:prev_pidd == 1' -d 1 -o /dev/null
expect 3 "kernel error_log says" "bad filter: error_log shown" -- \
	td -e 'sched:sched_switch:prev_pid ==' -d 1 -o /dev/null
check "error_log text has the caret line" grep -q '\^' "$SCRATCH/err"
expect 2 "expected SYSTEM:EVENT" "event name with a slash" -- \
	td -e sched/sched_switch -d 1 -o /dev/null
expect 2 "^trace-defer: (unrecognized option|unknown option)" "unknown option" -- td --bogus
expect 2 "^trace-defer: invalid option -- 'Z'" "unknown short option, said as trace-defer" -- td -Z
# Long options are taken whole: --json is report's, not --json-layout.
expect 2 "'--json' \\(long options are not abbreviated: --json-layout\\?\\)" \
	"an abbreviated long option" -- td --json full -d 0.1
expect 2 "'--jso' \\(long options are not abbreviated: --json or --json-layout\\?\\)" \
	"an abbreviated long option of report" -- "$TD" report --jso x.dat
# Every option the word begins: --reco is --record's or --recover's.
expect 2 "'--reco' \\(long options are not abbreviated: --record or --recover\\?\\)" \
	"an abbreviated option two options begin" -- "$TD" record --reco x
expect 2 "unexpected argument 'extra'" "stray argument" -- td extra
expect 2 "'record' is a command: it comes first \\(trace-defer record" \
	"a command after an option" -- "$TD" --run-dir "$RUN_DIR" record -o x.dat
expect 2 "mode: 'fast' is not one of" "bad mode" -- td -m fast
# Said, not refused: the later value wins, as in a configuration file.
expect 0 "--comm given again: 'b' is used, not 'a'" "an option given twice" -- \
	td --comm a --comm b --print-config
check "... the later one is used" grep -qx 'comm = b' "$SCRATCH/out"
# quiet LINE ARGS...: td ARGS exits 0, printing LINE (of --print-config),
# nothing on stderr. Its status too: a td that dies saying nothing is not quiet.
quiet() {
	local line=$1 rc
	shift
	td "$@" >"$SCRATCH/q.out" 2>"$SCRATCH/q.err"
	rc=$?
	[ "$rc" = 0 ] || log "status $rc, expected 0"
	[ "$rc" = 0 ] && grep -qx -- "$line" "$SCRATCH/q.out" && [ ! -s "$SCRATCH/q.err" ]
}
check "... not said under -q, given after it" quiet 'comm = b' --comm a --comm b -q --print-config
check "... nor before it" quiet 'comm = b' -q --comm a --comm b --print-config
expect 0 "--config given again: '.*/trace-defer.conf' is used, not '/dev/null'" \
	"a second -c" -- td -c /dev/null -c "$TOP/contrib/trace-defer.conf" --print-config
expect 2 "--recover given again: 'y' is used, not '.*/x'" "a second --recover" -- \
	"$TD" record --recover "$SCRATCH/x" --recover y
# The command line wins over the file, also to say no (the shipped file appends).
check "--no-append over output_append = yes" eval "td -c '$TOP/contrib/trace-defer.conf' \
	--no-append --print-config | grep -qx 'output_append = no'"
printf 'symbolize = no\nkernel_stack = no\nprofile_folded = yes\n' >"$SCRATCH/neg.conf"
td -c "$SCRATCH/neg.conf" --symbolize --kernel-stack --no-profile-folded --print-config \
	>"$SCRATCH/neg.eff" 2>/dev/null
check "--symbolize, --kernel-stack, --no-profile-folded over the file" eval \
	"grep -qx 'symbolize = yes' '$SCRATCH/neg.eff' && grep -qx 'kernel_stack = yes' \
	'$SCRATCH/neg.eff' && grep -qx 'profile_folded = no' '$SCRATCH/neg.eff'"
expect 0 "profile_folded are for the interval profiles of profile_dir .* none are cut" \
	"an interval profile option without --profile-dir" -- td --profile-keep 3 --print-config
expect 2 "buffer_kb: 'lots' is not an integer" "bad number" -- td -b lots
expect 2 "trace_clock: 'x86-tsc' is not one of" "non-ns clock" -- td --clock x86-tsc
expect 2 "instance: '../x' is not a valid name" "bad instance name" -- \
	"$TD" -i ../x --run-dir "$RUN_DIR"
expect 2 "instance: 'a\\*b' is not a valid name \\(letters, digits" "an instance name with a glob" \
	-- "$TD" -i 'a*b' --run-dir "$RUN_DIR" --print-config
expect 2 "instance: a name of 65 characters is too long \\(64 at most\\)" \
	"an instance name too long" -- "$TD" -i "$(printf 'a%.0s' $(seq 65))" --run-dir "$RUN_DIR"
expect 3 "needs a kernel with deferred user stacks" "option mode on this kernel" -- \
	td -m option -d 1 -o /dev/null
expect 3 "needs a kernel with deferred user stacks" "trigger mode on this kernel" -- \
	td -m trigger -d 1 -o /dev/null

expect 2 "no process with pid 999999999" "pid of no process" -- \
	td -p 999999999 -d 1 -o /dev/null

# Config files.
printf 'mode = inplace\nthis line is wrong\n' >"$SCRATCH/bad1.conf"
expect 2 "bad1.conf:2: expected 'key = value'" "config: malformed line" -- \
	td -c "$SCRATCH/bad1.conf"
printf '# comment\n\nbufer_kb = 10\n' >"$SCRATCH/bad2.conf"
expect 2 "bad2.conf:3: unknown key 'bufer_kb'" "config: unknown key" -- \
	td -c "$SCRATCH/bad2.conf"
printf 'kernel_stack = perhaps\n' >"$SCRATCH/bad3.conf"
expect 2 "bad3.conf:1: kernel_stack: 'perhaps' is not yes or no" "config: bad boolean" -- \
	td -c "$SCRATCH/bad3.conf"
printf 'output =\n' >"$SCRATCH/bad4.conf"
expect 2 "bad4.conf:1: output: missing value" "config: empty value" -- \
	td -c "$SCRATCH/bad4.conf"
expect 2 "config .*/missing.conf: No such file" "config: missing file" -- \
	td -c "$SCRATCH/missing.conf"
# A key set twice is said, as a warning: not under -q or verbosity = 0,
# wherever those are given.
printf 'mode = auto\nmode = inplace\n' >"$SCRATCH/twice.conf"
expect 0 "twice.conf:2: mode set again \\(line 1 set it before\\)" "config: a key set twice" -- \
	td -c "$SCRATCH/twice.conf" --print-config
check "... quiet with -q" quiet 'mode = inplace' -c "$SCRATCH/twice.conf" -q --print-config
printf 'verbosity = 0\n' >>"$SCRATCH/twice.conf"
check "... quiet with verbosity = 0 after it" quiet 'mode = inplace' -c "$SCRATCH/twice.conf" \
	--print-config

# Outputs.
expect 1 "cannot open output /nonexistent/dir/x.jsonl" "unwritable output" -- \
	td -d 1 -o /nonexistent/dir/x.jsonl
expect 1 "cannot open output .*: Is a directory" "output is a directory" -- \
	td -d 1 -f "$SCRATCH"
mkdir "$SCRATCH/ro" && chmod 0555 "$SCRATCH/ro"
expect 1 "cannot open output .*/ro/x.jsonl: Permission denied" "output in a read-only dir" -- \
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
	"$TD" -i "$NAME" --run-dir "$RUN_DIR" -d 1 -o "$SCRATCH/ro/x.jsonl"
# Told by the configuration's check, before anything starts: status 2,
# also for --print-config and for a report.
expect 2 "the flame graph needs a file name, not '-'" "SVG to stdout" -- td -d 1 -F -
expect 2 "the flame graph needs a file name, not '-'" "SVG to stdout, --print-config" -- \
	td -F - --print-config
expect 2 "the flame graph needs a file name, not '-'" "report's SVG to stdout" -- \
	"$TD" report "$SCRATCH/missing.dat" -F -
expect 2 "pprof needs a file name, not '-'" "report's pprof to stdout" -- \
	"$TD" report "$SCRATCH/missing.dat" --pprof -
# Nor the interval profiles: '-' would be a directory ./-, made wherever the
# daemon runs (here: the scratch directory).
expect 2 "profile_dir needs a directory name, not '-'" "--profile-dir -" -- \
	env -C "$SCRATCH" "$TD" -i "$NAME" --run-dir "$RUN_DIR" -d 1 --profile-dir -
check "... no directory ./- made" [ ! -e "$SCRATCH/-" ]
printf 'profile_dir = -\n' >"$SCRATCH/pdir.conf"
expect 2 "profile_dir needs a directory name, not '-'" "profile_dir = - in the configuration" -- \
	env -C "$SCRATCH" "$TD" -c "$SCRATCH/pdir.conf" -i "$NAME" --run-dir "$RUN_DIR" \
	--print-config
# trace-cmd habits: its record's -F PROGRAM and -f FILTER are outputs here.
# A program (an ELF file, executable or not, or a script) is never
# overwritten; a filter is not taken for a file name, unless written as a
# path. Told by content, not mode: an output written before on a mount
# that shows every file executable (vfat) is still an output.
cp /bin/true "$SCRATCH/prog" && cp /bin/true "$SCRATCH/lib.so" && chmod 0644 "$SCRATCH/lib.so"
expect 2 "flamegraph \\(-F\\) '.*/prog' is a program: not overwritten .* is -p PID here" \
	"-F a program (trace-cmd's -F)" -- td -d 1 -F "$SCRATCH/prog"
check "... the program is intact" cmp -s /bin/true "$SCRATCH/prog"
expect 2 "record \\(record -o, --record\\) '.*/lib.so' is a program" \
	"record -o an ELF file without execute permission" -- \
	"$TD" record -i "$NAME" --run-dir "$RUN_DIR" -d 1 -o "$SCRATCH/lib.so"
check "... the ELF file is intact" cmp -s /bin/true "$SCRATCH/lib.so"
printf '#!/bin/sh\nexit 0\n' >"$SCRATCH/run.sh"
expect 2 "pprof \\(--pprof\\) '.*/run.sh' is a program" "--pprof a script" -- \
	td --pprof "$SCRATCH/run.sh" --print-config
printf '{}\n' >"$SCRATCH/old.jsonl" && chmod 0755 "$SCRATCH/old.jsonl"
check "-o an output of before, mode 0755 (vfat), is taken" \
	eval "td -o '$SCRATCH/old.jsonl' --print-config | grep -qx 'output = $SCRATCH/old.jsonl'"
expect 2 "output \\(-o\\) '.*/prog' is a program" "report -o a program" -- \
	"$TD" report "$SCRATCH/missing.dat" -o "$SCRATCH/prog"
check "... the program is intact" cmp -s /bin/true "$SCRATCH/prog"
if cd "$SCRATCH"; then
	expect 2 "-f \\(--folded\\) 'prev_pid==1' reads as an ftrace filter.* -e SYS:NAME:FILTER; \
a file of that name is \\./prev_pid==1" "-f a filter (trace-cmd's -f)" -- td -d 1 -f 'prev_pid==1'
	check "... no file of that name" [ ! -e 'prev_pid==1' ]
	# report has no -e: it says what it has instead.
	expect 2 "-F \\(--flamegraph\\) 'comm ~ \"sh\\*\"' reads as an ftrace filter, not a \
file name: report takes no filter, only -p PID" "report -F a glob filter" -- \
		"$TD" report x.dat -F 'comm ~ "sh*"'
	check "... and does not point to an -e report lacks" \
		eval "! grep -q -- '-e SYS' \"\$SCRATCH/err\""
	expect 2 "-f \\(--folded\\) 'prev_pid==1' reads as an ftrace filter.*report takes no \
filter.*a file of that name is \\./prev_pid==1" "report -f a filter" -- \
		"$TD" report x.dat -f 'prev_pid==1'
	# One '=' is no filter's operator; a configuration file names its keys.
	check "-f pid=1.folded is a file name" \
		eval "td -f pid=1.folded --print-config | grep -qx 'folded = pid=1.folded'"
	printf 'folded = cpu==1.folded\n' >"$SCRATCH/fold.conf"
	check "folded = cpu==1.folded in a configuration file is a file name" \
		eval "td -c '$SCRATCH/fold.conf' --print-config | grep -qx 'folded = cpu==1.folded'"
	check "-f ./FILTER-LIKE-NAME is a file name, taken as given" eval \
		"td -f './prev_pid==1' --print-config | grep -qx 'folded = ./prev_pid==1'"
	cd - >/dev/null || exit 1
else
	fail "-f filter cases: cannot enter $SCRATCH"
fi
# A full disk, found when the buffered JSON is flushed (a few events: less
# than the buffer), is said at once and fails the run.
( sleep 0.5; for _ in 1 2 3 4 5; do /bin/true; done ) &
expect 1 "cannot write /dev/full: No space left on device: [0-9]* event lines dropped" \
	"full disk (buffered JSON flushed)" -- \
	td -e sched:sched_process_exec -d 1.5 -o /dev/full --json-layout=full
wait $!

# Not root: nobody, no capabilities.
expect 3 "must run as root" "not root" -- \
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
	"$TD" -i "$NAME" --run-dir "$RUN_DIR" -d 1 -o /dev/null

after=$(ls "$TRACEFS/instances" | grep -v '^td-host-' | sort)
check "no instance appeared in tracefs" [ "$before" = "$after" ]
finish
