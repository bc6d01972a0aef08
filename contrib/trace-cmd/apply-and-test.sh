#!/usr/bin/env bash
# Apply 0001-trace-cmd-Add-T-deferred.patch to a trace-cmd source tree, build
# it there with trace-cmd's own Makefile, and test the result in the VM on
# the kernel with the deferred user stack series (and, if given, on one
# without it). Nothing is installed: trace-cmd runs from a staging copy.
#
#   contrib/trace-cmd/apply-and-test.sh TRACE_CMD_SRC [OUTDIR]
#
# TRACE_CMD_SRC  an upstream trace-cmd tree (git or not); patched in place,
#                unless the patch is already in it.
# OUTDIR         results (default vm-out/trace-cmd): build.log, doc.log,
#                patched/ (and base/) with results, guest.log, d.dat, d.txt.
# Environment:
#   KIMAGE       bzImage of the patched kernel (default: kernel/build.sh patched)
#   KBASE        bzImage of a kernel without the series: also check that
#                -T deferred refuses there (not run when unset)
#   JOBS         make -j (default: nproc)
#   DOC=0        skip the man pages (built when asciidoc and xmlto are there)
#   PKG_CONFIG_PATH  newer libtraceevent/libtracefs for a tree that needs them
# Exits 0 only if the patch applied, everything built and every check passed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
patch=$here/0001-trace-cmd-Add-T-deferred.patch
[ $# -ge 1 ] || { sed -n '2,21s/^# \{0,1\}//p' "$0" >&2; exit 2; }
src=$(cd "$1" && pwd)
out=${2:-$top/vm-out/trace-cmd}
jobs=${JOBS:-$(nproc)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

say() { printf '== %s\n' "$*"; }
die() { printf 'apply-and-test: %s\n' "$*" >&2; exit 1; }

[ -f "$src/tracecmd/trace-record.c" ] && [ -f "$src/Makefile" ] ||
	die "$src is not a trace-cmd source tree"

# --- 1. apply ----------------------------------------------------------------
if grep -q consume_deferred_arg "$src/tracecmd/trace-record.c"; then
	say "patch already applied in $src"
else
	say "applying $(basename "$patch") to $src"
	# No fuzz: the context must be upstream's (offsets are fine)
	patch -d "$src" -p1 -F0 -N --dry-run -s < "$patch" > /dev/null ||
		die "the patch does not apply to $src"
	patch -d "$src" -p1 -F0 -N --no-backup-if-mismatch < "$patch"
fi

# --- 2. dependencies ---------------------------------------------------------
# The tree says which library versions it needs; say clearly when they are
# missing instead of letting make print a notice and fail later.
need() { sed -n "s/^$1 *= *//p" "$src/Makefile" | head -n 1; }
for lib in libtraceevent:LIBTRACEEVENT_MIN_VERSION libtracefs:LIBTRACEFS_MIN_VERSION; do
	name=${lib%%:*} min=$(need "${lib#*:}")
	have=$(pkg-config --modversion "$name" 2> /dev/null || echo none)
	if [ -n "$min" ] && ! pkg-config --atleast-version "$min" "$name"; then
		die "this trace-cmd needs $name >= $min, found $have" \
			"(set PKG_CONFIG_PATH to a newer build)"
	fi
	say "$name $have (tree needs ${min:-any})"
done
for tool in make gcc pkg-config; do
	command -v "$tool" > /dev/null || die "$tool is missing"
done

# --- 3. build ----------------------------------------------------------------
say "building trace-cmd in $src (log: $out/build.log)"
make -C "$src" -j"$jobs" > "$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log"
	die "build failed, see $out/build.log"
}
tc=$src/tracecmd/trace-cmd
[ -x "$tc" ] || die "no $tc after the build"
grep -E 'not found|not installed|NO_PYTHON' "$out/build.log" | sed 's/^/   build note: /' || true

# Libraries from PKG_CONFIG_PATH are not where ld.so looks: find them there
libpath=
for name in libtraceevent libtracefs; do
	dir=$(pkg-config --variable=libdir "$name")
	case "$dir" in
	/lib | /lib64 | /usr/lib | /usr/lib64 | /lib/* | /usr/lib/*) ;;
	*) libpath=${libpath:+$libpath:}$dir ;;
	esac
done
withlibs() { LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"; }

failed=0
# The usage text, on the host (prints and exits: touches no tracefs)
for cmd in record set; do
	# "-h" exits non-zero: keep its text, not its status
	usage=$(withlibs "$tc" "$cmd" -h 2>&1 || true)
	if grep -q -- '-T deferred' <<< "$usage"; then
		echo "PASS usage_$cmd"
	else
		echo "FAIL usage_$cmd: no -T deferred in '$cmd -h'"
		failed=1
	fi
done

if [ "${DOC:-1}" != 0 ] && command -v asciidoc > /dev/null && command -v xmlto > /dev/null; then
	say "building the man pages (log: $out/doc.log)"
	# asciidoc runs "python3" from PATH; the system's has its module
	if PATH=/usr/bin:$PATH make -C "$src" doc > "$out/doc.log" 2>&1 &&
		man -l "$src/Documentation/trace-cmd/trace-cmd-record.1" 2> /dev/null |
		grep -q -- '-T deferred'; then
		echo "PASS doc_record_man_page"
		man -l "$src/Documentation/trace-cmd/trace-cmd-record.1" 2> /dev/null |
			col -b | sed -n '/^ *-T deferred/,/^ *--func-stack/p' \
			> "$out/record-T-deferred.txt"
	else
		echo "FAIL doc_record_man_page: see $out/doc.log"
		failed=1
	fi
else
	say "man pages not built (DOC=0, or asciidoc/xmlto not installed)"
fi

# --- 4. stage what the guest runs ---------------------------------------------
# The guest sees the host's / read-only but has its own /tmp, so copy the
# binary (and any shared library from outside the system's directories, such
# as a private libtracefs or libtracecmd) to a directory it can see.
stage=$(mktemp -d /var/tmp/td-trace-cmd.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
cp "$tc" "$stage/trace-cmd"
withlibs ldd "$tc" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r so; do
	case "$so" in
	/lib/* | /lib64/* | /usr/lib/* | /usr/lib64/*) ;;
	*) cp -L "$so" "$stage/lib/" ;;
	esac
done

# --- 5. the VM -----------------------------------------------------------------
[ -x "$top/build/progs/fp_chain" ] || make -C "$top" progs > /dev/null ||
	die "cannot build build/progs/fp_chain"
kimage=${KIMAGE:-}
if [ -z "$kimage" ]; then
	say "building (or reusing) the patched kernel"
	kimage=$("$top/kernel/build.sh" patched | tail -n 1)
fi
[ -r "$kimage" ] || die "no kernel image at '$kimage'"

vm() {
	local flavor=$1 image=$2 rc=0
	say "VM ($flavor kernel $image)"
	"$top/kernel/run-vm.sh" "$image" "$out/$flavor" "$here/guest-test.sh" \
		"$flavor" "$stage" "$top" 2> "$out/$flavor.run-vm.log" || rc=$?
	sed 's/^/  | /' "$out/$flavor/guest.log" 2> /dev/null || true
	if [ "$rc" -ne 0 ]; then
		echo "FAIL vm_$flavor: guest exit $rc (see $out/$flavor/)"
		failed=1
	fi
}
vm patched "$kimage"
if [ -n "${KBASE:-}" ]; then
	vm base "$KBASE"
else
	say "base kernel check not run (set KBASE to a bzImage without the series)"
fi

say "results: $(cat "$out"/*/results 2> /dev/null | grep -c '^PASS') passed in the VM," \
	"$(cat "$out"/*/results 2> /dev/null | grep -c '^FAIL') failed"
grep -h '^FAIL' "$out"/*/results 2> /dev/null && failed=1
[ "$failed" -eq 0 ] || { echo "apply-and-test: FAILED" >&2; exit 1; }
echo "apply-and-test: all checks passed"
