#!/usr/bin/env python3
"""Crash durability: several clients drive events, the server is killed with SIGKILL at a random
moment, restarted on the same database; every acknowledged event must be there and the file intact.

    crash.py [--rounds N] [--clients N] [--synchronous NORMAL|FULL ...] [--backend sqlite|postgres]

With --backend postgres the server runs on a throwaway PostgreSQL (scripts/postgres.sh); every
other round the database server crashes too (an immediate stop at the same moment: no checkpoint,
WAL recovery when it starts again), and every acknowledged event must still be there.
"""
import argparse
import random
import shutil
import threading
import time

from common import (Client, Failure, Postgres, Server, check, integrity, is_postgres, log, main, query, report, tempdir,
                    token)

CONTAINER = "crash-c"


def count_for(seq):
    return seq % 97 + 1


# Processed event ids a user keeps (sheetd's StoreRetention.eventIdsPerUser default).
KEPT_EVENT_IDS = 64


class Driver(threading.Thread):
    """One client: a user of its own; every acknowledged event is recorded."""

    def __init__(self, server, index, state):
        super().__init__(daemon=True)
        self.server = server
        self.user = f"crash-u{index}"
        self.tok = token(self.user, ttl=7200)
        self.state = state  # persists across rounds: seq, acked events, acked max seq
        self.stop = False

    def run(self):
        c = Client(self.server, timeout=5)
        st = self.state
        u = self.user
        try:
            while not self.stop:
                st["seq"] += 1
                seq = st["seq"]
                eid = f"{u}-e{seq}"
                kind = seq % 4
                if kind == 0:
                    path, method = f"/v1/users/{u}/containers/{CONTAINER}/count", "PUT"
                    body = {"count": count_for(seq), "seq": seq, "eventId": eid}
                elif kind == 1:
                    path, method = f"/v1/users/{u}/dismissals", "POST"
                    body = {"sheetId": "home-offers", "method": "swipe", "eventId": eid}
                elif kind == 2:
                    path, method = f"/v1/users/{u}/sheets/offer-detail/content-height", "PUT"
                    body = {"height": seq % 900 + 1, "platform": "ios", "eventId": eid}
                else:
                    path, method = f"/v1/users/{u}/presentations", "POST"
                    body = {"sheetId": "offer-detail", "mode": "push", "eventId": eid}
                # Counts also go without an eventId sometimes: then only seq proves durability.
                try:
                    s, h, b = c.request(method, path, body, tok=self.tok)
                except Exception:
                    return  # the server died: whatever was in flight is not acknowledged
                if s != 200:
                    st["errors"].append((s, b[:200]))
                    continue
                st["acked"][eid] = (path, method, body, b)
                if kind == 0:
                    st["acked_seq"] = max(st["acked_seq"], seq)
        finally:
            c.close()


def verify(server, states, db):
    if not is_postgres(db):
        result = integrity(db)
        check(result == "ok", f"integrity_check: {result}")
    # Stored as "<kind>/<eventId>" (event ids are scoped to the kind of event).
    present = set(r[0].split("/", 1)[-1] for r in query(db, "SELECT event_id FROM processed_events"))
    c = Client(server)
    checked = 0
    for st in states:
        # A user keeps only its newest KEPT_EVENT_IDS processed ids (sheetd prunes older ones on
        # purpose): every acknowledged id in that window must be there. Ids are <user>-e<seq>, seq
        # rising; the newest stored seq bounds the window (an acknowledged id above it is lost too).
        seqs = [int(e.rsplit("-e", 1)[1]) for e in present if e.startswith(st["user"] + "-e")]
        floor = (max(seqs) if seqs else 0) - KEPT_EVENT_IDS
        kept = {e: v for e, v in st["acked"].items() if int(e.rsplit("-e", 1)[1]) > floor}
        missing = [e for e in kept if e not in present]
        check(not missing, f"{len(missing)} acknowledged events lost, e.g. {missing[:3]}")
        if st["acked_seq"]:
            s, _, state = c.json("GET", f"/v1/users/{st['user']}/state")
            check(s == 200, f"state {s}")
            row = [x for x in state["containers"] if x["containerId"] == CONTAINER]
            check(row, f"{st['user']}: container lost (acked seq {st['acked_seq']})")
            check(row[0]["seq"] >= st["acked_seq"], f"{st['user']}: seq {row[0]['seq']} < acked {st['acked_seq']}")
            check(row[0]["count"] == count_for(row[0]["seq"]), f"{st['user']}: count/seq mismatch {row[0]}")
        # Replays answer with the first outcome, byte for byte.
        for eid in random.sample(sorted(kept), min(5, len(kept))):
            path, method, body, first = kept[eid]
            body = dict(body)
            if "count" in body:
                body["count"] = 0  # a different body: must not be applied
            s, h, b = c.request(method, path, body)
            check(s == 200 and h.get("idempotent-replayed") == "true" and b == first,
                  f"replay of {eid}: {s} {h.get('idempotent-replayed')} {b[:100]} vs {first[:100]}")
            checked += 1
    c.close()
    return checked


def run_setting(mode, rounds, clients, postgres=None):
    work = tempdir(f"crash-{mode.lower()}")
    db = postgres.url if postgres else f"{work}/sheetd.sqlite"
    states = [{"user": f"crash-u{i}", "seq": 0, "acked": {}, "acked_seq": 0, "errors": []} for i in range(clients)]
    server = Server(db, synchronous="NORMAL" if postgres else mode, workdir=work)
    restarts, acked_total, replays, uptime, db_crashes, db_recoveries = [], 0, 0, [], 0, []
    try:
        server.start()
        for r in range(rounds):
            drivers = [Driver(server, i, states[i]) for i in range(clients)]
            for d in drivers:
                d.start()
            alive = random.uniform(0.2, 1.2)
            uptime.append(alive)
            time.sleep(alive)
            server.kill9()
            crash_db = postgres is not None and r % 2 == 1
            if crash_db:
                postgres.crash()
            for d in drivers:
                d.stop = True
                d.join(10)
            if crash_db:
                t0 = time.monotonic()
                postgres.up()
                db_recoveries.append(time.monotonic() - t0)
                db_crashes += 1
            t0 = time.monotonic()
            server.start()
            restarts.append(time.monotonic() - t0)
            replays += verify(server, states, db)
            errors = [e for st in states for e in st["errors"]]
            check(not errors, f"non-200 answers while driving: {errors[:3]}")
        acked_total = sum(len(st["acked"]) for st in states)
        code, secs = server.terminate()
        check(code == 0, f"final SIGTERM exit {code}")
        check(postgres is not None or integrity(db) == "ok", "integrity after the last stop")
    finally:
        server.ensure_stopped()
        shutil.rmtree(work, ignore_errors=True)
    figures = {"synchronous": mode, "rounds": rounds, "clients": clients, "acknowledged_events": acked_total,
               "lost": 0, "replays_checked": replays, "restart_ms_max": round(max(restarts) * 1000),
               "restart_ms_median": round(sorted(restarts)[len(restarts) // 2] * 1000)}
    if postgres:
        figures["database_crashes"] = db_crashes
        figures["database_restart_ms_max"] = round(max(db_recoveries, default=0) * 1000)
        log(f"PostgreSQL: {rounds} kill -9 rounds ({db_crashes} with the database crashed too), {acked_total} "
            f"acknowledged events, none lost, sheetd restart median {figures['restart_ms_median']} ms, database "
            f"restart (WAL recovery) max {figures['database_restart_ms_max']} ms")
    else:
        log(f"synchronous={mode}: {rounds} kill -9 rounds, {acked_total} acknowledged events, none lost, "
            f"integrity ok every round, restart median {figures['restart_ms_median']} ms")
    report("crash", figures)


def run():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--clients", type=int, default=6)
    p.add_argument("--synchronous", nargs="+", default=["NORMAL", "FULL"])
    p.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    a = p.parse_args()
    if a.backend == "postgres":
        postgres = Postgres()
        try:
            run_setting("postgres", a.rounds, a.clients, postgres.start())
        finally:
            postgres.stop()
        return
    for mode in a.synchronous:
        run_setting(mode, a.rounds, a.clients)


if __name__ == "__main__":
    main(run)
