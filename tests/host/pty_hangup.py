#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Run trace-defer on a terminal of its own (a pty, the session's
# controlling terminal) until its instance traces, then hang the terminal
# up (close the master side, as an ssh session that drops) and wait for
# the daemon to exit. Prints "exit N", or "still running" (killed then,
# status 1) or "never traced" (status 2). With "nohup" last, SIGHUP is
# ignored as nohup(1) does and the daemon runs for 4 s (-d 4): it must
# outlive the hang-up ("outlived, exit N").
#   pty_hangup.py TRACE_DEFER INSTANCE RUN_DIR OUTPUT TRACEFS [nohup]
import os
import pty
import signal
import sys
import time

td, name, run_dir, out, tracefs = sys.argv[1:6]
nohup = sys.argv[6:] == ["nohup"]
pid, fd = pty.fork()
if pid == 0:
    args = [td, "-i", name, "--run-dir", run_dir, "-e", "sched:sched_switch", "-o", out]
    # Set either way: the test itself may run under nohup (SIGHUP ignored, inherited).
    signal.signal(signal.SIGHUP, signal.SIG_IGN if nohup else signal.SIG_DFL)
    if nohup:
        args += ["-d", "4"]
    os.execv(td, args)
on = os.path.join(tracefs, "instances", name, "tracing_on")
for _ in range(300):
    try:
        if open(on).read().strip() == "1":
            break
    except OSError:
        pass
    time.sleep(0.1)
else:
    print("never traced")
    os.kill(pid, signal.SIGKILL)
    sys.exit(2)
time.sleep(1)
os.close(fd)
said = ""
if nohup:
    time.sleep(1)
    if os.waitpid(pid, os.WNOHANG)[0] == 0:
        said = "outlived, "
for _ in range(150):
    p, st = os.waitpid(pid, os.WNOHANG)
    if p:
        print(said + "exit", os.waitstatus_to_exitcode(st))
        sys.exit(0)
    time.sleep(0.1)
print("still running")
os.kill(pid, signal.SIGTERM)
os.waitpid(pid, 0)
sys.exit(1)
