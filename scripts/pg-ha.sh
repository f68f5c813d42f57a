#!/usr/bin/env bash
# A throwaway PostgreSQL 15 primary and its streaming standbys on 127.0.0.1, and the steps an
# orchestrator (Patroni, pg_auto_failover) takes in a failover, for scripts/failover-test.sh and
# bench/failover.sh. Every node is DIR/NAME (data), its port in DIR/NAME.port, its log DIR/NAME.log;
# the sockets are in DIR. As root, the clusters run as the `postgres` account (runuser).
#
#   scripts/pg-ha.sh primary DIR NAME            initdb (data checksums, so pg_rewind works) + start
#   scripts/pg-ha.sh standby DIR NAME FROM       pg_basebackup of node FROM, started streaming from it
#   scripts/pg-ha.sh sync DIR NAME STANDBY       NAME waits for STANDBY's flush on every commit
#                                                (synchronous_standby_names; '' makes it asynchronous)
#   scripts/pg-ha.sh kill DIR NAME               kill -9 of NAME's postmaster (its backends follow)
#   scripts/pg-ha.sh promote DIR NAME            pg_ctl promote, waits until NAME takes writes
#   scripts/pg-ha.sh rewind DIR NAME FROM        the killed NAME back as a standby of FROM (pg_rewind)
#   scripts/pg-ha.sh set DIR NAME SETTING VALUE  ALTER SYSTEM SET + reload (e.g. synchronous_commit)
#   scripts/pg-ha.sh down DIR NAME               fast shutdown of NAME (up starts it again)
#   scripts/pg-ha.sh up DIR NAME
#   scripts/pg-ha.sh stop DIR                    fast shutdown of every node
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
[ -n "$bindir" ] && [ -x "$bindir/initdb" ] || { echo "pg-ha.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 2; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
port_of() { cat "$dir/$1.port"; }
sql() {  # NAME SQL: one statement on node NAME as the superuser
  as_owner "$bindir/psql" -X -q -At -h "$dir" -p "$(port_of "$1")" -U sheetd -d postgres -v ON_ERROR_STOP=1 -c "$2"
}
# Starts NAME on its port (a new free one on first start); retries when the port was taken meanwhile.
start() {
  local name=$1 port
  for _ in 1 2 3 4 5; do
    port=$(cat "$dir/$name.port" 2>/dev/null || free_port)
    if as_owner "$bindir/pg_ctl" -D "$dir/$name" -l "$dir/$name.log" -w -t 60 \
      -o "-p $port -k $dir -c cluster_name=$name" start >/dev/null; then
      echo "$port" | as_owner tee "$dir/$name.port" >/dev/null
      return 0
    fi
    [ -f "$dir/$name.port" ] && break
    sleep 0.2
  done
  tail -20 "$dir/$name.log" >&2
  return 1
}
# Makes NAME a standby of FROM: standby.signal and primary_conninfo (its application_name is what
# synchronous_standby_names names). A node never keeps synchronous_standby_names from the primary it
# was copied from: promoted, it would wait for a standby that is not there (or for itself).
follow() {
  local name=$1 from=$2 auto="$dir/$1/postgresql.auto.conf"
  as_owner touch "$dir/$name/standby.signal"
  as_owner sed -i -e '/^primary_conninfo/d' -e '/^synchronous_standby_names/d' "$auto"
  echo "primary_conninfo = 'host=127.0.0.1 port=$(port_of "$from") user=sheetd application_name=$name'" | as_owner tee -a "$auto" >/dev/null
}
# Until NAME's standby STANDBY streams (and, when sync, is the synchronous one).
await_standby() {
  local name=$1 standby=$2 want=${3:-} state
  for _ in $(seq 1 300); do
    state=$(sql "$name" "SELECT state || ' ' || sync_state FROM pg_stat_replication WHERE application_name = '$standby'" 2>/dev/null || true)
    case "$state" in
      "streaming sync") return 0 ;;
      "streaming async") [ "$want" != sync ] && return 0 ;;
    esac
    sleep 0.1
  done
  echo "pg-ha.sh: $standby does not stream from $name (state: ${state:-none})" >&2
  return 1
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { sed -n '2,/^set /p' "$0" | sed '$d' >&2; exit 2; }
case "$cmd" in
  primary)
    name=${3:?name}
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir" && chmod 700 "$dir"
    as_owner "$bindir/initdb" -D "$dir/$name" -U sheetd --auth=trust --encoding=UTF8 --locale=C.UTF-8 --data-checksums \
      >"$dir/$name.initdb.log" 2>&1 || { cat "$dir/$name.initdb.log" >&2; exit 1; }
    # Copied to every standby by pg_basebackup and pg_rewind. wal_keep_size keeps the WAL a rewound
    # node needs from its new primary; the node-specific settings are on the command line (start).
    as_owner tee -a "$dir/$name/postgresql.conf" >/dev/null <<EOF
listen_addresses = '127.0.0.1'
max_connections = 200
wal_level = replica
max_wal_senders = 10
hot_standby = on
wal_keep_size = '512MB'
# A node that crashed syncs its data directory before recovery: syncfs is one call, not one per file.
recovery_init_sync_method = syncfs
EOF
    start "$name"
    ;;
  standby)
    name=${3:?name} from=${4:?from}
    as_owner "$bindir/pg_basebackup" -h 127.0.0.1 -p "$(port_of "$from")" -U sheetd -D "$dir/$name" -X stream -c fast \
      >"$dir/$name.basebackup.log" 2>&1 || { cat "$dir/$name.basebackup.log" >&2; exit 1; }
    follow "$name" "$from"
    start "$name"
    await_standby "$from" "$name"
    ;;
  sync)
    name=${3:?name} standby=${4-}
    sql "$name" "ALTER SYSTEM SET synchronous_standby_names = '$standby'" >/dev/null
    sql "$name" "SELECT pg_reload_conf()" >/dev/null
    if [ -n "$standby" ]; then await_standby "$name" "$standby" sync; fi
    ;;
  set)
    name=${3:?name} setting=${4:?setting} value=${5:?value}
    sql "$name" "ALTER SYSTEM SET $setting = '$value'" >/dev/null
    sql "$name" "SELECT pg_reload_conf()" >/dev/null
    ;;
  kill)
    name=${3:?name}
    postmaster=$(head -1 "$dir/$name/postmaster.pid")
    # Its children from /proc (field 4 of stat is the parent; no procps needed).
    children=$(awk -v pm="$postmaster" '$4 == pm { print $1 }' /proc/[0-9]*/stat 2>/dev/null | xargs || true)
    kill -9 "$postmaster"
    # Its backends notice the postmaster's death and exit on their own (they hold its shared memory,
    # so the node cannot be rewound or started before): wait for them, by pid.
    for _ in $(seq 1 100); do
      alive=""
      for pid in $postmaster $children; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
      [ -z "$alive" ] && exit 0
      sleep 0.05
    done
    [ -n "$alive" ] && kill -9 $alive 2>/dev/null
    ;;
  promote)
    name=${3:?name}
    as_owner "$bindir/pg_ctl" -D "$dir/$name" -w -t 60 promote >/dev/null
    ;;
  rewind)
    name=${3:?name} from=${4:?from}
    # pg_rewind reads the source's timeline from its control file: a checkpoint after the promotion
    # puts the new timeline there. The killed target is first recovered in single-user mode (PG 13+).
    sql "$from" "CHECKPOINT" >/dev/null
    as_owner "$bindir/pg_rewind" --target-pgdata="$dir/$name" \
      --source-server="host=127.0.0.1 port=$(port_of "$from") user=sheetd dbname=postgres" >"$dir/$name.rewind.log" 2>&1 \
      || { cat "$dir/$name.rewind.log" >&2; exit 1; }
    follow "$name" "$from"
    start "$name"
    await_standby "$from" "$name"
    ;;
  down)
    as_owner "$bindir/pg_ctl" -D "$dir/${3:?name}" -m fast -w -t 30 stop >/dev/null
    ;;
  up)
    start "${3:?name}"
    ;;
  stop)
    for data in "$dir"/*/PG_VERSION; do
      [ -e "$data" ] || continue
      as_owner "$bindir/pg_ctl" -D "$(dirname "$data")" -m fast -w -t 30 stop >/dev/null 2>&1 || true
    done
    ;;
  *)
    echo "pg-ha.sh: unknown command $cmd" >&2
    exit 2
    ;;
esac
