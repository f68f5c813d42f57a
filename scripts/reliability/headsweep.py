#!/usr/bin/env python3
"""Every request head gets an answer: a raw-socket sweep of head sizes across the connection pool's
edge (issue 19, "every request gets an answer").

Each head is built to an exact size (request line, header fields and the blank line) in one of several
shapes, with and without an Authorization header and with and without a body, sent on a keep-alive
connection that stays open (no half-close: a stalled server is not rescued by the client's FIN), and
must get a complete HTTP status line within a second.

    headsweep.py [--from 8000] [--to 12500] [--step 16] [--verbose]    (starts its own server)

corpus.py runs the same sweep (`sweep()`) as part of `make reliability`.
"""
import argparse
import concurrent.futures
import re
import shutil
import socket
import time

from common import Server, check, log, main, report, tempdir, token

USER = "sweep-u"
DEADLINE_S = 1.0
# sheetd's connection memory (HTTPServerConfiguration.headerMemoryLimit): the sweep is centred on it.
POOL = 10240
LO, HI = POOL - 2240, POOL + 2260
# sheetd's log line when libmicrohttpd could not build an answer and sheetd wrote its 431 itself.
FALLBACK_LOG = "the answer did not fit in the connection's memory"


def shapes():
    """(name, method, build(filler_length) -> (target, extra header lines), body or None)."""
    decision = f"/v1/users/{USER}/decision"
    count = f"/v1/users/{USER}/containers/c1/count"

    def long_path(path):
        return lambda n: (path.replace(USER, USER + "x" * n), [])

    def long_query(path):
        return lambda n: (path + "?platform=" + "i" * n, [])

    def many_parameters(path):
        # "&pN=v" pieces and then a tail of 'v's to reach the exact size.
        def build(n):
            pieces, size = [], 0
            i = 0
            while size + len(f"&p{i}=v") <= n:
                pieces.append(f"&p{i}=v")
                size += len(pieces[-1])
                i += 1
            return path + "?a=" + "v" * (n - size) + "".join(pieces), []
        return build

    def many_headers(path):
        def build(n):
            lines, size, i = [], 0, 0
            while size + len(f"X-H{i}: v\r\n") <= n:
                lines.append(f"X-H{i}: v".encode())
                size += len(lines[-1]) + 2
                i += 1
            lines.append(b"X-Pad: " + b"v" * max(0, n - size))
            return path, lines
        return build

    def long_header(path):
        return lambda n: (path, [b"X-Big: " + b"a" * n])

    def leading_empty_lines(path):
        # Empty lines before the request line (RFC 9112 section 2.2 lets a server ignore them; libmicrohttpd
        # does, but they stay in its connection memory): the head itself is short.
        return lambda n: (path + "?platform=ios", [], b"\r\n" * (n // 2) + b"\n" * (n % 2))

    out = []
    for method, path, body in (("GET", decision, None), ("PUT", count, b'{"count":1}')):
        out += [
            (f"{method} long path", method, long_path(path), body),
            (f"{method} long query", method, long_query(path), body),
            (f"{method} many parameters", method, many_parameters(path), body),
            (f"{method} many headers", method, many_headers(path), body),
            (f"{method} long header value", method, long_header(path), body),
            (f"{method} leading empty lines", method, leading_empty_lines(path), body),
        ]
    return out


def head(method, target, lines, prefix=b"", *, tok, body, size):
    """The request's bytes and its head's exact size (filler adjusted by the caller)."""
    fields = [prefix + f"{method} {target} HTTP/1.1".encode(), b"Host: 127.0.0.1"]
    if tok:
        fields.append(b"Authorization: Bearer " + tok.encode())
    if body is not None:
        fields += [b"Content-Type: application/json", f"Content-Length: {len(body)}".encode()]
    fields += lines
    h = b"\r\n".join(fields) + b"\r\n\r\n"
    return h, len(h)


def build(shape, tok, size):
    """The request whose head is exactly `size` bytes (or the nearest the shape allows)."""
    _, method, make, body = shape
    _, base = head(method, *make(0), tok=tok, body=body, size=size)
    n = max(0, size - base)
    for _ in range(4):  # the filler's own length changes some shapes' overhead: converge
        h, got = head(method, *make(n), tok=tok, body=body, size=size)
        if got == size:
            break
        n = max(0, n + size - got)
    return h + (body or b""), len(h)


def ask(port, data, deadline=DEADLINE_S):
    """(status or None, seconds): the first status line on a connection kept open."""
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=deadline)
    try:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # an early answer (431/414) and close: read what was sent
        out = b""
        while b"\r\n" not in out:
            left = deadline - (time.monotonic() - t0)
            if left <= 0:
                break
            s.settimeout(left)
            try:
                chunk = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            out += chunk
    finally:
        s.close()
    m = re.match(rb"HTTP/1\.[01] (\d{3}) ", out)
    return (int(m.group(1)) if m else None), time.monotonic() - t0


def sweep(port, tok, lo=LO, hi=HI, step=16, workers=8, verbose=False):
    """Every shape x {no auth, auth} x {sizes lo..hi by step}. Returns (requests, failures, statuses,
    slowest seconds)."""
    jobs = []
    for shape in shapes():
        for t in (None, tok):
            for size in range(lo, hi + 1, step):
                data, got = build(shape, t, size)
                jobs.append((f"{shape[0]}{' + auth' if t else ''} {got} B", data))
    failures, statuses, slowest = [], {}, 0.0
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        for (name, _), (status, secs) in zip(jobs, pool.map(lambda j: ask(port, j[1]), jobs)):
            statuses[status] = statuses.get(status, 0) + 1
            slowest = max(slowest, secs)
            if status == 500 and "leading empty lines" not in name:
                # libmicrohttpd's own 500 comes only when empty lines before the request line filled its
                # memory and a body follows (it cannot read the body): an answer, but a wrong one elsewhere.
                failures.append(f"{name}: 500 after {secs:.2f} s")
            if status is None or secs > DEADLINE_S:
                failures.append(f"{name}: {'no answer' if status is None else status} after {secs:.2f} s")
            elif verbose:
                log(f"{status} {secs * 1000:6.1f} ms  {name}")
    return len(jobs), failures, statuses, slowest


def run():
    p = argparse.ArgumentParser()
    p.add_argument("--from", dest="lo", type=int, default=LO)
    p.add_argument("--to", dest="hi", type=int, default=HI)
    p.add_argument("--step", type=int, default=16)
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--extra", action="append", default=[], help="an extra sheetd serve argument")
    p.add_argument("--port", type=int, help="sweep a server already listening on this port of 127.0.0.1")
    a = p.parse_args()
    if a.port:
        n, failures, statuses, slowest = sweep(a.port, token(USER), a.lo, a.hi, a.step, verbose=a.verbose)
        log(f"{n} requests, {len(failures)} unanswered, statuses {statuses}, slowest {slowest * 1000:.0f} ms")
        for f in failures:
            log("  " + f)
        return
    work = tempdir("headsweep")
    server = Server(f"{work}/sheetd.sqlite", workdir=work, extra=a.extra)
    server.start()
    try:
        n, failures, statuses, slowest = sweep(server.port, token(USER), a.lo, a.hi, a.step, verbose=a.verbose)
        check(server.alive(), f"the server died during the sweep: {server.logs()[-1500:]}")
        fallbacks = server.logs().count(FALLBACK_LOG)
    finally:
        server.ensure_stopped()
        shutil.rmtree(work, ignore_errors=True)
    log(f"head sweep {a.lo}..{a.hi} step {a.step}: {n} requests, {len(failures)} unanswered, "
        f"statuses {dict(sorted(statuses.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))}, slowest {slowest * 1000:.0f} ms, "
        f"{fallbacks} answered by sheetd's fallback")
    for f in failures:
        log("  " + f)
    check(not failures, f"{len(failures)} heads got no answer within {DEADLINE_S} s")
    report("headsweep", {"requests": n, "unanswered": len(failures), "slowest_ms": round(slowest * 1000, 1),
                         "fallback_answers": fallbacks})


if __name__ == "__main__":
    main(run)
