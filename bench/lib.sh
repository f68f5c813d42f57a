# Shared by bench/profile.sh and bench/compare.sh (sourced): a preloaded database, tokens, and a
# warm sheetd on 127.0.0.1. Expects ROOT and WORK; sets SECRET.
SECRET="bench-secret-$RANDOM$RANDOM"

# prepare_data USERS: $WORK/base.sqlite with USERS users, $WORK/tokens.txt with their tokens.
# BENCH_DATA=ten-cards: issue 47's uncached scenario instead (ten card sheets on home, three of them
# counted for every user; bench/ten_cards.py).
prepare_data() {
  if [ "${BENCH_DATA:-}" = ten-cards ]; then
    python3 bench/ten_cards.py catalog examples/catalog.json "$WORK/ten-cards.json"
    bench/preload.sh "${BIN:-$ROOT/.build/release/sheetd}" "$WORK/base.sqlite" "$1" "$WORK/ten-cards.json"
    python3 bench/ten_cards.py states "$WORK/base.sqlite" "$1"
  else
    bench/preload.sh "${BIN:-$ROOT/.build/release/sheetd}" "$WORK/base.sqlite" "$1" examples/catalog.json
  fi
  python3 bench/tokens.py "$SECRET" "$1" "$1" "$WORK/tokens.txt"
  export BENCH_DIR="$ROOT/bench" BENCH_TOKENS="$WORK/tokens.txt"
}

# start_warm_sheetd BIN [ARGS...]: starts BIN on a fresh copy of the database, waits for its
# "listening" line and requests every user's decision once; sets SHEETD_PID and SHEETD_PORT.
# SHEETD_WRAPPER prefixes the command (valgrind); SHEETD_START_TIMEOUT is in 10 ms steps.
start_warm_sheetd() {
  local bin=$1; shift
  local attempt
  for attempt in 1 2 3; do  # a random port can be taken: try another
    SHEETD_PORT=$(( 12000 + RANDOM % 16000 ))
    rm -f "$WORK/run.sqlite" "$WORK/run.sqlite-wal" "$WORK/run.sqlite-shm"
    cp "$WORK/base.sqlite" "$WORK/run.sqlite"
    # shellcheck disable=SC2086
    SHEETD_JWT_SECRET=$SECRET SHEETD_ADMIN_TOKEN=admin-$RANDOM$RANDOM ${SHEETD_WRAPPER:-} "$bin" serve --port "$SHEETD_PORT" \
      --db "$WORK/run.sqlite" --access-log false "$@" > "$WORK/server.log" 2>&1 &
    SHEETD_PID=$!
    for _ in $(seq 1 "${SHEETD_START_TIMEOUT:-500}"); do
      grep -q '"listening"' "$WORK/server.log" && break
      kill -0 "$SHEETD_PID" 2>/dev/null || break
      sleep 0.01
    done
    grep -q '"listening"' "$WORK/server.log" && break
    wait "$SHEETD_PID" 2>/dev/null || true
    SHEETD_PID=""
  done
  [ -n "$SHEETD_PID" ] || { cat "$WORK/server.log" >&2; echo "$bin did not start" >&2; exit 1; }
  wrk -t1 -c64 -d"${SHEETD_WARMUP_SECONDS:-3}"s -s bench/lua/warmup.lua "http://127.0.0.1:$SHEETD_PORT" > /dev/null 2>&1 || true
}

stop_sheetd() { kill -TERM "$SHEETD_PID" 2>/dev/null || true; wait "$SHEETD_PID" 2>/dev/null || true; SHEETD_PID=""; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# measure PID SCRIPT SECONDS: runs wrk and prints "req/s p99_ms cpu_us_per_request".
measure() {
  local pid=$1 script=$2 secs=$3 c0 c1 out requests
  c0=$(cpu_ticks "$pid")
  out=$(wrk -t1 -c64 -d"${secs}s" --latency -s "bench/lua/$script" "http://127.0.0.1:$SHEETD_PORT")
  c1=$(cpu_ticks "$pid")
  echo "$out" | sed -n 's/^BENCH //p' | python3 -c '
import json, sys
d = json.load(sys.stdin); ticks, hz = int(sys.argv[1]), int(sys.argv[2])
print("%.0f %.2f %.1f" % (d["requests"] / d["duration_us"] * 1e6, d["p99_us"] / 1000, ticks * 1e6 / hz / max(1, d["requests"])))
' "$((c1 - c0))" "$(getconf CLK_TCK)"
}
