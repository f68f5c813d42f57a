#!/usr/bin/env bash
# Storage growth: does the SQLite database grow with users or with events?
#
#   bench/growth.sh [--quick]        (part of make bench and make bench-quick)
#
# 1 000 users (bench/preload.sh) send 300 000 events of every kind (count PUTs, dismissals,
# presentations, impressions, content heights, each with its own event id; bench/lua/growth.lua),
# in three phases of 100 000 on one database. After each phase sheetd is stopped (its close
# checkpoints the WAL) and the database plus WAL is measured. Target: after 300 000 events less than
# 10 % larger than after the first 100 000. The per-user rate limit is off for the run (it is a
# storage measurement, not an abuse test). --quick: 300 users, three phases of 30 000 (the same
# 100 events per user and phase).
# Environment: GROWTH_USERS, GROWTH_EVENTS (per phase) override; SHEETD_BIN the binary.
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
USERS=${GROWTH_USERS:-$([ $quick = 1 ] && echo 300 || echo 1000)}
EVENTS=${GROWTH_EVENTS:-$([ $quick = 1 ] && echo 30000 || echo 100000)}
MODE=$([ $quick = 1 ] && echo growth-quick || echo growth)
command -v wrk >/dev/null && command -v sqlite3 >/dev/null || {
  echo "installing: wrk sqlite3"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq wrk sqlite3 >/dev/null
}
[ -x "$BIN" ] || swift build -c release

WORK=$(mktemp -d /tmp/sheetd-growth.XXXXXX)
SHEETD_PID=""
trap '[ -n "$SHEETD_PID" ] && kill -TERM "$SHEETD_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
# shellcheck source=bench/lib.sh
source bench/lib.sh
prepare_data "$USERS"
cp "$WORK/base.sqlite" "$WORK/growth.sqlite"
DB=$WORK/growth.sqlite

bytes() { echo $(( $(stat -c %s "$DB") + $(stat -c %s "$DB-wal" 2>/dev/null || echo 0) )); }
start() {
  SHEETD_PORT=$(( 12000 + RANDOM % 16000 ))
  SHEETD_JWT_SECRET=$SECRET SHEETD_ADMIN_TOKEN=admin-$RANDOM "$BIN" serve --port "$SHEETD_PORT" --db "$DB" \
    --access-log false --max-events-per-user-per-minute 0 > "$WORK/server.log" 2>&1 &
  SHEETD_PID=$!
  for _ in $(seq 1 500); do grep -q '"listening"' "$WORK/server.log" && return 0; sleep 0.01; done
  cat "$WORK/server.log" >&2; echo "sheetd did not start" >&2; exit 1
}

sizes=() sent=() errors=0
sizes+=("$(bytes)")
total=0
for phase in 1 2 3; do
  start
  rm -f "$WORK/done"
  BENCH_EVENTS=$EVENTS BENCH_EVENT_PREFIX="p$phase-" BENCH_DONE_FILE="$WORK/done" \
    wrk -t1 -c64 -d600s -s bench/lua/growth.lua "http://127.0.0.1:$SHEETD_PORT" > "$WORK/wrk.out" 2>&1 &
  wrk_pid=$!
  until [ -e "$WORK/done" ] || ! kill -0 "$wrk_pid" 2>/dev/null; do sleep 0.1; done
  kill -INT "$wrk_pid" 2>/dev/null || true
  wait "$wrk_pid" || true
  stop_sheetd
  line=$(sed -n 's/^BENCH //p' "$WORK/wrk.out")
  [ -n "$line" ] || { cat "$WORK/wrk.out" >&2; echo "wrk produced no result" >&2; exit 1; }
  n=$(echo "$line" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])')
  e=$(echo "$line" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["errors"] + d["status_errors"])')
  total=$((total + n)); errors=$((errors + e))
  sizes+=("$(bytes)"); sent+=("$total")
  log "phase $phase: $total events so far ($e errors), database + WAL $(bytes) bytes"
done
rows=$(sqlite3 "$DB" "SELECT (SELECT count(*) FROM user_states) || ' user rows, ' || (SELECT count(*) FROM processed_events) || ' processed event ids, ' || (SELECT count(*) FROM sheet_rollups) || ' rollup rows'")

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || commit="$commit (+ uncommitted changes)"
python3 - "$MODE" "$commit" "$USERS" "$errors" "$rows" "${sizes[*]}" "${sent[*]}" BENCHMARKS.md <<'EOF'
import datetime, os, re, sys
mode, commit, users, errors, rows, sizes, sent, target = sys.argv[1:]
sizes = [int(x) for x in sizes.split()]; sent = [int(x) for x in sent.split()]
growth = sizes[3] / sizes[1] - 1
out = [f"<!-- bench:{mode}:begin (written by bench/growth.sh; edit outside the markers) -->",
       f"### Storage growth{' (quick)' if mode.endswith('quick') else ''}: `bench/growth.sh{' --quick' if mode.endswith('quick') else ''}`", "",
       f"- Date: {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}; commit `{commit}`; {users} users, events of every kind with event ids, "
       f"sheetd stopped (WAL checkpointed) after each phase; {errors} errors", f"- At the end: {rows}", "",
       "| after | events | database + WAL, MiB | vs after the first phase |", "|---|---|---|---|",
       f"| preload | 0 | {sizes[0] / 1048576:.2f} | |"]
for i in range(3):
    out.append(f"| phase {i + 1} | {sent[i]:,} | {sizes[i + 1] / 1048576:.2f} | {sizes[i + 1] / sizes[1] - 1:+.1%} |".replace(",", " "))
out += ["", f"Target: less than 10 % larger after the third phase than after the first: {growth:+.1%}, "
        f"**{'met' if growth < 0.10 else 'missed'}**.", "", f"<!-- bench:{mode}:end -->"]
section = "\n".join(out)
text = open(target).read()
pat = re.compile(rf"<!-- bench:{mode}:begin.*?<!-- bench:{mode}:end -->", re.S)
text = pat.sub(lambda _: section, text) if pat.search(text) else text.rstrip("\n") + "\n\n" + section + "\n"
open(target, "w").write(text)
print(section)
EOF
