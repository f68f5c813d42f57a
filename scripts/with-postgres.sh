#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL (scripts/postgres.sh) whose URL is in
# SHEETD_TEST_POSTGRES_URL, and stops the server afterwards, whatever the command's outcome.
#   scripts/with-postgres.sh swift test --skip-build
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d /tmp/sheetd-pg.XXXXXX)
trap 'scripts/postgres.sh stop "$dir"' EXIT
SHEETD_TEST_POSTGRES_URL=$(scripts/postgres.sh start "$dir" 2>/dev/null)
export SHEETD_TEST_POSTGRES_URL
"$@"
