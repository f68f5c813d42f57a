#!/bin/sh
# Writes the secrets of docker/compose.postgres.yaml into DIR (default: docker/secrets beside this
# script), never overwriting one that exists: 48 random bytes each, hex, and the database URL that
# carries the password. Mode 0444: the containers' non-root users read them through the mounts.
#   docker/secrets.sh [DIR]
set -eu
dir=${1:-$(dirname "$0")/secrets}
mkdir -p "$dir"
umask 022
for name in postgres_password jwt_secret admin_token; do
  if [ ! -s "$dir/$name" ]; then
    head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/$name.tmp"
    mv "$dir/$name.tmp" "$dir/$name"
  fi
done
if [ ! -s "$dir/database_url" ]; then
  printf 'postgres://sheetd:%s@postgres:5432/sheetd?sslmode=disable\n' "$(cat "$dir/postgres_password")" > "$dir/database_url"
fi
chmod 0444 "$dir"/postgres_password "$dir"/jwt_secret "$dir"/admin_token "$dir"/database_url
echo "secrets in $dir"
