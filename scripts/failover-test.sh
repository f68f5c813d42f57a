#!/usr/bin/env bash
# make failover-test: PostgreSQL failover under two sheetd replicas behind HAProxy, everything on
# 127.0.0.1 free ports (scripts/pg-ha.sh plays the orchestrator):
#   1. a primary (node1) and a synchronous standby (node2, streaming replication); two replicas on
#      postgres://...@node1,node2/...?target_session_attrs=read-write behind HAProxy (/readyz checks);
#   2. writers sending count PUTs through the balancer (6 clients over 200 users, each event retried
#      with its eventId until acknowledged), decision streams open on both replicas; kill -9 of
#      node1's postmaster, pg_ctl promote of node2 a second later. Then every acknowledged event is
#      stored, every 503 carried Retry-After, a replica answered 503 problem+json and /readyz 503
#      while no primary took writes, every stream got the change written after the failover, and
#      every user's decision on both replicas equals a freshly started replica's;
#   3. the old primary back as node2's synchronous standby (pg_rewind); no replica keeps a session on
#      it although it is the URL's first host;
#   4. the same failover back (kill -9 of node2, promote node1), with the same checks.
# Ends with "failover-test: N passed, M failed" (and the RESULT figures) and exits non-zero on any
# failure. About a minute.
#
#   scripts/failover-test.sh [BINARY]   (default .build/debug/sheetd, built when missing)
#   FAILOVER_MODE=async                 asynchronous replication: lost acknowledged events are
#                                       counted (RESULT lost=...), not failures
set -uo pipefail
cd "$(dirname "$0")/.."
binary=${1:-.build/debug/sheetd}
mode=${FAILOVER_MODE:-sync}
case "$mode" in sync | async) ;; *) echo "failover-test: FAILOVER_MODE is sync or async" >&2; exit 2 ;; esac

. scripts/replicas/lib.sh
install_missing failover-test "haproxy:command -v haproxy" "postgresql-client:command -v psql" \
  "postgresql:ls /usr/lib/postgresql/*/bin/pg_rewind"
[ -x "$binary" ] || swift build || exit 1

started_at=$(date +%s)
work=$(mktemp -d /tmp/sheetd-failover.XXXXXX)
pg=$(mktemp -d /tmp/sheetd-pg-ha.XXXXXX)
pids=()
passed=0
failed=0
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  scripts/pg-ha.sh stop "$pg" 2>/dev/null || true
  if [ "$failed" = 0 ]; then
    rm -rf "$work" "$pg"
  else
    cp "$pg"/*.log "$work/" 2>/dev/null
    rm -rf "$pg"
    echo "logs kept in $work"
  fi
}
trap cleanup EXIT
finish() {
  echo "failover-test ($mode): $passed passed, $failed failed in $(($(date +%s) - started_at)) s${summary:+ ($summary)}"
  [ "$failed" = 0 ]
  exit $?
}

export SHEETD_ADMIN_TOKEN="failover-admin-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export SHEETD_JWT_SECRET="failover-secret-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"

# 1. The cluster: node1 primary, node2 its standby (synchronous in sync mode).
if scripts/pg-ha.sh primary "$pg" node1 && scripts/pg-ha.sh standby "$pg" node2 node1; then
  [ "$mode" = sync ] && { scripts/pg-ha.sh sync "$pg" node1 node2 || { bad "node2 did not become the synchronous standby"; finish; }; }
  ok "PostgreSQL primary node1 on $(cat "$pg/node1.port"), $mode standby node2 on $(cat "$pg/node2.port")"
else
  bad "the primary and its standby did not start"
  finish
fi
url="postgres://sheetd@127.0.0.1:$(cat "$pg/node1.port"),127.0.0.1:$(cat "$pg/node2.port")/postgres?target_session_attrs=read-write"

port1=$(free_port)
port2=$(free_port)
portb=$(free_port)
start_replica 1 "$port1" || { bad "replica 1 did not start"; tail -5 "$work/replica1.log"; finish; }
start_replica 2 "$port2" || { bad "replica 2 did not start"; tail -5 "$work/replica2.log"; finish; }
ok "two replicas on ports $port1 and $port2, database URL with both hosts and target_session_attrs=read-write"

# HAProxy as in replicas-test, and its own 503 (no replica ready) as problem+json with Retry-After,
# so that every 503 a client sees during a failover says when to come back.
start_balancer "$portb" "$port1" "$port2" \
  'http-error status 503 content-type application/problem+json string "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,\"detail\":\"no sheetd replica is ready; retry shortly\"}" hdr Retry-After 1'

driver() { python3 scripts/replicas/driver.py "$@" --balancer "$balancer" --replica "http://127.0.0.1:$port1" --replica "http://127.0.0.1:$port2" --db "$url"; }
results=""
run_id=""
phase() {  # phase NAME ARGS...: runs a driver phase, keeps its RESULT line (and the run id)
  local name=$1 out
  shift
  out=$(driver "$name" "$@" 2>&1)
  local code=$?
  echo "$out" | grep -v '^RESULT ' | sed 's/^/  /'
  local result
  result=$(echo "$out" | grep '^RESULT ' | cut -d' ' -f2-)
  run_id=$(echo "$result" | tr ' ' '\n' | grep '^run=' | cut -d= -f2)
  if [ $code = 0 ]; then
    ok "$name"
    results="$results $(echo "$result" | tr ' ' '\n' | grep -v '^run=' | sed "s/^/$label./" | xargs)"
  else
    bad "$name"
  fi
}

# Each replica's decisions equal those of a replica started now (empty caches) on the new primary.
compare_fresh() {
  local port3 fpid ready=0
  [ -n "$run_id" ] || { bad "no run to compare"; return; }
  port3=$(free_port)
  "$binary" serve --port "$port3" --threads 2 --db "$url" >>"$work/fresh.log" 2>&1 &
  fpid=$!
  for _ in $(seq 1 150); do curl -fs --max-time 1 "http://127.0.0.1:$port3/readyz" >/dev/null 2>&1 && { ready=1; break; }; sleep 0.1; done
  if [ "$ready" = 1 ]; then
    phase compare --run "$run_id" --fresh "http://127.0.0.1:$port3"
  else
    bad "a fresh replica did not start"; tail -5 "$work/fresh.log"
  fi
  kill "$fpid" 2>/dev/null
  wait "$fpid" 2>/dev/null
}

# One failover: kill -9 of OLD's postmaster under load, NEW promoted a second later.
failover() {  # OLD NEW LABEL
  local old=$1 new=$2 loss=()
  label=$3
  [ "$mode" = async ] && loss=(--measure-loss)
  phase failover --label "$label" --clients 6 --users 200 --streams 10 --before 2 --after 3 --promote-after 1 \
    --kill "scripts/pg-ha.sh kill $pg $old" --promote "scripts/pg-ha.sh promote $pg $new" "${loss[@]}"
  compare_fresh
}

metric() { curl -fs --max-time 5 "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m { print $2 }'; }

# 2. node1 -> node2.
failover node1 node2 first

# 3. The old primary returns as a standby of the new one; in sync mode it becomes the synchronous one.
if scripts/pg-ha.sh rewind "$pg" node1 node2; then
  if [ "$mode" = sync ] && ! scripts/pg-ha.sh sync "$pg" node2 node1; then
    bad "node1 did not become node2's synchronous standby"
  else
    ok "node1 rewound (pg_rewind) and streaming from node2 as its $mode standby"
  fi
else
  bad "node1 could not be rewound as node2's standby"
fi
# node1 is the URL's first host and answers again, read-only: every session must still go to node2.
# A short load first (new sessions try node1 first), then: no sheetd session on node1.
label=standby
phase load --clients 4 --users 40 --after 1.5
on_standby=$(psql "postgres://sheetd@127.0.0.1:$(cat "$pg/node1.port")/postgres" -Atc \
  "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'sheetd%'" 2>&1)
[ "$on_standby" = 0 ] && ok "no replica holds a session on the returned standby (the URL's first host)" \
  || bad "sheetd sessions on the read-only standby node1: $on_standby"

# 4. node2 -> node1: the second failover loses nothing either.
failover node2 node1 second

# Reconnection is visible and bounded: each replica lost its listener twice, and the attempts that
# found no writable server stayed few (the connector's backoff) over the two outages.
for p in "$port1" "$port2"; do
  losses=$(metric "$p" sheetd_replica_listener_losses_total)
  fails=$(metric "$p" sheetd_database_connect_failures_total)
  connects=$(metric "$p" sheetd_database_connects_total)
  listening=$(metric "$p" sheetd_replica_listener_up)
  results="$results connect_failures.$p=${fails:-?}"
  if [ "${losses:-0}" -ge 2 ] && [ -n "$fails" ] && [ "$fails" -le 60 ] && [ "${listening:-0}" = 1 ]; then
    ok "replica on $p: listener lost ${losses} times and listening again; ${fails} connection attempts failed, ${connects} sessions opened (/metrics)"
  else
    bad "replica on $p: listener losses ${losses:-?}, listening ${listening:-?}, failed attempts ${fails:-?} (want >= 2, 1, <= 60)"
  fi
done

summary=$(echo "$results" | xargs)
finish
