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
port=$(( 20000 + RANDOM % 20000 ))
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
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $users)
INSERT INTO container_counts (user_id, container_id, filter, count, seq)
SELECT printf('u%07d', i), c.container_id, c.filter, c.count, NULL
FROM n JOIN (
  SELECT 0 AS cls, 'offers-home' AS container_id, '' AS filter, 3 AS count
  UNION ALL SELECT 1, 'offers-home', '', 5
  UNION ALL SELECT 1, 'reminders-home', '', 2
  UNION ALL SELECT 2, 'alerts-home', 'category:security', 1
  UNION ALL SELECT 2, 'offers-home', '', 2
) AS c ON c.cls = i % 4
ORDER BY 1, 2, 3;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $users)
INSERT INTO latches (user_id, sheet_id, count) SELECT printf('u%07d', i), 'home-offers', 5 FROM n WHERE i % 4 = 1;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $users)
INSERT INTO content_heights (user_id, sheet_id, platform, height)
SELECT printf('u%07d', i), 'home-offers', 'ios', 420.0 FROM n WHERE i % 4 = 0;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
