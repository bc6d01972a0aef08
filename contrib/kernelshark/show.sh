#!/usr/bin/env bash
# Show that KernelShark opens a trace.dat with deferred user stack records
# and that its Info column prints them through trace-defer's libtraceevent
# plugin (plugin_user_unwind.so, loaded from a private directory, nothing
# installed):
#
#   contrib/kernelshark/show.sh [OUTDIR]          (default vm-out/kernelshark)
#
# 1. record, in the VM on the patched kernel, with the distribution's
#    trace-cmd and -O userstacktrace_delay (guest-record.sh): trace.dat (the
#    whole machine) and fp_chain.dat (only fp_chain's sched_switch);
# 2. libkshark check: kshark-info.c, linked with KernelShark's own library,
#    prints the Info text of every user_unwind_* row; with the plugin it
#    must be the plugin's one-line form, and fp_chain's frames must be
#    c <- b <- a <- main; without it, the print format's;
# 3. screenshot: KernelShark on each file under Xvfb, the root window saved
#    as OUTDIR/FILE.full.png, and its top CROP (800) pixels in 32 colours as
#    OUTDIR/FILE.png (about 100 KB).
#
# Environment: KIMAGE (bzImage; default kernel/build.sh patched),
# DATDIR (skip step 1: a directory with trace.dat, fp_chain.dat and
# fp_chain.pid from an earlier run), PLUGIN_DIR (default build/plugins),
# SCREEN (Xvfb screen, default 1920x1200x24), SETTLE (seconds to let
# KernelShark draw, default 8).
# Exits 0 only if every check passed and both screenshots were taken.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-$top/vm-out/kernelshark}
plugins=${PLUGIN_DIR:-$top/build/plugins}
fp=$top/build/progs/fp_chain
mkdir -p "$out"
out=$(cd "$out" && pwd)
failed=0

say() { printf '== %s\n' "$*"; }
die() { printf 'show: %s\n' "$*" >&2; exit 1; }
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }

for tool in kernelshark Xvfb import xwininfo gcc nm gawk; do
	command -v "$tool" > /dev/null ||
		die "$tool is missing (apt-get install kernelshark xvfb imagemagick x11-utils)"
done
[ -e "$plugins/plugin_user_unwind.so" ] || die "no $plugins/plugin_user_unwind.so (make plugins)"
[ -x "$fp" ] || die "no $fp (make progs)"

# --- 1. record in the VM -------------------------------------------------------
if [ -n "${DATDIR:-}" ]; then
	dat=$(cd "$DATDIR" && pwd)
else
	kimage=${KIMAGE:-}
	if [ -z "$kimage" ]; then
		say "building (or reusing) the patched kernel"
		kimage=$("$top/kernel/build.sh" patched | tail -n 1)
	fi
	say "recording in the VM ($kimage)"
	"$top/kernel/run-vm.sh" "$kimage" "$out/vm" "$here/guest-record.sh" "$top" \
		2> "$out/run-vm.log" || {
		tail -n 20 "$out/vm/guest.log" "$out/run-vm.log" 2> /dev/null
		die "recording in the VM failed, see $out/vm/"
	}
	dat=$out/vm
fi
for f in trace.dat fp_chain.dat fp_chain.pid; do
	[ -s "$dat/$f" ] || die "no $dat/$f"
done

# --- 2. libkshark: the Info text KernelShark's list view shows ------------------
gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$out/kshark-info" "$here/kshark-info.c" \
	-l:libkshark.so.2 || die "cannot build kshark-info against libkshark.so.2"

# names ADDR...: fp_chain's functions at these addresses (return addresses
# but the first are looked up at addr - 1); fp_chain is not PIE.
names() {
	nm -n "$fp" | gawk -v addrs="$*" '
		$2 ~ /^[Tt]$/ { n++; start[n] = strtonum("0x" $1); name[n] = $3 }
		END {
			k = split(addrs, a, " ")
			for (i = 1; i <= k; i++) {
				x = strtonum(a[i]) - (i > 1 ? 1 : 0)
				r = "?"
				for (j = n; j >= 1; j--)
					if (start[j] <= x) { r = name[j]; break }
				printf "%s%s", (i > 1 ? " " : ""), r
			}
		}'
}

for f in trace fp_chain; do
	pid=$(awk -v f="$f" '$1 == f { print $2 }' "$dat/fp_chain.pid")
	TRACEEVENT_PLUGIN_DIR=$plugins "$out/kshark-info" "$dat/$f.dat" \
		> "$out/$f.kshark.txt" 2> "$out/$f.kshark.err" ||
		fail "${f}_kshark_rows" "$(cat "$out/$f.kshark.err")"
	"$out/kshark-info" "$dat/$f.dat" > "$out/$f.kshark-noplugin.txt" 2> /dev/null || true
	cookies=$(grep -c ' ftrace/user_unwind_cookie: ' "$out/$f.kshark.txt" || true)
	stacks=$(grep -c ' ftrace/user_unwind_stack: ' "$out/$f.kshark.txt" || true)
	echo "$f.dat: $cookies cookie rows, $stacks stack rows (fp_chain pid $pid)"
	# Every row in the plugin's one-line form
	bad=$(gawk '
		$3 == "ftrace/user_unwind_cookie:" &&
			$0 !~ /: cookie=0x[0-9a-f]+ cpu=[0-9]+ seq=[0-9]+$/ { n++ }
		$3 == "ftrace/user_unwind_stack:" &&
			$0 !~ /: cookie=0x[0-9a-f]+ cpu=[0-9]+ seq=[0-9]+ frames=[0-9]+( |$)/ { n++ }
		END { print n + 0 }' "$out/$f.kshark.txt")
	if [ "$cookies" -gt 0 ] && [ "$stacks" -gt 0 ] && [ "$bad" -eq 0 ]; then
		pass "${f}_info_is_plugin_text"
	else
		fail "${f}_info_is_plugin_text" "$cookies cookies, $stacks stacks, $bad not decoded"
	fi
	# Without the plugin the same rows print the event's print format
	if grep -q ' ftrace/user_unwind_stack: cookie=0x[0-9a-f]* .*stack=' \
		"$out/$f.kshark-noplugin.txt" &&
		! grep -q ' frames=' "$out/$f.kshark-noplugin.txt"; then
		pass "${f}_without_plugin_print_format"
	else
		fail "${f}_without_plugin_print_format" "see $out/$f.kshark-noplugin.txt"
	fi
	# fp_chain asleep in c(): its frames, raw (the task is gone), are c b a main
	frames=$(gawk -v p="$pid" '
		$1 == p && $3 == "ftrace/user_unwind_stack:" && / frames=[4-9]/ {
			for (i = 1; i <= NF; i++)
				if ($i ~ /^0x/ && $(i - 1) !~ /^cookie/) printf "%s ", $i
			print ""
		}' "$out/$f.kshark.txt" | while read -r a; do
		[ "$(names ${a% } | cut -d' ' -f1-4)" = "c b a main" ] && { echo "$a"; break; }
	done)
	if [ -n "$frames" ]; then
		pass "${f}_fp_chain_frames_c_b_a_main"
		grep -m 1 "^$pid .*frames=.* ${frames%% *}" "$out/$f.kshark.txt" || true
	else
		fail "${f}_fp_chain_frames_c_b_a_main" "no stack of pid $pid reads c b a main"
	fi
done

# --- 3. the real window under Xvfb ----------------------------------------------
# A private HOME and cache directory (KS_USER_CACHE_DIR: as root, KernelShark
# would use root's home whatever HOME says), so its session and settings stay
# out of the user's; its setting.ini turns off the modal "running with Root
# privileges" box, which would hide the window. A free display number; every
# process started here is stopped by its pid.
kshome=$(mktemp -d /tmp/td-kshark.XXXXXX)
mkdir -p "$kshome/cache"
printf '[General]\nnoRootWarn=true\n' > "$kshome/cache/setting.ini"
xvfb_pid= ks_pid=
cleanup() {
	[ -n "$ks_pid" ] && kill "$ks_pid" 2> /dev/null
	[ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2> /dev/null
	wait 2> /dev/null
	rm -rf "$kshome"
}
trap cleanup EXIT
d=90
while [ -e "/tmp/.X$d-lock" ] || [ -e "/tmp/.X11-unix/X$d" ]; do d=$((d + 1)); done
screen=${SCREEN:-1920x1200x24}
# No window manager: Qt's -geometry makes KernelShark's window fill the screen
geom=${screen%x*}
Xvfb ":$d" -screen 0 "$screen" -nolisten tcp > "$out/xvfb.log" 2>&1 &
xvfb_pid=$!
for _ in $(seq 50); do
	[ -e "/tmp/.X11-unix/X$d" ] && break
	sleep 0.1
done
[ -e "/tmp/.X11-unix/X$d" ] || die "Xvfb did not start on :$d, see $out/xvfb.log"

for f in fp_chain trace; do
	DISPLAY=:$d HOME=$kshome XDG_RUNTIME_DIR=$kshome XDG_CACHE_HOME=$kshome/xdg \
		KS_USER_CACHE_DIR=$kshome/cache \
		TRACEEVENT_PLUGIN_DIR=$plugins kernelshark -geometry "$geom+0+0" "$dat/$f.dat" \
		> "$out/$f.kernelshark.log" 2>&1 &
	ks_pid=$!
	win=
	for _ in $(seq 100); do
		win=$(DISPLAY=:$d xwininfo -root -tree 2> /dev/null |
			gawk 'tolower($0) ~ /kernelshark/ && / [0-9]+x[0-9]+\+/ { print $1; exit }')
		[ -n "$win" ] && break
		sleep 0.2
	done
	if [ -z "$win" ]; then
		fail "${f}_window" "no KernelShark window, see $out/$f.kernelshark.log"
	else
		sleep "${SETTLE:-8}"
		# The whole screen as it is, and a small copy: the graph and the
		# first rows of the list, in 32 colours without dithering
		if kill -0 "$ks_pid" 2> /dev/null &&
			DISPLAY=:$d import -window root "$out/$f.full.png" \
				2>> "$out/$f.kernelshark.log" &&
			DISPLAY=:$d import -window root -crop "${geom%x*}x${CROP:-800}+0+0" +repage \
				+dither -colors 32 "png8:$out/$f.png" 2>> "$out/$f.kernelshark.log"; then
			pass "${f}_screenshot ($out/$f.png, $(stat -c %s "$out/$f.png") bytes)"
		else
			fail "${f}_screenshot" "KernelShark died or import failed, see $out/$f.kernelshark.log"
		fi
	fi
	kill "$ks_pid" 2> /dev/null || true
	wait "$ks_pid" 2> /dev/null || true
	ks_pid=
done

[ "$failed" -eq 0 ] || { echo "show: FAILED" >&2; exit 1; }
echo "show: all checks passed; screenshots in $out"
