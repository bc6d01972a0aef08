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
# fds_of_ours LOG: the descriptors valgrind lists open at exit, of every kind
# ("Open file descriptor N:", "Open AF_UNIX socket N:", "Open pf-F socket
# N:", ...), not inherited from the parent, one a line. Fails (saying why on
# stderr) without a "FILE DESCRIPTORS: N open" summary, or when fewer or more
# are listed than it counts (a kind this does not read): no list, no pass.
fds_of_ours() {
	awk '
	pending != "" {
		if ($0 !~ /<inherited from parent>/)
			print pending
		pending = ""
	}
	/^==[0-9]+== FILE DESCRIPTORS: [0-9]+ open/ {
		summaries++
		counted += $4
		# Valgrind 3.19 on: "N open (M std)", the M of fds 0-2 not listed.
		if (match($0, /\([0-9]+ std\)/))
			counted -= substr($0, RSTART + 1) + 0
		next
	}
	/^==[0-9]+== Open [^:]* [0-9]+:/ { listed++; pending = $0 }
	END {
		if (pending != "")
			print pending
		if (!summaries) {
			print "no FILE DESCRIPTORS summary" >"/dev/stderr"
			exit 1
		}
		if (listed != counted) {
			printf "%d descriptors listed, %d counted\n", listed, counted >"/dev/stderr"
			exit 1
		}
	}' "$1"
}
ours=$(fds_of_ours "$SCRATCH/vg.log" 2>"$SCRATCH/fds.err")
fds_rc=$?
what="$(grep -c '^==[0-9]*== Open ' "$SCRATCH/vg.log") listed"
[ -s "$SCRATCH/fds.err" ] && what=$(cat "$SCRATCH/fds.err")
[ -n "$ours" ] && what="$what; ours: $(echo "$ours" | sed 's/^==[0-9]*== //' | paste -sd ';' -)"
check "no fd of ours open at exit ($what)" [ "$fds_rc" = 0 -a -z "$ours" ]
check "records written" [ "$(wc -l <"$SCRATCH/vg.jsonl")" -ge 10 ]
check "trace.dat written" [ -s "$SCRATCH/vg.dat" ]
check "instance removed" instance_gone
if [ "$failures" -ne 0 ]; then
	sed 's/^/    | /' "$SCRATCH/vg.log" | tail -60
fi
finish
