# sheetd: two commands do all the set-up on a fresh Debian 12 machine with the Swift toolchain.
#   make run    installs what is missing, builds in release, migrates, serves on http://127.0.0.1:8080
#   make test   installs what is missing, builds, runs every test (unit, integration, smoke, spec)
SHELL := /bin/bash
.DEFAULT_GOAL := help

APT_PACKAGES := libmicrohttpd-dev libsqlite3-dev libssl-dev zlib1g-dev libjemalloc-dev pkg-config curl python3-venv
# PostgreSQL backend: libpq to build, the server for the throwaway test database (scripts/postgres.sh).
APT_PACKAGES += libpq-dev postgresql
# make replicas-test: the load balancer in front of two replicas.
APT_PACKAGES += haproxy
# make android-test (a stage of make test): the Android client's JVM core, built with Debian's kotlinc.
ANDROID_APT_PACKAGES := kotlin openjdk-17-jdk-headless junit5 libkotlinx-coroutines-java libkotlinx-atomicfu-java
# SHEETD_JWKS_URL: libcurl, Debian's HTTPS client (bench/jwks.sh signs its tokens with python3-cryptography).
APT_PACKAGES += libcurl4-openssl-dev python3-cryptography
# The console's charts: Debian's Chart.js, embedded into the binary at build time (Plugins/EmbedConsole).
APT_PACKAGES += libjs-chart.js
SWIFT_FLAGS ?=
RELEASE_BIN := .build/release/sheetd

.PHONY: help deps android-deps android-test build release run test unit-test smoke-test spec-test docs-test lint format browser-test bench bench-quick bench-postgres reliability container-test replicas-test failover-test clean

help:
	@echo "make run             build (release) and serve on http://127.0.0.1:8080 with the example catalog"
	@echo "make test            every test: swift test, curl smoke test against a live server, OpenAPI validation"
	@echo "make docs-test       README.md and docs/: links, anchors, tables, every curl line run as pasted (also in make test)"
	@echo "make android-test    the Android client's Kotlin core: kotlinc + JUnit 5 against a live sheetd (also in make test)"
	@echo "make lint            swift format lint --strict with .swift-format (make format fixes)"
	@echo "make browser-test    the /preview page and the /console operator console in headless Chromium against a live server"
	@echo "make bench           load benchmarks against C yardsticks (SQLite, then PostgreSQL), storage growth, then 10 000 decision streams (writes BENCHMARKS.md)"
	@echo "make bench-quick     a short benchmark round for development"
	@echo "make bench-postgres  the PostgreSQL scenarios only (libpq yardstick, cache on/off, two replicas)"
	@echo "make reliability     long fault, concurrency and hostile-input runs (writes RELIABILITY.md)"
	@echo "make container-test  build and run the Docker image with podman"
	@echo "make replicas-test   two replicas on PostgreSQL behind HAProxy: consistency, kill -9, database restart"
	@echo "make failover-test   PostgreSQL primary + synchronous standby: kill -9, promote, pg_rewind, failover back"

# Installs the Debian packages the build needs, only those missing, only when root.
deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing: $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 $$missing >/dev/null; \
	  else echo "missing Debian packages: $$missing (run as root, or: sudo apt-get install $$missing)"; exit 1; fi; \
	fi

# Only make test and make android-test need these (kotlinc, the JDK, JUnit 5, coroutines).
android-deps:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(ANDROID_APT_PACKAGES)"

build: deps
	swift build $(SWIFT_FLAGS)

release: deps
	swift build -c release $(SWIFT_FLAGS)

run: release
	$(RELEASE_BIN) serve --catalog examples/catalog.json

# Every stage, each run even when an earlier one failed, ending with one line for all of them:
# "make test: N passed, M failed" (scripts/test-all.sh; the stages' logs are in .build/test-logs).
test: deps android-deps
	@SWIFT_FLAGS="$(SWIFT_FLAGS)" scripts/test-all.sh

# The store tests run on SQLite and on a throwaway PostgreSQL (scripts/with-postgres.sh).
unit-test:
	swift build --build-tests $(SWIFT_FLAGS)
	scripts/with-postgres.sh swift test --skip-build $(SWIFT_FLAGS)

# The curl walk of scripts/smoke.sh against a freshly started server (debug build, temp database).
smoke-test:
	scripts/run-smoke.sh .build/debug/sheetd
	scripts/with-postgres.sh sh -c 'SHEETD_SMOKE_DB="$$SHEETD_TEST_POSTGRES_URL" scripts/run-smoke.sh .build/debug/sheetd'

spec-test:
	scripts/check-openapi.sh

# README.md and docs/*.md (scripts/docs-test.py, also a stage of make test): links and anchors, no paragraph
# in two places, the configuration table, the modules, and every sh block run as pasted against a freshly
# started server (debug build, free port, temp database): 5-30 s.
docs-test: deps
	swift build $(SWIFT_FLAGS)
	scripts/docs-test.py .build/debug/sheetd

# The Android client's JVM core (clients/android/core) compiled with kotlinc and its JUnit 5 tests run by
# the console launcher against a freshly started sheetd (debug build, free port, temp database): ~1 min.
android-test: deps android-deps
	swift build $(SWIFT_FLAGS)
	scripts/android-test.sh .build/debug/sheetd

# swift-format with the repository's .swift-format (also a stage of `make test`); `make format` fixes.
format:
	swift format format -i -r Sources Tests Package.swift

lint:
	swift format lint --strict -r Sources Tests Package.swift

# The live preview page (GET /preview), then the operator console (GET /console), in headless Chromium
# against a freshly started server (debug build, temp database). Installs chromium, chromium-driver and
# a selenium venv when missing (root). PREVIEW_SHOTS=DIR keeps the preview's screenshots there,
# CONSOLE_SHOTS=DIR the console's (CONSOLE_SHOTS=docs/console refreshes docs/console.md's).
browser-test: deps
	swift build $(SWIFT_FLAGS)
	scripts/browser-test.sh .build/debug/sheetd

bench: release
	bench/run.sh
	bench/growth.sh
	bench/postgres.sh
	bench/streams.sh
	bench/jwks.sh

bench-quick: release
	bench/run.sh --quick
	bench/growth.sh --quick
	bench/postgres.sh --quick
	bench/streams.sh --quick

# Only the PostgreSQL scenarios (a throwaway PostgreSQL, the libpq yardstick, two replicas): ~5 min.
bench-postgres: release
	bench/postgres.sh

reliability: release
	scripts/reliability.sh

# Builds its own static release binary (--static-swift-stdlib) for the image.
container-test:
	scripts/container-test.sh

# Two replicas on a throwaway PostgreSQL behind HAProxy (installed when missing): the smoke walk through
# the balancer, write-then-read pairs across replicas, catalog propagation, kill -9 of a replica and a
# PostgreSQL restart under load (scripts/replicas-test.sh; debug build, about a minute).
replicas-test: deps
	swift build $(SWIFT_FLAGS)
	scripts/replicas-test.sh .build/debug/sheetd

# A primary and its synchronous standby (scripts/pg-ha.sh), two replicas on a multi-host URL behind
# HAProxy: kill -9 of the primary under load, promotion, the old primary rewound as a standby, and the
# failover back; nothing acknowledged lost (scripts/failover-test.sh; debug build, about a minute).
# FAILOVER_MODE=async measures asynchronous replication's loss instead.
failover-test: deps
	swift build $(SWIFT_FLAGS)
	scripts/failover-test.sh .build/debug/sheetd

clean:
	rm -rf .build
