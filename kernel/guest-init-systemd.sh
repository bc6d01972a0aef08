#!/bin/bash
# PID 1 of the systemd stage's VM until systemd takes over (run-vm.sh with
# VM_INIT=this script). The host's root is mounted read-only over 9p and
# systemd wants a writable /etc and /var: a tmpfs holds the upper layer of
# an overlay on that root, the guest's own changes go there (machine-id,
# an empty fstab, a default target that runs the test, a few masks), and
# the host's systemd (/lib/systemd/systemd) becomes PID 1 in the overlay.
# Nothing of the host is written: the 9p root is read-only for QEMU too.
#
#   guest-init-systemd.sh        as init (tdscript, tdtop from the kernel
#                                command line, like kernel/guest-init.sh)
#   guest-init-systemd.sh run    from td-test.service once systemd is up:
#                                run $tdscript with the arguments in
#                                $TD_OUT/args, store its output, the journal,
#                                dmesg and its status; the unit then reboots
#                                (QEMU exits)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LANG=C LC_ALL=C

if [ "${1:-}" = run ]; then
	export HOME=/root
	cd /tmp || exit 1
	mapfile -t args < "$TD_OUT/args"
	echo "guest: running $tdscript ${args[*]}"
	"$tdscript" "${args[@]}" > "$TD_OUT/guest.log" 2>&1
	rc=$?
	echo "guest: $tdscript exited $rc"
	journalctl -b --no-pager -o short-monotonic > "$TD_OUT/journal.log" 2>&1
	dmesg > "$TD_OUT/dmesg.log"
	echo "$rc" > "$TD_OUT/rc"
	sync
	exit 0
fi

export HOME=/tmp
stage=/tmp/sd		# tmpfs: upper and work directories, the new root
root=$stage/root

# Before systemd runs, a failure is reported like a failed test script.
die() {
	echo "guest-init-systemd: $*"
	mkdir -p /tmp/out
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 tdout /tmp/out &&
		{ echo "guest-init-systemd: $*" > /tmp/out/guest.log; echo 1 > /tmp/out/rc; }
	sync
	echo b > /proc/sysrq-trigger
	sleep 10
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# The script itself (under $tdtop) stays open, whatever is mounted on /tmp.
mount -t tmpfs -o mode=0755 tmpfs /tmp || die "no tmpfs"
mkdir -p $stage/upper $stage/work $root
mount -t overlay overlay -o lowerdir=/,upperdir=$stage/upper,workdir=$stage/work $root ||
	die "cannot mount the overlay"
mkdir -p $root/tdout
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 tdout $root/tdout ||
	die "cannot mount tdout"

# The guest's own identity and mounts: no device of the host's fstab exists.
tr -d '-' < /proc/sys/kernel/random/uuid > $root/etc/machine-id
echo "# trace-defer test guest: the root is an overlay set up before systemd" > $root/etc/fstab
# Debian's tmp.conf empties /tmp at boot; a checkout can live there.
mkdir -p $root/etc/tmpfiles.d
echo "d /tmp 1777 root root -" > $root/etc/tmpfiles.d/tmp.conf

# Boot to basic.target plus the test, not to the host's default target;
# the host's timers (apt, man-db, fstrim, ...) have nothing to do here.
u=$root/etc/systemd/system
for t in /etc/systemd/system/timers.target.wants/*; do
	[ -e "$t" ] && ln -sf /dev/null "$u/${t##*/}"
done
cat > $u/td-test.target <<EOF
[Unit]
Description=trace-defer VM test
Requires=basic.target td-test.service
After=basic.target
AllowIsolate=yes
EOF
cat > $u/td-test.service <<EOF
[Unit]
Description=trace-defer VM test: $tdscript
After=basic.target
# run-vm.sh's -no-reboot turns the reboot into QEMU exiting
SuccessAction=reboot-force
FailureAction=reboot-force

[Service]
Type=oneshot
Environment="TD_OUT=/tdout" "TD_TOP=$tdtop" "tdscript=$tdscript"
ExecStart=$tdtop/kernel/guest-init-systemd.sh run
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity
EOF
ln -sf td-test.target $u/default.target

echo "guest-init-systemd: overlay ready, starting systemd"
exec switch_root $root /lib/systemd/systemd
die "cannot exec systemd"
