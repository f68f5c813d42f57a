#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for the tests: a fresh cluster in a temporary directory, listening on a
# free port on 127.0.0.1 only, owned by a non-root user (PostgreSQL refuses to run as root).
#
#   scripts/postgres.sh start [DIR]   initdb + start; prints the URL (postgres://...) on stdout
#   scripts/postgres.sh stop DIR      fast shutdown, removes DIR
#   scripts/postgres.sh url DIR       prints the URL of a running cluster
#   scripts/postgres.sh down DIR      stops the server, keeps the data (outage tests)
#   scripts/postgres.sh up DIR        starts it again on the same port
#   scripts/postgres.sh crash DIR     stops it the way a crash would (immediate: no checkpoint, the
#                                     next start recovers from the WAL), keeps the data
#
# DIR defaults to a new mktemp directory; its path is in the URL's socket-free form and in DIR/url.
# Needs Debian's postgresql (make deps installs it). As root, the cluster runs as the `postgres`
# system account (created by the package) through runuser.
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
[ -n "$bindir" ] && [ -x "$bindir/initdb" ] || { echo "postgres.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 2; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Starts the cluster in DIR on PORT (only 127.0.0.1, socket in DIR).
pg_start() {
  as_owner "$bindir/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 30 \
    -o "-p $2 -k $1 -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

cmd=${1:-}
case "$cmd" in
  start)
    dir=${2:-$(mktemp -d /tmp/sheetd-pg.XXXXXX)}
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir" && chmod 700 "$dir"
    as_owner "$bindir/initdb" -D "$dir/data" -U sheetd --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    for attempt in 1 2 3 4 5; do
      port=$(free_port)
      if pg_start "$dir" "$port"; then
        url="postgres://sheetd@127.0.0.1:$port/postgres"
        echo "$url" | as_owner tee "$dir/url" >/dev/null
        echo "$port" | as_owner tee "$dir/port" >/dev/null
        echo "$dir" >&2
        echo "$url"
        exit 0
      fi
      sleep 0.2   # the port was taken meanwhile: pick another
    done
    cat "$dir/server.log" >&2
    exit 1
    ;;
  stop)
    dir=${2:?usage: postgres.sh stop DIR}
    [ -d "$dir/data" ] && as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  down)
    dir=${2:?usage: postgres.sh down DIR}
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  crash)
    dir=${2:?usage: postgres.sh crash DIR}
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    ;;
  up)
    dir=${2:?usage: postgres.sh up DIR}
    pg_start "$dir" "$(cat "$dir/port")"
    ;;
  url)
    cat "${2:?usage: postgres.sh url DIR}/url"
    ;;
  *)
    echo "usage: $0 start [DIR] | stop DIR | down DIR | crash DIR | up DIR | url DIR" >&2
    exit 2
    ;;
esac
