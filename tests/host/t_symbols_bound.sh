#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --symbols-max-mb: a machine that keeps running new binaries must not grow
# the daemon's symbolizer without end. Six copies of a program with 25,000
# functions (no build-id: each copy's symbol table is its own, ~1 MiB) run
# one after the other. With a 2 MiB bound the symbolizer starts again
# (held: restarts > 0), holds less at exit than without a bound, and every
# event of every copy still has its frames named; without a bound it
# holds them all (restarts=0). Bad values are refused with exit status 2.
. "$(dirname "$0")/lib.sh"

NFUNCS=25000
COPIES=6
# Names of this run's own (a test elsewhere on the machine may run copies too).
PFX=$(printf 'ts%05dc' $(($$ % 100000)))
src=$SCRATCH/tdsym.c
{
	echo '#include <stdlib.h>'
	echo '#include "raw_nanosleep.h"'
	for i in $(seq 1 $NFUNCS); do echo "int tdsym_f$i(int x) { return x + $i; }"; done
	echo '__attribute__((noinline)) void td_sym_leaf(void) { raw_nanosleep_ms(5); }'
	echo 'int main(int argc, char **argv)'
	echo '{'
	echo '	for (int n = atoi(argv[1]); n > 0; n--)'
	echo '		td_sym_leaf();'
	echo '	return tdsym_f1(0) != 1;'
	echo '}'
} >"$src"
check "a program with $NFUNCS functions builds" \
	gcc -O0 -fno-omit-frame-pointer -no-pie -I "$TOP/tests/progs" -Wl,--build-id=none \
	-o "$SCRATCH/tdsym" "$src"
for i in $(seq 1 $COPIES); do cp "$SCRATCH/tdsym" "$SCRATCH/$PFX$i"; done

# run MAX_MB TAG: the daemon follows the copies, run one after the other,
# ~1.7 s each (the symbolizer's bound is checked every 5 s).
run() {
	local max=$1 tag=$2 i
	td_bg -e sched:sched_switch --comm "$PFX*" --json-layout=full \
		-o "$SCRATCH/$tag.jsonl" --symbols-max-mb "$max" 2>"$SCRATCH/$tag.err"
	wait_tracing
	for i in $(seq 1 $COPIES); do "$SCRATCH/$PFX$i" 300; done
	sleep 0.5
	kill -INT "$D"
	wait "$D"
	check "bound $max: the daemon exits 0" [ $? = 0 ]
	grep 'held:' "$SCRATCH/$tag.err" | sed 's/^trace-defer:  */  counters: /'
}
held() { sed -n "s/.*held:.* $2=\([0-9]*\).*/\1/p" "$SCRATCH/$1.err" | tail -1; }

run 2 bounded
run 0 unbounded
log "held bytes at exit: bounded $(held bounded bytes), unbounded $(held unbounded bytes)"
check "bounded: the symbolizer started again (restarts=$(held bounded restarts))" \
	[ "$(held bounded restarts)" -gt 0 ]
check "bounded: the restart is said" grep -q "held more than symbols_max_mb (2 MiB)" \
	"$SCRATCH/bounded.err"
check "unbounded: it never did" [ "$(held unbounded restarts)" = 0 ]
check "unbounded: it holds the copies' tables, more than 4 MiB" \
	[ "$(held unbounded bytes)" -gt $((4 << 20)) ]
check "bounded: it holds less at exit than unbounded" \
	[ "$(held bounded bytes)" -lt "$(held unbounded bytes)" ]

# Each copy sleeps 300 times in td_sym_leaf; its exit is named in libc.
# A switch inside its execve(), once the task has its new name but still
# the shell's registers (a loaded machine), has a user stack of the shell
# that no map of the copy names: raw, and before its first sleep. Every
# frame after that is named.
for tag in bounded unbounded; do
	for i in $(seq 1 $COPIES); do
		sel="select(.comm == \"$PFX$i\" and (.user_stack | length) > 0)"
		n=$(jq -c "$sel" "$SCRATCH/$tag.jsonl" | wc -l)
		raw=$(jq -s "map($sel) | (map(select(.user_stack[0].sym == \"td_sym_leaf\")
			| .ts) | min) as \$first | map(select(.user_stack[0].sym == null and
			.ts > \$first)) | length" "$SCRATCH/$tag.jsonl")
		# Its sleeps (a preemption in td_sym_leaf, on a loaded machine, is one more)
		leaf=$(jq -c "$sel | select(.user_stack[0].sym == \"td_sym_leaf\" and
			.fields.prev_state == 1)" "$SCRATCH/$tag.jsonl" | wc -l)
		check "$tag: $PFX$i's $n events with user stacks: $leaf in td_sym_leaf, $raw raw after the first" \
			[ "$leaf" = 300 -a "$raw" = 0 ]
	done
done

td -e sched:sched_switch --symbols-max-mb -1 -d 1 -o /dev/null 2>"$SCRATCH/bad.err"
check "--symbols-max-mb -1 is refused with exit status 2" [ $? = 2 ]
check "... saying why" grep -q symbols_max_mb "$SCRATCH/bad.err"
check "no instance left" instance_gone
finish
