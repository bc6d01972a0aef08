#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check trace-defer JSON lines for a frame-pointer test program.

check_records.py JSONL BINARY PID STATUS [MIN_RECORDS]

Every record of PID must have STATUS, and the user stack of each switch
into a sleep (prev_state S: fp_chain's nanosleep in c) must hold the frames
c, b, a consecutively, innermost first. A switch away from the running task
(preempted, on a loaded host) is where it ran: b or main as well as c, so
only its status is checked. The symbol names are not
trusted blindly: each frame's address minus its symbol offset must be the
start of that symbol as `nm` gives it, moved by one load base shared by
all frames of the binary, and the offset must lie inside the symbol's size.
Prints what it found; exits 1 on any failure.
"""
import json
import subprocess
import sys


def nm_symbols(binary):
    out = subprocess.run(["nm", "-S", "--defined-only", binary], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT":
            syms[f[3]] = (int(f[0], 16), int(f[1], 16))
    return syms


def main():
    path, binary, pid, status = sys.argv[1:5]
    min_records = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    pid = int(pid)
    syms = nm_symbols(binary)
    for name in ("a", "b", "c", "main"):
        if name not in syms:
            print(f"nm finds no function {name} in {binary}")
            return 1
    records = preempted = bad = 0
    bases = set()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            rec = json.loads(line)  # raises on invalid JSON: a failure too
            if rec.get("pid") != pid:
                continue
            records += 1
            if rec["status"] != status:
                print(f"line {n}: status {rec['status']}, expected {status}")
                bad += 1
                continue
            fields = rec.get("fields") or {}
            if (rec.get("event") == "sched:sched_switch"
                    and fields.get("prev_state") != 1):
                preempted += 1
                continue
            frames = rec["user_stack"]
            names = [fr.get("sym") for fr in frames]
            try:
                i = names.index("c")
            except ValueError:
                print(f"line {n}: no frame c in user stack {names}")
                bad += 1
                continue
            if names[i:i + 3] != ["c", "b", "a"]:
                print(f"line {n}: expected c, b, a in order, got {names}")
                bad += 1
                continue
            for fr in frames[i:i + 3]:
                start, size = syms[fr["sym"]]
                addr = int(fr["addr"], 16)
                off = fr["off"]
                if not 0 <= off < size:
                    print(f"line {n}: {fr['sym']}+{off} outside nm size {size}")
                    bad += 1
                bases.add(addr - off - start)
            if not rec["kernel_stack"]:
                print(f"line {n}: no kernel stack")
                bad += 1
    if len(bases) > 1:
        print(f"frames imply {len(bases)} different load bases: {sorted(bases)}")
        bad += 1
    print(f"{records} records of pid {pid} ({preempted} preempted), {bad} bad, load base "
          f"{hex(bases.pop()) if bases else '?'}")
    if records - preempted < min_records:
        print(f"expected at least {min_records} records")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
