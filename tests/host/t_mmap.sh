#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The buffers read through their memory mapping (the default where the
# kernel can) and with read() (--no-mmap) give the same events: a program
# that sleeps 60 times, started once tracing is on, has exactly 60
# switches into a sleep in each, none twice. Its 10 ms sleeps leave the
# reader page partly filled at every 200 ms drain, so the mapped reader
# reads most sub-buffers more than once, and must parse only what is new.
. "$(dirname "$0")/lib.sh"

GO="$SCRATCH/go"
run() {	# NAME [OPTION...]: trace a program that sleeps 60 times
	local name=$1 p
	shift
	rm -f "$GO"
	bash -c 'while [ ! -e "$1" ]; do sleep 0.05; done; exec "$0" sleep 10 60' \
		"$FP_CHAIN" "$GO" >/dev/null &
	p=$!
	BG_PIDS+=("$p")
	td_bg -p "$p" -v "$@" -o "$SCRATCH/$name.jsonl" 2>"$SCRATCH/$name.err"
	check "$name: tracing on" wait_tracing
	touch "$GO"
	wait "$p"
	sleep 0.3
	kill -TERM "$D"
	check "$name: the daemon exits 0" eval 'wait_exit "$D" && [ "$WAIT_RC" = 0 ]'
	check "$name: every stack id resolves" resolve "$SCRATCH/$name.jsonl"
	sleeps=$(jq -r --argjson p "$p" 'select(.tid == $p and .comm == "fp_chain" and
		.fields.prev_state == 1) | .ts' "$SCRATCH/$name.v1.jsonl" | wc -l)
	check "$name: 60 switches into a sleep (got $sleeps)" [ "$sleeps" = 60 ]
	dups=$(jq -r '"\(.cpu) \(.ts)"' "$SCRATCH/$name.v1.jsonl" | sort | uniq -d | wc -l)
	check "$name: no event twice ($dups)" [ "$dups" = 0 ]
	check "$name: instance removed" instance_gone
}

run mapped
check "mapped: every CPU's buffer mapped" \
	grep -qE 'trace-defer: ([0-9]+) of \1 CPU buffers read through their memory mapping' \
	"$SCRATCH/mapped.err"
reads=$(grep -o 'cpu[0-9]*: reads=[0-9]*' "$SCRATCH/mapped.err" |
	awk -F= '{n += $2} END {print n + 0}')
pages=$(grep -o 'parser: pages=[0-9]*' "$SCRATCH/mapped.err" | tail -1 | cut -d= -f2)
log "mapped: $reads reads of ${pages:-?} sub-buffers"
check "mapped: sub-buffers read again as they filled (reads > sub-buffers)" \
	[ "$reads" -gt "${pages:-0}" ]
run copied --no-mmap
check "copied: no buffer mapped" \
	grep -qE 'trace-defer: 0 of [0-9]+ CPU buffers read through their memory mapping' \
	"$SCRATCH/copied.err"
finish
