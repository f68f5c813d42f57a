#!/usr/bin/env bash
# Preloads N users into a fresh sheetd database in one sqlite3 transaction (recursive CTEs, rows
# inserted in key order). usage: preload.sh SHEETD_BIN DB_FILE USERS CATALOG
# The schema comes from sheetd itself: it is started once on the empty file (it migrates and loads
# the catalog), stopped, then the rows are bulk-inserted.
#
# User u<n> (zero-padded to 7 digits) is in state class n % 4, so that users of one class share one
# decision (and one ETag):
#   0: 3 offers (home-offers shows, content height measured)
#   1: 5 offers latched at 5, 2 reminders (the offers sheet stays latched, reminders show)
#   2: 1 security alert, 2 offers (the strict alerts sheet wins)
#   3: nothing reported (no card sheet)
set -euo pipefail
bin=$1 db=$2 users=$3 catalog=$4
rm -f "$db" "$db-wal" "$db-shm"
port=$(( 12000 + RANDOM % 16000 ))
SHEETD_JWT_SECRET=preload SHEETD_ADMIN_TOKEN=preload-admin "$bin" serve --port "$port" --db "$db" \
  --catalog "$catalog" --access-log false > "$db.start.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do grep -q '"listening"' "$db.start.log" 2>/dev/null && break; sleep 0.05; done
grep -q '"listening"' "$db.start.log" || { cat "$db.start.log"; kill $pid; exit 1; }
kill -TERM $pid; wait $pid || true
rm -f "$db.start.log"
sqlite3 "$db" > /dev/null <<SQL
PRAGMA journal_mode=WAL;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-65536;
BEGIN;
-- One user_states row per user with a state (format 1, see migrations/0002_user_state_rows.sql).
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $users)
INSERT INTO user_states (user_id, state)
SELECT printf('u%07d', i), CAST(CASE i % 4
  WHEN 0 THEN '1c11:offers-home0:1:3~h11:home-offers3:ios5:420.0'
  WHEN 1 THEN '1c11:offers-home0:1:5~c14:reminders-home0:1:2~l11:home-offers1:5'
  ELSE '1c11:alerts-home17:category:security1:1~c11:offers-home0:1:2~'
END AS BLOB)
FROM n WHERE i % 4 <> 3
ORDER BY 1;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
