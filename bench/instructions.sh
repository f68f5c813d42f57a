#!/usr/bin/env bash
# User-space instructions per request of one or more sheetd binaries under one bench scenario,
# counted by valgrind's callgrind: exact and unaffected by other load on the machine (unlike req/s
# or CPU time), so it shows what a code change saved. Kernel time (sockets) is not included.
#
#   [INSTRUCTIONS_ARGS="--decision-cache 0"] bench/instructions.sh [SCRIPT] BIN...       e.g. bench/instructions.sh decision.lua /tmp/old .build/release/sheetd
#
# Each binary runs under callgrind on the same 2 000-user database (BENCH_USERS), is warmed up
# (every user's decision once), then counters are zeroed and wrk sends requests for 10 s
# (-c8: callgrind runs one thread at a time); the instructions of that phase divided by the
# requests answered is the figure. BENCH_DATA=ten-cards measures on issue 47's uncached scenario
# (bench/ten_cards.py); SHEETD_WARMUP_SECONDS (10) is long enough for the warm-up to reach
# every user under valgrind (a user first seen in the measured phase costs a token verification).
set -euo pipefail
script=decision.lua
case "${1:-}" in *.lua) script=$1; shift ;; esac
[ $# -ge 1 ] || { sed -n '2,12p' "$0"; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
for tool in valgrind wrk; do
  command -v $tool >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $tool >/dev/null; }
done
WORK=$(mktemp -d /tmp/sheetd-instructions.XXXXXX)
SHEETD_PID=""
trap '[ -n "$SHEETD_PID" ] && stop_sheetd; rm -rf "$WORK"' EXIT
. bench/lib.sh
SHEETD_WARMUP_SECONDS=${SHEETD_WARMUP_SECONDS:-10}
BIN=$(realpath "$1") prepare_data "${BENCH_USERS:-2000}"
n=0
for bin in "$@"; do
  # Debian's valgrind 3.19 gives up on Swift 6.3's DWARF 5 ("Possibly corrupted debuginfo file"):
  # it runs a copy without debug info (the symbol table stays, so profiles keep their names).
  n=$((n + 1))
  strip --strip-debug -o "$WORK/sheetd-$n" "$(realpath "$bin")"
  SHEETD_START_TIMEOUT=3000 SHEETD_WRAPPER="valgrind --tool=callgrind --callgrind-out-file=$WORK/cg.%p" \
    start_warm_sheetd "$WORK/sheetd-$n" ${INSTRUCTIONS_ARGS:-}
  callgrind_control --zero "$SHEETD_PID" > /dev/null
  out=$(wrk -t1 -c8 -d10s -s "bench/lua/$script" "http://127.0.0.1:$SHEETD_PORT")
  requests=$(echo "$out" | sed -n 's/^BENCH .*"requests":\([0-9]*\).*/\1/p')
  callgrind_control --dump "$SHEETD_PID" > /dev/null
  sleep 1
  ir=$(cat "$WORK"/cg.*.[0-9]* 2>/dev/null | awk '/^summary:/ {s += $2} END {print s + 0}')
  stop_sheetd
  # The profile of the measured phase stays for `callgrind_annotate .build/profile/callgrind.out`.
  mkdir -p .build/profile
  cp "$(ls "$WORK"/cg.*.[0-9]* | head -1)" .build/profile/callgrind.out 2>/dev/null || true
  rm -f "$WORK"/cg.*
  echo "$bin: $requests requests, $(( ir / ${requests:-1} )) instructions/request"
done
