# The set-up replicas-test.sh and failover-test.sh share (sourced, not run): two sheetd replicas on one
# database URL behind HAProxy, on 127.0.0.1 free ports. The caller sets binary, work, url, pids=()
# and passed/failed, and defines finish().

ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# install_missing NAME COMMAND-CHECKS...: each check is "package:shell test"; the packages whose test
# fails are installed as root (as the Makefile's deps do), else named and the script exits.
install_missing() {
  local name=$1 missing="" check
  shift
  for check in "$@"; do eval "${check#*:}" >/dev/null 2>&1 || missing="$missing ${check%%:*}"; done
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" = 0 ]; then
    echo "installing:$missing"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 $missing >/dev/null || exit 1
  else
    echo "$name: missing Debian packages:$missing (run as root, or: sudo apt-get install$missing)"; exit 1
  fi
}

# start_replica N PORT: replica N on PORT against $url, its pid in rpid[N]; only the first loads the
# example catalog. Load phases send hundreds of events per user a minute on purpose: no per-user limit.
declare -A rpid
start_replica() {
  local n=$1 port=$2 extra=()
  [ "$n" = 1 ] && extra=(--catalog examples/catalog.json)
  "$binary" serve --port "$port" --threads 4 --db "$url" --max-events-per-user-per-minute 0 "${extra[@]}" >>"$work/replica$n.log" 2>&1 &
  rpid[$n]=$!
  disown "$!"  # no "Killed" job report when a test kills it
  pids+=("$!")
  for _ in $(seq 1 150); do
    curl -fs --max-time 1 "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && return 0
    kill -0 "${rpid[$n]}" 2>/dev/null || break
    sleep 0.1
  done
  return 1
}

# start_balancer PORTB PORT1 PORT2 [BACKEND-LINE]: HAProxy round robin over the two replicas with a
# /readyz health check (an extra backend line, e.g. its own 503's body), then waits until both
# replicas answer through it; sets balancer. Fails the test (finish) when it does not come up.
start_balancer() {
  local portb=$1 port1=$2 port2=$3 extra=${4:-} up=0
  cat >"$work/haproxy.cfg" <<EOF
global
  maxconn 4096
defaults
  mode http
  timeout connect 1s
  timeout client 60s
  timeout server 60s
  retries 2
  option redispatch
frontend sheetd
  bind 127.0.0.1:$portb
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 200ms fall 2 rise 1
  $extra
  server r1 127.0.0.1:$port1 check
  server r2 127.0.0.1:$port2 check
EOF
  haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.log" 2>&1 &
  pids+=("$!")
  balancer="http://127.0.0.1:$portb"
  # Both servers up: two /readyz in a row through round robin.
  for _ in $(seq 1 100); do
    if curl -fs --max-time 1 "$balancer/readyz" >/dev/null 2>&1 && curl -fs --max-time 1 "$balancer/readyz" >/dev/null 2>&1; then up=1; break; fi
    sleep 0.1
  done
  [ "$up" = 1 ] && ok "HAProxy on $portb (round robin, health check /readyz)" || { bad "HAProxy did not come up"; cat "$work/haproxy.log"; finish; }
}
