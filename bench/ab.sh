#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench/ab.sh OLD_BUILD NEW_BUILD [ROUNDS]: is a change to the per-event path
# faster? Runs the replay of two builds (their bench/replay, same capture,
# same stages) one after the other, ROUNDS times (default 5), and prints each
# stage's ns per event of every run, then each stage's median for both and
# the new/old ratio. On a shared machine one `make bench` moves by 5% from
# run to run; runs taken in turns see the same load, so a few percent shows.
#
# Build the old one apart, e.g.:
#   git worktree add /tmp/old REV; make -C /tmp/old BUILD=/tmp/bold all bench-progs
#   sudo bench/ab.sh /tmp/bold build
#
# Environment: AB_STAGES (parse,stitch,pprof; see replay --stages),
# AB_EVENTS (2000000), AB_REPEAT (3: the replay's own best-of rounds per
# run), AB_WORK (a directory for the event formats; default a temporary
# one, removed at exit). Needs a mounted tracefs (root) for the formats.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
usage() {
	echo "usage: bench/ab.sh OLD_BUILD NEW_BUILD [ROUNDS]" >&2
	exit 2
}
[ $# -ge 2 ] && [ $# -le 3 ] || usage
old=$1 new=$2 rounds=${3:-5}
case $rounds in '' | *[!0-9]* | 0) usage ;; esac
stages=${AB_STAGES:-parse,stitch,pprof}
events=${AB_EVENTS:-2000000}
repeat=${AB_REPEAT:-3}
for b in "$old" "$new"; do
	[ -x "$b/bench/replay" ] || { echo "ab: no $b/bench/replay (make BUILD=$b all bench-progs)" >&2; exit 2; }
	[ -x "$b/progs/fp_chain" ] || { echo "ab: no $b/progs/fp_chain" >&2; exit 2; }
done
command -v python3 > /dev/null || { echo "ab: needs python3" >&2; exit 2; }

if [ -n "${AB_WORK:-}" ]; then
	work=$AB_WORK
	mkdir -p "$work" || exit 1
else
	work=$(mktemp -d /tmp/td-ab.XXXXXX) || exit 1
	trap 'rm -rf "$work"' EXIT
fi
[ -d "$work/formats/events" ] || "$top/bench/formats.sh" "$work/formats" || {
	echo "ab: cannot make the event formats (needs root and tracefs)" >&2
	exit 1
}

: > "$work/ab.jsonl"
for r in $(seq "$rounds"); do
	for side in old new; do
		b=$old
		[ "$side" = new ] && b=$new
		if ! "$b/bench/replay" --formats "$work/formats" --prog "$b/progs/fp_chain" \
			--events "$events" --repeat "$repeat" --stages "$stages" \
			> "$work/run.json" 2> "$work/run.err"; then
			echo "ab: $side replay failed:" >&2
			tail -n 5 "$work/run.err" >&2
			exit 1
		fi
		python3 - "$side" "$r" "$work/run.json" >> "$work/ab.jsonl" <<'EOF' || exit 1
import json, sys
side, rnd, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
st = json.load(open(path))["stages"]
print(json.dumps({"side": side, "round": rnd,
                  "ns": {k: v["ns_per_event"] for k, v in st.items()}}))
EOF
	done
done

python3 - "$work/ab.jsonl" "$old" "$new" <<'EOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
old, new = sys.argv[2], sys.argv[3]
stages = list(runs[0]["ns"])
print("ns per event, runs in turns (old: %s, new: %s)" % (old, new))
print("%-8s %-5s %s" % ("stage", "side", "runs"))
for s in stages:
    for side in ("old", "new"):
        v = [r["ns"][s] for r in runs if r["side"] == side]
        print("%-8s %-5s %s" % (s, side, " ".join("%.1f" % x for x in v)))
print("%-8s %8s %8s %8s" % ("stage", "old", "new", "new/old"))
for s in stages:
    o = statistics.median(r["ns"][s] for r in runs if r["side"] == "old")
    n = statistics.median(r["ns"][s] for r in runs if r["side"] == "new")
    print("%-8s %8.1f %8.1f %8.3f" % (s, o, n, n / o))
EOF
