#!/usr/bin/env bash
# A/B of two sheetd binaries under one bench scenario, interleaved (A B B A A B ...), for
# development: did a change make a route cheaper? Prints each run and the medians.
#
#   bench/compare.sh BIN_A BIN_B [SCRIPT] [ROUNDS] [SECONDS]   e.g. bench/compare.sh /tmp/old .build/release/sheetd decision.lua 6 5
#
# CPU µs per request (from /proc) is the figure to read on a shared machine; req/s and p99 move
# with whatever else runs. Extra server flags go in COMPARE_ARGS (e.g. "--threads 1").
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0"; exit 2; }
A=$(realpath "$1") B=$(realpath "$2") script=${3:-decision.lua} rounds=${4:-6} secs=${5:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
WORK=$(mktemp -d /tmp/sheetd-compare.XXXXXX)
SHEETD_PID=""
trap '[ -n "$SHEETD_PID" ] && stop_sheetd; rm -rf "$WORK"' EXIT
. bench/lib.sh
BIN=$A prepare_data "${BENCH_USERS:-10000}"
: > "$WORK/results"
for round in $(seq 1 "$rounds"); do
  order="A B"; [ $((round % 2)) = 0 ] && order="B A"
  for which in $order; do
    bin=$A; [ "$which" = B ] && bin=$B
    # shellcheck disable=SC2086
    start_warm_sheetd "$bin" ${COMPARE_ARGS:-}
    line=$(measure "$SHEETD_PID" "$script" "$secs")
    stop_sheetd
    echo "$which $line" | tee -a "$WORK/results"
  done
done
python3 - "$WORK/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for w in "AB":
    r = [list(map(float, x[1:])) for x in rows if x[0] == w]
    print("%s median: %.0f req/s, p99 %.2f ms, CPU %.1f us/request" % (w, *(statistics.median(c) for c in zip(*r))))
PY
