#!/usr/bin/env bash
# What group commit's hand-off costs, apart from sheetd's own work: server CPU per request of
# three servers under the same event scenarios, interleaved, fresh server each run:
#
#   bench/handoff.sh [ROUNDS] [SECONDS]      (3 rounds of 5 s)
#
#   sqlite_upsert   the SQLite yardstick: one autocommit UPSERT per request, answered on the worker
#   sqlite_handoff  the same UPSERT, parked and committed in batches by one writer thread (sheetd's
#                   event path in C: suspend, queue, one transaction per batch, resume, answer)
#   sqlite_loopbatch the same UPSERT, parked, and committed by the worker itself once per turn of
#                   its own libmicrohttpd loop (external mode): the design sheetd does not have
#   sheetd          the release binary
#
# One libmicrohttpd worker each (as bench/run.sh on two cores), wrk -t1 -c64, 10 000 users. Prints
# the median CPU µs/request and req/s per server and scenario and the ratios; handoff/upsert is the
# floor of the ratio any design gets that answers after a group commit on another thread, and
# loopbatch/upsert what committing on the worker, per loop turn, would give instead.
set -euo pipefail
rounds=${1:-3} secs=${2:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=${SHEETD_BIN:-$ROOT/.build/release/sheetd}
for tool in wrk cc pkg-config; do command -v $tool >/dev/null || { echo "$tool is missing: make deps, apt-get install wrk" >&2; exit 1; }; done
[ -x "$BIN" ] || swift build -c release
WORK=$(mktemp -d /tmp/sheetd-handoff.XXXXXX)
SHEETD_PID=""
trap '[ -n "$SHEETD_PID" ] && stop_sheetd; rm -rf "$WORK"' EXIT
. bench/lib.sh
for y in sqlite_upsert sqlite_handoff sqlite_loopbatch; do
  cc -O2 -Wall -o "$WORK/$y" "bench/yardstick/$y.c" $(pkg-config --cflags --libs libmicrohttpd sqlite3) -lpthread
done
prepare_data "${BENCH_USERS:-10000}" > /dev/null
body=2400  # about a decision's size (bench/run.sh measures it); GETs only occur in the mix
run_c() {  # run_c BINARY SCRIPT: prints "rps p99 cpu"
  rm -f "$WORK/ys.sqlite" "$WORK/ys.sqlite-wal" "$WORK/ys.sqlite-shm"
  cp "$WORK/base.sqlite" "$WORK/ys.sqlite"
  SHEETD_PORT=$(( 12000 + RANDOM % 16000 ))
  "$WORK/$1" "$SHEETD_PORT" 1 "$body" "$WORK/ys.sqlite" > "$WORK/ys.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 200); do grep -q listening "$WORK/ys.log" && break; sleep 0.01; done
  wrk -t1 -c64 -d1s -s "bench/lua/$2" "http://127.0.0.1:$SHEETD_PORT" > /dev/null
  measure "$pid" "$2" "$secs"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
: > "$WORK/results"
for round in $(seq 1 "$rounds"); do
  for script in count.lua dismissal.lua impression.lua mix.lua; do
    echo "sqlite_upsert $script $(run_c sqlite_upsert "$script")" >> "$WORK/results"
    echo "sqlite_handoff $script $(run_c sqlite_handoff "$script")" >> "$WORK/results"
    echo "sqlite_loopbatch $script $(run_c sqlite_loopbatch "$script")" >> "$WORK/results"
    start_warm_sheetd "$BIN" --threads 1 > /dev/null
    echo "sheetd $script $(measure "$SHEETD_PID" "$script" "$secs")" >> "$WORK/results"
    stop_sheetd
  done
  echo "round $round of $rounds done" >&2
done
python3 - "$WORK/results" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
med = lambda server, script, i: st.median(float(r[i]) for r in rows if r[0] == server and r[1] == script)
print("| scenario | sqlite_upsert µs | sqlite_handoff µs | sqlite_loopbatch µs | sheetd µs | handoff / upsert | loopbatch / upsert | sheetd / upsert | sheetd / handoff |")
print("|---|---|---|---|---|---|---|---|---|")
for script in ["count.lua", "dismissal.lua", "impression.lua", "mix.lua"]:
    u, h, l, s = (med(k, script, 4) for k in ["sqlite_upsert", "sqlite_handoff", "sqlite_loopbatch", "sheetd"])
    print(f"| {script[:-4]} | {u:.1f} | {h:.1f} | {l:.1f} | {s:.1f} | {h/u:.2f}× | {l/u:.2f}× | {s/u:.2f}× | {s/h:.2f}× |")
print()
print("req/s medians: " + ", ".join(
    f"{script[:-4]} " + "/".join(str(int(med(k, script, 2))) for k in ["sqlite_upsert", "sqlite_handoff", "sqlite_loopbatch", "sheetd"])
    for script in ["count.lua", "dismissal.lua", "impression.lua", "mix.lua"]) + " (upsert/handoff/loopbatch/sheetd)")
PY
