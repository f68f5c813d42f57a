#!/usr/bin/env bash
# Peak RSS of one catalog impact analysis over many large users (issue 42 item 7). About 1 minute.
#
#   bench/impact-rss.sh [USERS] [CONTAINERS]   (defaults 10000 users, 256 containers each)
#   BIN=.build/release/sheetd                   the binary (the release build when present, else debug)
#
# Preloads USERS users with CONTAINERS containers each by SQL (the state rows of
# migrations/0002_user_state_rows.sql), serves them, reads the server's RSS, runs
# `POST /v1/catalog/impact?users=USERS` with examples/catalog.json, and prints the RSS before, the
# peak (VmHWM) after, and what the analysis covered.
set -euo pipefail
cd "$(dirname "$0")/.."
users=${1:-10000}
containers=${2:-256}
bin=${BIN:-}
if [ -z "$bin" ]; then
  if [ -x .build/release/sheetd ]; then bin=.build/release/sheetd; else bin=.build/debug/sheetd; fi
fi
[ -x "$bin" ] || { echo "impact-rss: no binary at $bin (swift build -c release)"; exit 1; }
command -v sqlite3 > /dev/null || { echo "impact-rss: needs sqlite3"; exit 1; }
work=$(mktemp -d /tmp/sheetd-impact-bench.XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
pid=

# The schema from sheetd itself (started once on the empty file), then the rows.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
start() {
  SHEETD_JWT_SECRET=bench SHEETD_ADMIN_TOKEN=bench-admin SHEETD_MAX_BODY=1048576 "$bin" serve --port "$port" --db "$work/db.sqlite" \
    --catalog examples/catalog.json --access-log false >"$work/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 400); do grep -q '"listening"' "$work/serve.log" 2>/dev/null && break; sleep 0.05; done
  grep -q '"listening"' "$work/serve.log" || { cat "$work/serve.log"; exit 1; }
}
start
kill -TERM "$pid"; wait "$pid" || true
# One state of CONTAINERS containers (format 1: c<len>:<id><len>:<filter><len>:<count>~ per container).
state=$(CONTAINERS=$containers python3 -c '
import os
def field(s): return "%d:%s" % (len(s), s)
print("1" + "".join("c" + field("container-%03d" % i) + field("") + field(str(i % 9 + 1)) + "~" for i in range(int(os.environ["CONTAINERS"]))))')
sqlite3 "$work/db.sqlite" > /dev/null <<SQL
PRAGMA journal_mode=WAL;
PRAGMA synchronous=OFF;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $users)
INSERT INTO user_states (user_id, state) SELECT printf('u%07d', i), CAST('$state' AS BLOB) FROM n ORDER BY 1;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
echo "preloaded $users users of $containers containers: $(stat -c %s "$work/db.sqlite") bytes"
start

rss() { awk -v k="$1:" '$1 == k {print int($2 / 1024)}' "/proc/$pid/status"; }
echo "RSS before the analysis: $(rss VmRSS) MiB (peak so far $(rss VmHWM) MiB)"
python3 - "$port" "$users" <<'PY'
import http.client, json, sys, time
port, users = int(sys.argv[1]), int(sys.argv[2])
body = open("examples/catalog.json").read()
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
t0 = time.monotonic()
conn.request("POST", "/v1/catalog/impact?users=%d" % users, body,
             {"Authorization": "Bearer bench-admin", "Content-Type": "application/json"})
r = conn.getresponse(); answer = r.read()
took = time.monotonic() - t0
if r.status != 200:
    print("impact:", r.status, answer[:300]); sys.exit(1)
sample = json.loads(answer)["sample"]
print("impact: %.1f s, sample %s" % (took, json.dumps(sample)))
PY
echo "RSS after: $(rss VmRSS) MiB, peak (VmHWM): $(rss VmHWM) MiB"
