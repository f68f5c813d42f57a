#!/usr/bin/env bash
# `make test`: every stage (unit, PostgreSQL store tests, smoke on SQLite and on PostgreSQL, the
# PostgreSQL outage check, the documentation (docs), the Android client's Kotlin tests, spec, lint), each run even when an earlier one failed, then one
# line per stage and a last line counting every test case of every stage:
#   make test: N passed, M failed
# Unit counts Swift Testing tests (a parameterized test counts once) and XCTest tests, from the JUnit
# files `swift test --xunit-output` writes (the console can drop a test's result line when many tests
# finish at once; the files cannot); smoke counts scripts/run-smoke.sh's checks; docs scripts/docs-test.py's; spec counts check-openapi's checks;
# lint counts the Swift files that `swift format lint --strict` finds nothing in.
# android counts the JUnit 5 tests of clients/android/core from the console launcher's summary (about a minute).
# A stage that ends without its own count (a crash, a build error) counts as one failure.
# Exits 1 when anything failed. SWIFT_FLAGS is passed to swift build and swift test.
set -uo pipefail
cd "$(dirname "$0")/.."
logs=.build/test-logs
mkdir -p "$logs"
flags=${SWIFT_FLAGS:-}
summary=()
total_passed=0
total_failed=0

record() {  # stage passed failed [note]
  summary+=("$(printf '%-10s %d passed, %d failed%s' "$1:" "$2" "$3" "${4:+ ($4)}")")
  total_passed=$((total_passed + $2))
  total_failed=$((total_failed + $3))
}

# run_stage STAGE PREFIX COMMAND...: runs a script whose last line is "PREFIX: N passed, M failed",
# its output teed to $logs/STAGE.log, and records those counts (one failure when the line is missing).
run_stage() {
  local stage=$1 prefix=$2 counts
  shift 2
  "$@" 2>&1 | tee "$logs/$stage.log"
  counts=$(grep -E "^$prefix: [0-9]+ passed, [0-9]+ failed" "$logs/$stage.log" | tail -1)
  if [ -n "$counts" ]; then
    record "$stage" "$(echo "$counts" | cut -d' ' -f2)" "$(echo "$counts" | cut -d' ' -f4)"
  else
    record "$stage" 0 1 "$1 ended without its summary: see $logs/$stage.log"
  fi
}

# --- a throwaway PostgreSQL for the store tests and the second smoke walk (scripts/postgres.sh) -----
pg_dir=$(mktemp -d /tmp/sheetd-pg.XXXXXX)
trap 'scripts/postgres.sh stop "$pg_dir"' EXIT
if SHEETD_TEST_POSTGRES_URL=$(scripts/postgres.sh start "$pg_dir" 2>"$logs/postgres.log"); then
  export SHEETD_TEST_POSTGRES_URL
else
  unset SHEETD_TEST_POSTGRES_URL
  record pg 0 1 "PostgreSQL did not start: see $logs/postgres.log; its tests fail (they never skip)"
fi

# --- unit: swift build --build-tests, swift test ---------------------------------------------------
built=0
# shellcheck disable=SC2086
if swift build --build-tests $flags 2>&1 | tee "$logs/build.log"; then
  built=1
  rm -f "$logs"/unit*.xml
  # shellcheck disable=SC2086
  swift test --skip-build $flags --xunit-output "$logs/unit.xml" 2>&1 | tee "$logs/unit.log"
  unit_status=$?
  # Sums an attribute of every <testsuite> element of the JUnit files (Swift Testing's and XCTest's).
  junit_sum() { cat "$logs"/unit*.xml 2>/dev/null | grep -o '<testsuite [^>]*>' | grep -o " $1=\"[0-9]*\"" | grep -o '[0-9]*' | awk '{ n += $1 } END { print n + 0 }'; }
  if ls "$logs"/unit*.xml > /dev/null 2>&1; then
    failed=$(( $(junit_sum failures) + $(junit_sum errors) ))
    passed=$(( $(junit_sum tests) - failed - $(junit_sum skipped) ))
  else
    passed=0
    failed=1
  fi
  # A failure line the JUnit files do not count (there should be none) still fails the stage.
  console_failed=$(grep -E '^✘ Test .* failed after' "$logs/unit.log" | grep -vc '^✘ Test run ')
  [ "$console_failed" -gt "$failed" ] && failed=$console_failed
  if ! grep -qE '^(✔|✘) Test run with [0-9]+ tests?' "$logs/unit.log"; then
    record unit "$passed" $((failed + 1)) "swift test ended without its summary: see $logs/unit.log"
  elif [ "$unit_status" != 0 ] && [ "$failed" = 0 ]; then
    record unit "$passed" 1 "swift test exited $unit_status"
  else
    record unit "$passed" "$failed"
  fi
else
  record unit 0 1 "build failed: see $logs/build.log"
fi

# --- smoke: curl walk against a live server --------------------------------------------------------
if [ "$built" = 1 ]; then
  run_stage smoke run-smoke scripts/run-smoke.sh .build/debug/sheetd
else
  record smoke 0 1 "not run: the build failed"
fi
if [ "$built" = 1 ] && [ -n "${SHEETD_TEST_POSTGRES_URL:-}" ]; then
  SHEETD_SMOKE_DB=$SHEETD_TEST_POSTGRES_URL run_stage smoke-pg run-smoke scripts/run-smoke.sh .build/debug/sheetd
  # The database stopped and started again under a running sheetd (its own cluster).
  run_stage pg-outage pg-outage scripts/pg-outage.sh .build/debug/sheetd
fi

# --- docs: README.md and docs/*.md (scripts/docs-test.py: links, anchors, one home per paragraph, the
# configuration table, the modules, and every sh block's curl lines run as pasted against a live server; 5-30 s)
if [ "$built" = 1 ]; then
  run_stage docs docs-test scripts/docs-test.py .build/debug/sheetd
else
  record docs 0 1 "not run: the build failed"
fi

# --- android: the Android client's Kotlin core against a live sheetd (scripts/android-test.sh) ---------
# Counts come from the JUnit console launcher's summary ("[ N tests successful ]", "[ M tests failed ]").
if [ "$built" = 1 ]; then
  scripts/android-test.sh .build/debug/sheetd 2>&1 | tee "$logs/android.log"
  ok=$(grep -oE '^\[ +[0-9]+ tests successful +\]' "$logs/android.log" | grep -oE '[0-9]+' | tail -1)
  bad=$(grep -oE '^\[ +[0-9]+ tests failed +\]' "$logs/android.log" | grep -oE '[0-9]+' | tail -1)
  if [ -n "$ok" ] && [ -n "$bad" ]; then
    record android "$ok" "$bad"
  else
    record android 0 1 "no JUnit summary (kotlinc or sheetd failed): see $logs/android.log"
  fi
else
  record android 0 1 "not run: the build failed"
fi

# --- spec: openapi.yaml and its examples -----------------------------------------------------------
run_stage spec check-openapi scripts/check-openapi.sh

# --- lint: swift format with the repository's .swift-format -------------------------------------------
# One check per file; each finding fails its file.
files=$(find Sources Tests -name '*.swift' | sort; echo Package.swift)
swift format lint --strict $files >"$logs/lint.log" 2>&1
lint_failed=$(grep -E '^[^ ]+\.swift:[0-9]+:[0-9]+: (warning|error)' "$logs/lint.log" | cut -d: -f1 | sort -u | wc -l)
lint_total=$(echo "$files" | wc -l)
if [ "$lint_failed" -gt 0 ]; then
  grep -E '^[^ ]+\.swift:[0-9]+' "$logs/lint.log" | head -20
fi
record lint $((lint_total - lint_failed)) "$lint_failed"

echo
printf '%s\n' "${summary[@]}"
echo "make test: $total_passed passed, $total_failed failed"
[ "$total_failed" = 0 ]
