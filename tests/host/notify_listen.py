#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Stand in for systemd's notify socket: print every datagram received on
the unix socket PATH, one message per line (newlines inside shown as |),
until SECONDS have passed. With a third argument "time", each line starts
with the wall clock time it came at, in ms."""
import os
import socket
import sys
import time

path, secs = sys.argv[1], float(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(0.2)
end = time.time() + secs
print("listening", flush=True)
while time.time() < end:
    try:
        data = s.recv(4096)
    except socket.timeout:
        continue
    msg = data.decode(errors="replace").replace("\n", "|")
    if len(sys.argv) > 3 and sys.argv[3] == "time":
        msg = f"{int(time.time() * 1000)} {msg}"
    print(msg, flush=True)
os.unlink(path)
