#!/usr/bin/env bash
# `make android-test`: builds the Android client's JVM core (clients/android/core: main and tests in one
# kotlinc call, Debian's kotlinc 1.3 and kotlinx-coroutines 1.0), starts sheetd (BINARY, default
# .build/debug/sheetd) on a free port with a temporary database and the example catalog, and runs the
# JUnit 5 tests with the console launcher against it. Ends with the launcher's summary and one line:
#   android-test: N passed, M failed
# A build failure or a server that does not start counts as one failure. About a minute on two busy
# cores (kotlinc dominates; the tests take about 10 s).
set -uo pipefail
cd "$(dirname "$0")/.."
binary=${1:-.build/debug/sheetd}
java_dir=/usr/share/java
out=.build/android
log_dir=.build/test-logs
mkdir -p "$out" "$log_dir"
libs="$java_dir/kotlin-stdlib.jar:$java_dir/kotlinx-coroutines-core.jar:$java_dir/atomicfu.jar"
launcher="$java_dir/junit-platform-console-standalone.jar"

finish() { echo "android-test: $1 passed, $2 failed"; [ "$2" = 0 ]; exit $?; }

for jar in kotlin-stdlib.jar kotlinx-coroutines-core.jar atomicfu.jar junit-platform-console-standalone.jar; do
  if [ ! -f "$java_dir/$jar" ]; then
    echo "FAIL $java_dir/$jar is missing (make deps installs kotlin, junit5, libkotlinx-coroutines-java, libkotlinx-atomicfu-java)"
    finish 0 1
  fi
done

# --- build: one kotlinc call for the library and its tests ----------------------------------------
# kotlinc's JVM: a larger heap than its 256 MiB default, the C1 compiler only and the serial collector.
# Measured on the shared two-core machine (load 11-12), the whole script: 2 min 53 s wall and 48 s CPU
# with kotlinc's defaults, 52 s and 20 s with these (a one-off compile does not repay C2's warm-up).
export JAVA_OPTS=${JAVA_OPTS:--Xmx768m -Xms256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC}
rm -rf "$out/classes"
mkdir -p "$out/classes"
sources=$(find clients/android/core/src/main/kotlin clients/android/core/src/test/kotlin -name '*.kt' | sort)
echo "android-test: compiling $(echo "$sources" | wc -l) Kotlin files"
# shellcheck disable=SC2086
if ! kotlinc -nowarn -jvm-target 1.8 -cp "$libs:$launcher" -d "$out/classes" $sources 2>&1 \
     | grep -v 'Xverify:none' | tee "$out/kotlinc.log"; then :; fi
if [ ! -f "$out/classes/dev/sheetd/client/SheetdClient.class" ] || grep -q 'error:' "$out/kotlinc.log"; then
  echo "FAIL kotlinc: see $out/kotlinc.log"
  finish 0 1
fi

# --- a live sheetd on a free port, temp database, the example catalog ----------------------------
work=$(mktemp -d /tmp/sheetd-android.XXXXXX)
export SHEETD_TEST_ADMIN_TOKEN="android-admin-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export SHEETD_TEST_JWT_SECRET="android-secret-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
SHEETD_ADMIN_TOKEN=$SHEETD_TEST_ADMIN_TOKEN SHEETD_JWT_SECRET=$SHEETD_TEST_JWT_SECRET SHEETD_ACCESS_LOG=false \
  "$binary" serve --port 0 --db "$work/sheetd.sqlite" --catalog examples/catalog.json --threads 2 --drain-timeout 2 \
  >"$work/server.log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
port=""
for _ in $(seq 1 150); do
  port=$(grep -o '"msg":"listening"[^}]*' "$work/server.log" 2>/dev/null | grep -o '"port":[0-9]*' | head -1 | cut -d: -f2)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "FAIL sheetd did not start:"; cat "$work/server.log"
  finish 0 1
fi
export SHEETD_TEST_URL="http://127.0.0.1:$port"
export SHEETD_TEST_CATALOG="$PWD/examples/catalog.json"
export SHEETD_TEST_WORK="$work"

# --- the tests -------------------------------------------------------------------------------------
java -jar "$launcher" --disable-banner --disable-ansi-colors --details=tree \
  --reports-dir "$log_dir/android-junit" -cp "$out/classes:$libs" --select-package dev.sheetd 2>&1 | tee "$log_dir/android-junit.log"
ok=$(grep -oE '\[ +[0-9]+ tests successful +\]' "$log_dir/android-junit.log" | grep -oE '[0-9]+' | tail -1)
bad=$(grep -oE '\[ +[0-9]+ tests failed +\]' "$log_dir/android-junit.log" | grep -oE '[0-9]+' | tail -1)
if [ -z "$ok" ] || [ -z "$bad" ]; then
  echo "FAIL the JUnit console launcher ended without its summary"
  finish "${ok:-0}" $(( ${bad:-0} + 1 ))
fi
finish "$ok" "$bad"
