#!/usr/bin/env bash
# Profiles sheetd under one bench scenario with perf (Debian's linux-perf):
#
#   bench/profile.sh [SCRIPT] [SECONDS]      e.g. bench/profile.sh count.lua 8
#
# Preloads BENCH_USERS (10 000) users, starts the release binary, walks every user's decision once
# (warm caches), then records `perf record -g` on the server while wrk (-t1 -c64) runs SCRIPT from
# bench/lua. Prints wrk's summary, the server CPU per request and perf's top symbols (self and
# children); the raw profile stays in .build/profile/perf.data for `perf report -i`.
set -euo pipefail
script=${1:-count.lua} secs=${2:-8}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=${SHEETD_BIN:-$ROOT/.build/release/sheetd}
USERS=${BENCH_USERS:-10000}
command -v perf >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null; }
[ -x "$BIN" ] || swift build -c release
OUT=$ROOT/.build/profile
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/sheetd-profile.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
SECRET="profile-secret-$RANDOM$RANDOM"
bench/preload.sh "$BIN" "$WORK/db.sqlite" "$USERS" examples/catalog.json
python3 bench/tokens.py "$SECRET" "$USERS" "$USERS" "$WORK/tokens.txt"
port=$(( 21000 + RANDOM % 20000 ))
SHEETD_JWT_SECRET=$SECRET SHEETD_ADMIN_TOKEN=admin-$RANDOM$RANDOM "$BIN" serve --port "$port" --db "$WORK/db.sqlite" \
  --access-log false > "$WORK/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 500); do grep -q '"listening"' "$WORK/server.log" && break; sleep 0.01; done
export BENCH_DIR="$ROOT/bench" BENCH_TOKENS="$WORK/tokens.txt"
wrk -t1 -c64 -d3s -s bench/lua/warmup.lua "http://127.0.0.1:$port" > /dev/null 2>&1 || true
c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
perf record -F 999 -g -p "$pid" -o "$OUT/perf.data" -- sleep "$secs" > /dev/null 2>&1 &
perf_pid=$!
out=$(wrk -t1 -c64 -d"${secs}s" --latency -s "bench/lua/$script" "http://127.0.0.1:$port")
wait $perf_pid || true
c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
echo "$out" | grep -E "Requests/sec|Latency|99%"
requests=$(echo "$out" | sed -n 's/^BENCH .*"requests":\([0-9]*\).*/\1/p')
echo "server CPU: $(( (c1 - c0) * 1000000 / $(getconf CLK_TCK) / ${requests:-1} )) us/request"
curl -s "http://127.0.0.1:$port/metrics" | grep '^sheetd_store' || true
perf report -i "$OUT/perf.data" --no-children --percent-limit 1.2 --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -40
echo "--- with children"
perf report -i "$OUT/perf.data" --children --percent-limit 4 --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -40
