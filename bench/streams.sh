#!/usr/bin/env bash
# The decision-stream scenario of `make bench`: many open Server-Sent Events streams on one process.
#
#   bench/streams.sh [--quick]      (make bench runs it after bench/run.sh; the release binary must exist)
#
# With BENCH_STREAMS streams open (10 000; --quick 1 000), one per user: server RSS, idle CPU over
# BENCH_STREAM_HOLD seconds (35: two rounds of 15 s heartbeats), then the write-to-event latency of
# BENCH_STREAM_EVENTS count PUTs (1 000, 5 ms apart, each to a random user, timed from just before the
# PUT is written to the arrival of that user's next event), then BENCH_STREAM_CYCLES connect/read/
# close cycles (10 000), with open descriptors and RSS before and after. The load client is
# bench/streams/sseclient.c (C, epoll), built here. Results go into BENCHMARKS.md between the
# "streams" markers of the mode.
set -euo pipefail

quick=0
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=${SHEETD_BIN:-$ROOT/.build/release/sheetd}
if [ $quick = 1 ]; then
  STREAMS=${BENCH_STREAMS:-1000} HOLD=${BENCH_STREAM_HOLD:-16} EVENTS=${BENCH_STREAM_EVENTS:-200} CYCLES=${BENCH_STREAM_CYCLES:-1000}
else
  STREAMS=${BENCH_STREAMS:-10000} HOLD=${BENCH_STREAM_HOLD:-35} EVENTS=${BENCH_STREAM_EVENTS:-1000} CYCLES=${BENCH_STREAM_CYCLES:-10000}
fi
MODE=$([ $quick = 1 ] && echo quick || echo full)
command -v cc >/dev/null || { echo "bench/streams.sh: a C compiler is needed (apt-get install gcc)" >&2; exit 2; }
[ -x "$BIN" ] || swift build -c release

WORK=$(mktemp -d /tmp/sheetd-streams.XXXXXX)
SERVER=""
cleanup() {
  [ -n "$SERVER" ] && kill -TERM "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
cc -O2 -o "$WORK/sseclient" bench/streams/sseclient.c

ADMIN="bench-admin-$RANDOM$RANDOM"
for attempt in 1 2 3; do  # a random port can be taken: try another
  PORT=$(( 12000 + RANDOM % 16000 ))
  rm -f "$WORK"/sheetd.sqlite*
  SHEETD_JWT_SECRET="bench-secret-$RANDOM$RANDOM" SHEETD_ADMIN_TOKEN=$ADMIN "$BIN" serve --port "$PORT" \
    --db "$WORK/sheetd.sqlite" --catalog examples/catalog.json --access-log false --max-streams $((STREAMS + 100)) \
    --connection-limit $((STREAMS + 1000)) > "$WORK/server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 500); do
    grep -q '"listening"' "$WORK/server.log" && break
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.01
  done
  grep -q '"listening"' "$WORK/server.log" && break
  wait "$SERVER" 2>/dev/null || true
  SERVER=""
done
[ -n "$SERVER" ] || { cat "$WORK/server.log" >&2; exit 1; }

ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$SERVER/status"; }
fds() { ls "/proc/$SERVER/fd" | wc -l; }
HZ=$(getconf CLK_TCK)

rss0=$(rss_kb) fds0=$(fds)
declare -A at
exec 3< <("$WORK/sseclient" "$PORT" "$ADMIN" "$STREAMS" "$EVENTS" "$HOLD" "$CYCLES")
while IFS= read -r line <&3; do
  case "$line" in
    "open "*) read -r _ _ open_s <<<"$line" ;;
    "phase held") at[held_ticks]=$(ticks); at[held_start]=$(date +%s%N); sleep 1; at[rss_open]=$(rss_kb) ;;
    "held "*) at[idle_ticks]=$(( $(ticks) - at[held_ticks] )); at[idle_ns]=$(( $(date +%s%N) - at[held_start] ))
              read -r _ _ beats <<<"$line" ;;
    "phase events") at[event_ticks]=$(ticks) ;;
    "latency_ms "*) read -r _ p50 p90 p99 pmax lost <<<"$line"; at[event_ticks]=$(( $(ticks) - at[event_ticks] )) ;;
    "cycles "*) read -r _ _ cycle_s <<<"$line" ;;
    "phase done") sleep 1; rss1=$(rss_kb) fds1=$(fds) ;;
  esac
done
exec 3<&-

idle_pct=$(python3 -c "print('%.2f' % (${at[idle_ticks]} / $HZ / (${at[idle_ns]} / 1e9) * 100))")
per_stream_kb=$(( (at[rss_open] - rss0) * 1024 / STREAMS / 1024 ))
table=$(cat <<EOF
| measure | $MODE run: $STREAMS streams |
|---|---|
| RSS before / with the streams open | $((rss0 / 1024)) MiB / $((at[rss_open] / 1024)) MiB (about $per_stream_kb KiB per stream) |
| streams opened in | ${open_s} s |
| idle CPU with them open, ${HOLD} s, 15 s heartbeats | ${idle_pct} % of one core ($beats heartbeats) |
| write-to-event latency, $EVENTS count PUTs 5 ms apart | p50 $p50 ms, p90 $p90 ms, p99 $p99 ms, max $pmax ms ($lost lost) |
| server CPU per pushed event (PUT included) | $(python3 -c "print('%.0f' % (${at[event_ticks]} * 1e6 / $HZ / max(1, $EVENTS)))") µs |
| $CYCLES connect/read/close cycles | ${cycle_s} s; descriptors $fds0 → $fds1, RSS $((rss0 / 1024)) → $((rss1 / 1024)) MiB |
EOF
)
echo "$table"
python3 - "$MODE" "$table" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" <<'PY'
import re, sys
mode, table, commit = sys.argv[1:4]
begin, end = f"<!-- streams:{mode}:begin -->", f"<!-- streams:{mode}:end -->"
block = f"{begin}\nCommit {commit}, `bench/streams.sh{' --quick' if mode == 'quick' else ''}`:\n\n{table}\n{end}"
text = open("BENCHMARKS.md").read()
if begin in text:
    text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
else:
    text += f"\n## Decision streams ({mode})\n\n{block}\n"
open("BENCHMARKS.md", "w").write(text)
PY
