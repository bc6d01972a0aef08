#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The JSON layouts: one trace.dat reported three times, interned (the
# default), full and compact. In the interned file every line is a stack
# or an event of schema 2, each stack id is defined once and before any
# event uses it; the compact file starts with its header and defines every
# format and stack once, before use; resolving the ids
# (contrib/td-json-resolve) of either gives exactly the full report, line
# for line. Then the live daemon: SIGHUP after a rotation starts a file
# that defines every id it uses (compact: after a header of its own), and
# the option and config key are read and shown.
. "$(dirname "$0")/lib.sh"

start_fp_chain 5
sleep 0.2
# Every task: many stacks, the same addresses in many processes.
"$TD" record -i "$NAME" --run-dir "$RUN_DIR" -d 1 -o "$SCRATCH/x.dat" \
	2>/dev/null
check "record exits 0" [ $? = 0 ]
# Without names: on this kernel user frames are named through /proc while
# their processes run, and a process of the system-wide trace that ends
# between two reports (a compiler's, beside a kernel build) would make the
# layouts differ in its names, not in their layout.
"$TD" report "$SCRATCH/x.dat" --no-symbolize -o "$SCRATCH/int.jsonl"
check "report, default layout: exit 0" [ $? = 0 ]
"$TD" report "$SCRATCH/x.dat" --no-symbolize --json-layout=full -o "$SCRATCH/full.jsonl"
check "report --json-layout=full: exit 0" [ $? = 0 ]
"$TD" report "$SCRATCH/x.dat" --no-symbolize --json-layout=compact -o "$SCRATCH/cmp.jsonl"
check "report --json-layout=compact: exit 0" [ $? = 0 ]

check "interned: stack and event lines of schema 2, ids defined once, before use" \
	python3 - "$SCRATCH/int.jsonl" <<'PY'
import json, sys
defined, events, bad = set(), 0, []
for n, line in enumerate(open(sys.argv[1]), 1):
    r = json.loads(line)
    if r.get("v") != 2:
        bad.append(f"line {n}: v {r.get('v')}")
    elif r.get("type") == "stack":
        if r["id"] in defined:
            bad.append(f"line {n}: id {r['id']} defined again")
        defined.add(r["id"])
        if set(r) != {"v", "type", "id", "kernel_stack", "user_stack"}:
            bad.append(f"line {n}: stack keys {sorted(r)}")
    elif r.get("type") == "event":
        events += 1
        if r["stack"] not in defined:
            bad.append(f"line {n}: stack {r['stack']} not defined before")
        if "kernel_stack" in r or "user_stack" in r:
            bad.append(f"line {n}: frames in an event line")
    else:
        bad.append(f"line {n}: type {r.get('type')}")
print(f"{events} events, {len(defined)} stacks, {len(bad)} problems", *bad[:5], sep="\n  ")
sys.exit(1 if bad or events < 20 else 0)
PY
check "every stack id resolves" resolve "$SCRATCH/int.jsonl"
# Written as the resolver writes it: integers exact (jq 1.6 rounds past 2^53).
"$TOP/contrib/td-json-resolve" "$SCRATCH/full.jsonl" >"$SCRATCH/full.jq.jsonl"
check "resolved interned = full, line for line" \
	cmp "$SCRATCH/int.v1.jsonl" "$SCRATCH/full.jq.jsonl"
check "the full report is schema 1 throughout" \
	[ "$(jq -r .v "$SCRATCH/full.jsonl" | sort -u)" = 1 ]
nev=$(wc -l <"$SCRATCH/full.jsonl")
bi=$(stat -c %s "$SCRATCH/int.jsonl")
bf=$(stat -c %s "$SCRATCH/full.jsonl")
log "$nev events: interned $((bi / nev)) bytes/event, full $((bf / nev)) bytes/event"
check "interned is smaller" [ "$bi" -lt "$bf" ]

# --- layout compact ------------------------------------------------------
check "compact: a header first; formats and stacks of schema 3 defined once, before use" \
	python3 - "$SCRATCH/cmp.jsonl" <<'PY'
import json, sys
cols, formats, stacks, events, bad = None, {}, set(), 0, []
for n, line in enumerate(open(sys.argv[1]), 1):
    r = json.loads(line)
    if n == 1 and not (isinstance(r, dict) and r.get("type") == "header"):
        bad.append("line 1 is not the header")
    if isinstance(r, list):
        events += 1
        if cols is None or len(r) != len(cols):
            bad.append(f"line {n}: {len(r)} values for columns {cols}")
            continue
        e = dict(zip(cols, r))
        if e["stack"] not in stacks:
            bad.append(f"line {n}: stack {e['stack']} not defined before")
        if e["format"] not in formats:
            bad.append(f"line {n}: format {e['format']} not defined before")
        elif len(formats[e["format"]]) != len(e["fields"]):
            bad.append(f"line {n}: {len(e['fields'])} values for {formats[e['format']]}")
    elif r.get("v") != 3:
        bad.append(f"line {n}: v {r.get('v')}")
    elif r["type"] == "header":
        cols = r["columns"]
    elif r["type"] in ("format", "stack"):
        seen = formats if r["type"] == "format" else stacks
        if r["id"] in seen:
            bad.append(f"line {n}: {r['type']} {r['id']} defined again")
        if r["type"] == "format":
            formats[r["id"]] = r["fields"]
        else:
            stacks.add(r["id"])
    else:
        bad.append(f"line {n}: type {r.get('type')}")
print(f"{events} events, {len(formats)} formats, {len(stacks)} stacks, {len(bad)} problems",
      *bad[:5], sep="\n  ")
sys.exit(1 if bad or events < 20 else 0)
PY
check "every compact id resolves" resolve "$SCRATCH/cmp.jsonl"
check "resolved compact = full, line for line" \
	cmp "$SCRATCH/cmp.v1.jsonl" "$SCRATCH/full.jq.jsonl"
bc=$(stat -c %s "$SCRATCH/cmp.jsonl")
log "compact $((bc / nev)) bytes/event"
check "compact is smaller than interned" [ "$bc" -lt "$bi" ]
grep -v '"type":"format"' "$SCRATCH/cmp.jsonl" >"$SCRATCH/noformat.jsonl"
"$TOP/contrib/td-json-resolve" "$SCRATCH/noformat.jsonl" >/dev/null 2>"$SCRATCH/noformat.err"
check "resolver: an undefined format is an error" [ $? != 0 ]
check "resolver: says which format" grep -q "format [0-9]* not defined before it" \
	"$SCRATCH/noformat.err"

# 64-bit values (an hrtimer's address) come out exact: jq 1.6 rounded them.
printf '%s\n' '{"v":2,"type":"stack","id":1,"kernel_stack":[],"user_stack":[]}' \
	'{"v":2,"type":"event","ts":1,"cpu":0,"pid":1,"tid":1,"comm":"x","event":"timer:hrtimer_expire_entry","fields":{"hrtimer":18446612708506846968},"cookie":null,"status":"no_user","stack":1}' \
	>"$SCRATCH/big.jsonl"
check "resolver: 64-bit integers stay exact" \
	grep -q '"hrtimer":18446612708506846968' <("$TOP/contrib/td-json-resolve" "$SCRATCH/big.jsonl")

# The resolver refuses an id nothing defined.
grep '"type":"event"' "$SCRATCH/int.jsonl" >"$SCRATCH/orphans.jsonl"
"$TOP/contrib/td-json-resolve" "$SCRATCH/orphans.jsonl" >/dev/null 2>"$SCRATCH/orphans.err"
check "resolver: an undefined id is an error" [ $? != 0 ]
check "resolver: says which" grep -q "not defined before it" "$SCRATCH/orphans.err"

# --- live: SIGHUP after a rotation, each file self-contained ------------
td_bg -p "$FP_PID" -o "$SCRATCH/live.jsonl" 2>/dev/null
check "daemon tracing" wait_tracing
for i in $(seq 50); do [ -s "$SCRATCH/live.jsonl" ] && break; sleep 0.1; done
sleep 0.5
mv "$SCRATCH/live.jsonl" "$SCRATCH/live.1.jsonl"
kill -HUP "$D"
sleep 1.5
kill -INT "$D"
wait "$D"
check "daemon exits 0 after SIGHUP and SIGINT" [ $? = 0 ]
check "rotated file resolves on its own" resolve "$SCRATCH/live.1.jsonl"
check "reopened file resolves on its own" resolve "$SCRATCH/live.jsonl"
check "reopened file has events" [ "$(grep -c '"type":"event"' "$SCRATCH/live.jsonl")" -gt 5 ]
max1=$(jq -r 'select(.type == "stack") | .id' "$SCRATCH/live.1.jsonl" | sort -n | tail -n 1)
min2=$(jq -r 'select(.type == "stack") | .id' "$SCRATCH/live.jsonl" | sort -n | head -n 1)
check "ids go on after the reopen ($max1 < $min2)" [ "${max1:-0}" -lt "${min2:-0}" ]

# The same, layout compact: the reopened file has a header of its own.
td_bg -p "$FP_PID" --json-layout=compact -o "$SCRATCH/livec.jsonl" 2>/dev/null
check "daemon tracing (compact)" wait_tracing
for i in $(seq 50); do [ -s "$SCRATCH/livec.jsonl" ] && break; sleep 0.1; done
sleep 0.5
mv "$SCRATCH/livec.jsonl" "$SCRATCH/livec.1.jsonl"
kill -HUP "$D"
sleep 1.5
kill -INT "$D"
wait "$D"
check "compact: daemon exits 0 after SIGHUP and SIGINT" [ $? = 0 ]
check "compact: rotated file resolves on its own" resolve "$SCRATCH/livec.1.jsonl"
check "compact: reopened file resolves on its own" resolve "$SCRATCH/livec.jsonl"
check "compact: reopened file starts with its header" \
	eval 'head -n 1 "$SCRATCH/livec.jsonl" | grep -q "^{\"v\":3,\"type\":\"header\","'
check "compact: reopened file has events" [ "$(grep -c '^\[' "$SCRATCH/livec.jsonl")" -gt 5 ]

# --- option, config key, --print-config --------------------------------
check "--print-config: json_layout = interned by default" \
	eval '"$TD" --print-config | grep -qx "json_layout = interned"'
printf 'json_layout = full\n' >"$SCRATCH/l.conf"
check "config key json_layout = full" \
	eval '"$TD" -c "$SCRATCH/l.conf" --print-config | grep -qx "json_layout = full"'
check "--json-layout overrides the config" eval '"$TD" -c "$SCRATCH/l.conf" \
	--json-layout=interned --print-config | grep -qx "json_layout = interned"'
check "--json-layout=compact is read" \
	eval '"$TD" --json-layout=compact --print-config | grep -qx "json_layout = compact"'
"$TD" --json-layout=tiny --print-config >/dev/null 2>"$SCRATCH/bad.err"
check "unknown layout: status 2" [ $? = 2 ]
check "unknown layout: says which there are" grep -q "not one of full, interned, compact" \
	"$SCRATCH/bad.err"
finish
