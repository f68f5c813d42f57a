#!/usr/bin/env python3
"""Concurrency: 64 connections racing count reports, dismissals, presentations and decision reads for
a few users; then the latch-vs-same-count race; then one eventId sent 50 times at once.

Checks (no lost update, answers consistent with a serial order):
- with seq, the stored count is the count of the highest acknowledged seq, and that report was applied;
  every applied answer echoes its own count; an unapplied answer is stale against a higher seq;
- a dismissal racing count reports of the same value: the latch survives (no serial order drops it),
  and the decision then shows no card of that container;
- decisions read during the race: one ETag never names two bodies; the final decision equals the
  decision the server computes from the stored state twice in a row;
- the same eventId 50 times concurrently: one applied, 49 replayed, every body identical.

    concurrency.py [--connections 64] [--seconds 4]
"""
import argparse
import itertools
import json
import random
import threading
import time

from common import Client, Postgres, Server, check, log, main, percentile, query, report, tempdir, token
import shutil

USERS = ["race-a", "race-b", "race-c", "race-d"]
CONTAINER = "offers-home"  # the container of the card sheet home-offers
DECISION = "/decision?screen=home&tab=accounts&platform=ios"


def count_for(seq):
    return seq % 4 + 1  # few values: many reports repeat the stored count


def shows(decision, sheet_id):
    """Whether a decision presents `sheet_id` (as the sheet or anywhere in its stack)."""
    sheet = decision.get("sheet") or {}
    stack = [x if isinstance(x, str) else x.get("sheetId", x.get("id")) for x in decision.get("stack") or []]
    return bool(decision.get("present")) and (sheet.get("id") == sheet_id or sheet_id in stack)


def race(server, connections, seconds):
    seqs = itertools.count(1)
    lock = threading.Lock()
    results = []  # (user, op, seq, count, status, body)
    etags = {}
    latencies = []
    stop = time.monotonic() + seconds
    barrier = threading.Barrier(connections)

    def worker(i):
        c = Client(server)
        rnd = random.Random(i)
        toks = {u: token(u) for u in USERS}
        barrier.wait()
        local, lat = [], []
        while time.monotonic() < stop:
            u = rnd.choice(USERS)
            op = rnd.choice(["count", "count", "dismiss", "present", "decision"])
            t0 = time.monotonic()
            if op == "count":
                seq = next(seqs)
                s, _, b = c.json("PUT", f"/v1/users/{u}/containers/{CONTAINER}/count",
                                 {"count": count_for(seq), "seq": seq}, tok=toks[u])
                local.append((u, op, seq, count_for(seq), s, b))
            elif op == "dismiss":
                s, _, b = c.json("POST", f"/v1/users/{u}/dismissals", {"sheetId": "home-offers", "method": "swipe"}, tok=toks[u])
                local.append((u, op, None, None, s, b))
            elif op == "present":
                s, _, b = c.json("POST", f"/v1/users/{u}/presentations",
                                 {"sheetId": "offer-detail", "mode": "push", "parentSheetId": "home-offers"}, tok=toks[u])
                local.append((u, op, None, None, s, b))
            else:
                s, h, b = c.request("GET", f"/v1/users/{u}{DECISION}", tok=toks[u])
                local.append((u, op, None, None, s, None))
                if s == 200:
                    with lock:
                        prev = etags.setdefault(h["etag"], b)
                        check(prev == b, f"ETag {h['etag']} names two different bodies")
            lat.append(time.monotonic() - t0)
        c.close()
        with lock:
            results.extend(local)
            latencies.extend(lat)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad = [r for r in results if r[4] != 200]
    check(not bad, f"{len(bad)} non-200 answers during the race, e.g. {bad[:3]}")
    c = Client(server)
    for u in USERS:
        counts = [r for r in results if r[0] == u and r[1] == "count"]
        if not counts:
            continue
        top = max(counts, key=lambda r: r[2])
        check(top[5]["applied"], f"{u}: the highest seq {top[2]} was not applied")
        for r in counts:
            if r[5]["applied"]:
                check(r[5]["count"] == r[3], f"{u}: applied seq {r[2]} answered count {r[5]['count']}")
        s, _, state = c.json("GET", f"/v1/users/{u}/state")
        row = [x for x in state["containers"] if x["containerId"] == CONTAINER][0]
        check(row["seq"] == top[2] and row["count"] == top[3],
              f"{u}: lost update: stored seq {row['seq']} count {row['count']}, highest acked {top[2]}/{top[3]}")
        # The final decision is stable and is what the stored state gives.
        s1, h1, d1 = c.request("GET", f"/v1/users/{u}{DECISION}")
        s2, h2, d2 = c.request("GET", f"/v1/users/{u}{DECISION}")
        check(s1 == 200 and d1 == d2 and h1["etag"] == h2["etag"], f"{u}: decision not stable")
        latch = {l["sheetId"]: l["count"] for l in state["latches"]}
        decision = json.loads(d1)
        if latch.get("home-offers") == row["count"]:
            check(not shows(decision, "home-offers"), f"{u}: a card sheet latched at the current count is decided: {decision}")
    c.close()
    ops = {}
    for r in results:
        ops[r[1]] = ops.get(r[1], 0) + 1
    return {"requests": len(results), "by_op": ops, "distinct_etags": len(etags),
            "p50_ms": round(percentile(latencies, 50) * 1000, 1), "p99_ms": round(percentile(latencies, 99) * 1000, 1)}


def latch_race(server, connections):
    """A dismissal racing count reports of the same value: every serial order keeps the latch."""
    u = "latch-u"
    c = Client(server)
    tok = token(u)
    base = 1000
    check(c.json("PUT", f"/v1/users/{u}/containers/{CONTAINER}/count", {"count": 3, "seq": base}, tok=tok)[0] == 200, "seed")
    barrier = threading.Barrier(connections)
    answers = []
    lock = threading.Lock()

    def worker(i):
        cl = Client(server)
        barrier.wait()
        if i % 2 == 0:
            s, _, b = cl.json("POST", f"/v1/users/{u}/dismissals", {"sheetId": "home-offers", "method": "swipe"}, tok=tok)
        else:
            s, _, b = cl.json("PUT", f"/v1/users/{u}/containers/{CONTAINER}/count", {"count": 3, "seq": base + i}, tok=tok)
        cl.close()
        with lock:
            answers.append((s, b))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(all(s == 200 for s, _ in answers), f"latch race answers: {[a for a in answers if a[0] != 200][:3]}")
    s, _, state = c.json("GET", f"/v1/users/{u}/state")
    latches = {l["sheetId"]: l["count"] for l in state["latches"]}
    check(latches.get("home-offers") == 3, f"the latch was dropped by same-value count reports: {state}")
    s, _, d = c.json("GET", f"/v1/users/{u}{DECISION}", tok=tok)
    check(s == 200, "decision")
    check(not shows(d, "home-offers"), f"a latched card sheet is still decided: {d}")
    c.close()


def same_event_id(server, copies=50):
    u = "dup-u"
    tok = token(u)
    barrier = threading.Barrier(copies)
    answers = []
    lock = threading.Lock()
    outcomes = {}
    for kind in ("count", "dismiss", "present"):
        answers.clear()

        def worker(i):
            cl = Client(server)
            barrier.wait()
            if kind == "count":
                r = cl.request("PUT", f"/v1/users/{u}/containers/dup-c/count", {"count": i + 1, "eventId": "dup-count"}, tok=tok)
            elif kind == "dismiss":
                r = cl.request("POST", f"/v1/users/{u}/dismissals", {"sheetId": "home-reminders", "method": "swipe",
                                                                      "eventId": "dup-dismiss"}, tok=tok)
            else:
                r = cl.request("POST", f"/v1/users/{u}/presentations", {"sheetId": "offer-detail",
                                                                         "mode": "replace" if i % 2 else "push",
                                                                         "eventId": "dup-present"}, tok=tok)
            cl.close()
            with lock:
                answers.append(r)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(copies)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        check(all(s == 200 for s, _, _ in answers), f"{kind}: {[a[0] for a in answers if a[0] != 200]}")
        fresh = [a for a in answers if a[1].get("idempotent-replayed") != "true"]
        check(len(fresh) == 1, f"{kind}: {len(fresh)} of {copies} copies were applied")
        check(len({b for _, _, b in answers}) == 1, f"{kind}: the copies got different answers")
        outcomes[kind] = json.loads(fresh[0][2])
    c = Client(server)
    # The same id on another route is another event, answered in that route's own shape.
    s, h, b = c.json("PUT", f"/v1/users/{u}/sheets/offer-detail/content-height",
                     {"height": 200, "platform": "ios", "eventId": "dup-count"}, tok=tok)
    check(s == 200 and h.get("idempotent-replayed") is None and b.get("height") == 200,
          f"an event id reused on another route: {s} {h.get('idempotent-replayed')} {b}")
    s, _, state = c.json("GET", f"/v1/users/{u}/state")
    row = [x for x in state["containers"] if x["containerId"] == "dup-c"][0]
    check(row["count"] == outcomes["count"]["count"], f"stored count {row['count']} is not the applied copy's")
    check([x["sheetId"] for x in state["stack"]].count("offer-detail") == 1, f"stack {state['stack']}")
    rows = query(server.db, "SELECT event_id FROM processed_events WHERE user_id = ?", (u,))
    check(sorted(r[0] for r in rows) == ["content-height/dup-count", "count/dup-count", "dismissal/dup-dismiss", "presentation/dup-present"], f"processed_events {rows}")
    c.close()


def run():
    p = argparse.ArgumentParser()
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--seconds", type=float, default=4)
    p.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    a = p.parse_args()
    work = tempdir("race")
    postgres = Postgres().start() if a.backend == "postgres" else None
    server = Server(postgres.url if postgres else f"{work}/sheetd.sqlite", workdir=work)
    try:
        server.start()
        figures = race(server, a.connections, a.seconds)
        log(f"race: {a.connections} connections, {figures['requests']} requests {figures['by_op']}, no lost update, "
            f"p50 {figures['p50_ms']} ms p99 {figures['p99_ms']} ms")
        latch_race(server, a.connections)
        log(f"latch race: {a.connections} connections (dismissals vs same-value counts): latch kept")
        same_event_id(server, 50)
        log("same eventId x50 concurrently (count, dismissal, presentation): applied once each, 49 replays, identical bodies")
        code, _ = server.terminate()
        check(code == 0, "stop")
    finally:
        server.ensure_stopped()
        if postgres:
            postgres.stop()
        shutil.rmtree(work, ignore_errors=True)
    report("concurrency-postgres" if postgres else "concurrency",
           {"connections": a.connections, **figures, "latch_race": "kept", "same_event_id_x50": "applied once"})


if __name__ == "__main__":
    main(run)
