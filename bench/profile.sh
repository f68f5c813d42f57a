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
command -v perf >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null; }
[ -x "$BIN" ] || swift build -c release
OUT=$ROOT/.build/profile
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/sheetd-profile.XXXXXX)
SHEETD_PID=""
trap '[ -n "$SHEETD_PID" ] && stop_sheetd; rm -rf "$WORK"' EXIT
. bench/lib.sh
prepare_data "${BENCH_USERS:-10000}"
# shellcheck disable=SC2086
start_warm_sheetd "$BIN" ${PROFILE_ARGS:-}
perf record -F 999 -g -p "$SHEETD_PID" -o "$OUT/perf.data" -- sleep "$secs" > /dev/null 2>&1 &
perf_pid=$!
read -r rps p99 cpu < <(measure "$SHEETD_PID" "$script" "$secs")
wait $perf_pid || true
echo "$rps req/s, p99 $p99 ms, server CPU $cpu us/request (perf running)"
curl -s "http://127.0.0.1:$SHEETD_PORT/metrics" | grep '^sheetd_store' || true
perf report -i "$OUT/perf.data" --no-children --percent-limit 1.2 --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -40
echo "--- with children"
perf report -i "$OUT/perf.data" --children --percent-limit 4 --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -40
