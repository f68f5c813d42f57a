#!/usr/bin/env bash
# The latency of count PUTs while the writer prunes a large backlog of expired rows, against the same
# load on the same database without the backlog (retention, issue 25: "pruning never stalls the writer").
#
#   bench/prune-p99.sh [USERS] [EXPIRED_EVENT_IDS] [RATE]   (defaults 100000 users, 2000000 ids, 1000 PUTs/s)
#   BIN=.build/release/sheetd                               the binary (the release build when present)
#
# Preloads USERS users (bench/preload.sh) and copies the file. Into the copy it adds
# EXPIRED_EVENT_IDS processed event ids from 1970 (past any retention window) and 20 000 hour rollups
# from 1970 (past the 400 days kept): the writer prunes them a step at a time (`StoreRetention`: at
# most 500 rows of each per step, at start and every 512 commits). Each database is then served in
# turn while 4 keep-alive connections send count PUTs at RATE per second for SECONDS (20); prints
# p50/p99/max of both runs and how many expired rows the second run pruned meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
users=${1:-100000}
expired=${2:-2000000}
rate=${3:-1000}
seconds=${SECONDS_PER_RUN:-20}
bin=${BIN:-}
if [ -z "$bin" ]; then
  if [ -x .build/release/sheetd ]; then bin=.build/release/sheetd; else bin=.build/debug/sheetd; fi
fi
[ -x "$bin" ] || { echo "prune-p99: no binary at $bin (swift build -c release)"; exit 1; }
command -v sqlite3 > /dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sqlite3 > /dev/null; }
work=$(mktemp -d /tmp/sheetd-prune-bench.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"' EXIT

bench/preload.sh "$bin" "$work/clean.sqlite" "$users" examples/catalog.json
cp "$work/clean.sqlite" "$work/backlog.sqlite"
sqlite3 "$work/backlog.sqlite" > /dev/null <<SQL
PRAGMA journal_mode=WAL;
PRAGMA synchronous=OFF;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $expired)
INSERT INTO processed_events (user_id, seq, event_id, outcome, processed_at)
SELECT printf('u%07d', 1 + i % $users), 1000000 + i / $users, printf('old-%d', i), CAST('{"status":"applied"}' AS BLOB), 0
FROM n ORDER BY 1, 2;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 19999)
INSERT INTO sheet_rollups (sheet_id, bucket, impressions, users) SELECT 'home-offers', i, 3, 1 FROM n;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
expired_rows() { sqlite3 "$1" "SELECT (SELECT count(*) FROM processed_events WHERE processed_at = 0) + (SELECT count(*) FROM sheet_rollups WHERE bucket < 20000)"; }
echo "preloaded $users users; backlog: $(expired_rows "$work/backlog.sqlite") expired rows, $(stat -c %s "$work/backlog.sqlite") bytes"

run() { # run NAME DB
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  SHEETD_JWT_SECRET=bench SHEETD_ADMIN_TOKEN=bench-admin "$bin" serve --port "$port" --db "$2" \
    --access-log false > "$work/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 400); do grep -q '"listening"' "$work/serve.log" 2>/dev/null && break; sleep 0.05; done
  grep -q '"listening"' "$work/serve.log" || { cat "$work/serve.log"; exit 1; }
  NAME="$1" PORT="$port" RATE="$rate" SECONDS_RUN="$seconds" USERS="$users" python3 - <<'PY'
import http.client, os, threading, time
port, rate, secs, users = int(os.environ["PORT"]), float(os.environ["RATE"]), float(os.environ["SECONDS_RUN"]), int(os.environ["USERS"])
clients = 4
samples, errors, lock, stop = [], [0], threading.Lock(), threading.Event()
measuring = threading.Event()

def client(c):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    interval, n, next_at = clients / rate, 0, time.monotonic()
    while not stop.is_set():
        n += 1
        user = "u%07d" % (1 + (n * 7919 + c * 104729) % users)
        t0 = time.monotonic()
        try:
            conn.request("PUT", "/v1/users/%s/containers/offers-home/count" % user, '{"count":%d}' % (n % 7),
                         {"Authorization": "Bearer bench-admin", "Content-Type": "application/json"})
            r = conn.getresponse(); r.read(); ok = r.status == 200
        except Exception:
            ok = False
            conn.close(); conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        dt = (time.monotonic() - t0) * 1000
        if measuring.is_set():
            with lock:
                if ok: samples.append(dt)
                else: errors[0] += 1
        next_at += interval
        time.sleep(max(0, next_at - time.monotonic()))

threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(clients)]
for t in threads: t.start()
time.sleep(1)
measuring.set()
time.sleep(secs)
stop.set()
for t in threads: t.join()
v = sorted(samples)
pct = lambda p: v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")
print("%-8s %6d PUTs  p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms  failed %d" % (os.environ["NAME"], len(v), pct(50), pct(99), v[-1] if v else float("nan"), errors[0]))
PY
  kill -TERM "$pid"; wait "$pid" || true; pid=
}

run clean "$work/clean.sqlite"
before=$(expired_rows "$work/backlog.sqlite")
run pruning "$work/backlog.sqlite"
after=$(expired_rows "$work/backlog.sqlite")
echo "pruned during the second run (and its start): $((before - after)) expired rows ($after left)"
