#!/usr/bin/env bash
# The long reliability runs (issue 7) against the release binary on 127.0.0.1, then RELIABILITY.md.
#
#   scripts/reliability.sh [--quick] [--no-report] [DRIVER...]
#
# DRIVER is any of: crash graceful storage concurrency corpus slow hostile auth fuzz crash-pg concurrency-pg
# (default: all; the -pg ones run on a throwaway PostgreSQL started by scripts/postgres.sh).
# --quick    shorter rounds (a smoke of every driver, about a minute)
# --no-report  do not rewrite RELIABILITY.md (the figures still go to .build/reliability-results.jsonl)
#
# Sets up what it needs on a fresh Debian 12 machine: python3-venv, the sqlite3 CLI and postgresql (apt, only when
# root and missing), and a venv with schemathesis in .build/venv-reliability. Every driver runs under
# a time limit, uses its own temporary directory and server, and removes what it created.
# Storage faults need root (tmpfs mounts; they run the server as nobody); without root they are skipped.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
say() { printf 'reliability: %s\n' "$*" >&2; }

quick=0
write_report=1
drivers=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    --no-report) write_report=0 ;;
    crash|graceful|storage|concurrency|corpus|slow|hostile|auth|fuzz|crash-pg|concurrency-pg) drivers+=("$arg") ;;
    *) say "unknown argument $arg"; exit 2 ;;
  esac
done
[ ${#drivers[@]} -gt 0 ] || drivers=(auth corpus concurrency crash graceful storage slow hostile fuzz crash-pg concurrency-pg)

export SHEETD_BIN=${SHEETD_BIN:-$root/.build/release/sheetd}
[ -x "$SHEETD_BIN" ] || { say "no binary at $SHEETD_BIN (run: make release)"; exit 2; }

# System tools.
need_apt=()
command -v python3 >/dev/null || need_apt+=(python3)
command -v sqlite3 >/dev/null || need_apt+=(sqlite3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    say "installing ${need_apt[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "${need_apt[@]}" >/dev/null
  else
    say "missing: ${need_apt[*]} (run as root, or: sudo apt-get install ${need_apt[*]})"; exit 2
  fi
fi

# schemathesis in its own venv (pinned: the version the figures were measured with).
venv=$root/.build/venv-reliability
schemathesis_version=4.32.5
if [[ " ${drivers[*]} " == *" fuzz "* ]]; then
  if ! "$venv/bin/python" -c "import schemathesis, sys; sys.exit(schemathesis.__version__ != '$schemathesis_version')" 2>/dev/null; then
    say "installing schemathesis $schemathesis_version into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$schemathesis_version"
  fi
fi

results=$root/.build/reliability-results.jsonl
: >"$results"
export RELIABILITY_RESULTS=$results
export PYTHONUNBUFFERED=1
cd "$root/scripts/reliability"

# driver: time limit (s), full arguments, quick arguments
declare -A limit=( [crash]=300 [graceful]=120 [storage]=180 [concurrency]=120 [corpus]=240 [slow]=120 [hostile]=180 [auth]=60 [fuzz]=600
                  [crash-pg]=240 [concurrency-pg]=120 )
declare -A full=( [crash]="--rounds 20" [graceful]="--rounds 5" [storage]="" [concurrency]="--seconds 4"
                  [corpus]="--repeat 30" [slow]="--slow 300 --seconds 6" [hostile]="--seconds 20 --long-polls 1000 --cycles 1000" [auth]="" [fuzz]="--max-examples 100 --min-cases 1000"
                  [crash-pg]="--rounds 12" [concurrency-pg]="--seconds 4" )
declare -A short=( [crash]="--rounds 3" [graceful]="--rounds 1" [storage]="" [concurrency]="--seconds 1"
                   [corpus]="--repeat 3 --parallel-seconds 3" [slow]="--slow 100 --seconds 2" [hostile]="--seconds 4 --long-polls 200 --cycles 200" [auth]="" [fuzz]="--max-examples 10 --min-cases 100"
                   [crash-pg]="--rounds 3" [concurrency-pg]="--seconds 1" )
declare -A script=( [crash-pg]="crash.py --backend postgres" [concurrency-pg]="concurrency.py --backend postgres" )

failed=()
ran=0
started=$(date +%s)
for d in "${drivers[@]}"; do
  if [ "$d" = storage ] && [ "$(id -u)" != 0 ]; then
    say "storage: skipped (needs root)"; continue
  fi
  args=${full[$d]}; [ $quick = 1 ] && args=${short[$d]}
  py=python3; [ "$d" = fuzz ] && py=$venv/bin/python
  say "$d $args"
  t0=$(date +%s)
  # shellcheck disable=SC2086
  ran=$((ran + 1))
  if timeout --kill-after=10 "${limit[$d]}" "$py" ${script[$d]:-$d.py} $args; then
    say "$d: ok ($(( $(date +%s) - t0 )) s)"
  else
    say "$d: FAILED ($(( $(date +%s) - t0 )) s)"; failed+=("$d")
  fi
done
say "total $(( $(date +%s) - started )) s"

if [ $write_report = 1 ] && [ $quick = 0 ] && [ ${#failed[@]} = 0 ] && [ $ran = 11 ]; then
  python3 report.py "$results" "$root/RELIABILITY.md"
  say "wrote RELIABILITY.md"
elif [ $write_report = 1 ]; then
  say "RELIABILITY.md not rewritten (only a full run of all 11 drivers, all passing, writes it)"
fi
if [ ${#failed[@]} -gt 0 ]; then say "failed: ${failed[*]}"; exit 1; fi
say "all passed"
