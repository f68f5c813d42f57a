#!/usr/bin/env bash
# PostgreSQL going away under a running sheetd: events answer 503 problem+json with Retry-After,
# /readyz answers 503, and once the database is back both recover within 2 s with nothing
# acknowledged lost. Starts its own throwaway cluster (scripts/postgres.sh) and server.
#   scripts/pg-outage.sh [BINARY]      ends with "pg-outage: N passed, M failed"
set -uo pipefail
cd "$(dirname "$0")/.."
binary=${1:-.build/debug/sheetd}
work=$(mktemp -d)
pg=$(mktemp -d /tmp/sheetd-pg.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; scripts/postgres.sh stop "$pg"; rm -rf "$work"; }
trap cleanup EXIT
passed=0 failed=0
check() {  # description, then a command that must succeed
  local what=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $what"; else failed=$((failed + 1)); echo "FAIL $what"; fi
}
finish() { echo "pg-outage: $passed passed, $failed failed"; [ "$failed" = 0 ]; exit $?; }

url=$(scripts/postgres.sh start "$pg" 2>/dev/null) || { failed=1; echo "FAIL PostgreSQL did not start"; finish; }
export SHEETD_ADMIN_TOKEN="outage-admin-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export SHEETD_JWT_SECRET="outage-secret-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
"$binary" serve --port 0 --db "$url" --access-log false >"$work/server.log" 2>&1 &
pid=$!
port=""
for _ in $(seq 1 100); do
  port=$(grep -o '"msg":"listening"[^}]*' "$work/server.log" 2>/dev/null | grep -o '"port":[0-9]*' | head -1 | cut -d: -f2 || true)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { failed=1; echo "FAIL sheetd did not start:"; cat "$work/server.log"; finish; }
base="http://127.0.0.1:$port"

put_count() {  # count eventId -> prints the status; headers in $work/h
  curl -s -o "$work/body" -D "$work/h" -w '%{http_code}' --max-time 5 -X PUT \
    -H "Authorization: Bearer $SHEETD_ADMIN_TOKEN" -H 'Content-Type: application/json' \
    -d "{\"count\": $1, \"eventId\": \"$2\"}" "$base/v1/users/outage-user/containers/c/count"
}
ready() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$base/readyz"; }

check "an event is acknowledged while the database is up" test "$(put_count 1 e1)" = 200
check "ready while the database is up" test "$(ready)" = 200
scripts/postgres.sh down "$pg"
status=$(put_count 2 e2)
check "an event answers 503 while the database is down (got $status)" test "$status" = 503
check "the 503 carries Retry-After" grep -qi '^retry-after:' "$work/h"
check "the 503 is problem+json" grep -qi '^content-type: application/problem+json' "$work/h"
check "/readyz answers 503 while the database is down" test "$(ready)" = 503
scripts/postgres.sh up "$pg"
start=$(date +%s%N)
recovered=""
while [ $(( ($(date +%s%N) - start) / 1000000 )) -lt 10000 ]; do
  if [ "$(ready)" = 200 ] && [ "$(put_count 3 e3)" = 200 ]; then
    recovered=$(( ($(date +%s%N) - start) / 1000000 )); break
  fi
  sleep 0.05
done
echo "     recovered ${recovered:-never} ms after the database came back"
check "ready and writing again within 2 s of the database returning" test -n "$recovered" -a "${recovered:-99999}" -lt 2000
state=$(curl -s --max-time 5 -H "Authorization: Bearer $SHEETD_ADMIN_TOKEN" "$base/v1/users/outage-user/state" | tr -d ' \n')
check "the acknowledged counts are there" grep -q '"count":3' <<<"$state"
check "a retry of the event that got 503 is applied once" test "$(put_count 2 e2)" = 200
kill -TERM "$pid"; wait "$pid"; code=$?; pid=""
check "SIGTERM exits 0" test "$code" = 0
finish
