#!/usr/bin/env bash
# The latency of count PUTs while `sheetd backup` copies a large database from under the server.
#
#   bench/backup-p99.sh [USERS] [RATE]     (defaults 1000000 users, 200 PUTs per second)
#   BIN=.build/release/sheetd              the binary (the release build when present, else debug)
#
# Preloads USERS users by SQL (bench/preload.sh), serves them, then sends count PUTs at RATE per
# second from 4 keep-alive connections (each PUT answered after its commit) for a baseline of
# BASELINE_SECONDS (10), then again while `sheetd backup` runs, and prints p50/p99/max of both
# windows, the backup's duration and size, and the WAL's size after it.
set -euo pipefail
cd "$(dirname "$0")/.."
users=${1:-1000000}
rate=${2:-200}
baseline=${BASELINE_SECONDS:-10}
bin=${BIN:-}
if [ -z "$bin" ]; then
  if [ -x .build/release/sheetd ]; then bin=.build/release/sheetd; else bin=.build/debug/sheetd; fi
fi
[ -x "$bin" ] || { echo "backup-p99: no binary at $bin (swift build -c release)"; exit 1; }
work=$(mktemp -d /tmp/sheetd-backup-bench.XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
pid=

started=$(date +%s)
bench/preload.sh "$bin" "$work/db.sqlite" "$users" examples/catalog.json
echo "preloaded $users users in $(( $(date +%s) - started )) s: $(stat -c %s "$work/db.sqlite") bytes"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
SHEETD_JWT_SECRET=bench SHEETD_ADMIN_TOKEN=bench-admin "$bin" serve --port "$port" --db "$work/db.sqlite" \
  --access-log false >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do grep -q '"listening"' "$work/serve.log" 2>/dev/null && break; sleep 0.05; done
grep -q '"listening"' "$work/serve.log" || { cat "$work/serve.log"; exit 1; }

BIN="$bin" PORT="$port" RATE="$rate" BASELINE="$baseline" DB="$work/db.sqlite" COPY="$work/backup.sqlite" python3 - <<'PY'
import http.client, os, subprocess, threading, time

port, rate, baseline = int(os.environ["PORT"]), float(os.environ["RATE"]), float(os.environ["BASELINE"])
clients = 4
window = {"name": "warmup"}
samples = {"warmup": [], "baseline": [], "backup": []}
errors = {"n": 0}
lock = threading.Lock()
stop = threading.Event()

def client(c):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    interval = clients / rate
    n = 0
    next_at = time.monotonic()
    while not stop.is_set():
        n += 1
        body = '{"count":%d,"eventId":"bench-%d-%d"}' % (n % 7, c, n)
        # Users spread over the preloaded ones (u0000001 ...), so the writes touch the whole file.
        user = "u%07d" % (1 + (n * 7919 + c * 104729) % 1000000)
        t0 = time.monotonic()
        try:
            conn.request("PUT", "/v1/users/%s/containers/offers-home/count" % user, body,
                         {"Authorization": "Bearer bench-admin", "Content-Type": "application/json"})
            r = conn.getresponse(); r.read()
            ok = r.status == 200
        except Exception:
            ok = False
            conn.close(); conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
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
window["name"] = "backup"
t0 = time.monotonic()
out = subprocess.run([os.environ["BIN"], "backup", "--db", os.environ["DB"], "--to", os.environ["COPY"]],
                     capture_output=True, text=True)
took = time.monotonic() - t0
window["name"] = "warmup"
stop.set()
for t in threads: t.join()

def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")

print("backup: exit %d in %.1f s: %s" % (out.returncode, took, (out.stdout or out.stderr).strip()))
wal = os.environ["DB"] + "-wal"
print("WAL after the backup: %d bytes" % (os.path.getsize(wal) if os.path.exists(wal) else 0))
for name in ("baseline", "backup"):
    v = samples[name]
    print("%-8s %6d PUTs  p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms" % (name, len(v), pct(v, 50), pct(v, 99), max(v) if v else float("nan")))
print("failed PUTs: %d" % errors["n"])
PY
