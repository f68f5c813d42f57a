#!/usr/bin/env bash
# sheetd load benchmark against two C yardsticks on libmicrohttpd, in one run on one machine.
#
#   bench/run.sh [--quick] [--scale]       (make bench / make bench-quick build the release binary first)
#
# --quick  2 rounds of 2 s per scenario (about 1.5 minutes), for development
# --scale  also preloads 1 000 000 users and compares decision GETs against the 10 000-user database,
#          with the decision cache and without it (--decision-cache 0: every decision reads SQLite)
#
# Environment: BENCH_ONLY="get put" runs only those scenarios (get get-nc put dismiss open impression mix get-all;
# get-nc: decision GETs with --decision-cache 0, every decision computed, ten card sheets on the
# screen and three of them counted per user; its yardstick answers a body of that decision's size);
# BENCH_ROUNDS, BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_THREADS (MHD workers per
# server; default: cores - 1), BENCH_USERS override.
#
# Every scenario runs as interleaved A/B rounds (yardstick, sheetd, sheetd, yardstick, ...), each
# server freshly started (sheetd on a fresh copy of the preloaded database), warmed up, then measured
# with wrk (one thread, 64 connections, 127.0.0.1 only). Server CPU per request comes from
# /proc/PID/stat (utime + stime deltas over the measured run), peak RSS from VmHWM. The table goes
# into BENCHMARKS.md between the markers of the mode (quick or full); the rest of the file is kept.
set -euo pipefail

quick=0 scale=0
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    --scale) scale=1 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=${SHEETD_BIN:-$ROOT/.build/release/sheetd}
USERS=${BENCH_USERS:-10000}
SCALE_USERS=${BENCH_SCALE_USERS:-1000000}
# One core is left to the load generator: with wrk on the same machine, a worker per core
# oversubscribes it and the scheduler preempts workers mid-batch (see BENCHMARKS.md). Full runs also
# measure decision GETs with a worker per core (scenario get-all), both servers alike.
THREADS=${BENCH_THREADS:-$(( $(nproc) > 1 ? $(nproc) - 1 : 1 ))}
ALL_THREADS=$(nproc)
CONNS=${BENCH_CONNECTIONS:-64}
if [ $quick = 1 ]; then ROUNDS=${BENCH_ROUNDS:-2} DUR=${BENCH_DURATION:-2} WARM=${BENCH_WARMUP:-10} WARM2=0
else ROUNDS=${BENCH_ROUNDS:-5} DUR=${BENCH_DURATION:-10} WARM=${BENCH_WARMUP:-20} WARM2=1; fi
MODE=$([ $quick = 1 ] && echo quick || echo full)
COMMAND="bench/run.sh $*"
# BENCH_PIN=1: the load generator on the last CPU, the servers on the others (taskset).
SERVER_PIN="" LOAD_PIN=""
if [ "${BENCH_PIN:-0}" = 1 ]; then
  last=$(( $(nproc) - 1 ))
  SERVER_PIN="taskset -c 0-$(( last > 0 ? last - 1 : 0 ))" LOAD_PIN="taskset -c $last"
fi

# --- tools (a fresh Debian machine gets them from apt) ------------------------------------------
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v sqlite3 >/dev/null || need+=(sqlite3)
command -v cc >/dev/null || need+=(gcc)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v curl >/dev/null || need+=(curl)
command -v python3 >/dev/null || need+=(python3)
pkg-config --exists libmicrohttpd 2>/dev/null || need+=(libmicrohttpd-dev)
pkg-config --exists sqlite3 2>/dev/null || need+=(libsqlite3-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq -o DPkg::Lock::Timeout=300 "${need[@]}" >/dev/null
fi
[ -x "$BIN" ] || swift build -c release

WORK=$(mktemp -d /tmp/sheetd-bench.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

export BENCH_DIR="$ROOT/bench"
SECRET="bench-secret-$RANDOM$RANDOM"
ADMIN="bench-admin-$RANDOM$RANDOM"
now_ns() { date +%s%N; }
log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }

# --- yardsticks ---------------------------------------------------------------------------------
for y in http_fixed sqlite_upsert; do
  cc -O2 -Wall -o "$WORK/$y" "bench/yardstick/$y.c" $(pkg-config --cflags --libs libmicrohttpd sqlite3) -lpthread
done

# --- preload ------------------------------------------------------------------------------------
t0=$(now_ns)
bench/preload.sh "$BIN" "$WORK/base.sqlite" "$USERS" examples/catalog.json
PRELOAD_MS=$(( ($(now_ns) - t0) / 1000000 ))
python3 bench/tokens.py "$SECRET" "$USERS" "$USERS" "$WORK/tokens.txt"
DB_BYTES=$(stat -c %s "$WORK/base.sqlite")
log "preloaded $USERS users in ${PRELOAD_MS} ms ($DB_BYTES bytes)"
# Issue 47's uncached scenario (get-nc): ten card sheets on home, three of them counted for every
# user, the same user ids (bench/ten_cards.py).
python3 bench/ten_cards.py catalog examples/catalog.json "$WORK/ten-cards.json"
bench/preload.sh "$BIN" "$WORK/ten.sqlite" "$USERS" "$WORK/ten-cards.json"
python3 bench/ten_cards.py states "$WORK/ten.sqlite" "$USERS"
if [ $scale = 1 ]; then
  t0=$(now_ns)
  bench/preload.sh "$BIN" "$WORK/scale.sqlite" "$SCALE_USERS" examples/catalog.json
  SCALE_PRELOAD_MS=$(( ($(now_ns) - t0) / 1000000 ))
  python3 bench/tokens.py "$SECRET" "$SCALE_USERS" 20000 "$WORK/tokens-scale.txt"
  SCALE_DB_BYTES=$(stat -c %s "$WORK/scale.sqlite")
  log "preloaded $SCALE_USERS users in ${SCALE_PRELOAD_MS} ms ($SCALE_DB_BYTES bytes)"
fi

# --- servers ------------------------------------------------------------------------------------
PORT=0 PID=0 READY_US=0 STARTUP_US=0
# Below Linux's ephemeral range (32768 and up), so a load client's outgoing connections cannot hold
# the next server's port; a port taken anyway (another program) is skipped.
next_port=$(( 12000 + RANDOM % 16000 ))
# start KIND [DB]: KIND is sheetd, sheetd-scale, http_fixed or sqlite_upsert
start() {
  local attempt
  for attempt in 1 2 3 4 5; do
    if start_once "$1"; then return 0; fi
    grep -q -i "in use\|cannot listen\|cannot start" "$WORK/server.$PORT.log" 2>/dev/null || break
    echo "port $PORT was taken, trying another" >&2
  done
  cat "$WORK/server.$PORT.log" >&2; echo "$1 did not start" >&2; exit 1
}
start_once() {
  local kind=$1
  next_port=$((next_port + 1)); PORT=$next_port
  local out="$WORK/server.$PORT.log"
  local t0; t0=$(now_ns)
  case $kind in
    sheetd|sheetd-scale|sheetd-nc|sheetd-scale-nc|sheetd-ten-nc)
      local src="$WORK/base.sqlite" extra=""
      case $kind in sheetd-scale*) src="$WORK/scale.sqlite" ;; sheetd-ten*) src="$WORK/ten.sqlite" ;; esac
      case $kind in *-nc) extra="--decision-cache 0" ;; esac
      rm -f "$WORK/run.sqlite" "$WORK/run.sqlite-wal" "$WORK/run.sqlite-shm"
      cp "$src" "$WORK/run.sqlite"
      t0=$(now_ns)
      SHEETD_JWT_SECRET=$SECRET SHEETD_ADMIN_TOKEN=$ADMIN $SERVER_PIN "$BIN" serve --port "$PORT" --db "$WORK/run.sqlite" \
        --threads "${RUN_THREADS:-$THREADS}" --access-log false $extra > "$out" 2>&1 &
      ;;
    http_fixed) $SERVER_PIN "$WORK/http_fixed" "$PORT" "${RUN_THREADS:-$THREADS}" "$BODY_BYTES" > "$out" 2>&1 & ;;
    http_fixed_ten) $SERVER_PIN "$WORK/http_fixed" "$PORT" "${RUN_THREADS:-$THREADS}" "$TEN_BODY_BYTES" > "$out" 2>&1 & ;;
    sqlite_upsert)
      rm -f "$WORK/ys.sqlite" "$WORK/ys.sqlite-wal" "$WORK/ys.sqlite-shm"
      cp "$WORK/base.sqlite" "$WORK/ys.sqlite"
      t0=$(now_ns)
      $SERVER_PIN "$WORK/sqlite_upsert" "$PORT" "${RUN_THREADS:-$THREADS}" "$BODY_BYTES" "$WORK/ys.sqlite" > "$out" 2>&1 &
      ;;
  esac
  PID=$!
  PIDS+=("$PID")
  local i=0
  until grep -q '"listening"' "$out" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 4000 ] || ! kill -0 "$PID" 2>/dev/null; then return 1; fi
    sleep 0.002
  done
  READY_US=$(( ($(now_ns) - t0) / 1000 ))
  STARTUP_US=$(grep -o '"startup_us":[0-9]*' "$out" | head -1 | cut -d: -f2 || true)
  STARTUP_US=${STARTUP_US:-0}
}
stop() {
  kill -TERM "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
CLK_TCK=$(getconf CLK_TCK)

# --- the decision body size and the ETag of each state class -------------------------------------
tok() { awk -v u="$1" '$1 == u {print $2}' "$2"; }
BODY_BYTES=1
start sheetd
: > "$WORK/etags.txt"
total=0
for n in 4 1 2 3; do
  u=$(printf 'u%07d' $n)
  curl -sS -D "$WORK/h.txt" -o "$WORK/b.json" -H "Authorization: Bearer $(tok $u "$WORK/tokens.txt")" \
    "http://127.0.0.1:$PORT/v1/users/$u/decision?screen=home&tab=accounts&platform=ios"
  grep -q '^HTTP/1.1 200' "$WORK/h.txt" || { cat "$WORK/h.txt" "$WORK/b.json" >&2; exit 1; }
  etag=$(awk 'tolower($1) == "etag:" {print $2}' "$WORK/h.txt" | tr -d '\r')
  echo "$((n % 4)) $etag" >> "$WORK/etags.txt"
  total=$((total + $(stat -c %s "$WORK/b.json")))
  code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(tok $u "$WORK/tokens.txt")" \
    -H "If-None-Match: $etag" "http://127.0.0.1:$PORT/v1/users/$u/decision?screen=home&tab=accounts&platform=ios")
  [ "$code" = 304 ] || { echo "If-None-Match did not answer 304 ($code)" >&2; exit 1; }
done
stop
BODY_BYTES=$((total / 4))
log "decision body: $BODY_BYTES bytes on average over the 4 state classes"
# The ten-card scenario's answers are larger (a longer trace): its yardstick answers their average.
start sheetd-ten-nc
total=0
for n in $(seq 1 20); do
  u=$(printf 'u%07d' $n)
  total=$((total + $(curl -sS -H "Authorization: Bearer $(tok $u "$WORK/tokens.txt")" \
    "http://127.0.0.1:$PORT/v1/users/$u/decision?screen=home&tab=accounts&platform=ios" | wc -c)))
done
stop
TEN_BODY_BYTES=$((total / 20))
log "ten-card decision body: $TEN_BODY_BYTES bytes on average over 20 users"

# --- one measured run ---------------------------------------------------------------------------
RESULTS="$WORK/results.tsv"
: > "$RESULTS"
# run SCENARIO ROUND KIND SCRIPT TOKENS
run() {
  local scenario=$1 round=$2 kind=$3 script=$4 tokens=$5
  start "$kind"
  local ready_us=$READY_US startup_us=$STARTUP_US
  export BENCH_TOKENS=$tokens BENCH_ETAGS="$WORK/etags.txt"
  # Warm-up: every user's decision once (a sequential walk in 1 s pieces until every user was
  # answered, at most WARM pieces), then the scenario's own requests.
  local walked=0 users_n pieces=0 got
  users_n=$(wc -l < "$tokens")
  while [ "$walked" -lt "$users_n" ] && [ "$pieces" -lt "$WARM" ]; do
    got=$(BENCH_WALK_START=$walked $LOAD_PIN wrk -t1 -c"$CONNS" -d1s -s bench/lua/warmup.lua "http://127.0.0.1:$PORT" 2>/dev/null \
      | sed -n 's/^BENCH .*"requests":\([0-9]*\).*/\1/p')
    walked=$((walked + ${got:-0}))
    pieces=$((pieces + 1))
  done
  if [ "$WARM2" -gt 0 ]; then
    $LOAD_PIN wrk -t1 -c"$CONNS" -d"${WARM2}s" -s "bench/lua/$script" "http://127.0.0.1:$PORT" > /dev/null 2>&1 || true
  fi
  local c0; c0=$(cpu_ticks "$PID")
  local out; out=$($LOAD_PIN wrk -t1 -c"$CONNS" -d"${DUR}s" --latency -s "bench/lua/$script" "http://127.0.0.1:$PORT" 2>&1)
  local c1; c1=$(cpu_ticks "$PID")
  local hwm; hwm=$(hwm_kb "$PID")
  local dbb=0
  case $kind in sheetd*) dbb=$(( $(stat -c %s "$WORK/run.sqlite") + $(stat -c %s "$WORK/run.sqlite-wal" 2>/dev/null || echo 0) )) ;; esac
  stop
  local line; line=$(echo "$out" | grep '^BENCH ' | sed 's/^BENCH //')
  [ -n "$line" ] || { echo "$out" >&2; echo "wrk produced no result" >&2; exit 1; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$scenario" "$round" "$kind" "$line" "$((c1 - c0))" "$hwm" "$ready_us" "$startup_us" "$dbb" >> "$RESULTS"
  log "$scenario round $round $kind: $(echo "$line" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.0f req/s p50 %.2f ms p99 %.2f ms" % (d["requests"]/d["duration_us"]*1e6, d["p50_us"]/1000, d["p99_us"]/1000))') cpu $(( (c1 - c0) * 1000000 / CLK_TCK / ($(echo "$line" | python3 -c 'import json,sys; print(max(1,json.load(sys.stdin)["requests"]))')) )) us/req"
}

# name, Lua script, yardstick, MHD workers per server[, sheetd's kind (default sheetd)]
# No 304 scenario: sheetd's 304 carries the 200's Content-Length (RFC 9110 §8.6; libmicrohttpd
# 0.9.75 always frames a response), and wrk 4.1's http-parser then waits for a body that never
# comes (0 requests measured). bench/lua/decision_304.lua stays for a client that reads 304s right.
SCENARIOS=(
  "get decision.lua http_fixed $THREADS"
  "get-nc decision.lua http_fixed_ten $THREADS sheetd-ten-nc"
  "put count.lua sqlite_upsert $THREADS"
  "dismiss dismissal.lua sqlite_upsert $THREADS"
  "open open.lua sqlite_upsert $THREADS"
  "impression impression.lua sqlite_upsert $THREADS"
  "mix mix.lua sqlite_upsert $THREADS"
)
if [ $quick = 0 ] && [ "$ALL_THREADS" != "$THREADS" ]; then SCENARIOS+=("get-all decision.lua http_fixed $ALL_THREADS"); fi
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$ROUNDS"); do
  for s in "${SCENARIOS[@]}"; do
    read -r name script yard RUN_THREADS kind <<< "$s"
    kind=${kind:-sheetd}
    if [ -n "${BENCH_ONLY:-}" ] && [[ " $BENCH_ONLY " != *" $name "* ]]; then continue; fi
    if [ $((round % 2)) = 1 ]; then
      run "$name" "$round" "$yard" "$script" "$WORK/tokens.txt"
      run "$name" "$round" "$kind" "$script" "$WORK/tokens.txt"
    else
      run "$name" "$round" "$kind" "$script" "$WORK/tokens.txt"
      run "$name" "$round" "$yard" "$script" "$WORK/tokens.txt"
    fi
  done
  RUN_THREADS=""
  if [ $scale = 1 ]; then
    # With the decision cache (as deployed) and without it (every decision reads the store).
    for pair in "scale sheetd sheetd-scale" "scale-nc sheetd-nc sheetd-scale-nc"; do
      read -r name small big <<< "$pair"
      if [ $((round % 2)) = 1 ]; then
        run "$name" "$round" "$small" decision.lua "$WORK/tokens.txt"
        run "$name" "$round" "$big" decision.lua "$WORK/tokens-scale.txt"
      else
        run "$name" "$round" "$big" decision.lua "$WORK/tokens-scale.txt"
        run "$name" "$round" "$small" decision.lua "$WORK/tokens.txt"
      fi
    done
  fi
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report -------------------------------------------------------------------------------------
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || commit="$commit (+ uncommitted changes)"
export R_MODE=$MODE R_COMMAND="$COMMAND" R_COMMIT="$commit" R_USERS=$USERS R_SCALE_USERS=$SCALE_USERS \
  R_THREADS=$THREADS R_ALL_THREADS=$ALL_THREADS R_CONNS=$CONNS R_ROUNDS=$ROUNDS R_DUR=$DUR R_WARM=$WARM R_WARM2=$WARM2 R_CLK_TCK=$CLK_TCK \
  R_BODY=$BODY_BYTES R_TEN_BODY=$TEN_BODY_BYTES R_PRELOAD_MS=$PRELOAD_MS R_DB_BYTES=$DB_BYTES R_SCALE=$scale \
  R_SCALE_PRELOAD_MS=${SCALE_PRELOAD_MS:-0} R_SCALE_DB_BYTES=${SCALE_DB_BYTES:-0} \
  R_LOAD_START="$LOAD_START" R_LOAD_END="$LOAD_END" \
  R_CPU="$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')" \
  R_KERNEL="$(uname -r)" R_MEM="$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)" \
  R_NPROC="$(nproc)" R_WRK="$(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)" R_SQLITE="$(sqlite3 --version | cut -d' ' -f1)" \
  R_MHD="$(pkg-config --modversion libmicrohttpd)" R_SWIFT="$(swift --version 2>/dev/null | head -1 | sed 's/.*version \([^ ]*\).*/\1/')"
python3 bench/report.py "$RESULTS" BENCHMARKS.md
[ -n "${BENCH_KEEP_RESULTS:-}" ] && cp "$RESULTS" "$BENCH_KEEP_RESULTS"
log "BENCHMARKS.md updated ($MODE)"
