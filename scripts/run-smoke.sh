#!/usr/bin/env bash
# Starts sheetd (BINARY, default .build/debug/sheetd) on a free port with a temporary database,
# runs scripts/smoke.sh against it, then stops it with SIGTERM and checks it exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-.build/debug/sheetd}
work=$(mktemp -d)
log="$work/server.log"
export SHEETD_ADMIN_TOKEN="smoke-admin-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export SHEETD_JWT_SECRET="smoke-secret-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
"$binary" serve --port 0 --db "$work/sheetd.sqlite" --catalog examples/catalog.json >"$log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port=""
for _ in $(seq 1 100); do
  port=$(grep -o '"msg":"listening"[^}]*' "$log" 2>/dev/null | grep -o '"port":[0-9]*' | head -1 | cut -d: -f2 || true)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "sheetd exited early:"; cat "$log"; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "sheetd did not report its port:"; cat "$log"; exit 1; }
status=0
scripts/smoke.sh "http://127.0.0.1:$port" || status=$?
kill -TERM "$pid"
code=0
wait "$pid" || code=$?
if [ "$code" != 0 ]; then echo "sheetd exited $code after SIGTERM"; tail -5 "$log"; exit 1; fi
grep -q '"msg":"stopped"' "$log" || { echo "no shutdown line in the log"; exit 1; }
exit $status
