#!/usr/bin/env bash
# Two sheetd replicas on one throwaway PostgreSQL (scripts/postgres.sh), standalone:
#   1. write-to-event latency across replicas: streams open on replica B, one count PUT at a time on
#      replica A; the client timestamps A's acknowledgement and the event's arrival on B's stream
#      (scripts/replicas/driver.py latency);
#   2. what exact caches cost on a decision GET: wrk against replica A (one thread, 64 connections,
#      random users of BENCH_USERS) with the decision cache on (every request checks the user's and
#      the catalog's version: one primary-key read) and off (--decision-cache 0: every request reads
#      the state), beside the same binary on SQLite; sheetd CPU and PostgreSQL CPU per request.
#
#   bench/replicas.sh [--quick]    (release build; built when missing; about 1.5 minutes, --quick 40 s)
#
# Environment: BENCH_DURATION (s per wrk run, default 8; quick 3), BENCH_THREADS (HTTP workers per
# replica, default 4), BENCH_USERS (1000), LATENCY_WRITES (2000; quick 500), LATENCY_STREAMS (100).
# Prints a Markdown table and a RESULT line; BENCHMARKS.md records a run (section "Replicas").
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
BIN=${SHEETD_BIN:-.build/release/sheetd}
[ -x "$BIN" ] || swift build -c release
DUR=${BENCH_DURATION:-$([ $quick = 1 ] && echo 3 || echo 8)}
THREADS=${BENCH_THREADS:-4}
USERS=${BENCH_USERS:-1000}
WRITES=${LATENCY_WRITES:-$([ $quick = 1 ] && echo 500 || echo 2000)}
STREAMS=${LATENCY_STREAMS:-100}
command -v wrk >/dev/null || { echo "bench/replicas.sh: wrk is required (apt-get install wrk)" >&2; exit 2; }

work=$(mktemp -d /tmp/sheetd-bench-replicas.XXXXXX)
pgdir=$(mktemp -d /tmp/sheetd-pg.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  scripts/postgres.sh stop "$pgdir" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
export SHEETD_ADMIN_TOKEN="bench-admin-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export SHEETD_JWT_SECRET="bench-secret-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
url=$(scripts/postgres.sh start "$pgdir" 2>/dev/null)
postmaster=$(head -1 "$pgdir/data/postmaster.pid")

# start NAME PORT DB ARGS...: a server; its pid in $started
start() {
  local name=$1 port=$2 db=$3
  shift 3
  "$BIN" serve --port "$port" --threads "$THREADS" --db "$db" --access-log false "$@" >"$work/$name.log" 2>&1 &
  started=$!
  pids+=("$started")
  for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && return 0; sleep 0.1; done
  cat "$work/$name.log" >&2
  exit 1
}
portA=$(free_port) portB=$(free_port)
start a "$portA" "$url" --catalog examples/catalog.json
pidA=$started
start b "$portB" "$url"

echo "== write-to-event latency across two replicas ($WRITES writes, $STREAMS streams on B)"
lat=$(python3 scripts/replicas/driver.py latency --replica "http://127.0.0.1:$portA" --replica "http://127.0.0.1:$portB" \
  --writes "$WRITES" --users "$STREAMS" --gap 2 --seconds 60)
echo "$lat" | grep -v '^RESULT'
latency=$(echo "$lat" | grep '^RESULT' | cut -d' ' -f2-)

# Tokens and a count per user, so decisions have something to show.
python3 bench/tokens.py "$SHEETD_JWT_SECRET" "$USERS" "$USERS" "$work/tokens"
python3 - "$portA" "$USERS" <<'EOF'
import http.client, json, os, sys
port, users = int(sys.argv[1]), int(sys.argv[2])
c = http.client.HTTPConnection("127.0.0.1", port)
for n in range(1, users + 1):
    c.request("PUT", "/v1/users/u%07d/containers/offers-home/count" % n, json.dumps({"count": n % 4}),
              {"Authorization": "Bearer " + os.environ["SHEETD_ADMIN_TOKEN"], "Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    assert r.status == 200, r.status
EOF

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
pg_ticks() {  # every process of the cluster: the postmaster and its children
  local total=0 p
  for p in $postmaster $(ps -o pid= --ppid "$postmaster"); do total=$((total + $(ticks "$p"))); done
  echo $total
}
# measure NAME PORT PID: one wrk run of unconditional decision GETs; appends a table row
rows=""
measure() {
  local name=$1 port=$2 pid=$3 c0 p0 c1 p1 out
  BENCH_TOKENS="$work/tokens" wrk -t1 -c64 -d2s -s bench/lua/decision.lua "http://127.0.0.1:$port" >/dev/null 2>&1 || true
  c0=$(ticks "$pid") p0=$(pg_ticks)
  out=$(BENCH_TOKENS="$work/tokens" wrk -t1 -c64 -d"${DUR}s" --latency -s bench/lua/decision.lua "http://127.0.0.1:$port" 2>&1)
  c1=$(ticks "$pid") p1=$(pg_ticks)
  local row
  row=$(echo "$out" | sed -n 's/^BENCH //p' | python3 -c '
import json, sys
d = json.load(sys.stdin); name, app, pg, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
n = max(1, d["requests"])
rps = d["requests"] / d["duration_us"] * 1e6
print("| %s | %.0f | %.2f / %.2f | %.1f | %.1f | %.0f |" % (name, rps, d["p50_us"] / 1000, d["p99_us"] / 1000,
      app * 1e6 / hz / n, pg * 1e6 / hz / n, d["status_errors"] + d["errors"]))
' "$name" "$((c1 - c0))" "$((p1 - p0))" "$(getconf CLK_TCK)")
  echo "$row"
  rows="$rows$row"$'\n'
}
echo "== decision GET, $USERS users, wrk -t1 -c64 -d${DUR}s, $THREADS HTTP workers"
echo "| server | req/s | p50 / p99 ms | sheetd µs/req | PostgreSQL µs/req | errors |"
echo "|---|---|---|---|---|---|"
measure "PostgreSQL, cache on (version checked)" "$portA" "$pidA"
# The same replica without the cache: every decision reads the state.
kill -TERM "$pidA"; wait "$pidA" 2>/dev/null || true
start a2 "$portA" "$url" --decision-cache 0
measure "PostgreSQL, --decision-cache 0" "$portA" "$started"
kill -TERM "$started"; wait "$started" 2>/dev/null || true
# SQLite, same binary, same users and counts.
portS=$(free_port)
start s "$portS" "$work/sheetd.sqlite" --catalog examples/catalog.json
pidS=$started
python3 - "$portS" "$USERS" <<'EOF'
import http.client, json, os, sys
port, users = int(sys.argv[1]), int(sys.argv[2])
c = http.client.HTTPConnection("127.0.0.1", port)
for n in range(1, users + 1):
    c.request("PUT", "/v1/users/u%07d/containers/offers-home/count" % n, json.dumps({"count": n % 4}),
              {"Authorization": "Bearer " + os.environ["SHEETD_ADMIN_TOKEN"], "Content-Type": "application/json"})
    r = c.getresponse(); r.read()
EOF
measure "SQLite, cache on (reference)" "$portS" "$pidS"
echo "RESULT $latency"
