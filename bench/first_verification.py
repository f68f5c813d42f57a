#!/usr/bin/env python3
"""Sends one decision GET per line of a tokens file over one keep-alive connection and prints the
server's CPU microseconds per request (from /proc/PID/stat), for bench/jwks.sh.

usage: first_verification.py PORT PID TOKENS [REPEAT_FIRST]
With REPEAT_FIRST, the first token is sent as many times as the file has lines (every request a
cache hit: the baseline the first verifications are compared with)."""
import http.client, os, sys

port, pid, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
repeat = len(sys.argv) > 4
lines = [l.split() for l in open(path) if l.strip()]
if repeat:
    lines = [lines[0]] * len(lines)

def ticks():
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])

conn = http.client.HTTPConnection("127.0.0.1", port)
start = ticks()
for uid, token in lines:
    conn.request("GET", f"/v1/users/{uid}/decision?screen=home&platform=ios", headers={"Authorization": "Bearer " + token})
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        sys.exit(f"{uid}: HTTP {response.status}")
used = ticks() - start
print("%.1f" % (used * 1e6 / os.sysconf("SC_CLK_TCK") / len(lines)))
