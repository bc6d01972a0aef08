#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every output holds the stacks and event fields of every traced process:
# the daemon and the report make each new one readable by its owner alone
# (0600; a profile directory, 0700), whatever the umask, as perf.data and
# the recording's trace.dat are. A JSON file appended to keeps its mode.
. "$(dirname "$0")/lib.sh"

umask 022
out=$SCRATCH/out
mkdir "$out"
echo '{"v":2,"type":"note"}' >"$out/kept.jsonl"
chmod 644 "$out/kept.jsonl"
td_bg -d 2 -o "$out/a.jsonl" -f "$out/a.folded" -F "$out/a.svg" --pprof "$out/a.pb.gz" \
	--profile-dir "$out/profiles" --record "$out/a.dat" 2>"$SCRATCH/d.err"
check "daemon: tracing" wait_tracing
"$BUILD/progs/fp_chain" sleep 20 3 >/dev/null
check "daemon: exits 0" eval 'wait_exit "$D" 100 && [ "$WAIT_RC" = 0 ]'
for f in a.jsonl a.folded a.svg a.pb.gz a.dat; do
	check "daemon, umask 022: $f is 0600 ($(stat -c %a "$out/$f" 2>/dev/null))" \
		[ "$(stat -c %a "$out/$f" 2>/dev/null)" = 600 ]
done
check "daemon: the profile directory is 0700" [ "$(stat -c %a "$out/profiles")" = 700 ]
check "daemon: its profiles are 0600 ($(ls "$out/profiles" | wc -l) files)" \
	eval '[ -n "$(ls "$out/profiles")" ] &&
	      [ "$(stat -c %a "$out"/profiles/* | sort -u)" = 600 ]'

td_bg -d 1 -a -o "$out/kept.jsonl" 2>"$SCRATCH/a.err"
check "daemon -a: exits 0" eval 'wait_exit "$D" 100 && [ "$WAIT_RC" = 0 ]'
check "daemon: a JSON file appended to (-a) keeps its first line, the run's events after it" \
	[ "$(head -n 1 "$out/kept.jsonl")" = '{"v":2,"type":"note"}' -a \
	  "$(grep -c '"type":"event"' "$out/kept.jsonl")" -gt 0 ]
check "daemon: ... and its mode (644)" [ "$(stat -c %a "$out/kept.jsonl")" = 644 ]

"$TD" report "$out/a.dat" -o "$out/r.jsonl" -f "$out/r.folded" -F "$out/r.svg" \
	--pprof "$out/r.pb.gz" 2>"$SCRATCH/r.err"
check "report: exits 0 (got $?)" [ $? = 0 ]
for f in r.jsonl r.folded r.svg r.pb.gz; do
	check "report, umask 022: $f is 0600 ($(stat -c %a "$out/$f" 2>/dev/null))" \
		[ "$(stat -c %a "$out/$f" 2>/dev/null)" = 600 ]
done
check "instance removed" instance_gone
finish
