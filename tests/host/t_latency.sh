#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bounded delay: under light load an event reaches the JSON output within
# about a second, even though the ring buffer is nowhere near its
# watermark; and a config file works, with the command line overriding it.
. "$(dirname "$0")/lib.sh"

cat >"$SCRATCH/td.conf" <<CONF
# trace-defer test config
event = sched:sched_switch
mode = auto
buffer_kb = 512
output = $SCRATCH/from-config.jsonl
output_append = no
stats_interval = 0
CONF

td -c "$SCRATCH/td.conf" -o "$SCRATCH/override.jsonl" --print-config >"$SCRATCH/eff"
check "--print-config: command line overrides the file" \
	grep -qx "output = $SCRATCH/override.jsonl" "$SCRATCH/eff"
check "--print-config: file value kept" grep -qx "buffer_kb = 512" "$SCRATCH/eff"

start_fp_chain 5000	# one sched_switch every 5 s
td_bg -c "$SCRATCH/td.conf" -p "$FP_PID" 2>"$SCRATCH/err"
check "daemon tracing" wait_tracing
# The kernel rounds up to whole sub-buffers: 512 becomes 513 or so.
kb=$(cat "$TRACEFS/instances/$NAME/buffer_size_kb")
check "buffer size from the config file applied ($kb KiB)" test "$kb" -ge 512 -a "$kb" -lt 600
# Wait for the next sched_switch of fp_chain (within 5 s), then time
# how long the record takes to appear.
sleep 0.3
n0=$(wc -l <"$SCRATCH/from-config.jsonl")
t0=$(date +%s%N)
for i in $(seq 400); do
	[ "$(wc -l <"$SCRATCH/from-config.jsonl")" -gt "$n0" ] && break
	sleep 0.02
done
waited=$((($(date +%s%N) - t0) / 1000000))
check "a record appeared (after ${waited} ms since looking)" \
	[ "$(wc -l <"$SCRATCH/from-config.jsonl")" -gt "$n0" ]
# The delay itself, as soon as the record shows: trace clock now minus the
# record's time stamp (an upper bound: it includes our 20 ms polling).
ts=$(tail -n 1 "$SCRATCH/from-config.jsonl" | jq .ts)
now=$(awk '/now ts/ {print $3}' "$TRACEFS/instances/$NAME/per_cpu/cpu0/stats")
delay_ms=$(awk -v n="$now" -v t="$ts" 'BEGIN {printf "%d", (n * 1e9 - t) / 1e6}')
log "record written ${delay_ms} ms after its event (trace clock)"
check "event to output delay under 1.5 s" [ "$delay_ms" -lt 1500 ]
kill -TERM "$D"
wait_exit "$D"
check "instance removed" instance_gone

# --stats-interval prints counters while running; -a appends.
td -p "$FP_PID" -d 1.7 --stats-interval 0.5 -o "$SCRATCH/app.jsonl" 2>"$SCRATCH/stats.err"
n=$(grep -c 'trace-defer: counters after' "$SCRATCH/stats.err")
check "--stats-interval 0.5 over 1.7 s: 2 to 4 reports (got $n)" [ "$n" -ge 2 -a "$n" -le 4 ]
check "reports carry the overrun count" grep -q 'overruns=[0-9]' "$SCRATCH/stats.err"
printf '{"marker":1}\n' >"$SCRATCH/app.jsonl"
td -p "$FP_PID" -d 0.5 -a -o "$SCRATCH/app.jsonl" 2>/dev/null
check "-a keeps what the file held" [ "$(head -n 1 "$SCRATCH/app.jsonl")" = '{"marker":1}' ]
td -p "$FP_PID" -d 0.5 -o "$SCRATCH/app.jsonl" 2>/dev/null
check "without -a the file is truncated" [ "$(grep -c marker "$SCRATCH/app.jsonl")" = 0 ]
finish
