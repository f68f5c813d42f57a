#!/usr/bin/env bash
# What one-sheet catalog changes cost on a large catalog: the history's growth per change and the
# latency of count PUTs meanwhile (issue 42 item 8). About 1 minute.
#
#   bench/history-p99.sh [SHEETS] [CHANGES] [RATE]   (defaults 1000 sheets, 30 changes, 200 PUTs/s)
#   BIN=.build/release/sheetd                         the binary (the release build when present, else debug)
#
# Writes a catalog of SHEETS sheets of about 18 KB each (about 18 MB, within every limit: 100
# segments and 100 locales per sheet), serves it from a fresh SQLite database, sends count PUTs at
# RATE per second from 4 keep-alive connections (each answered after its commit) for a baseline of
# BASELINE_SECONDS (10), then again while an admin PUTs CHANGES one-sheet changes (one every
# 0.3 s), and prints p50/p99/max of both windows and the database's growth per change (pages,
# read with sqlite3 from under the server).
set -euo pipefail
cd "$(dirname "$0")/.."
sheets=${1:-1000}
changes=${2:-30}
rate=${3:-200}
baseline=${BASELINE_SECONDS:-10}
bin=${BIN:-}
if [ -z "$bin" ]; then
  if [ -x .build/release/sheetd ]; then bin=.build/release/sheetd; else bin=.build/debug/sheetd; fi
fi
[ -x "$bin" ] || { echo "history-p99: no binary at $bin (swift build -c release)"; exit 1; }
command -v sqlite3 > /dev/null || { echo "history-p99: needs sqlite3"; exit 1; }
work=$(mktemp -d /tmp/sheetd-history-bench.XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
pid=

SHEETS=$sheets python3 - > "$work/catalog.json" <<'PY'
import json, os
def sheet(i, version=0):
    return {"id": "sheet-%04d" % i, "kind": "cards", "screen": "screen-%d" % (i % 50), "containerId": "c-%04d" % i,
            "priority": i, "audience": {
                "segments": ["segment-%d-%d-%s" % (version, k, "s" * 100) for k in range(100)],
                "locales": ["-".join(["de"] + ["x%07d" % (k * 10 + j) for j in range(6)]) for k in range(100)]}}
print(json.dumps({"sheets": [sheet(i) for i in range(int(os.environ["SHEETS"]))]}))
PY
echo "catalog: $sheets sheets, $(stat -c %s "$work/catalog.json") bytes"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
SHEETD_JWT_SECRET=bench SHEETD_ADMIN_TOKEN=bench-admin SHEETD_MAX_BODY=1048576 "$bin" serve --port "$port" --db "$work/db.sqlite" \
  --catalog "$work/catalog.json" --access-log false >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do grep -q '"listening"' "$work/serve.log" 2>/dev/null && break; sleep 0.05; done
grep -q '"listening"' "$work/serve.log" || { cat "$work/serve.log"; exit 1; }

PORT="$port" RATE="$rate" BASELINE="$baseline" CHANGES="$changes" DB="$work/db.sqlite" python3 - <<'PY'
import http.client, json, os, subprocess, threading, time

port, rate, baseline, changes = int(os.environ["PORT"]), float(os.environ["RATE"]), float(os.environ["BASELINE"]), int(os.environ["CHANGES"])
db = os.environ["DB"]
clients = 4
window = {"name": "warmup"}
samples = {"warmup": [], "baseline": [], "catalog": []}
errors = {"n": 0}
lock = threading.Lock()
stop = threading.Event()
admin = {"Authorization": "Bearer bench-admin", "Content-Type": "application/json"}

def database_bytes():
    out = subprocess.run(["sqlite3", db, "PRAGMA page_count;", "PRAGMA page_size;"], capture_output=True, text=True).stdout.split()
    return int(out[0]) * int(out[1])

def client(c):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    interval = clients / rate
    n = 0
    next_at = time.monotonic()
    while not stop.is_set():
        n += 1
        body = '{"count":%d,"eventId":"bench-%d-%d"}' % (n % 7, c, n)
        user = "u%05d" % ((n * 7919 + c * 104729) % 20000)
        t0 = time.monotonic()
        try:
            conn.request("PUT", "/v1/users/%s/containers/c-0001/count" % user, body, admin)
            r = conn.getresponse(); r.read()
            ok = r.status == 200
        except Exception:
            ok = False
            conn.close(); conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        dt = (time.monotonic() - t0) * 1000
        with lock:
            if ok: samples[window["name"]].append(dt)
            else: errors["n"] += 1
        next_at += interval
        time.sleep(max(0, next_at - time.monotonic()))

threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(clients)]
for t in threads: t.start()
time.sleep(2)
window["name"] = "baseline"
time.sleep(baseline)
before = database_bytes()
window["name"] = "catalog"
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
put_ms = []
for k in range(changes):
    i = k % 7
    sheet = {"kind": "cards", "screen": "screen-%d" % (i % 50), "containerId": "c-%04d" % i, "priority": i, "audience": {
        "segments": ["segment-%d-%d-%s" % (k + 1, j, "s" * 100) for j in range(100)],
        "locales": ["-".join(["de"] + ["x%07d" % (j * 10 + m) for m in range(6)]) for j in range(100)]}}
    t0 = time.monotonic()
    conn.request("PUT", "/v1/sheets/sheet-%04d" % i, json.dumps(sheet), dict(admin, **{"Sheetd-Comment": "bench %d" % k}))
    r = conn.getresponse(); text = r.read()
    put_ms.append((time.monotonic() - t0) * 1000)
    if r.status != 200: print("sheet PUT:", r.status, text[:200]); break
    time.sleep(0.3)
window["name"] = "warmup"
stop.set()
for t in threads: t.join()
after = database_bytes()

def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")

print("database: %d bytes before the changes, %d after: %d bytes per one-sheet change" % (before, after, (after - before) // max(1, changes)))
print("sheet PUTs: %d  p50 %.1f ms  max %.1f ms" % (len(put_ms), pct(put_ms, 50), max(put_ms)))
for name in ("baseline", "catalog"):
    v = samples[name]
    print("%-8s %6d count PUTs  p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms" % (name, len(v), pct(v, 50), pct(v, 99), max(v) if v else float("nan")))
print("failed count PUTs: %d" % errors["n"])
PY
