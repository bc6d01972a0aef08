#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/fuzz/seed-from-dat.sh DIR: add seeds made of real records to
# tests/fuzz/corpus/ (make fuzz-seed-real FROM=DIR). Under DIR:
#  - every *.dat (trace-cmd record, trace-defer record; e.g. the names stage
#    of the VM tests leaves them in vm-out/names/): its records, event ids
#    mapped by name to the fuzz targets' ids, packed into pages per CPU;
#  - every directory holding cpu0.raw, cpu1.raw... (per_cpu/cpuN/trace_pipe_raw
#    read 4096 bytes at a time, as trace-defer record saves them) and an
#    events/ copy of tracefs' events directory (or EVENTS=DIR): the pages
#    byte for byte, event ids mapped through the format files.
# At most 8 seeds per source, pages holding user_unwind_stack records first.
# Commit only a few: the corpus must stay small (a few dozen files, < 1 MB).
set -eu

from=${1:?usage: seed-from-dat.sh DIR}
b=${FUZZ_BUILD:-build-fuzz}
src=$(cd "$(dirname "$0")" && pwd)
seed=$b/fuzz_seed
[ -x "$seed" ] || { echo "seed-from-dat: $seed missing (make fuzz)" >&2; exit 1; }
pages=$src/corpus/page
plugin=$src/corpus/plugin
found=0

while IFS= read -r -d '' dat; do
	echo "seed-from-dat: $dat"
	"$seed" dat "$pages" "$plugin" "$dat"
	found=1
done < <(find "$from" -name '*.dat' -type f -print0)

while IFS= read -r -d '' raw0; do
	dir=$(dirname "$raw0")
	events=${EVENTS:-$dir/events}
	if [ ! -d "$events" ]; then
		echo "seed-from-dat: $dir: no events/ directory (set EVENTS=DIR): skipped" >&2
		continue
	fi
	echo "seed-from-dat: $dir"
	"$seed" raw "$pages" "$plugin" "$events" $(ls "$dir"/cpu*.raw | sort -V)
	found=1
done < <(find "$from" -name 'cpu0.raw' -type f -print0)

if [ "$found" -eq 0 ]; then
	echo "seed-from-dat: no *.dat or cpu0.raw under $from" >&2
	exit 1
fi
du -sh "$pages" "$plugin"
