#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A short capture under valgrind: no memory errors, no leaks (definite or
# indirect), no file descriptor left open at exit, instance removed.
. "$(dirname "$0")/lib.sh"

command -v valgrind >/dev/null || { fail "valgrind not installed"; finish; }
start_fp_chain 10
valgrind --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --track-fds=yes \
	--log-file="$SCRATCH/vg.log" \
	"$TD" -i "$NAME" --run-dir "$RUN_DIR" -p "$FP_PID" -d 3 \
	-o "$SCRATCH/vg.jsonl" -f "$SCRATCH/vg.folded" -F "$SCRATCH/vg.svg" \
	--record "$SCRATCH/vg.dat" 2>"$SCRATCH/err"
rc=$?
check "exit status 0 under valgrind (got $rc)" [ "$rc" = 0 ]
check "no memory errors" grep -q 'ERROR SUMMARY: 0 errors' "$SCRATCH/vg.log"
check "no definite leaks" grep -Eq 'definitely lost: 0 bytes|no leaks are possible' \
	"$SCRATCH/vg.log"
# Open at exit: stdin/out/err and whatever the shell passed in, nothing of ours.
check "no fd of ours open at exit" \
	[ "$(grep -A1 '^==[0-9]*== Open file descriptor' "$SCRATCH/vg.log" |
		grep -vc -e 'Open file descriptor' -e 'inherited from parent' -e '^--$')" = 0 ]
check "records written" [ "$(wc -l <"$SCRATCH/vg.jsonl")" -ge 10 ]
check "trace.dat written" [ -s "$SCRATCH/vg.dat" ]
check "instance removed" instance_gone
if [ "$failures" -ne 0 ]; then
	sed 's/^/    | /' "$SCRATCH/vg.log" | tail -60
fi
finish
