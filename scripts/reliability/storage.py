#!/usr/bin/env python3
"""Storage faults: a read-only database file, a read-only directory, a full disk (small tmpfs), a
database locked by another process (the sqlite3 CLI holding BEGIN EXCLUSIVE). In each: writes answer
503 problem+json with Retry-After, reads keep working where SQLite can read, /readyz says 503, a
failed write changes nothing, nothing is corrupted, and the service resumes by itself when the fault
clears. Needs root (tmpfs mounts; the permission faults run the server as nobody, since root ignores
file modes).
"""
import itertools
import json
import os
import shutil
import subprocess
import time

from common import (BINARY, CATALOG, Client, Failure, Server, check, integrity, log, main, query, report, tempdir,
                    token)

NOBODY = (65534, 65534)
USER = "store-u"
_ids = itertools.count()
results = {}


class Probe:
    def __init__(self, server):
        self.c = Client(server, timeout=30)
        self.tok = token(USER)
        self.acked, self.refused = [], []

    def write(self):
        eid = f"w{next(_ids)}"
        t0 = time.monotonic()
        s, h, b = self.c.request("PUT", f"/v1/users/{USER}/sheets/offer-detail/content-height",
                                 {"height": 100 + len(self.acked) % 500, "platform": "android", "eventId": eid}, tok=self.tok)
        dt = time.monotonic() - t0
        if s == 200:
            self.acked.append(eid)
        else:
            check(s == 503, f"write answered {s}: {b[:200]}")
            check(h.get("content-type", "").startswith("application/problem+json"), f"503 content type {h.get('content-type')}")
            check(h.get("retry-after", "").isdigit(), f"503 without Retry-After: {h}")
            problem = json.loads(b)
            check(problem.get("status") == 503 and problem.get("title"), f"503 body {problem}")
            self.refused.append(eid)
        return s, dt

    def reads(self):
        s1, _, _ = self.c.request("GET", f"/v1/users/{USER}/state", tok=self.tok)
        s2, _, _ = self.c.request("GET", f"/v1/users/{USER}/decision?screen=home&tab=accounts&platform=ios", tok=self.tok)
        s3, _, _ = self.c.request("GET", "/v1/sheets", tok=self.tok)
        return s1, s2, s3

    def ready(self):
        s, h, b = self.c.request("GET", "/readyz", tok=None)
        if s != 200:
            check(s == 503 and h.get("content-type", "").startswith("application/problem+json"), f"/readyz {s} {b[:200]}")
        return s


def exercise(name, server, db, inject, clear, reads_expected=True, max_writes=20000):
    """Runs one fault: some writes before, inject, writes until refused, reads, readiness, clear,
    recovery without a restart, then checks that acknowledged writes are kept and refused ones absent."""
    p = Probe(server)
    for _ in range(20):
        check(p.write()[0] == 200, f"{name}: write before the fault")
    check(p.ready() == 200, f"{name}: not ready before the fault")
    inject()
    t0 = time.monotonic()
    first_refusal = None
    latencies = []
    for _ in range(max_writes):
        s, dt = p.write()
        if s == 503:
            first_refusal = time.monotonic() - t0
            latencies.append(dt)
            break
    check(first_refusal is not None, f"{name}: {max_writes} writes and none refused")
    for _ in range(3):
        s, dt = p.write()
        check(s == 503, f"{name}: a write succeeded during the fault")
        latencies.append(dt)
    reads = p.reads()
    if reads_expected:
        check(reads == (200, 200, 200), f"{name}: reads during the fault answered {reads}")
    else:
        check(all(r in (200, 503) for r in reads), f"{name}: reads during the fault answered {reads}")
    check(p.ready() == 503, f"{name}: /readyz not 503 during the fault")
    check(server.alive(), f"{name}: the server died")
    clear()
    t1 = time.monotonic()
    while p.ready() != 200:
        check(time.monotonic() - t1 < 30, f"{name}: not ready 30 s after the fault cleared")
        time.sleep(0.1)
    recovery = time.monotonic() - t1
    check(p.write()[0] == 200, f"{name}: write after recovery")
    check(p.reads() == (200, 200, 200), f"{name}: reads after recovery")
    check(integrity(db) == "ok", f"{name}: integrity_check")
    present = {r[0].split("/", 1)[-1] for r in query(db, "SELECT event_id FROM processed_events WHERE user_id = ?", (USER,))}
    lost = [e for e in p.acked if e not in present]
    ghost = [e for e in p.refused if e in present]
    check(not lost, f"{name}: acknowledged writes lost: {lost[:5]}")
    check(not ghost, f"{name}: refused writes were applied: {ghost[:5]}")
    results[name] = {"acked": len(p.acked), "refused": len(p.refused), "reads_during_fault": list(reads),
                     "refusal_latency_ms_max": round(max(latencies) * 1000),
                     "recovery_ms": round(recovery * 1000), "integrity": "ok"}
    log(f"{name}: {len(p.acked)} acked, {len(p.refused)} refused with 503 (max {max(latencies) * 1000:.0f} ms), "
        f"reads {reads}, ready again {recovery * 1000:.0f} ms after the fault cleared, integrity ok")
    p.c.close()


def unprivileged_dir(prefix):
    work = tempdir(prefix)
    os.chmod(work, 0o755)
    data = f"{work}/data"
    os.mkdir(data)
    os.chown(data, *NOBODY)
    # nobody needs a binary and a catalog it can reach.
    shutil.copy(BINARY, f"{work}/sheetd")
    shutil.copy(CATALOG, f"{work}/catalog.json")
    os.chmod(f"{work}/catalog.json", 0o644)
    return work, data


def start_unprivileged(work, data):
    server = Server(f"{data}/sheetd.sqlite", workdir=work, user=NOBODY, catalog=False, binary=f"{work}/sheetd",
                    extra=["--catalog", f"{work}/catalog.json"])
    return server.start()


def read_only_file():
    """The database file loses its write permission while the server runs; the writer hits the fault
    when it reopens, and at the next start (which must still serve reads)."""
    work, data = unprivileged_dir("rofile")
    db = f"{data}/sheetd.sqlite"
    server = start_unprivileged(work, data)
    try:
        # Make the running server reopen the file: restart it while the file is read-only.
        Probe(server).write()
        code, _ = server.terminate()
        check(code == 0, "stop")
        os.chmod(db, 0o444)
        server = start_unprivileged(work, data)
        p = Probe(server)
        check(p.reads() == (200, 200, 200), "reads with a read-only database file")
        s, _ = p.write()
        check(s == 503, f"write to a read-only database file answered {s}")
        check(p.ready() == 503, "/readyz with a read-only database file")
        os.chmod(db, 0o644)
        t1 = time.monotonic()
        while p.ready() != 200:
            check(time.monotonic() - t1 < 30, "not ready 30 s after the file became writable")
            time.sleep(0.1)
        check(p.write()[0] == 200, "write after the file became writable")
        results["read-only database file"] = {"reads_during_fault": [200, 200, 200], "write": 503, "readyz": 503,
                                              "recovery_ms": round((time.monotonic() - t1) * 1000)}
        log(f"read-only database file: reads 200, writes 503, /readyz 503; ready "
            f"{results['read-only database file']['recovery_ms']} ms after chmod 644, no restart")
    finally:
        server.ensure_stopped()
        shutil.rmtree(work, ignore_errors=True)


def read_only_directory():
    """The directory (and file) are read-only at start, with no -wal/-shm left (a clean stop removes
    them). SQLite cannot open a WAL database there even for reading (it must create the -shm), so no
    read can work: the server refuses to start, naming the cause, with a non-zero exit (a supervisor
    restarts it); nothing is changed, and it starts normally once the directory is writable."""
    work, data = unprivileged_dir("rodir")
    db = f"{data}/sheetd.sqlite"
    server = start_unprivileged(work, data)
    try:
        p = Probe(server)
        check(p.write()[0] == 200, "write before")
        code, _ = server.terminate()
        check(code == 0, "stop")
        before = open(db, "rb").read()
        os.chmod(db, 0o444)
        os.chmod(data, 0o555)
        try:
            server = start_unprivileged(work, data)
            raise Failure("started with a read-only directory: expected a clear refusal")
        except Failure as e:
            message = str(e)
            check("exited" in message and "readonly" in message.replace("read-only", "readonly"),
                  f"unexpected start failure: {message[:300]}")
        check(open(db, "rb").read() == before, "the refused start changed the database file")
        os.chmod(data, 0o755)
        os.chmod(db, 0o644)
        server = start_unprivileged(work, data)
        p = Probe(server)
        check(p.write()[0] == 200 and p.reads() == (200, 200, 200), "after the directory became writable")
        check(integrity(db) == "ok", "integrity")
        results["read-only directory (at start)"] = {"started": False, "exit": "1, naming the read-only database",
                                                      "after_fix": "starts, reads and writes 200", "integrity": "ok"}
        log("read-only directory at start: refused with exit 1 naming the cause (SQLite cannot read a WAL database "
            "without creating its -shm), file unchanged; starts normally once writable")
    finally:
        server.ensure_stopped()
        os.chmod(data, 0o755)
        shutil.rmtree(work, ignore_errors=True)


def full_disk():
    work = tempdir("full")
    mnt = f"{work}/mnt"
    os.mkdir(mnt)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt], check=True)
    server = None
    try:
        db = f"{mnt}/sheetd.sqlite"
        server = Server(db, workdir=work)
        server.start()
        filler = f"{mnt}/filler"

        def fill():
            with open(filler, "wb") as f:
                try:
                    while True:
                        f.write(b"\0" * 65536)
                        f.flush()
                except OSError:
                    pass
            # Leave nothing: also the last partial page.
            try:
                with open(filler, "ab") as f:
                    while True:
                        f.write(b"\0" * 512)
                        f.flush()
            except OSError:
                pass

        exercise("full disk (8 MB tmpfs)", server, db, fill, lambda: os.remove(filler))
        code, _ = server.terminate()
        check(code == 0, "stop after the full-disk run")
        check(integrity(db) == "ok", "integrity after stop")
    finally:
        if server:
            server.ensure_stopped()
        subprocess.run(["umount", mnt], check=False)
        shutil.rmtree(work, ignore_errors=True)


def locked():
    work = tempdir("locked")
    db = f"{work}/sheetd.sqlite"
    server = Server(db, workdir=work)
    server.start()
    holder = {}
    try:
        def lock():
            proc = subprocess.Popen(["sqlite3", db], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
            proc.stdin.write("BEGIN EXCLUSIVE;\nINSERT INTO sheets SELECT * FROM sheets WHERE 0;\nSELECT 'locked';\n")
            proc.stdin.flush()
            check(proc.stdout.readline().strip() == "locked", "the sqlite3 CLI did not take the lock")
            holder["proc"] = proc

        def unlock():
            proc = holder.pop("proc")
            proc.stdin.write("ROLLBACK;\n.quit\n")
            proc.stdin.flush()
            proc.wait(10)

        exercise("database locked by another process", server, db, lock, unlock, max_writes=5)
        code, _ = server.terminate()
        check(code == 0, "stop")
    finally:
        if "proc" in holder:
            holder["proc"].kill()
        server.ensure_stopped()
        shutil.rmtree(work, ignore_errors=True)


def run():
    check(os.geteuid() == 0, "storage faults need root (tmpfs mounts, running the server as nobody)")
    check(shutil.which("sqlite3"), "the sqlite3 CLI is required")
    failures = []
    for case in (locked, full_disk, read_only_file, read_only_directory):
        try:
            case()
        except Failure as e:
            failures.append(f"{case.__name__}: {e}")
            log(f"FAILED {case.__name__}: {e}")
    report("storage", {"cases": results, "failures": failures})
    if failures:
        raise Failure("; ".join(failures))


if __name__ == "__main__":
    main(run)
