#!/usr/bin/env bash
# make replicas-test: two sheetd replicas on one throwaway PostgreSQL behind HAProxy (round robin,
# health check on /readyz), everything on 127.0.0.1 free ports, then:
#   1. the smoke walk (scripts/smoke.sh) through the balancer;
#   2. 10 000 write-then-read pairs, the write on one replica and the read at once on the other: 0 stale;
#   3. catalog changes on one replica served by the other on the next request;
#   4. kill -9 of one replica under load, clients retrying through the balancer with the same eventId:
#      all succeed, 0 acknowledged events lost (checked in the database);
#   5. PostgreSQL stopped and started under load: 503s while down, recovery within 2 s, 0 lost;
#   6. pg_dump, pg_restore into a fresh database, a third replica on it answers as the first does.
# Ends with "replicas-test: N passed, M failed" and exits non-zero on any failure.
#
#   scripts/replicas-test.sh [BINARY]      (default .build/debug/sheetd, built when missing)
#   REPLICAS_PAIRS=10000                   write-then-read pairs
set -uo pipefail
cd "$(dirname "$0")/.."
binary=${1:-.build/debug/sheetd}
pairs=${REPLICAS_PAIRS:-10000}

# HAProxy and psql (Debian haproxy, postgresql-client), installed when missing as the Makefile's deps do.
. scripts/replicas/lib.sh
install_missing replicas-test "haproxy:command -v haproxy" "postgresql-client:command -v psql"
[ -x "$binary" ] || swift build || exit 1

work=$(mktemp -d /tmp/sheetd-replicas.XXXXXX)
pgdir=$(mktemp -d /tmp/sheetd-pg.XXXXXX)
pids=()
passed=0
failed=0
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  scripts/postgres.sh stop "$pgdir" 2>/dev/null || true
  if [ "$failed" = 0 ]; then rm -rf "$work"; else echo "logs kept in $work"; fi
}
trap cleanup EXIT
finish() {
  echo "replicas-test: $passed passed, $failed failed${summary:+ ($summary)}"
  [ "$failed" = 0 ]
  exit $?
}

export SHEETD_ADMIN_TOKEN="replicas-admin-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export SHEETD_JWT_SECRET="replicas-secret-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"


url=$(scripts/postgres.sh start "$pgdir" 2>/dev/null) || { bad "PostgreSQL did not start"; finish; }
ok "PostgreSQL on $(cat "$pgdir/port")"

port1=$(free_port)
port2=$(free_port)
portb=$(free_port)
start_replica 1 "$port1" || { bad "replica 1 did not start"; tail -5 "$work/replica1.log"; finish; }
start_replica 2 "$port2" || { bad "replica 2 did not start"; tail -5 "$work/replica2.log"; finish; }
ok "two replicas on ports $port1 and $port2"

start_balancer "$portb" "$port1" "$port2"

driver() { python3 scripts/replicas/driver.py "$@" --balancer "$balancer" --replica "http://127.0.0.1:$port1" --replica "http://127.0.0.1:$port2" --db "$url"; }
results=""
phase() {  # phase NAME ARGS...: runs a driver phase, keeps its RESULT line
  local name=$1 out
  shift
  out=$(driver "$name" "$@" 2>&1)
  local code=$?
  echo "$out" | grep -v '^RESULT ' | sed 's/^/  /'
  if [ $code = 0 ]; then
    ok "$name"
    results="$results $(echo "$out" | grep '^RESULT ' | cut -d' ' -f2-)"
  else
    bad "$name"
  fi
}

# 1. The smoke walk through the balancer: its requests (the stream and the write that changes it
#    included) alternate between the replicas. Its check of one process's own /metrics counters is
#    skipped (SHEETD_SMOKE_BALANCED=1): no one replica saw the whole walk.
SHEETD_SMOKE_BALANCED=1 scripts/smoke.sh "$balancer" >"$work/smoke.out" 2>&1
counts=$(grep -E '^smoke: [0-9]+ passed, [0-9]+ failed' "$work/smoke.out" | tail -1)
if [ -n "$counts" ] && [ "$(echo "$counts" | cut -d' ' -f4)" = 0 ]; then ok "smoke walk through the balancer ($counts)"; else bad "smoke walk through the balancer"; grep FAIL "$work/smoke.out"; fi

# 2., 3.
phase pairs --pairs "$pairs"
phase catalog --rounds 20

# 4. kill -9 of replica 2 under load; then it starts again (for the next phase).
phase kill --kill-pid "${rpid[2]}" --clients 8 --before 2 --after 3
wait "${rpid[2]}" 2>/dev/null || true  # reaped quietly
start_replica 2 "$port2" && ok "replica 2 started again" || bad "replica 2 did not start again"
sleep 0.5  # HAProxy's next health check (200 ms) sees it

# 5. PostgreSQL stopped for 2 s under load, then started on the same port.
phase pgrestart --clients 8 --before 1.5 --after 2 --down-seconds 2 \
  --down "scripts/postgres.sh down $pgdir" --up "scripts/postgres.sh up $pgdir"

# The replicas noticed the restart on their listener and are listening again.
for p in "$port1" "$port2"; do
  listening=0
  for _ in $(seq 1 50); do
    curl -fs "http://127.0.0.1:$p/metrics" 2>/dev/null | grep -q '^sheetd_replica_listener_up 1' && { listening=1; break; }
    sleep 0.1
  done
  [ "$listening" = 1 ] && ok "replica on $p listens again after the restart" || bad "replica on $p does not listen after the restart"
done

# 6. Backup and restore (docs/operations.md): pg_dump of the database the replicas serve, pg_restore
#    into a fresh database, a third replica on it; it answers the catalog, and every stored user's
#    state and decision, exactly as replica 1 does.
restored_url="${url%/*}/sheetd_restored"
started=$(date +%s%N)
if pg_dump --format=custom --no-owner --file "$work/sheetd.dump" "$url" 2>"$work/pg_dump.log" \
  && psql "$url" -qc "CREATE DATABASE sheetd_restored" >>"$work/pg_dump.log" 2>&1 \
  && pg_restore --no-owner --exit-on-error --dbname "$restored_url" "$work/sheetd.dump" >>"$work/pg_dump.log" 2>&1; then
  ok "pg_dump and pg_restore into a fresh database ($(( ($(date +%s%N) - started) / 1000000 )) ms, $(stat -c %s "$work/sheetd.dump") bytes)"
  port3=$(free_port)
  "$binary" serve --port "$port3" --threads 2 --db "$restored_url" >>"$work/replica3.log" 2>&1 &
  pids+=("$!")
  ready=0
  for _ in $(seq 1 100); do curl -fs --max-time 1 "http://127.0.0.1:$port3/readyz" >/dev/null 2>&1 && { ready=1; break; }; sleep 0.1; done
  if [ "$ready" = 1 ]; then
    differ=0 compared=0
    get() { curl -fsS --max-time 5 -H "Authorization: Bearer $SHEETD_ADMIN_TOKEN" "$1$2" 2>&1; }
    paths=("/v1/sheets?limit=500" "/v1/settings")
    for user in $(psql "$url" -Atc "SELECT user_id FROM user_states ORDER BY user_id LIMIT 150"); do
      paths+=("/v1/users/$user/state" "/v1/users/$user/decision?screen=home&tab=accounts&platform=ios")
    done
    for path in "${paths[@]}"; do
      compared=$((compared + 1))
      [ "$(get "http://127.0.0.1:$port1" "$path")" = "$(get "http://127.0.0.1:$port3" "$path")" ] || { differ=$((differ + 1)); [ "$differ" -le 3 ] && echo "  differs: $path"; }
    done
    [ "$differ" = 0 ] && [ "$compared" -gt 10 ] && ok "a replica on the restored database answers $compared reads as the original does" \
      || bad "a replica on the restored database: $differ of $compared reads differ"
  else
    bad "replica 3 did not start on the restored database"; tail -5 "$work/replica3.log"
  fi
else
  bad "pg_dump / pg_restore"; tail -5 "$work/pg_dump.log"
fi

summary=$(echo "$results" | xargs)
finish
