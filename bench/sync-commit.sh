#!/usr/bin/env bash
# What a standby and each synchronous_commit setting cost sheetd's count PUT, against a single
# server, in one run on one machine (bounded: about 3 minutes with the defaults; the figures are in
# RELIABILITY.md, "PostgreSQL failover").
#
#   bench/sync-commit.sh            (SHEETD_BIN, default .build/release/sheetd)
#
# A primary (scripts/pg-ha.sh: fsync on) and a streaming standby on the same machine, in interleaved
# rounds: "single" (the standby stopped), "async" (no synchronous standby), and a
# synchronous standby with synchronous_commit = on (the standby's flush), remote_write, remote_apply
# and local (the primary's flush only). Each round: one sheetd (release) on the primary, warmed up,
# then wrk -t1 -c64 count PUTs over BENCH_USERS users for BENCH_DURATION seconds.
# Environment: BENCH_ROUNDS (3), BENCH_DURATION (5), BENCH_USERS (10000), BENCH_THREADS (cores - 1).
set -Eeuo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=${SHEETD_BIN:-$ROOT/.build/release/sheetd}
ROUNDS=${BENCH_ROUNDS:-3}
DUR=${BENCH_DURATION:-5}
USERS=${BENCH_USERS:-10000}
THREADS=${BENCH_THREADS:-$(($(nproc) > 1 ? $(nproc) - 1 : 1))}
command -v wrk >/dev/null || { echo "bench/sync-commit.sh: needs wrk (bench/run.sh installs it)" >&2; exit 2; }
[ -x "$BIN" ] || swift build -c release

WORK=$(mktemp -d /var/tmp/sheetd-bench-sync.XXXXXX)
chmod 755 "$WORK"
PG="$WORK/pg"
PID=0
cleanup() {
  [ "$PID" != 0 ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  scripts/pg-ha.sh stop "$PG" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
export BENCH_DIR="$ROOT/bench" BENCH_TOKENS="$WORK/tokens.txt"
SECRET="bench-secret-$RANDOM$RANDOM"
python3 bench/tokens.py "$SECRET" "$USERS" "$USERS" "$BENCH_TOKENS"
log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }

scripts/pg-ha.sh primary "$PG" node1
URL="postgres://sheetd@127.0.0.1:$(cat "$PG/node1.port")/postgres"

RESULTS="$WORK/results.tsv"
: >"$RESULTS"
measure() {  # measure SCENARIO ROUND
  local port out line
  port=$((12000 + RANDOM % 16000))
  SHEETD_JWT_SECRET=$SECRET SHEETD_ADMIN_TOKEN="bench-admin" "$BIN" serve --port "$port" --db "$URL" \
    --threads "$THREADS" --access-log false --max-events-per-user-per-minute 0 >"$WORK/server.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 300); do grep -q '"listening"' "$WORK/server.log" && break; sleep 0.05; done
  grep -q '"listening"' "$WORK/server.log" || { cat "$WORK/server.log" >&2; exit 1; }
  wrk -t1 -c64 -d1s -s bench/lua/count.lua "http://127.0.0.1:$port" >/dev/null 2>&1 || true
  out=$(wrk -t1 -c64 -d"${DUR}s" --latency -s bench/lua/count.lua "http://127.0.0.1:$port" 2>&1)
  kill -TERM "$PID"; wait "$PID" 2>/dev/null || true; PID=0
  line=$(echo "$out" | sed -n 's/^BENCH //p')
  [ -n "$line" ] || { echo "$out" >&2; exit 1; }
  printf '%s\t%s\t%s\n' "$1" "$2" "$line" >>"$RESULTS"
  log "$1 round $2: $(echo "$line" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.0f req/s p99 %.2f ms, %d non-2xx" % (d["requests"]/d["duration_us"]*1e6, d["p99_us"]/1000, d["status_errors"]))')"
}

scripts/pg-ha.sh standby "$PG" node2 node1
for round in $(seq 1 "$ROUNDS"); do
  # The standby stopped: the primary alone, as a single server.
  scripts/pg-ha.sh sync "$PG" node1 ''
  scripts/pg-ha.sh set "$PG" node1 synchronous_commit on
  scripts/pg-ha.sh down "$PG" node2
  measure single "$round"
  scripts/pg-ha.sh up "$PG" node2
  measure async "$round"
  scripts/pg-ha.sh sync "$PG" node1 node2
  for setting in on remote_write remote_apply local; do
    scripts/pg-ha.sh set "$PG" node1 synchronous_commit "$setting"
    measure "sync-$setting" "$round"
  done
done

python3 - "$RESULTS" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    scenario, _, data = line.rstrip("\n").split("\t")
    d = json.loads(data)
    rows.setdefault(scenario, []).append((d["requests"] / d["duration_us"] * 1e6, d["p99_us"] / 1000, d["status_errors"] + d["errors"]))
base = statistics.median(r for r, _, _ in rows["single"])
print("| count PUT on | req/s (median) | vs single | p99 ms (median) | errors |")
print("|---|---|---|---|---|")
names = {"single": "a single server (no standby)", "async": "primary + asynchronous standby",
         "sync-on": "synchronous standby, synchronous_commit = on", "sync-remote_write": "synchronous standby, remote_write",
         "sync-remote_apply": "synchronous standby, remote_apply", "sync-local": "synchronous standby, local"}
for key in ["single", "async", "sync-on", "sync-remote_write", "sync-remote_apply", "sync-local"]:
    if key not in rows: continue
    r = statistics.median(x for x, _, _ in rows[key]); p = statistics.median(y for _, y, _ in rows[key])
    print("| %s | %.0f | %.2fx | %.1f | %d |" % (names[key], r, r / base, p, sum(e for _, _, e in rows[key])))
EOF
