#!/usr/bin/env python3
"""Load and consistency checks for two sheetd replicas behind HAProxy on one PostgreSQL
(scripts/replicas-test.sh starts everything and calls the phases; Python standard library only).

Phases (each prints one `ok ...` or `FAIL ...` line and exits non-zero on failure):
  pairs      N write-then-read pairs: the count PUT on one replica (after a decision GET that leaves a
             cached answer on the other), the decision GET immediately on
             the other; a decision that does not show the count just written is stale.
  catalog    a sheet written on one replica is served by the other on the next request (the sheet
             GET and a decision that presents it), then deleted there and gone on the first.
  kill       event load through the balancer, one replica killed with SIGKILL meanwhile; clients
             retry with the same eventId until acknowledged; every acknowledged event must be in
             processed_events afterwards.
  pgrestart  event load through the balancer while PostgreSQL is stopped and started again: 503
             problem+json with Retry-After while it is down, the first acknowledged write within
             2 s of it being back, every acknowledged event stored.
  failover   (scripts/failover-test.sh) event load and decision streams while the primary is killed and the
             standby promoted: every acknowledged event stored, 503s with Retry-After, streams caught up.
  load       event load through the balancer: every event acknowledged at once, none lost.
  compare    every user of a run: each replica's decision equals a freshly started replica's.
  latency    write-to-event latency across replicas: streams open on one replica, count writes on
             the other, the client timestamps the write's acknowledgement and the event's arrival.
"""
import argparse
import http.client
import json
import os
import random
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

SCREEN = "screen=home&tab=accounts&platform=ios"


def split(url):
    u = urllib.parse.urlsplit(url)
    return u.hostname, u.port


class Client:
    """One keep-alive connection to one base URL, reconnecting after any error."""

    def __init__(self, base, token, timeout=10):
        self.host, self.port = split(base)
        self.token = token
        self.timeout = timeout
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        h = {"Authorization": "Bearer " + self.token}
        if body is not None:
            body = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        if headers:
            h.update(headers)
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.conn.request(method, path, body=body, headers=h)
            r = self.conn.getresponse()
            data = r.read()
            if r.getheader("Connection", "").lower() == "close":
                self.close()
            return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data
        except (OSError, http.client.HTTPException) as e:
            self.close()
            return 0, {}, str(e).encode()

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
        self.conn = None


def fail(msg):
    print("FAIL " + msg, flush=True)
    sys.exit(1)


def percentile(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def psql(args, sql):
    out = subprocess.run(["psql", args.db, "-At", "-c", sql], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        fail("psql: " + out.stderr.strip())
    return out.stdout


# --- pairs ---------------------------------------------------------------------------------------

def phase_pairs(args):
    run = "pairs-%d-%d" % (os.getpid(), int(time.time()))
    total = args.pairs
    threads = args.threads
    stale = []
    errors = []
    lock = threading.Lock()
    done = [0]

    def worker(t):
        replicas = [Client(u, args.token) for u in args.replica]
        user = "%s-u%d" % (run, t)
        n = 0
        i = t
        while i < total:
            n += 1
            w = i % 2
            writer, reader = replicas[w], replicas[1 - w]
            # The reader answers this user's decision first, so that it holds a cached answer that the
            # write must make stale (the cached path, proven by the listener's barrier, is the one at risk).
            st, _, body = reader.request("GET", "/v1/users/%s/decision?%s" % (user, SCREEN))
            if st != 200:
                with lock:
                    errors.append("warm read %s #%d: %s %s" % (user, n, st, body[:200]))
                return
            st, _, body = writer.request(
                "PUT", "/v1/users/%s/containers/offers-home/count" % user, {"count": n, "eventId": "%s-%d" % (user, n)})
            if st != 200:
                with lock:
                    errors.append("write %s #%d: %s %s" % (user, n, st, body[:200]))
                return
            st, _, body = reader.request("GET", "/v1/users/%s/decision?%s" % (user, SCREEN))
            if st != 200:
                with lock:
                    errors.append("read %s #%d: %s %s" % (user, n, st, body[:200]))
                return
            expected = "'home-offers' has %d card" % n
            if expected not in body.decode():
                with lock:
                    stale.append((user, n, args.replica[1 - w]))
            with lock:
                done[0] += 1
            i += threads
        for c in replicas:
            c.close()

    started = time.monotonic()
    ts = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    elapsed = time.monotonic() - started
    if errors:
        fail("pairs: %d errors, first: %s" % (len(errors), errors[0]))
    if stale:
        fail("pairs: %d of %d decisions stale, first: user %s count %d read on %s" % (len(stale), done[0], *stale[0]))
    if done[0] != total:
        fail("pairs: only %d of %d pairs ran" % (done[0], total))
    # How many reads the listener's barrier took part in (0 would mean the cached path went untested).
    trips = 0
    for u in args.replica:
        c = Client(u, args.token)
        st, _, body = c.request("GET", "/metrics")
        c.close()
        for line in body.decode(errors="replace").splitlines() if st == 200 else []:
            if line.startswith("sheetd_replica_barrier_round_trips_total "):
                trips += int(line.split()[1])
    if trips == 0:
        # Not a failure: every notification beat its read here (a cached answer already dropped is
        # read afresh, which is correct). ReplicaTests asserts the barrier path itself.
        print("note pairs: no barrier round trip: every notification arrived before its read", flush=True)
    print("ok  pairs: %d write-then-read pairs across replicas, 0 stale (%.1f s, %d clients; %d barrier round trips)"
          % (total, elapsed, threads, trips), flush=True)
    print("RESULT pairs=%d stale=0" % total)


# --- catalog -------------------------------------------------------------------------------------

def phase_catalog(args):
    a, b = Client(args.replica[0], args.token), Client(args.replica[1], args.token)
    run = "cat-%d" % os.getpid()
    rounds = args.rounds
    for r in range(rounds):
        first, second = (a, b) if r % 2 == 0 else (b, a)
        sheet = "%s-%d" % (run, r)
        container = sheet + "-box"
        user = sheet + "-user"
        definition = {"kind": "cards", "screen": "catalog-check", "containerId": container, "priority": 1}
        st, _, body = first.request("PUT", "/v1/sheets/" + sheet, definition)
        if st not in (200, 201):
            fail("catalog: PUT %s: %s %s" % (sheet, st, body[:200]))
        st, _, body = second.request("GET", "/v1/sheets/" + sheet)
        if st != 200:
            fail("catalog: sheet %s written on one replica, GET on the other answered %s" % (sheet, st))
        st, _, body = second.request(
            "PUT", "/v1/users/%s/containers/%s/count" % (user, container), {"count": 2, "eventId": sheet})
        if st != 200:
            fail("catalog: count for the new sheet's container: %s %s" % (st, body[:200]))
        st, _, body = first.request("GET", "/v1/users/%s/decision?screen=catalog-check&platform=ios" % user)
        if st != 200 or ('"id":"%s"' % sheet) not in body.decode():
            fail("catalog: decision on the first replica does not present %s: %s %s" % (sheet, st, body[:300]))
        st, _, _ = second.request("DELETE", "/v1/sheets/" + sheet)
        if st != 204:
            fail("catalog: DELETE %s on the other replica: %s" % (sheet, st))
        st, _, _ = first.request("GET", "/v1/sheets/" + sheet)
        if st != 404:
            fail("catalog: %s deleted on one replica, the other still answers %s" % (sheet, st))
        st, _, body = first.request("GET", "/v1/users/%s/decision?screen=catalog-check&platform=ios" % user)
        if st != 200 or ('"id":"%s"' % sheet) in body.decode():
            fail("catalog: decision still presents the deleted %s: %s" % (sheet, st))
        first.request("DELETE", "/v1/users/" + user)
    print("ok  catalog: %d changes, each served by the other replica on the next request" % rounds, flush=True)
    print("RESULT catalog=%d" % rounds)


# --- event load with retries (kill, pgrestart) ---------------------------------------------------

class Load:
    """Clients sending count events through the balancer, each retried with the same eventId until
    acknowledged (or the deadline): what a well-behaved app does."""

    def __init__(self, args, run, clients, users=None):
        self.args = args
        self.run = run
        self.clients = clients
        self.users = users or clients  # client c writes users c, c + clients, ... in turn
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acked = []  # (user, eventId)
        self.unacked = []
        self.statuses = {}
        self.ack_times = []
        self.ack_sent = []  # when the acknowledged attempt was sent, in the order of ack_times
        self.problems_503 = 0
        self.no_retry_after_503 = 0  # 503s (sheetd's or the balancer's) without Retry-After
        self.threads = [threading.Thread(target=self.client, args=(c,)) for c in range(clients)]

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join()

    def client(self, c):
        api = Client(self.args.balancer, self.args.token, timeout=5)
        mine = ["%s-c%d" % (self.run, u) for u in range(c, self.users, self.clients)]
        sent = {u: 0 for u in mine}
        turn = 0
        while not self.stop.is_set():
            user = mine[turn % len(mine)]
            turn += 1
            sent[user] += 1
            n = sent[user]
            event = "%s-%d" % (user, n)
            deadline = time.monotonic() + 30
            while True:
                attempt = time.monotonic()
                st, headers, body = api.request(
                    "PUT", "/v1/users/%s/containers/offers-home/count" % user, {"count": n, "eventId": event})
                with self.lock:
                    self.statuses[st] = self.statuses.get(st, 0) + 1
                    if st == 503 and headers.get("content-type", "").startswith("application/problem+json") \
                            and "retry-after" in headers:
                        self.problems_503 += 1
                    if st == 503 and "retry-after" not in headers:
                        self.no_retry_after_503 += 1
                if st == 200:
                    with self.lock:
                        self.acked.append((user, event))
                        self.ack_times.append(time.monotonic())
                        self.ack_sent.append(attempt)
                    break
                if time.monotonic() > deadline:
                    with self.lock:
                        self.unacked.append((user, event, st))
                    return
                time.sleep(0.02 + random.random() * 0.03)
        api.close()


def stored_pairs(args, run):
    out = psql(args, "SELECT user_id, event_id FROM processed_events WHERE user_id LIKE '%s-%%'" % run)
    pairs = set()
    for line in out.splitlines():
        if "|" in line:
            u, e = line.split("|", 1)
            pairs.add((u, e))
    return pairs


# Processed event ids a user keeps (sheetd's StoreRetention): older ids are pruned on purpose.
KEPT_EVENT_IDS = 64


def lost_events(args, load):
    """Acknowledged events that did not survive. Each client sets its count to n with event id
    <user>-<n>, n rising: a user's stored count is at least its highest acknowledged n, and every
    acknowledged id among the user's newest kept ids (the last 64 processed) is still recorded."""
    pairs = stored_pairs(args, load.run)
    newest = {}
    for (u, e) in pairs:
        n = int(e.rsplit("-", 1)[1])
        newest[u] = max(newest.get(u, 0), n)
    highest = {}
    for (u, e) in load.acked:
        highest[u] = max(highest.get(u, 0), int(e.rsplit("-", 1)[1]))
    lost = []
    api = Client(args.balancer, args.token)
    for u, n in sorted(highest.items()):
        st, _, body = api.request("GET", "/v1/users/%s/state" % u)
        counts = [c["count"] for c in json.loads(body).get("containers", []) if c.get("containerId") == "offers-home"] \
            if st == 200 else []
        if not counts or counts[0] < n:
            lost.append((u, "%s-%d (stored count %s, state %d)" % (u, n, counts[0] if counts else None, st)))
    api.close()
    for (u, e) in load.acked:
        if int(e.rsplit("-", 1)[1]) > newest.get(u, 0) - KEPT_EVENT_IDS and (u, "count/" + e) not in pairs:
            lost.append((u, e))
    return lost


def phase_kill(args):
    run = "kill-%d-%d" % (os.getpid(), int(time.time()))
    load = Load(args, run, args.clients)
    load.start()
    time.sleep(args.before)
    before = len(load.acked)
    os.kill(args.kill_pid, signal.SIGKILL)
    killed_at = time.monotonic()
    time.sleep(args.after)
    load.finish()
    if load.unacked:
        fail("kill: %d events never acknowledged within 30 s of retries, first %s" % (len(load.unacked), load.unacked[0]))
    lost = lost_events(args, load)
    if lost:
        fail("kill: %d acknowledged events missing from the database, first %s" % (len(lost), lost[0]))
    after = len([t for t in load.ack_times if t > killed_at])
    print("ok  kill -9: %d events acknowledged (%d before the kill, %d after), all retried to success, 0 lost; statuses %s"
          % (len(load.acked), before, after, load.statuses), flush=True)
    print("RESULT kill_acked=%d lost=0" % len(load.acked))


def phase_pgrestart(args):
    run = "pgr-%d-%d" % (os.getpid(), int(time.time()))
    load = Load(args, run, args.clients)
    load.start()
    time.sleep(args.before)
    subprocess.run(args.down, shell=True, check=True)
    down_at = time.monotonic()
    # While it is down: a replica answers writes and /readyz with 503 problem+json and Retry-After.
    time.sleep(0.5)
    direct = Client(args.replica[0], args.token, timeout=5)
    st, headers, body = direct.request("PUT", "/v1/users/%s-direct/containers/offers-home/count" % run, {"count": 1, "eventId": "d"})
    ok_503 = st == 503 and headers.get("content-type", "").startswith("application/problem+json") and "retry-after" in headers
    rst, _, _ = Client(args.replica[0], args.token).request("GET", "/readyz")
    time.sleep(max(0, args.down_seconds - (time.monotonic() - down_at)))
    subprocess.run(args.up, shell=True, check=True)
    up_at = time.monotonic()
    # The first acknowledgement after the database is back.
    deadline = up_at + 10
    recovered = None
    while time.monotonic() < deadline:
        with load.lock:
            later = [t for t in load.ack_times if t > up_at]
        if later:
            recovered = min(later) - up_at
            break
        time.sleep(0.01)
    time.sleep(args.after)
    load.finish()
    if not ok_503:
        fail("pgrestart: a write while the database was down answered %s %s (want 503 problem+json with Retry-After)"
             % (st, body[:200]))
    if rst != 503:
        fail("pgrestart: /readyz answered %s while the database was down" % rst)
    if recovered is None:
        fail("pgrestart: no write acknowledged within 10 s of the database coming back; statuses %s" % load.statuses)
    if recovered > 2.0:
        fail("pgrestart: the first write was acknowledged %.2f s after the database came back (limit 2 s)" % recovered)
    if load.unacked:
        fail("pgrestart: %d events never acknowledged, first %s" % (len(load.unacked), load.unacked[0]))
    lost = lost_events(args, load)
    if lost:
        fail("pgrestart: %d acknowledged events missing from the database, first %s" % (len(lost), lost[0]))
    fivexx = sum(v for k, v in load.statuses.items() if k >= 500 or k == 0)
    print("ok  PostgreSQL restart: %d failed attempts while down (503 problem+json with Retry-After from sheetd, /readyz 503), "
          "recovered %.2f s after it was back, %d events acknowledged, 0 lost; statuses %s"
          % (fivexx, recovered, len(load.acked), load.statuses), flush=True)
    print("RESULT pg_recovery_s=%.2f pg_acked=%d lost=0" % (recovered, len(load.acked)))


# --- failover ------------------------------------------------------------------------------------

class StreamWatcher:
    """Decision streams (Server-Sent Events) opened directly on replicas; keeps what each received."""

    def __init__(self, token, targets):
        self.sel = selectors.DefaultSelector()
        self.received = {}  # (user, base) -> bytes seen so far
        self.closed = set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.socks = []
        for user, base in targets:
            host, port = split(base)
            s = socket.create_connection((host, port))
            s.sendall(("GET /v1/users/%s/decision/stream?%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                       "Accept: text/event-stream\r\n\r\n" % (user, SCREEN, token)).encode())
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ, (user, base))
            self.received[(user, base)] = b""
            self.socks.append(s)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        while not self.stop.is_set():
            for key, _ in self.sel.select(0.1):
                try:
                    data = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                with self.lock:
                    if not data:
                        self.sel.unregister(key.fileobj)
                        self.closed.add(key.data)
                    else:
                        self.received[key.data] = (self.received[key.data] + data)[-65536:]

    def missing(self, text_for_user):
        """The streams whose received bytes lack text_for_user(user)."""
        with self.lock:
            return [k for k, v in self.received.items() if text_for_user(k[0]).encode() not in v]

    def close(self):
        self.stop.set()
        self.thread.join()
        for s in self.socks:
            s.close()


def count_text(n):
    return "'home-offers' has %d card" % n


def metric(base, token, name):
    c = Client(base, token)
    st, _, body = c.request("GET", "/metrics")
    c.close()
    for line in body.decode(errors="replace").splitlines() if st == 200 else []:
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def phase_failover(args):
    """Event load through the balancer (clients over users, retried with the same eventId), decision
    streams open on both replicas; kill -9 of the primary's postmaster, the standby promoted
    promote_after s later. Then: every acknowledged event stored (or, with --measure-loss, how many
    are not), the time to the first acknowledged write sent after the kill, every 503 with
    Retry-After, a replica's own answers while no primary is writable (503 problem+json, /readyz 503),
    and every stream caught up with a change written after the failover."""
    run = "fo%s-%d-%d" % (args.label, os.getpid(), int(time.time()))
    stream_users = ["%s-s%d" % (run, i) for i in range(args.streams)]
    watcher = StreamWatcher(args.token, [(u, r) for u in stream_users for r in args.replica])
    load = Load(args, run, args.clients, users=args.users)
    load.start()
    time.sleep(args.before)
    before = len(load.acked)
    subprocess.run(args.kill, shell=True, check=True)
    killed_at = time.monotonic()
    # No writable primary yet: what a replica answers itself (not through the balancer).
    time.sleep(min(0.3, args.promote_after / 2))
    direct = Client(args.replica[0], args.token, timeout=5)
    st, headers, body = direct.request(
        "PUT", "/v1/users/%s-direct/containers/offers-home/count" % run, {"count": 1, "eventId": "d"})
    ok_503 = st == 503 and headers.get("content-type", "").startswith("application/problem+json") and "retry-after" in headers
    rst, _, _ = direct.request("GET", "/readyz")
    direct.close()
    time.sleep(max(0, args.promote_after - (time.monotonic() - killed_at)))
    promoted = subprocess.run(args.promote, shell=True, capture_output=True, text=True)
    promoted_at = time.monotonic()
    deadline = killed_at + 20
    first = None
    while time.monotonic() < deadline:
        with load.lock:
            later = [t for t, sent in zip(load.ack_times, load.ack_sent) if sent > killed_at]
        if later:
            first = min(later) - killed_at
            break
        time.sleep(0.01)
    time.sleep(args.after)
    load.finish()
    # A change for every stream user, written after the failover through the balancer.
    api = Client(args.balancer, args.token)
    for u in stream_users:
        st2, _, b2 = api.request("PUT", "/v1/users/%s/containers/offers-home/count" % u, {"count": 7, "eventId": u + "-7"})
        if st2 != 200:
            watcher.close()
            fail("failover: the write for stream user %s after the failover answered %s %s" % (u, st2, b2[:200]))
    api.close()
    wait_until = time.monotonic() + 5
    missing = watcher.missing(lambda u: count_text(7))
    while missing and time.monotonic() < wait_until:
        time.sleep(0.05)
        missing = watcher.missing(lambda u: count_text(7))
    closed = len(watcher.closed)
    watcher.close()
    if promoted.returncode != 0:
        fail("failover: promote failed: %s" % (promoted.stdout + promoted.stderr).strip())
    if not ok_503:
        fail("failover: a write to a replica with no writable primary answered %s %s (want 503 problem+json with Retry-After)"
             % (st, body[:200]))
    if rst != 503:
        fail("failover: /readyz answered %s with no writable primary (want 503)" % rst)
    if first is None:
        fail("failover: no write sent after the kill was acknowledged within 20 s; statuses %s" % load.statuses)
    if load.unacked:
        fail("failover: %d events never acknowledged within 30 s of retries, first %s" % (len(load.unacked), load.unacked[0]))
    if load.no_retry_after_503:
        fail("failover: %d answers 503 without Retry-After" % load.no_retry_after_503)
    lost = lost_events(args, load)
    if lost and not args.measure_loss:
        fail("failover: %d acknowledged events missing from the database, first %s" % (len(lost), lost[0]))
    if missing:
        fail("failover: %d of %d decision streams did not receive the change written after the failover "
             "(%d closed), first %s" % (len(missing), len(stream_users) * len(args.replica), closed, missing[0]))
    lost_users = len(set(u for u, _ in lost))
    print("ok  failover (%s): kill -9 of the primary, promote %.1f s later; first write sent after the kill acknowledged "
          "%.2f s after it; %d events acknowledged (%d before the kill), %d lost (%d users); %d 503s (%d sheetd's problem+json), "
          "all with Retry-After; %d streams caught up; statuses %s"
          % (args.label, promoted_at - killed_at, first, len(load.acked), before, len(lost), lost_users,
             load.statuses.get(503, 0), load.problems_503, len(stream_users) * len(args.replica), load.statuses), flush=True)
    print("RESULT run=%s first_ack_s=%.3f acked=%d lost=%d lost_users=%d answered_503=%d"
          % (run, first, len(load.acked), len(lost), lost_users, load.statuses.get(503, 0)))


def phase_load(args):
    """Event load through the balancer for --after seconds: every event acknowledged at its first
    attempt, none lost."""
    run = "load%s-%d-%d" % (args.label, os.getpid(), int(time.time()))
    load = Load(args, run, args.clients, users=args.users)
    load.start()
    time.sleep(args.after)
    load.finish()
    retried = sum(v for k, v in load.statuses.items() if k != 200)
    if load.unacked or retried:
        fail("load: %d events unacknowledged, %d attempts not acknowledged; statuses %s" % (len(load.unacked), retried, load.statuses))
    lost = lost_events(args, load)
    if lost:
        fail("load: %d acknowledged events missing, first %s" % (len(lost), lost[0]))
    print("ok  load: %d events acknowledged at the first attempt, 0 lost" % len(load.acked), flush=True)
    print("RESULT acked=%d" % len(load.acked))


def phase_compare(args):
    """Every user of a run (--run prefix): the decision on each replica equals the one a freshly
    started replica (--fresh, empty caches) computes, and shows the user's stored count."""
    out = psql(args, "SELECT user_id FROM user_states WHERE user_id LIKE '%s-%%' ORDER BY user_id" % args.run)
    users = [u for u in out.split() if u]
    if not users:
        fail("compare: no users of run %s" % args.run)
    clients = [Client(u, args.token) for u in args.replica]
    fresh = Client(args.fresh, args.token)
    for u in users:
        st, _, state = fresh.request("GET", "/v1/users/%s/state" % u)
        counts = [c["count"] for c in json.loads(state).get("containers", []) if c.get("containerId") == "offers-home"] \
            if st == 200 else []
        path = "/v1/users/%s/decision?%s" % (u, SCREEN)
        fst, _, expected = fresh.request("GET", path)
        if fst != 200 or not counts or count_text(counts[0]).encode() not in expected:
            fail("compare: the fresh replica's decision for %s (%s) does not show the stored count %s" % (u, fst, counts))
        for base, c in zip(args.replica, clients):
            st, _, body = c.request("GET", path)
            if st != 200 or body != expected:
                fail("compare: %s answers %s for %s: %s, a fresh computation: %s" % (base, st, u, body[:300], expected[:300]))
    print("ok  compare: %d users' decisions on %d replicas equal a fresh replica's, each showing the stored count"
          % (len(users), len(args.replica)), flush=True)
    print("RESULT compared=%d" % len(users))


# --- latency -------------------------------------------------------------------------------------

def phase_latency(args):
    """Streams for `users` users on replica B; one count write at a time on replica A (alternating
    users); per write: t_ack (A's 200 read) and t_event (B's event for that user read)."""
    run = "lat-%d-%d" % (os.getpid(), int(time.time()))
    users = ["%s-u%d" % (run, i) for i in range(args.users)]
    host, port = split(args.replica[1])
    sel = selectors.DefaultSelector()
    buffers = {}
    arrivals = {}  # user -> list of arrival times
    cond = threading.Condition()
    socks = []
    for u in users:
        s = socket.create_connection((host, port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(("GET /v1/users/%s/decision/stream?%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                   "Accept: text/event-stream\r\n\r\n" % (u, SCREEN, args.token)).encode())
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, u)
        buffers[u] = b""
        arrivals[u] = []
        socks.append(s)
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            for key, _ in sel.select(0.1):
                now = time.monotonic()
                try:
                    data = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(key.fileobj)
                    continue
                u = key.data
                buf = buffers[u] + data
                n = buf.count(b"event: decision")
                buffers[u] = buf[-64:]
                if n:
                    with cond:
                        arrivals[u].extend([now] * n)
                        cond.notify_all()

    rt = threading.Thread(target=reader, daemon=True)
    rt.start()
    # Every stream's first event (the current decision) first.
    deadline = time.monotonic() + 10
    with cond:
        while any(len(arrivals[u]) < 1 for u in users) and time.monotonic() < deadline:
            cond.wait(0.1)
        if any(len(arrivals[u]) < 1 for u in users):
            fail("latency: not every stream opened")
    writer = Client(args.replica[0], args.token)
    ack_to_event, send_to_event = [], []
    counts = {u: 0 for u in users}
    missed = 0
    end = time.monotonic() + args.seconds
    i = 0
    while i < args.writes and time.monotonic() < end:
        u = users[i % len(users)]
        counts[u] += 1
        with cond:
            have = len(arrivals[u])
        sent = time.monotonic()
        st, _, body = writer.request("PUT", "/v1/users/%s/containers/offers-home/count" % u,
                                     {"count": counts[u], "eventId": "%s-%d" % (u, counts[u])})
        acked = time.monotonic()
        if st != 200:
            fail("latency: write answered %s %s" % (st, body[:200]))
        with cond:
            wait_until = time.monotonic() + 2
            while len(arrivals[u]) <= have and time.monotonic() < wait_until:
                cond.wait(0.05)
            if len(arrivals[u]) <= have:
                missed += 1
            else:
                t = arrivals[u][have]
                ack_to_event.append((t - acked) * 1000)
                send_to_event.append((t - sent) * 1000)
        i += 1
        time.sleep(args.gap / 1000.0)
    stop.set()
    for s in socks:
        s.close()
    if missed:
        fail("latency: %d of %d writes produced no event on the other replica within 2 s" % (missed, i))
    n = len(ack_to_event)
    print("ok  write-to-event across replicas: %d writes, %d streams; ack->event p50 %.2f ms p99 %.2f ms max %.2f ms; "
          "send->event p50 %.2f ms p99 %.2f ms" % (
              n, len(users), percentile(ack_to_event, 50), percentile(ack_to_event, 99), max(ack_to_event),
              percentile(send_to_event, 50), percentile(send_to_event, 99)), flush=True)
    print("RESULT latency_writes=%d streams=%d ack_event_p50_ms=%.2f ack_event_p99_ms=%.2f ack_event_max_ms=%.2f "
          "send_event_p50_ms=%.2f send_event_p99_ms=%.2f" % (
              n, len(users), percentile(ack_to_event, 50), percentile(ack_to_event, 99), max(ack_to_event),
              percentile(send_to_event, 50), percentile(send_to_event, 99)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("phase", choices=["pairs", "catalog", "kill", "pgrestart", "latency", "failover", "compare", "load"])
    p.add_argument("--balancer")
    p.add_argument("--replica", action="append", default=[], help="base URL of a replica (twice)")
    p.add_argument("--token", default=os.environ.get("SHEETD_ADMIN_TOKEN", ""))
    p.add_argument("--db", help="PostgreSQL URL for the checks (psql)")
    p.add_argument("--pairs", type=int, default=10000)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--before", type=float, default=1.5)
    p.add_argument("--after", type=float, default=3.0)
    p.add_argument("--kill-pid", type=int)
    p.add_argument("--down")
    p.add_argument("--up")
    p.add_argument("--down-seconds", type=float, default=2.0)
    p.add_argument("--users", type=int, default=50)
    p.add_argument("--writes", type=int, default=2000)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--gap", type=float, default=2.0, help="milliseconds between writes")
    p.add_argument("--kill", help="failover: the shell command that kills the primary")
    p.add_argument("--promote", help="failover: the shell command that promotes the standby")
    p.add_argument("--promote-after", type=float, default=1.0)
    p.add_argument("--streams", type=int, default=10, help="failover: users with a stream on each replica")
    p.add_argument("--label", default="", help="failover: a tag for the run's user ids and its lines")
    p.add_argument("--measure-loss", action="store_true", help="failover: report lost events instead of failing")
    p.add_argument("--run", help="compare: the run id (user id prefix) the failover phase printed")
    p.add_argument("--fresh", help="compare: base URL of a freshly started replica")
    args = p.parse_args()
    {"pairs": phase_pairs, "catalog": phase_catalog, "kill": phase_kill, "pgrestart": phase_pgrestart,
     "latency": phase_latency, "failover": phase_failover, "compare": phase_compare, "load": phase_load}[args.phase](args)


if __name__ == "__main__":
    main()
