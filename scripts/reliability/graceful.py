#!/usr/bin/env python3
"""Graceful stop under load: SIGTERM while clients write. No acknowledged write lost, exit 0 within the
drain timeout, the WAL is checkpointed away, the next start is clean.

    graceful.py [--rounds N] [--clients N]
"""
import argparse
import os
import random
import shutil
import time

from common import Failure, Server, check, integrity, log, main, report, tempdir
from crash import Driver, verify

DRAIN_TIMEOUT = 5


def run():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--clients", type=int, default=8)
    a = p.parse_args()
    work = tempdir("graceful")
    db = f"{work}/sheetd.sqlite"
    states = [{"user": f"crash-u{i}", "seq": 0, "acked": {}, "acked_seq": 0, "errors": []} for i in range(a.clients)]
    server = Server(db, workdir=work, extra=["--drain-timeout", str(DRAIN_TIMEOUT)])
    stops = []
    try:
        server.start()
        for r in range(a.rounds):
            drivers = [Driver(server, i, states[i]) for i in range(a.clients)]
            for d in drivers:
                d.start()
            time.sleep(random.uniform(0.5, 1.5))
            before = sum(len(s["acked"]) for s in states)
            code, secs = server.terminate(timeout=DRAIN_TIMEOUT + 10)
            stops.append(secs)
            for d in drivers:
                d.stop = True
                d.join(10)
            check(code == 0, f"exit code {code} after SIGTERM (round {r})")
            check(secs <= DRAIN_TIMEOUT + 1, f"took {secs:.2f}s to stop, drain timeout {DRAIN_TIMEOUT}s")
            logs = server.logs()
            check('"msg":"stopped"' in logs, "no stopped line")
            wal = f"{db}-wal"
            check(not os.path.exists(wal) or os.path.getsize(wal) == 0, "WAL left behind after a clean stop")
            check(integrity(db) == "ok", "integrity after SIGTERM")
            server.start()
            check("recover" not in server.logs().lower(), "recovery on a clean start")
            verify(server, states, db)
            errors = [e for st in states for e in st["errors"] if e[0] != 503]
            check(not errors, f"unexpected answers while draining: {errors[:3]}")
            log(f"round {r}: SIGTERM under {a.clients} writers after {before} acks, exit 0 in {secs * 1000:.0f} ms")
        code, _ = server.terminate()
        check(code == 0, "final stop")
    finally:
        server.ensure_stopped()
        shutil.rmtree(work, ignore_errors=True)
    acked = sum(len(s["acked"]) for s in states)
    report("graceful", {"rounds": a.rounds, "clients": a.clients, "acknowledged_events": acked, "lost": 0,
                        "stop_ms_max": round(max(stops) * 1000), "stop_ms_median": round(sorted(stops)[len(stops) // 2] * 1000),
                        "drain_timeout_s": DRAIN_TIMEOUT})
    log(f"graceful: {a.rounds} SIGTERM rounds, {acked} acknowledged events, none lost; stop took at most "
        f"{max(stops) * 1000:.0f} ms")


if __name__ == "__main__":
    main(run)
