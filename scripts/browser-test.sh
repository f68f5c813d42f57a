#!/usr/bin/env bash
# The live preview page (GET /preview) and the operator console (GET /console) in a real browser:
# starts sheetd (BINARY, default .build/debug/sheetd) on a free port with a temporary database and
# examples/catalog.json, then drives headless Chromium through scripts/browser-test.py (the preview)
# and scripts/console-test.py (the console, on the same server afterwards; about 40 s) with selenium
# (from PyPI, in a venv under .build/venv-browser). Installs what is missing when root on Debian:
# chromium, chromium-driver, python3-venv. Screenshots go to $PREVIEW_SHOTS and $CONSOLE_SHOTS
# (default: a temporary directory; CONSOLE_SHOTS=docs/console refreshes docs/console.md's). Both scripts
# run even when the first fails; the exit status is non-zero when either did.
#
#   scripts/browser-test.sh [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-.build/debug/sheetd}
venv=.build/venv-browser

say() { printf 'browser-test: %s\n' "$*" >&2; }

missing=$(for p in chromium chromium-driver python3-venv; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"; done)
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    say "installing: $(echo $missing)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 $missing >/dev/null
  else
    say "missing Debian packages: $(echo $missing) (run as root, or: sudo apt-get install $(echo $missing))"; exit 1
  fi
fi
if ! "$venv/bin/python" -c 'import selenium' 2>/dev/null; then
  say "installing selenium into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check selenium
fi
[ -x "$binary" ] || { say "no binary at $binary (make build first)"; exit 1; }

work=$(mktemp -d)
log="$work/server.log"
shots=${PREVIEW_SHOTS:-$work/shots}
mkdir -p "$shots"
export SHEETD_ADMIN_TOKEN="browser-admin-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export SHEETD_JWT_SECRET="browser-secret-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
"$binary" serve --port 0 --db "$work/sheetd.sqlite" --catalog examples/catalog.json --access-log false >"$log" 2>&1 &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # Keep the screenshots when they were asked for elsewhere; otherwise they go with the rest.
  if [ -z "${PREVIEW_SHOTS:-}" ] && [ "${KEEP_SHOTS:-}" = 1 ]; then say "screenshots kept in $shots"; return; fi
  rm -rf "$work"
}
trap cleanup EXIT
port=""
for _ in $(seq 1 100); do
  port=$(grep -o '"msg":"listening"[^}]*' "$log" 2>/dev/null | grep -o '"port":[0-9]*' | head -1 | cut -d: -f2 || true)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { say "sheetd exited early:"; cat "$log"; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { say "sheetd did not report its port:"; cat "$log"; exit 1; }

user_token=$("$binary" token --user preview-user --ttl 3600)
status=0
PREVIEW_BASE="http://127.0.0.1:$port" PREVIEW_USER_TOKEN="$user_token" PREVIEW_SHOTS_DIR="$shots" \
  "$venv/bin/python" scripts/browser-test.py || status=1
PREVIEW_BASE="http://127.0.0.1:$port" CONSOLE_SHOTS_DIR="${CONSOLE_SHOTS:-$work/console-shots}" \
  "$venv/bin/python" scripts/console-test.py || status=1
exit $status
