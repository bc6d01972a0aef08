#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check_nested.py TRACE_CMD_REPORT JSONL: interrupt events nested between
an event and its records, judged against stock trace-cmd.

TRACE_CMD_REPORT is `trace-cmd report -N -t FILE.dat` (the records as the
kernel wrote them, each CPU's in order); JSONL is trace-defer's output for
the same file, layout full. Checks:
  - every event with a kernel stack has its own: the innermost frame is
    the event's trace_event_raw_event_<class> function (a sys_enter never
    gets an interrupt's stack, nor the other way round);
  - every event that an interrupt's event interrupted before its records
    (trace-cmd shows: the event, an event of the same task, and that
    event's own kernel_stack later) has its kernel stack and its cookie.
Prints the counts; exits 1 on a failed check, 2 when nothing was nested
(the run proves nothing then).
"""
import json
import os
import re
import sys

HDR = re.compile(r'^\s*(.+)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\w+):')
FOLLOWERS = {'kernel_stack', 'user_unwind_cookie', 'user_unwind_stack', 'user_unwind_file'}


def records(path):
    """Per CPU: [name, pid, ts, first kernel frame or None]."""
    cpus = {}
    last = None
    with open(path, errors='replace') as f:
        for line in f:
            m = HDR.match(line)
            lost = re.match(r'^\s*CPU:\s*(\d+) \[.*(LOST|DROPPED)', line)
            if lost:
                # Nothing may be judged across lost records.
                last = ['LOST', -1, 0, None]
                cpus.setdefault(int(lost.group(1)), []).append(last)
                continue
            if m:
                ts = int(m.group(4)) * 1000000000 + int(m.group(5))
                last = [m.group(6), int(m.group(2)), ts, None]
                cpus.setdefault(int(m.group(3)), []).append(last)
                frame = line[m.end():].strip()
            elif last is not None and last[0] == 'kernel_stack' and last[3] is None:
                frame = line.strip()
            else:
                continue
            if last[0] == 'kernel_stack' and last[3] is None and frame.startswith('=>'):
                last[3] = frame[2:].strip().split('+')[0]
    return cpus


def own_frame(event, sym):
    pre = 'trace_event_raw_event_'
    return sym is not None and sym.startswith(pre) and event.startswith(sym[len(pre):])


def interrupted_events(path):
    """(cpu, ts) of the interrupted events of trace-cmd's report at @path,
    kept beside it as PATH.interrupted: python in TCG takes half a minute to
    read a report, and the guest checks two outputs against one report."""
    cache = path + '.interrupted'
    try:
        if os.path.getmtime(cache) >= os.path.getmtime(path):
            with open(cache) as f:
                return {tuple(x) for x in json.load(f)}
    except (OSError, ValueError):
        pass
    found = find_interrupted(records(path))
    # Only a cache: a full /tmp must not fail the check it speeds up.
    try:
        with open(cache + '.new', 'w') as f:
            json.dump(sorted(found), f)
        os.rename(cache + '.new', cache)
    except OSError as e:
        print(f'check_nested: not cached ({e})', file=sys.stderr)
        try:
            os.unlink(cache + '.new')
        except OSError:
            pass
    return found


def find_interrupted(cpus):
    # The interrupted events: E, then an event of another kind of the same
    # task before any record of E's, its own kernel stack, then E's.
    interrupted = set()
    for cpu, recs in cpus.items():
        for i, (name, pid, ts, _) in enumerate(recs[:-2]):
            nxt, ks = recs[i + 1], recs[i + 2]
            if name in FOLLOWERS or name == 'LOST' or nxt[0] in FOLLOWERS | {'LOST', name} or \
               nxt[1] != pid or ks[0] != 'kernel_stack' or not own_frame(nxt[0], ks[3]):
                continue
            for later in recs[i + 3:i + 40]:
                if later[0] == 'kernel_stack' and own_frame(name, later[3]):
                    interrupted.add((cpu, ts))
                    break
                if later[0] not in FOLLOWERS:
                    break
    return interrupted


def main():
    interrupted = interrupted_events(sys.argv[1])
    wrong = 0
    found = 0
    lacking = []
    events = 0
    with open(sys.argv[2]) as f:
        for line in f:
            ev = json.loads(line)
            if ev.get('type') or 'event' not in ev:
                continue
            events += 1
            name = ev['event'].split(':')[-1]
            ks = ev.get('kernel_stack') or []
            if ks and not own_frame(name, ks[0].get('sym')):
                wrong += 1
                if wrong <= 3:
                    print('wrong kernel stack: %s ts %d: %s' % (ev['event'], ev['ts'],
                          ks[0].get('sym')))
            if (ev['cpu'], ev['ts']) in interrupted:
                found += 1
                if not ks or not ev.get('cookie'):
                    lacking.append('%s ts %d status %s' % (ev['event'], ev['ts'], ev['status']))
    print('events %d, with another kernel stack than their own %d; interrupted before '
          'their records (trace-cmd) %d, found %d, without their kernel stack or cookie %d'
          % (events, wrong, len(interrupted), found, len(lacking)))
    for what in lacking[:3]:
        print('  lacking: ' + what)
    if not interrupted:
        return 2
    return 1 if wrong or lacking or found != len(interrupted) else 0


if __name__ == '__main__':
    sys.exit(main())
