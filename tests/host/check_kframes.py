#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the kernel frames of a layout-full JSON file against /proc/kallsyms.

  check_kframes.py FILE.v1.jsonl [MIN_FRAMES]

Every named kernel frame must be named as the kernel's own backtraces name
it: the first frame of a stack (where it was taken) by its address, every
other one (a return address) by its address - 1, so that the return from a
call that ends a function (start_kernel(), do_exit()) is named after the
caller, not after the symbol that follows it. The name must be one of the
text symbols that start there (aliases), and "off" the distance from that
start to the address. At least MIN_FRAMES (default 1) frames must be named
for the check to mean anything. Prints what it checked; exits 1 on any
difference.
"""
import bisect
import json
import sys

TEXT = set("tTwW")


def load_kallsyms():
    starts = {}
    for line in open("/proc/kallsyms"):
        f = line.split()
        if len(f) < 3 or f[1] not in TEXT:
            continue
        a = int(f[0], 16)
        if a:
            starts.setdefault(a, set()).add(f[2])
    keys = sorted(starts)
    return keys, starts


def main():
    path = sys.argv[1]
    need = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    keys, starts = load_kallsyms()
    named = unnamed = bad = at_next = 0
    for line in open(path):
        ev = json.loads(line)
        for i, f in enumerate(ev.get("kernel_stack") or []):
            if f["sym"] is None:
                unnamed += 1
                continue
            named += 1
            addr = int(f["addr"], 16)
            look = addr - 1 if i > 0 else addr
            j = bisect.bisect_right(keys, look) - 1
            start = keys[j] if j >= 0 else None
            if i > 0 and addr in starts:
                at_next += 1
            if start is None or f["sym"] not in starts[start] or f["off"] != addr - start:
                bad += 1
                if bad <= 5:
                    want = f"{sorted(starts[start])}+{addr - start}" if start else "none"
                    print(f"frame {i} {f['addr']}: {f['sym']}+{f['off']}, kallsyms: {want}")
    print(f"{named} kernel frames named ({at_next} return addresses at the start of "
          f"the next symbol), {unnamed} not named, {bad} differences")
    sys.exit(1 if bad or named < need else 0)


main()
