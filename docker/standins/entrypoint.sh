#!/bin/bash
# First start: initdb with the password from POSTGRES_PASSWORD_FILE, the database POSTGRES_DB,
# password authentication for TCP clients. Then the command (postgres ...).
set -euo pipefail
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA"; chmod 0700 "$PGDATA"
  pwfile=$(mktemp); head -1 "${POSTGRES_PASSWORD_FILE:?POSTGRES_PASSWORD_FILE is required}" > "$pwfile"
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 > /dev/null
  rm -f "$pwfile"
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    pg_ctl -D "$PGDATA" -w -o "-c listen_addresses='' -k /tmp" start > /dev/null
    createdb -h /tmp -U "$POSTGRES_USER" "$POSTGRES_DB"
    pg_ctl -D "$PGDATA" -w -m fast stop > /dev/null
  fi
  echo "initialized $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)"
fi
if [ "${1:-}" = postgres ]; then shift; exec postgres -k /tmp "$@"; fi
exec "$@"
