#!/usr/bin/env python3
"""Slow clients: hundreds of connections dribbling their headers a byte at a time while a normal client
keeps measuring its latency; then idle connections (never sent a byte, or idle after a keep-alive
request, or slow clients that stop) must be closed by the idle timeout.

    slow.py [--slow 300] [--seconds 6] [--idle-timeout 3]
"""
import argparse
import resource
import shutil
import socket
import threading
import time

from common import Client, Server, check, log, main, percentile, report, tempdir, token

USER = "slow-u"


def measure(server, seconds, tok):
    c = Client(server, timeout=10)
    lat = []
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        t0 = time.monotonic()
        if i % 2:
            s, _, _ = c.request("GET", f"/v1/users/{USER}/decision?screen=home&tab=accounts&platform=ios", tok=tok)
        else:
            s, _, _ = c.request("PUT", f"/v1/users/{USER}/containers/offers-home/count", {"count": i % 5 + 1}, tok=tok)
        lat.append(time.monotonic() - t0)
        check(s == 200, f"normal client got {s}")
        time.sleep(0.005)
    c.close()
    return lat


def closed_by_server(sock, wait):
    """True when the server closes the connection within `wait` seconds."""
    sock.settimeout(wait)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def run():
    p = argparse.ArgumentParser()
    p.add_argument("--slow", type=int, default=300)
    p.add_argument("--seconds", type=float, default=6)
    p.add_argument("--idle-timeout", type=int, default=3)
    a = p.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, a.slow * 2 + 256)), hard))
    work = tempdir("slow")
    server = Server(f"{work}/sheetd.sqlite", workdir=work, extra=["--idle-timeout", str(a.idle_timeout)])
    server.start()
    tok = token(USER)
    try:
        baseline = measure(server, 2.0, tok)
        request = (f"GET /v1/users/{USER}/state HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {tok}\r\n"
                   + "".join(f"X-Pad-{i}: {'p' * 40}\r\n" for i in range(40)) + "\r\n").encode()
        socks = []
        for _ in range(a.slow):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            s.setblocking(False)
            socks.append(s)
        stop = threading.Event()
        sent = [0]
        dropped = [0]

        def dribble():
            # One byte per connection per pass; a pass every ~0.3 s keeps each under the idle timeout.
            pos = 0
            while not stop.is_set() and pos < len(request):
                for s in socks:
                    try:
                        s.send(request[pos:pos + 1])
                        sent[0] += 1
                    except (BlockingIOError, OSError):
                        dropped[0] += 1
                pos += 1
                stop.wait(0.3)

        t = threading.Thread(target=dribble, daemon=True)
        t.start()
        time.sleep(0.5)
        during = measure(server, a.seconds, tok)
        stop.set()
        t.join()
        b50, b99 = percentile(baseline, 50), percentile(baseline, 99)
        d50, d99 = percentile(during, 50), percentile(during, 99)
        log(f"normal client: baseline p50 {b50 * 1000:.1f} ms p99 {b99 * 1000:.1f} ms ({len(baseline)} req); "
            f"with {a.slow} slow connections p50 {d50 * 1000:.1f} ms p99 {d99 * 1000:.1f} ms ({len(during)} req), "
            f"{sent[0]} header bytes dribbled")
        check(d99 <= max(3 * b99, b99 + 0.05), f"latency under slow clients: p99 {d99 * 1000:.1f} ms vs {b99 * 1000:.1f} ms")

        # Idle: connections that never send, one idle after a keep-alive request, and the slow ones (stopped).
        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(50)]
        ka = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        ka.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        check(b"200" in ka.recv(4096), "keep-alive request")
        t0 = time.monotonic()
        everything = idle + [ka] + socks
        for s in socks:
            s.setblocking(True)
        not_closed = [s for s in everything if not closed_by_server(s, max(0.1, a.idle_timeout + 3 - (time.monotonic() - t0)))]
        waited = time.monotonic() - t0
        check(not not_closed, f"{len(not_closed)} of {len(everything)} idle connections still open after {waited:.1f}s")
        log(f"idle timeout {a.idle_timeout}s: all {len(everything)} idle connections closed by the server within {waited:.1f}s")
        for s in everything:
            s.close()
        after = measure(server, 1.0, tok)
        check(server.alive(), "server alive")
        code, _ = server.terminate()
        check(code == 0, "stop")
    finally:
        server.ensure_stopped()
        shutil.rmtree(work, ignore_errors=True)
    report("slow", {"slow_connections": a.slow, "baseline_p50_ms": round(b50 * 1000, 2), "baseline_p99_ms": round(b99 * 1000, 2),
                    "during_p50_ms": round(d50 * 1000, 2), "during_p99_ms": round(d99 * 1000, 2),
                    "during_requests": len(during), "idle_closed": len(everything), "idle_timeout_s": a.idle_timeout,
                    "idle_closed_within_s": round(waited, 1), "after_p50_ms": round(percentile(after, 50) * 1000, 2)})


if __name__ == "__main__":
    main(run)
