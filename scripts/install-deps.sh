#!/usr/bin/env bash
# Install every Debian package trace-defer needs to build, test and run its
# demo.  Run as root.  Idempotent: already-installed packages are skipped by apt.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root (apt-get install)" >&2
	exit 1
fi

pkgs=(
	# build
	build-essential pkg-config git make gcc clang clang-format gawk jq
	# tracing libraries and tools
	libtracefs-dev libtraceevent-dev libtracecmd-dev trace-cmd
	# symbolization, output, tests, service
	libelf-dev libdw-dev libdebuginfod-dev elfutils binutils libiberty-dev libjson-c-dev
	libcmocka-dev
	libsystemd-dev logrotate
	# the JSON schema's man page from its markdown (make doc; checked by the tests)
	lowdown
	# pprof profiles: protobuf-c and its compiler, zlib; go tool pprof reads them in tests
	protobuf-c-compiler libprotobuf-c-dev zlib1g-dev golang-go
	# kernel build and VM
	flex bison bc libssl-dev libelf-dev cpio xz-utils kmod
	qemu-system-x86 perl python3 python3-ply python3-git
	# ftracetest in the guest: the inter-event histogram cases run ping,
	# and "Meta-selftest: Checkbashisms" runs checkbashisms (the guest's
	# root is the host's, so the host's copy)
	iputils-ping devscripts
	# docs, sanitizers, checks (strace: a host test holds the daemon at a syscall)
	libclang-rt-14-dev valgrind strace
	# fuzzing (make fuzz): clang with libFuzzer
	libfuzzer-14-dev
)

export DEBIAN_FRONTEND=noninteractive
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all packages present"
	exit 0
fi
echo "install-deps: installing ${missing[*]}"
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
