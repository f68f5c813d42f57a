#!/usr/bin/env bash
# RSS of many users' decisions with and without a running experiment (issue 42 item 6): users in the
# same state and the same arm share one interned answer, so an experiment should cost about one body
# per arm, not one per user. About 2 minutes.
#
#   bench/experiment-rss.sh [USERS]          (default 60000)
#   BIN=.build/release/sheetd                the binary (the release build when present, else debug)
#
# Two servers in turn on a fresh SQLite file with examples/catalog.json; for the second, home-offers
# gets a running two-arm experiment first. Each of USERS users sets the offers count to 3 and asks
# for its home decision (admin token, 4 keep-alive clients). Prints RSS before, after, the peak
# (VmHWM), the distinct ETags and whether the bodies name the experiment.
set -euo pipefail
cd "$(dirname "$0")/.."
users=${1:-60000}
bin=${BIN:-}
if [ -z "$bin" ]; then
  if [ -x .build/release/sheetd ]; then bin=.build/release/sheetd; else bin=.build/debug/sheetd; fi
fi
[ -x "$bin" ] || { echo "experiment-rss: no binary at $bin (swift build -c release)"; exit 1; }
work=$(mktemp -d /tmp/sheetd-experiment-rss.XXXXXX)
pid=
trap 'kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

run() {  # run LABEL WITH_EXPERIMENT
  local label=$1 experiment=$2 port
  rm -f "$work"/db.sqlite*
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  SHEETD_JWT_SECRET=bench SHEETD_ADMIN_TOKEN=bench-admin "$bin" serve --port "$port" --db "$work/db.sqlite" \
    --catalog examples/catalog.json --access-log false --max-events-per-user-per-minute 0 >"$work/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 400); do grep -q '"listening"' "$work/serve.log" 2>/dev/null && break; sleep 0.05; done
  grep -q '"listening"' "$work/serve.log" || { cat "$work/serve.log"; exit 1; }
  PORT=$port USERS=$users EXPERIMENT=$experiment PID=$pid LABEL=$label python3 - <<'PY'
import http.client, json, os, threading

port, users, pid, label = int(os.environ["PORT"]), int(os.environ["USERS"]), os.environ["PID"], os.environ["LABEL"]
auth = {"Authorization": "Bearer bench-admin", "Content-Type": "application/json"}

def status(field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field):
            return int(line.split()[1]) // 1024
    return 0

if os.environ["EXPERIMENT"] == "1":
    c = http.client.HTTPConnection("127.0.0.1", port)
    sheet = next(s for s in json.load(open("examples/catalog.json"))["sheets"] if s["id"] == "home-offers")
    sheet["experiment"] = {"id": "offers-rss", "status": "running", "conversionWindowSeconds": 86400,
                           "arms": [{"id": "a", "weight": 1}, {"id": "b", "weight": 1}]}
    c.request("PUT", "/v1/sheets/home-offers", body=json.dumps(sheet), headers=auth)
    r = c.getresponse(); answer = r.read()
    assert r.status == 200, (r.status, answer[:400])
before = status("VmRSS:")
etags, named, errors = set(), [0], []
lock = threading.Lock()

def client(first, step):
    c = http.client.HTTPConnection("127.0.0.1", port)
    for n in range(first, users, step):
        user = f"rss-user-{n:06d}"
        c.request("PUT", f"/v1/users/{user}/containers/offers-home/count", body='{"count":3}', headers=auth)
        r = c.getresponse(); r.read()
        c.request("GET", f"/v1/users/{user}/decision?screen=home&tab=accounts&platform=ios", headers=auth)
        r = c.getresponse(); body = r.read()
        with lock:
            if r.status != 200: errors.append(r.status)
            etags.add(r.getheader("ETag"))
            if b"offers-rss" in body: named[0] += 1

threads = [threading.Thread(target=client, args=(i, 4)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print(f"{label}: {users} users, RSS {before} MiB before, {status('VmRSS:')} MiB after, peak {status('VmHWM:')} MiB; "
      f"{len(etags)} distinct ETags, {named[0]} bodies name the experiment, {len(errors)} errors")
PY
  kill -TERM "$pid"; wait "$pid" || true
}
run "without an experiment" 0
run "with a running experiment" 1
