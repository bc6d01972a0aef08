#!/usr/bin/env bash
# Build a Linux 7.3 kernel for the VM tests, cached and incremental.
#
#   kernel/build.sh [patched|base|debug|test-base|test-patched]
#                                             (default: $KCONFIG_FLAVOR or patched)
#
#   base     the pristine Debian linux-source-7.3 tree
#   patched  the same with kernel-patches/series applied
#   debug    patched, plus KASAN, lockdep and PROVE_RCU (kernel/config/debug.config)
#   test-base, test-patched
#            base and patched with what most ftracetest cases need
#            (kernel/config/ftracetest.config): the whole-suite comparison
#
# Everything lives under $KCACHE (default .cache/kernel, git-ignored). The
# series is re-applied only when kernel-patches/ changed, and the config is
# regenerated only when a fragment changed, so a rerun rebuilds nothing.
# Prints the bzImage path on the last line.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
export KCACHE=${KCACHE:-$top/.cache/kernel}
flavor=${1:-${KCONFIG_FLAVOR:-patched}}
jobs=${JOBS:-$(nproc)}

case "$flavor" in
base|patched|debug|test-base|test-patched) ;;
*) echo "build: unknown flavor '$flavor' (base, patched, debug, test-base, test-patched)" >&2
   exit 2 ;;
esac

"$top/kernel/fetch-source.sh" >&2
src=$KCACHE/src

# The patched tree: a worktree of the pristine source with the series applied.
# The series is applied in a scratch worktree and the patched tree then moves
# to the result with a checkout, which rewrites only the files whose content
# changed, so that a change to one patch rebuilds only what it touches.
apply_series() {
	local tree=$KCACHE/tree-patched scratch=$KCACHE/tree-apply stamp want new p
	want=$(cd "$top/kernel-patches" && cat series $(grep -v '^#' series) | sha1sum | cut -c1-40)
	for t in "$tree" "$scratch"; do
		if [ ! -e "$t/.git" ]; then
			git -C "$src" worktree prune
			git -C "$src" worktree add -q --detach "$t" pristine
		fi
	done
	# The stamp names the series and the commit it gave: a tree moved
	# since (an interrupted check-series.sh of old, a hand checkout) is
	# put back.
	stamp=$(cat "$tree/.trace-defer-series" 2>/dev/null || true)
	if [ "$stamp" != "$want $(git -C "$tree" rev-parse HEAD)" ]; then
		echo "build: applying kernel-patches/series" >&2
		git -C "$scratch" am --abort >/dev/null 2>&1 || true
		git -C "$scratch" reset -q --hard pristine
		while read -r p; do
			case "$p" in '' | '#'*) continue ;; esac
			git -C "$scratch" -c user.name=trace-defer -c user.email=trace-defer@localhost \
				am -q --keep-cr "$top/kernel-patches/$p" >&2 || {
				echo "build: $p does not apply" >&2
				git -C "$scratch" am --abort || true
				exit 1
			}
		done < "$top/kernel-patches/series"
		new=$(git -C "$scratch" rev-parse HEAD)
		git -C "$tree" checkout -q --detach "$new"
		echo "$want $new" > "$tree/.trace-defer-series"
	fi
	echo "$tree"
}

frags=("$top/kernel/config/base.config")
case "$flavor" in
base) tree=$src ;;
patched) tree=$(apply_series) ;;
debug) tree=$(apply_series); frags+=("$top/kernel/config/debug.config") ;;
test-base) tree=$src; frags+=("$top/kernel/config/ftracetest.config") ;;
test-patched) tree=$(apply_series); frags+=("$top/kernel/config/ftracetest.config") ;;
esac
out=$KCACHE/build-$flavor
mkdir -p "$out"

cfgsum=$(cat "${frags[@]}" | sha1sum | cut -c1-40)
if [ "$(cat "$out/.trace-defer-config" 2>/dev/null)" != "$cfgsum" ] || [ ! -e "$out/.config" ]; then
	echo "build: configuring $flavor" >&2
	make -s -C "$tree" O="$out" tinyconfig >&2
	(cd "$tree" && scripts/kconfig/merge_config.sh -m -O "$out" "$out/.config" "${frags[@]}") >/dev/null
	make -s -C "$tree" O="$out" olddefconfig >&2
	# A fragment line that kconfig dropped (missing dependency) is a bug here.
	missing=0
	while read -r line; do
		case "$line" in CONFIG_*=[ym]) ;; *) continue ;; esac
		grep -qx "$line" "$out/.config" || { echo "build: $line not set" >&2; missing=1; }
	done < <(cat "${frags[@]}")
	for c in UNWIND_USER EVENT_TRACING; do
		grep -qx "CONFIG_$c=y" "$out/.config" || { echo "build: no CONFIG_$c" >&2; missing=1; }
	done
	[ "$missing" -eq 0 ] || exit 1
	echo "$cfgsum" > "$out/.trace-defer-config"
fi

start=$(date +%s)
make -s -C "$tree" O="$out" -j"$jobs" bzImage >&2
# Flavours with modules build them in place: the debug flavour's guest
# loads its sample module from $out by path. They are also installed under
# $out/modroot (lib/modules/RELEASE, with depmod's files) for guests that
# modprobe them by name (ftracetest on the test flavours), again only
# when a module, the list of modules or the kernel changed.
if grep -qx CONFIG_MODULES=y "$out/.config"; then
	make -s -C "$tree" O="$out" -j"$jobs" modules >&2
	dep=$out/modroot/lib/modules/$(cat "$out/include/config/kernel.release")/modules.dep
	if [ ! -e "$dep" ] || [ "$out/modules.order" -nt "$dep" ] ||
	   [ "$out/System.map" -nt "$dep" ] ||
	   [ -n "$(find "$out" -name '*.ko' -newer "$dep" -print -quit)" ]; then
		rm -rf "$out/modroot"
		make -s -C "$tree" O="$out" INSTALL_MOD_PATH="$out/modroot" \
			modules_install >&2
	fi
fi
echo "build: $flavor kernel ready in $(( $(date +%s) - start )) s" >&2
echo "$out/arch/x86/boot/bzImage"
