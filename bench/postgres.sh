#!/usr/bin/env bash
# sheetd on PostgreSQL against a C libpq yardstick and against sheetd on SQLite, in one run on one
# machine (part of `make bench`; bounded: about 6 minutes with the defaults).
#
#   bench/postgres.sh [--quick]
#
# A throwaway PostgreSQL 15 (scripts/postgres.sh: fsync on, synchronous_commit on, default
# settings otherwise) on the same machine. Scenarios, as interleaved A/B rounds (each server
# freshly started and warmed up, then measured with wrk -t1 -c64 on 127.0.0.1):
#   put       Count PUT: C yardstick (one UPSERT per request, autocommit, one libpq connection)
#             vs sheetd on PostgreSQL (group commit, pipelined batches)
#   get       cached decision GET: sheetd on SQLite vs sheetd on PostgreSQL
#   get-same  the same with as many workers on PostgreSQL as on SQLite (only when BENCH_PG_THREADS differs)
#   get-nc    decision GET with --decision-cache 0 (every decision reads the database), both
#   replicas  two sheetd replicas on the one database, a wrk -c32 on each at once (count PUTs,
#             then decision GETs): per replica and together
# Server CPU per request from /proc/PID/stat; the database's CPU from the postmaster's children.
# BENCH_BASE_BIN: a baseline sheetd binary; adds put-ab, get-ab and get-nc-ab (baseline against BIN on
# PostgreSQL, interleaved; their figures are in the log and BENCH_KEEP_RESULTS, not in the table).
# Environment: BENCH_ROUNDS, BENCH_DURATION, BENCH_THREADS (MHD workers of the SQLite server and
# the yardstick; default cores - 1), BENCH_PG_THREADS (MHD workers of sheetd on PostgreSQL, default
# the same: no decision or event route holds a worker while the database answers), BENCH_USERS,
# BENCH_ONLY="put get".
# The table goes into BENCHMARKS.md between the bench:postgres markers.
set -Eeuo pipefail

quick=0
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=${SHEETD_BIN:-$ROOT/.build/release/sheetd}
USERS=${BENCH_USERS:-10000}
THREADS=${BENCH_THREADS:-$(( $(nproc) > 1 ? $(nproc) - 1 : 1 ))}
PG_THREADS=${BENCH_PG_THREADS:-$THREADS}
CONNS=64
if [ $quick = 1 ]; then ROUNDS=${BENCH_ROUNDS:-2} DUR=${BENCH_DURATION:-3}
else ROUNDS=${BENCH_ROUNDS:-3} DUR=${BENCH_DURATION:-6}; fi
MODE=$([ $quick = 1 ] && echo quick || echo full)
command -v wrk >/dev/null && command -v cc >/dev/null && pkg-config --exists libpq libmicrohttpd \
  || { echo "bench/postgres.sh: needs wrk, cc, libpq-dev, libmicrohttpd-dev (bench/run.sh installs them)" >&2; exit 2; }
[ -x "$BIN" ] || swift build -c release

# Not under /tmp: a cleanup elsewhere that sweeps /tmp/sheetd-* would take the running cluster with it.
WORK=$(mktemp -d /var/tmp/sheetd-bench-postgres.XXXXXX)
chmod 755 "$WORK"
PGDIR="$WORK/pg"
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  scripts/postgres.sh stop "$PGDIR" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
# On a failure: where, and the end of the last server's log (the work directory goes with cleanup).
trap 'rc=$?; echo "bench/postgres.sh: failed (exit $rc) at line $LINENO" >&2; tail -n 20 "$(ls -t "$WORK"/server.*.log 2>/dev/null | head -1)" >&2 2>/dev/null || true' ERR
export BENCH_DIR="$ROOT/bench"
SECRET="bench-secret-$RANDOM$RANDOM"
ADMIN="bench-admin-$RANDOM$RANDOM"
now_ns() { date +%s%N; }
log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
CLK_TCK=$(getconf CLK_TCK)

cc -O2 -Wall -o "$WORK/pg_upsert" bench/yardstick/pg_upsert.c $(pkg-config --cflags --libs libmicrohttpd libpq) -lpthread

# --- data: the same 10 000 users on SQLite (bench/preload.sh) and on PostgreSQL -------------------
bench/preload.sh "$BIN" "$WORK/base.sqlite" "$USERS" examples/catalog.json
python3 bench/tokens.py "$SECRET" "$USERS" "$USERS" "$WORK/tokens.txt"
mkdir -p "$PGDIR"
PGURL=$(scripts/postgres.sh start "$PGDIR" 2>/dev/null)
PSQL="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/psql"
POSTMASTER=$(head -1 "$PGDIR/data/postmaster.pid")
t0=$(now_ns)
port=$(( 12000 + RANDOM % 16000 ))
SHEETD_JWT_SECRET=preload SHEETD_ADMIN_TOKEN=preload-admin "$BIN" serve --port "$port" --db "$PGURL" \
  --catalog examples/catalog.json --access-log false > "$WORK/preload.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do grep -q '"listening"' "$WORK/preload.log" && break; sleep 0.05; done
grep -q '"listening"' "$WORK/preload.log" || { cat "$WORK/preload.log" >&2; exit 1; }
kill -TERM $pid; wait $pid || true
# The state classes of bench/preload.sh, as rows (user u<n> in class n % 4).
"$PSQL" -q -v ON_ERROR_STOP=1 "$PGURL" > /dev/null <<SQL
BEGIN;
CREATE TEMP TABLE n AS SELECT i, 'u' || lpad(i::text, 7, '0') AS u FROM generate_series(1, $USERS) i;
-- One user_states row per user with a state: the format-1 bytes of bench/preload.sh, with a version.
INSERT INTO user_states (user_id, version, state)
  SELECT u, nextval('user_versions_seq'), convert_to(CASE i % 4
    WHEN 0 THEN '1c11:offers-home0:1:3~h11:home-offers3:ios5:420.0'
    WHEN 1 THEN '1c11:offers-home0:1:5~c14:reminders-home0:1:2~l11:home-offers1:5'
    ELSE '1c11:alerts-home17:category:security1:1~c11:offers-home0:1:2~'
  END, 'UTF8') FROM n WHERE i % 4 <> 3;
COMMIT;
VACUUM ANALYZE;
SQL
PRELOAD_MS=$(( ($(now_ns) - t0) / 1000000 ))
log "PostgreSQL: $USERS users preloaded in $PRELOAD_MS ms ($PGURL)"

# --- servers ------------------------------------------------------------------------------------
# Below Linux's ephemeral range (32768 and up): see bench/run.sh.
next_port=$(( 12000 + RANDOM % 16000 ))
PORT=0 PID=0
# start KIND: sheetd-sqlite[-nc], sheetd-pg[-nc], pg_upsert. A port can be taken between rounds (by
# an ephemeral port of the load client's connections, say): then the next one is tried.
start() {
  local attempt
  for attempt in 1 2 3 4 5; do
    if start_once "$1"; then return 0; fi
    grep -q "already in use" "$WORK/server.$PORT.log" 2>/dev/null || break
    echo "port $PORT was taken, trying another" >&2
  done
  cat "$WORK/server.$PORT.log" >&2; echo "$1 did not start" >&2; exit 1
}
start_once() {
  local kind=$1
  next_port=$((next_port + 1)); PORT=$next_port
  local out="$WORK/server.$PORT.log" extra="" db BIN=$BIN
  case $kind in *-base) BIN=$BENCH_BASE_BIN kind=${kind%-base} ;; esac
  case $kind in *-nc) extra="--decision-cache 0" ;; esac
  case $kind in
    sheetd-sqlite*)
      rm -f "$WORK/run.sqlite" "$WORK/run.sqlite-wal" "$WORK/run.sqlite-shm"
      cp "$WORK/base.sqlite" "$WORK/run.sqlite"
      SHEETD_JWT_SECRET=$SECRET SHEETD_ADMIN_TOKEN=$ADMIN "$BIN" serve --port "$PORT" --db "$WORK/run.sqlite" \
        --threads "$THREADS" --access-log false $extra > "$out" 2>&1 &
      ;;
    sheetd-pg*)
      local threads=$PG_THREADS
      case $kind in *-same) threads=$THREADS ;; esac
      SHEETD_JWT_SECRET=$SECRET SHEETD_ADMIN_TOKEN=$ADMIN "$BIN" serve --port "$PORT" --db "$PGURL" \
        --threads "$threads" --access-log false $extra > "$out" 2>&1 &
      ;;
    pg_upsert) "$WORK/pg_upsert" "$PORT" "$THREADS" 1906 "$PGURL" > "$out" 2>&1 & ;;
  esac
  PID=$!
  PIDS+=("$PID")
  local i=0
  until grep -q '"listening"' "$out" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 3000 ] || ! kill -0 "$PID" 2>/dev/null; then return 1; fi
    sleep 0.005
  done
}
stop() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
cpu_ticks() {  # the process must still run: a server that died is a failure, not a zero
  [ -r "/proc/$1/stat" ] || { echo "process $1 is gone" >&2; return 1; }
  awk '{print $14 + $15}' "/proc/$1/stat"
}
# CPU ticks of the postmaster and all its children (the database's whole CPU).
pg_ticks() {
  # awk exits 2 when a process ends between the glob and the read (it still prints the sum).
  awk -v pm="$POSTMASTER" '{ if ($1 == pm || $4 == pm) t += $14 + $15 } END { print t + 0 }' /proc/[0-9]*/stat 2>/dev/null || true
}
warm() {  # warm PORT SCRIPT: every user's decision once (up to 8 s), then 1 s of the scenario
  local walked=0 got pieces=0
  while [ "$walked" -lt "$USERS" ] && [ "$pieces" -lt 8 ]; do
    got=$(BENCH_WALK_START=$walked wrk -t1 -c"$CONNS" -d1s -s bench/lua/warmup.lua "http://127.0.0.1:$1" 2>/dev/null \
      | sed -n 's/^BENCH .*"requests":\([0-9]*\).*/\1/p')
    walked=$((walked + ${got:-0})); pieces=$((pieces + 1))
  done
  wrk -t1 -c"$CONNS" -d1s -s "bench/lua/$2" "http://127.0.0.1:$1" > /dev/null 2>&1 || true
}
RESULTS="$WORK/results.tsv"
: > "$RESULTS"
record() {  # record SCENARIO ROUND SERVER WRK_OUTPUT APP_TICKS PG_TICKS
  local line; line=$(echo "$4" | sed -n 's/^BENCH //p')
  [ -n "$line" ] || { echo "$4" >&2; echo "wrk produced no result" >&2; exit 1; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$line" "$5" "$6" >> "$RESULTS"
  log "$1 round $2 $3: $(echo "$line" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.0f req/s p99 %.2f ms, %d non-2xx" % (d["requests"]/d["duration_us"]*1e6, d["p99_us"]/1000, d["status_errors"]))')"
}
run() {  # run SCENARIO ROUND KIND SCRIPT
  start "$3"
  export BENCH_TOKENS="$WORK/tokens.txt"
  warm "$PORT" "$4"
  local c0 p0 out c1 p1
  c0=$(cpu_ticks "$PID"); p0=$(pg_ticks)
  out=$(wrk -t1 -c"$CONNS" -d"${DUR}s" --latency -s "bench/lua/$4" "http://127.0.0.1:$PORT" 2>&1)
  c1=$(cpu_ticks "$PID"); p1=$(pg_ticks)
  stop "$PID"
  local db=$((p1 - p0)); case $3 in sheetd-sqlite*) db=0 ;; esac
  record "$1" "$2" "$3" "$out" "$((c1 - c0))" "$db"
}
run_replicas() {  # run_replicas ROUND SCRIPT: two replicas, a wrk -c32 on each at once
  local scenario="replicas-${2%.lua}"
  start sheetd-pg; local pa=$PID porta=$PORT
  start sheetd-pg; local pb=$PID portb=$PORT
  export BENCH_TOKENS="$WORK/tokens.txt"
  warm "$porta" "$2"; warm "$portb" "$2"
  local a0 b0 p0 a1 b1 p1
  a0=$(cpu_ticks "$pa"); b0=$(cpu_ticks "$pb"); p0=$(pg_ticks)
  wrk -t1 -c$((CONNS / 2)) -d"${DUR}s" --latency -s "bench/lua/$2" "http://127.0.0.1:$porta" > "$WORK/wrk.a" 2>&1 &
  local wa=$!
  wrk -t1 -c$((CONNS / 2)) -d"${DUR}s" --latency -s "bench/lua/$2" "http://127.0.0.1:$portb" > "$WORK/wrk.b" 2>&1
  wait $wa
  a1=$(cpu_ticks "$pa"); b1=$(cpu_ticks "$pb"); p1=$(pg_ticks)
  stop "$pa"; stop "$pb"
  # The database's CPU is shared: each replica's row carries half of it.
  record "$scenario" "$1" replica-a "$(cat "$WORK/wrk.a")" "$((a1 - a0))" "$(( (p1 - p0) / 2 ))"
  record "$scenario" "$1" replica-b "$(cat "$WORK/wrk.b")" "$((b1 - b0))" "$(( (p1 - p0) - (p1 - p0) / 2 ))"
}

SCENARIOS=(
  "put count.lua pg_upsert sheetd-pg"
  "get decision.lua sheetd-sqlite sheetd-pg"
  "get-nc decision.lua sheetd-sqlite-nc sheetd-pg-nc"
)
# With other worker counts on PostgreSQL (BENCH_PG_THREADS), the cached GET also with the same as SQLite's.
[ "$PG_THREADS" != "$THREADS" ] && SCENARIOS+=("get-same decision.lua sheetd-sqlite sheetd-pg-same")
[ -n "${BENCH_BASE_BIN:-}" ] && SCENARIOS+=(
  "put-ab count.lua sheetd-pg-base sheetd-pg"
  "get-ab decision.lua sheetd-pg-base sheetd-pg"
  "get-nc-ab decision.lua sheetd-pg-nc-base sheetd-pg-nc"
)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$ROUNDS"); do
  for s in "${SCENARIOS[@]}"; do
    read -r name script a b <<< "$s"
    if [ -n "${BENCH_ONLY:-}" ] && [[ " $BENCH_ONLY " != *" $name "* ]]; then continue; fi
    if [ $((round % 2)) = 1 ]; then run "$name" "$round" "$a" "$script"; run "$name" "$round" "$b" "$script"
    else run "$name" "$round" "$b" "$script"; run "$name" "$round" "$a" "$script"; fi
  done
  if [ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" replicas "* ]]; then
    run_replicas "$round" count.lua
    run_replicas "$round" decision.lua
  fi
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
PG_COUNTS=$("$PSQL" -At "$PGURL" -c "SELECT count(*) FROM user_states")

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- Sources Package.swift bench 2>/dev/null || commit="$commit (+ uncommitted changes)"
export R_MODE=$MODE R_COMMIT="$commit" R_USERS=$USERS R_THREADS=$THREADS R_PG_THREADS=$PG_THREADS R_CONNS=$CONNS \
  R_ROUNDS=$ROUNDS R_DUR=$DUR R_CLK_TCK=$CLK_TCK R_PRELOAD_MS=$PRELOAD_MS R_LOAD_START="$LOAD_START" R_LOAD_END="$LOAD_END" \
  R_PG="$("$PSQL" -At "$PGURL" -c 'SHOW server_version' | cut -d' ' -f1)" R_LIBPQ="$(pkg-config --modversion libpq)" \
  R_SYNC="$("$PSQL" -At "$PGURL" -c 'SHOW synchronous_commit')" R_FSYNC="$("$PSQL" -At "$PGURL" -c 'SHOW fsync')" \
  R_NPROC="$(nproc)" R_COUNTS="$PG_COUNTS"
python3 bench/report_postgres.py "$RESULTS" BENCHMARKS.md
[ -n "${BENCH_KEEP_RESULTS:-}" ] && cp "$RESULTS" "$BENCH_KEEP_RESULTS"
log "BENCHMARKS.md updated (PostgreSQL, $MODE)"
