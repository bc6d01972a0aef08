#!/bin/bash
# PID 1 of the test VM: the host's root is mounted read-only over 9p.
# Mount what a tracing test needs, run $tdscript with the arguments in
# $TD_OUT/args, store its output and status in the shared directory, and
# reboot (QEMU exits).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C LC_ALL=C

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# bash's process substitution and many tools want these
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t tmpfs tmpfs /run
# A checkout under the host's /tmp (a clone made there, say) must stay
# visible under the guest's own, writable /tmp: bind it back in.
case "$tdtop" in
/tmp/*)
	mkdir -p /run/hosttmp
	mount --bind /tmp /run/hosttmp
	mount -t tmpfs -o mode=1777 tmpfs /tmp
	mkdir -p "$tdtop"
	mount --bind "/run/hosttmp/${tdtop#/tmp/}" "$tdtop"
	;;
*)
	mount -t tmpfs -o mode=1777 tmpfs /tmp
	;;
esac
mount -t tracefs nodev /sys/kernel/tracing
mkdir -p /tmp/out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 tdout /tmp/out

export TD_OUT=/tmp/out TD_TOP=$tdtop
cd /tmp || exit 1
echo 0 > /proc/sys/kernel/printk_ratelimit 2>/dev/null

mapfile -t args < "$TD_OUT/args"
echo "guest: running $tdscript ${args[*]}"
"$tdscript" "${args[@]}" > "$TD_OUT/guest.log" 2>&1
rc=$?
echo "guest: $tdscript exited $rc"
dmesg > "$TD_OUT/dmesg.log"
echo "$rc" > "$TD_OUT/rc"
sync
# Reboot, which QEMU's -no-reboot turns into QEMU exiting
echo b > /proc/sysrq-trigger
sleep 10
