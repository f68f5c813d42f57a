#!/usr/bin/env bash
# Starts sheetd (BINARY, default .build/debug/sheetd) on a free port with a temporary database,
# runs scripts/smoke.sh against it, then stops it with SIGTERM and checks it exits 0.
# Ends with "run-smoke: N passed, M failed": smoke.sh's checks plus start-up and shutdown.
# SHEETD_SMOKE_DB=postgres://... runs it on that PostgreSQL database instead of a SQLite file.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-.build/debug/sheetd}
work=$(mktemp -d)
log="$work/server.log"
export SHEETD_ADMIN_TOKEN="smoke-admin-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export SHEETD_JWT_SECRET="smoke-secret-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
"$binary" serve --port 0 --db "${SHEETD_SMOKE_DB:-$work/sheetd.sqlite}" --catalog examples/catalog.json >"$log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
passed=0
failed=0
finish() { echo "run-smoke: $passed passed, $failed failed"; if [ "$failed" = 0 ]; then exit 0; else exit 1; fi; }
port=""
for _ in $(seq 1 100); do
  port=$(grep -o '"msg":"listening"[^}]*' "$log" 2>/dev/null | grep -o '"port":[0-9]*' | head -1 | cut -d: -f2 || true)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "FAIL sheetd did not start and report its port:"; cat "$log"
  failed=$((failed + 1)); finish
fi
passed=$((passed + 1))
smoke_out="$work/smoke.out"
scripts/smoke.sh "http://127.0.0.1:$port" | tee "$smoke_out" || true
counts=$(grep -E '^smoke: [0-9]+ passed, [0-9]+ failed' "$smoke_out" | tail -1 || true)
if [ -n "$counts" ]; then
  passed=$((passed + $(echo "$counts" | cut -d' ' -f2)))
  failed=$((failed + $(echo "$counts" | cut -d' ' -f4)))
else
  echo "FAIL smoke.sh ended without its summary line"; failed=$((failed + 1))
fi
kill -TERM "$pid"
code=0
wait "$pid" || code=$?
if [ "$code" != 0 ]; then
  echo "FAIL sheetd exited $code after SIGTERM"; tail -5 "$log"; failed=$((failed + 1))
elif ! grep -q '"msg":"stopped"' "$log"; then
  echo "FAIL no shutdown line in the log"; failed=$((failed + 1))
else
  passed=$((passed + 1))
fi
finish
