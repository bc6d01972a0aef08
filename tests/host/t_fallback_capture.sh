#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fallback mode on this (unpatched) kernel: sched_switch of fp_chain is
# captured with in-place user stacks, every record says "inplace", the
# user frames are c, b, a (checked against nm), folded stacks and the SVG
# are written, and nothing is left in tracefs.
. "$(dirname "$0")/lib.sh"

start_fp_chain 20
sleep 0.2
td -p "$FP_PID" -d 2 -o "$SCRATCH/out.jsonl" -f "$SCRATCH/out.folded" \
	-F "$SCRATCH/out.svg" 2>"$SCRATCH/err"
rc=$?
check "exit status 0 (got $rc)" [ "$rc" = 0 ]
check "fallback announced once on stderr" \
	[ "$(grep -c 'no deferred user stacks' "$SCRATCH/err")" = 1 ]
check "counters printed on exit" grep -q 'emitted: stitched=0 inplace=[1-9]' "$SCRATCH/err"
check "every stack id resolves" resolve "$SCRATCH/out.jsonl"
check "records of fp_chain are inplace with c, b, a (nm-checked)" \
	python3 "$TOP/tests/host/check_records.py" "$SCRATCH/out.v1.jsonl" "$FP_CHAIN" "$FP_PID" \
	inplace 20
check "only fp_chain's events (pid filter)" \
	[ "$(jq -r .pid "$SCRATCH/out.v1.jsonl" | sort -u)" = "$FP_PID" ]
check "every record is a sched:sched_switch" \
	[ "$(jq -r .event "$SCRATCH/out.v1.jsonl" | sort -u)" = "sched:sched_switch" ]
check "folded stacks hold fp_chain;...;a;b;c" \
	grep -Eq '^fp_chain;.*;a;b;c;.* [0-9]+$' "$SCRATCH/out.folded"
check "flame graph SVG written" grep -q '<svg' "$SCRATCH/out.svg"
check "instance removed" instance_gone
check "marker cleared" marker_clear

# --comm filter instead of a pid, and the trigger-free option path with
# no kernel stacks.
td --comm fp_chain --no-kernel-stack -d 1 -o "$SCRATCH/comm.jsonl" 2>"$SCRATCH/err2"
rc=$?
check "--comm run exits 0 (got $rc)" [ "$rc" = 0 ]
resolve "$SCRATCH/comm.jsonl"
check "--comm: only fp_chain records" \
	[ "$(jq -r .comm "$SCRATCH/comm.v1.jsonl" | sort -u)" = fp_chain ]
check "--no-kernel-stack: kernel stacks empty" \
	[ "$(jq -c .kernel_stack "$SCRATCH/comm.v1.jsonl" | sort -u)" = "[]" ]
check "instance removed" instance_gone
finish
