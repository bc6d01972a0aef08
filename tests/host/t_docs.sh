#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --help, the man page and the example config agree: every long option of
# --help is documented in trace-defer(8), every key of the man page's table
# is accepted by the config parser, and the example config parses.
. "$(dirname "$0")/lib.sh"

man="$TOP/doc/trace-defer.8"
opts=$("$TD" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
check "--help lists options" [ "$(echo "$opts" | wc -l)" -ge 20 ]
missing=""
for o in $opts; do
	pat=$(echo "$o" | sed 's/-/\\\\-/g')
	grep -q -- "$pat" "$man" || missing="$missing $o"
done
check "every --help option is in the man page${missing:+ (missing:$missing)}" [ -z "$missing" ]

# Keys of the man page table (between .TS and .TE), each set to a value
# the parser must accept.
keys=$(sed -n '/^\.TS/,/^\.TE/p' "$man" | awk -F'\t' 'NF == 3 && $1 !~ /fB/ {print $1}')
check "man page table lists keys" [ "$(echo "$keys" | wc -l)" -ge 20 ]
bad=""
for k in $keys; do
	case $k in
	event) v="sched:sched_switch" ;;
	mode) v="inplace" ;;
	json_layout) v="full" ;;
	trace_clock) v="mono" ;;
	kernel_stack | output_append | symbolize | profile_folded) v="yes" ;;
	instance | comm) v="x" ;;
	run_dir | debug_dir) v="/tmp" ;;
	output | folded | flamegraph | pprof | profile_dir) v="/tmp/x" ;;
	verbosity) v="1" ;;
	profile_max_mem_kb) v="64" ;;
	*) v="5" ;;
	esac
	printf '%s = %s\n' "$k" "$v" >"$SCRATCH/k.conf"
	"$TD" -c "$SCRATCH/k.conf" --print-config >/dev/null 2>&1 || bad="$bad $k"
done
check "every key of the man page is accepted${bad:+ (refused:$bad)}" [ -z "$bad" ]
"$TD" -c "$TOP/contrib/trace-defer.conf" --print-config >"$SCRATCH/example.eff"
check "the example config parses" [ $? = 0 ]
check "the example config's event is used" grep -qx "event = sched:sched_switch" \
	"$SCRATCH/example.eff"
# The pages send users to td-json-resolve: it has a help of its own.
resolver="$TOP/contrib/td-json-resolve"
"$resolver" --help >"$SCRATCH/resolve.help" 2>&1
check "td-json-resolve --help: status 0" [ $? = 0 ]
check "... says its usage" grep -q '^Usage: td-json-resolve \[FILE\]' "$SCRATCH/resolve.help"
"$resolver" --bogus >/dev/null 2>"$SCRATCH/resolve.err"
check "td-json-resolve --bogus: status 2" [ $? = 2 ]
check "... an unknown option, not a missing file" grep -q "unknown option '--bogus'" \
	"$SCRATCH/resolve.err"
# make install puts td-json-resolve, which the installed pages name, in
# BINDIR, under DESTDIR like the rest; make uninstall takes it away.
inst="$SCRATCH/inst"
make -s -C "$TOP" BUILD="$BUILD" DESTDIR="$inst" PREFIX=/usr install >"$SCRATCH/install.log" 2>&1
check "make install DESTDIR=DIR PREFIX=/usr" [ $? = 0 ]
check "... installs td-json-resolve in DIR/usr/bin" [ -x "$inst/usr/bin/td-json-resolve" ]
check "... which runs from there" eval "'$inst/usr/bin/td-json-resolve' --help >/dev/null"
make -s -C "$TOP" BUILD="$BUILD" DESTDIR="$inst" PREFIX=/usr uninstall >>"$SCRATCH/install.log" 2>&1
check "make uninstall removes it" [ ! -e "$inst/usr/bin/td-json-resolve" ]
# Both commands say their version (status 0), the same one.
version=$("$TD" --version)
check "trace-defer --version" [ -n "$version" ]
check "trace-defer report --version says the same" [ "$("$TD" report --version)" = "$version" ]
check "trace-defer report -V says the same" [ "$("$TD" report -V)" = "$version" ]
# --print-config writes a configuration file that gives the same settings.
"$TD" -c "$TOP/contrib/trace-defer.conf" -d 123456789.5 --profile-interval 0.123456789 \
	--stats-interval 2.5e-3 --print-config >"$SCRATCH/eff1.conf"
"$TD" -c "$SCRATCH/eff1.conf" --print-config >"$SCRATCH/eff2.conf"
check "--print-config read back gives the same settings" cmp -s "$SCRATCH/eff1.conf" \
	"$SCRATCH/eff2.conf"
check "... its numbers to the last digit (not 1.23457e+08)" \
	grep -qx "duration = 123456789.5" "$SCRATCH/eff1.conf"
check "... also a fraction" grep -qx "profile_interval = 0.123456789" "$SCRATCH/eff1.conf"
for page in "$man" "$TOP"/doc/*.7; do
	check "$(basename "$page") renders without warnings" \
		[ -z "$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)" ]
done
# Every page a page or the README names is there.
for ref in $(cat "$TOP"/doc/*.[78] "$TOP/README.md" |
	grep -o 'trace-defer[a-z-]*\(\\f[RP]\)\? \?([78])' |
	sed 's/\\f[RP]//; s/ //' | sort -u); do
	name=${ref%(*}
	sec=${ref#*(}
	sec=${sec%)}
	check "$ref, named in the docs, is in doc/" [ -f "$TOP/doc/$name.$sec" ]
done
# The schema's page is what its markdown makes (make doc).
lowdown_cmd=$(make -s -C "$TOP" -pn doc 2>/dev/null | sed -n 's/^LOWDOWN = //p' | head -1)
check "make doc says how the schema's page is made" [ -n "$lowdown_cmd" ]
$lowdown_cmd -o "$SCRATCH/json.7" "$TOP/doc/trace-defer-json.7.md"
check "doc/trace-defer-json.7 is made from its markdown (make doc)" \
	cmp -s "$SCRATCH/json.7" "$TOP/doc/trace-defer-json.7"
# Markdown lowdown took for HTML (<idle>) leaves an empty font change.
check "no text lost from the pages (no empty \\fB\\fR)" \
	[ -z "$(grep -l '\\fB\\fR\|\\fI\\fR' "$TOP"/doc/*.[78])" ]
finish
