#!/usr/bin/env python3
"""Hostile clients of the streaming surfaces, each with one user token (issue: streams and long-polls
under hostile clients):

1. slow-but-reading streams: 8 streams of one user with a 4 KiB receive buffer, read slower than the
   same user's count changes produce events; cut streams reconnect with Last-Event-ID. Server RSS
   must stay bounded (it grew to 1.88 GB in 40 s before the buffers dropped their sent prefix).
2. closed long-polls: many `Prefer: wait=60` requests whose clients close at once leave none parked
   within a second, and with `--connection-limit 300`, /healthz keeps answering.
3. a stream outlives no token: with `--jwt-leeway 0` a stream opened with a 3 s token ends with
   `event: token-expired` when the token does.
4. events per user are rate limited: past the bucket, 429 with Retry-After.
5. disconnects are not warnings: stream open/close cycles log no `warn` line.

    hostile.py [--seconds 20] [--long-polls 1000] [--cycles 1000]
"""
import argparse
import json
import re
import resource
import shutil
import socket
import threading
import time

from common import ADMIN, Client, Server, check, log, main, report, tempdir, token

QUERY = "screen=home&tab=accounts&platform=ios"


def open_stream(server, user, tok, last_event_id=None, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10)
    s.connect(("127.0.0.1", server.port))
    head = f"GET /v1/users/{user}/decision/stream?{QUERY} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tok}\r\n"
    if last_event_id:
        head += f"Last-Event-ID: {last_event_id}\r\n"
    s.sendall((head + "\r\n").encode())
    return s


def metric(client, name):
    _, _, body = client.request("GET", "/metrics", tok=None)
    m = re.search(rb"^" + name.encode() + rb" (\d+)", body, re.M)
    return int(m.group(1)) if m else None


def slow_readers(work, seconds):
    server = Server(f"{work}/slow.sqlite", workdir=work, extra=["--max-events-per-user-per-minute", "0"])
    server.start()
    user, tok = "hostile-slow", token("hostile-slow")
    stop = threading.Event()
    cuts = [0]
    read_bytes = [0]

    def reader():
        last_id = None
        while not stop.is_set():
            try:
                s = open_stream(server, user, tok, last_id, rcvbuf=4096)
            except OSError:
                time.sleep(0.05)
                continue
            try:
                while not stop.is_set():
                    data = s.recv(2048)
                    if not data:
                        cuts[0] += 1
                        break
                    read_bytes[0] += len(data)
                    ids = re.findall(rb"\nid: (\"[0-9a-f]+\")", data)
                    if ids:
                        last_id = ids[-1].decode()
                    time.sleep(0.02)  # about 100 KB/s: slower than the events come
            except OSError:
                cuts[0] += 1
            finally:
                s.close()

    threads = [threading.Thread(target=reader, daemon=True) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    c = Client(server)
    rss0 = server.rss_kb()
    peak = rss0
    writes = 0
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            s, _, _ = c.request("PUT", f"/v1/users/{user}/containers/offers-home/count", {"count": writes % 7 + 1}, tok=tok)
            check(s == 200, f"count PUT answered {s}")
            writes += 1
            if writes % 200 == 0:
                peak = max(peak, server.rss_kb())
        peak = max(peak, server.rss_kb())
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=15)
    check(server.alive(), "server alive")
    log(f"slow-but-reading: {writes} changes in {seconds:.0f} s, 8 streams read {read_bytes[0] // 1024} KiB, "
        f"{cuts[0]} cuts; RSS {rss0 // 1024} MiB -> peak {peak // 1024} MiB")
    # 8 streams hold at most 8 x 256 KiB of events; allocator slack and connections on top.
    check(peak - rss0 < 96 * 1024, f"RSS grew {(peak - rss0) // 1024} MiB with 8 slow readers")
    check(cuts[0] > 0, "no slow stream was cut")
    server.terminate()
    return {"writes": writes, "cuts": cuts[0], "rss_start_mib": rss0 // 1024, "rss_peak_mib": peak // 1024}


def closed_long_polls(work, count):
    resource_limit = max(count * 2 + 256, 2048)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, resource_limit)), hard))
    figures = {}
    for limit, n in ((None, count), (300, 320)):
        extra = ["--connection-limit", str(limit)] if limit else []
        server = Server(f"{work}/lp-{n}.sqlite", workdir=work, extra=extra)
        server.start()
        c = Client(server)
        users = [f"lp-{i}" for i in range((n + 7) // 8)]
        etags = {}
        for u in users:
            s, h, _ = c.request("GET", f"/v1/users/{u}/decision?{QUERY}")
            check(s == 200, f"decision {s}")
            etags[u] = h["etag"]
        c.close()
        socks = []
        t0 = time.monotonic()
        for i in range(n):
            u = users[i // 8]
            s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            s.sendall((f"GET /v1/users/{u}/decision?{QUERY} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ADMIN}\r\n"
                       f"If-None-Match: {etags[u]}\r\nPrefer: wait=60\r\n\r\n").encode())
            socks.append(s)
        sent = time.monotonic() - t0
        time.sleep(0.3)
        for s in socks:
            s.close()
        closed = time.monotonic()
        probe = Client(server, timeout=10)
        healthz = None
        parked = None
        while time.monotonic() - closed < 5:
            try:
                if healthz is None:
                    st, _, _ = probe.request("GET", "/healthz", tok=None)
                    if st == 200:
                        healthz = time.monotonic() - closed
                parked = metric(probe, "sheetd_long_polls_waiting")
                if healthz is not None and parked == 0:
                    break
            except OSError:
                probe.close()
            time.sleep(0.02)
        settled = time.monotonic() - closed
        log(f"{n} long-polls sent in {sent:.2f} s (connection limit {limit or 'default'}), closed: "
            f"/healthz answered after {healthz if healthz is None else round(healthz, 2)} s, none parked after {settled:.2f} s")
        check(parked == 0, f"{parked} long-polls still parked {settled:.1f} s after their clients closed")
        check(settled < 1.5, f"closed long-polls took {settled:.2f} s to go")
        check(healthz is not None and healthz < 1.5, f"/healthz answered after {healthz} s")
        figures[f"closed_{n}_settled_s"] = round(settled, 2)
        server.terminate()
    return figures


def token_expiry(work):
    server = Server(f"{work}/exp.sqlite", workdir=work, extra=["--jwt-leeway", "0"])
    server.start()
    tok = token("hostile-exp", ttl=3)
    t0 = time.monotonic()
    s = open_stream(server, "hostile-exp", tok)
    s.settimeout(10)
    data = b""
    # The body ends with the last chunk (the connection itself may stay open for the next request).
    while not data.endswith(b"\r\n0\r\n\r\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    lasted = time.monotonic() - t0
    s.close()
    check(b"event: decision" in data, "no decision event")
    check(b"event: token-expired" in data, "the stream ended without token-expired")
    check(lasted < 5.5, f"the stream lasted {lasted:.1f} s with a 3 s token")
    log(f"a stream with a 3 s token ended after {lasted:.1f} s with event: token-expired")
    server.terminate()
    return {"expired_stream_lasted_s": round(lasted, 1)}


def event_rate(work):
    server = Server(f"{work}/rate.sqlite", workdir=work, extra=["--max-events-per-user-per-minute", "600"])
    server.start()
    c = Client(server)
    tok = token("hostile-rate")
    statuses = []
    retry_after = None
    for i in range(700):
        st, h, _ = c.request("PUT", "/v1/users/hostile-rate/containers/offers-home/count", {"count": i % 5 + 1}, tok=tok)
        statuses.append(st)
        if st == 429 and retry_after is None:
            retry_after = h.get("retry-after")
    ok, limited = statuses.count(200), statuses.count(429)
    log(f"700 events of one user at once: {ok} accepted, {limited} answered 429 (Retry-After {retry_after})")
    check(ok >= 600 and limited > 0 and ok + limited == 700, f"rate limit: {ok} accepted, {limited} limited")
    check(retry_after is not None and int(retry_after) >= 1, "429 without Retry-After")
    server.terminate()
    return {"events_accepted_of_700": ok}


def quiet_disconnects(work, cycles):
    server = Server(f"{work}/quiet.sqlite", workdir=work)
    server.start()
    tok = token("hostile-quiet")
    for i in range(cycles):
        s = open_stream(server, "hostile-quiet", tok)
        s.recv(4096)
        s.close()
        if i % 7 == 0:
            time.sleep(0.002)
    time.sleep(0.5)
    warns = [l for l in server.logs().splitlines() if '"level":"warn"' in l]
    log(f"{cycles} stream open/close cycles: {len(warns)} warn lines")
    check(not warns, f"{len(warns)} warn lines, e.g. {warns[:1]}")
    server.terminate()
    return {"disconnect_cycles": cycles, "warn_lines": len(warns)}


def run():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--long-polls", type=int, default=1000)
    p.add_argument("--cycles", type=int, default=1000)
    a = p.parse_args()
    work = tempdir("hostile")
    figures = {}
    try:
        figures.update(slow_readers(work, a.seconds))
        figures.update(closed_long_polls(work, a.long_polls))
        figures.update(token_expiry(work))
        figures.update(event_rate(work))
        figures.update(quiet_disconnects(work, a.cycles))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report("hostile", figures)


if __name__ == "__main__":
    main(run)
