#!/usr/bin/env bash
# Boot a kernel under QEMU (TCG) with the host's root over 9p, read-only,
# run one guest script as the last stage of init, and bring results back.
#
#   kernel/run-vm.sh BZIMAGE OUTDIR SCRIPT [ARGS...]
#
# OUTDIR (created, emptied) is shared read-write; the guest sees it as
# $TD_OUT. The guest's console goes to OUTDIR/console.log, the script's
# output to OUTDIR/guest.log and its exit status to OUTDIR/rc.
# Environment: VM_MEM (MiB, default 1024), VM_CPUS (2), VM_TIMEOUT (s, 900),
# VM_ACCEL (QEMU -accel, default tcg,thread=single: see below),
# VM_INIT (the guest's PID 1 before SCRIPT, default kernel/guest-init.sh;
# kernel/guest-init-systemd.sh boots systemd, which runs SCRIPT from a unit).
# Exits with the guest script's status, or 124 on timeout, 125 if the guest
# died without reporting one.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] || { echo "usage: $0 BZIMAGE OUTDIR SCRIPT [ARGS...]" >&2; exit 2; }
kernel=$1 out=$2 script=$3
shift 3
[ -r "$kernel" ] || { echo "run-vm: no kernel at $kernel" >&2; exit 2; }
script=$(realpath "$script")
[ -x "$script" ] || { echo "run-vm: $script is not executable" >&2; exit 2; }

rm -rf "$out"
mkdir -p "$out"
out=$(realpath "$out")
if [ $# -gt 0 ]; then printf "%s\n" "$@"; fi > "$out/args"

# Unknown "name=value" boot parameters without a dot become init's environment.
append="console=ttyS0 root=hostroot rootfstype=9p"
append+=" rootflags=trans=virtio,version=9p2000.L,msize=512000 ro panic=-1"
append+=" init=${VM_INIT:-$top/kernel/guest-init.sh} tdscript=$script tdtop=$top"
append+=" loglevel=6 ${VM_APPEND:-}"

# One host thread runs both vCPUs in turn. With a thread per vCPU
# (MTTCG, QEMU 7.2), CI met a fatal int3 in __schedule on the call of
# sched_switch's static call, whose bytes the kernel had already re-patched
# (the oops shows the new call there): a vCPU ran an int3 that another vCPU
# had written and removed. Never seen here in the same stages; the guest is
# ~1.2x slower this way (daemon stage: 112 s vs 94 s).
set +e
timeout --foreground "${VM_TIMEOUT:-900}" qemu-system-x86_64 \
	-accel "${VM_ACCEL:-tcg,thread=single}" -m "${VM_MEM:-1024}" -smp "${VM_CPUS:-2}" -cpu "${VM_CPU:-max}" -no-reboot \
	-display none -monitor none -serial "file:$out/console.log" \
	-kernel "$kernel" -append "$append" \
	-fsdev local,id=r0,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=r0,mount_tag=hostroot \
	-fsdev local,id=r1,path="$out",security_model=none \
	-device virtio-9p-pci,fsdev=r1,mount_tag=tdout
qrc=$?
set -e

if [ "$qrc" -eq 124 ]; then
	echo "run-vm: timed out after ${VM_TIMEOUT:-900} s" >&2
	exit 124
fi
if [ ! -s "$out/rc" ]; then
	echo "run-vm: guest reported no status (qemu exit $qrc); see $out/console.log" >&2
	tail -n 30 "$out/console.log" >&2 || true
	exit 125
fi
exit "$(cat "$out/rc")"
