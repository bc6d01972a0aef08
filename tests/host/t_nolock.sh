#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Without flock() (a kernel built without CONFIG_FILE_LOCKING, as some small
# VM configurations are), the instance marker still works: the owner is
# judged alive from its pid and start time. Simulated with an LD_PRELOAD
# shim whose flock() fails with ENOSYS.
. "$(dirname "$0")/lib.sh"

cat >"$SCRATCH/noflock.c" <<'C'
#include <errno.h>
int flock(int fd, int op)
{
	(void)fd;
	(void)op;
	errno = ENOSYS;
	return -1;
}
C
cc -shared -fPIC -o "$SCRATCH/noflock.so" "$SCRATCH/noflock.c" || { fail "build shim"; finish; }
export LD_PRELOAD="$SCRATCH/noflock.so"
# An ASan build wants its runtime first; the shim only replaces flock().
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

start_fp_chain 10
td_bg -p "$FP_PID" -o "$SCRATCH/a.jsonl" -vv 2>"$SCRATCH/a.err"
check "daemon tracing without flock" wait_tracing
check "it noticed flock is missing" grep -q "no flock()" "$SCRATCH/a.err"
check "marker holds pid, start time and boot" \
	grep -Eqx "$D [0-9]+ $(cat /proc/sys/kernel/random/boot_id)" "$RUN_DIR/$NAME.lock"
td -d 1 -o /dev/null 2>"$SCRATCH/b.err"
rc=$?
check "second daemon refused while the owner lives (got $rc)" [ "$rc" = 3 ]
check "refusal names the owner" grep -q "in use by a running trace-defer (pid $D" \
	"$SCRATCH/b.err"
{ kill -KILL "$D"; wait "$D"; } 2>/dev/null
check "instance left by SIGKILL" instance_exists
td -p "$FP_PID" -d 1 -o "$SCRATCH/c.jsonl" 2>"$SCRATCH/c.err"
rc=$?
check "restart after SIGKILL exits 0 (got $rc)" [ "$rc" = 0 ]
check "restart removed the stale instance" grep -q "removing stale tracefs instance" \
	"$SCRATCH/c.err"
check "restart captured records" [ -s "$SCRATCH/c.jsonl" ]
check "instance removed" instance_gone
check "marker cleared" marker_clear
finish
