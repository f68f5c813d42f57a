#!/usr/bin/env bash
# Issue 45: what user tokens from an identity provider cost.
#   1. The cached decision GET with an RS256 user token against the same GET with an HS256 one, on
#      one server (SHEETD_JWT_SECRET and SHEETD_JWKS_FILE both set), interleaved rounds; the aim is
#      a CPU per request within 5 % (the verified-token cache makes both a lookup).
#   2. The first verification of each key type: server CPU per request over one connection when
#      every token is new, minus the same with one token repeated (python3, one keep-alive client).
# usage: bench/jwks.sh [ROUNDS] [SECONDS]   (defaults 3 x 5 s: about 1.5 minutes with the minting)
# Needs a release build (built when missing), wrk, openssl and python3-cryptography (make deps).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${1:-3} SECS=${2:-5} USERS=${BENCH_JWKS_USERS:-1000} FIRST=${BENCH_JWKS_FIRST:-3000}
BIN=${BIN:-$ROOT/.build/release/sheetd}
[ -x "$BIN" ] || swift build -c release --product sheetd
WORK=$(mktemp -d /tmp/sheetd-jwks-bench.XXXXXX)
SHEETD_PID=""
# shellcheck source=bench/lib.sh
source bench/lib.sh
trap 'stop_sheetd; rm -rf "$WORK"' EXIT
log() { echo "jwks bench: $*" >&2; }

prepare_data "$USERS"
HS_TOKENS=$WORK/tokens.txt
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$WORK/rsa.pem" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/ec.pem"
openssl genpkey -algorithm ed25519 -out "$WORK/ed.pem"
"$BIN" jwks --key "$WORK/rsa.pem" --kid bench-rsa --key "$WORK/ec.pem" --kid bench-ec --key "$WORK/ed.pem" --kid bench-ed > "$WORK/jwks.json"
python3 bench/jwks_tokens.py "$WORK/rsa.pem" bench-rsa "$USERS" "$USERS" "$WORK/rs-cached.txt"
for k in rsa ec ed; do python3 bench/jwks_tokens.py "$WORK/$k.pem" "bench-$k" "$USERS" "$FIRST" "$WORK/$k-first.txt"; done
# HS256 tokens under the kid-less secret beside the JWKS.
python3 bench/jwks_tokens.py "secret:$SECRET" - "$USERS" "$FIRST" "$WORK/hs-first.txt"

start_warm_sheetd "$BIN" --jwks-file "$WORK/jwks.json"
BENCH_TOKENS=$WORK/rs-cached.txt wrk -t1 -c64 -d2s -s bench/lua/warmup.lua "http://127.0.0.1:$SHEETD_PORT" > /dev/null 2>&1 || true

declare -A cpu
for round in $(seq 1 "$ROUNDS"); do
  for kind in hs rs; do
    [ "$kind" = hs ] && export BENCH_TOKENS=$HS_TOKENS || export BENCH_TOKENS=$WORK/rs-cached.txt
    read -r rps p99 us < <(measure "$SHEETD_PID" decision.lua "$SECS")
    log "round $round $kind: $rps req/s p99 $p99 ms cpu $us us/req"
    cpu[$kind]="${cpu[$kind]:-} $us"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
hs=$(echo "${cpu[hs]}" | median) rs=$(echo "${cpu[rs]}" | median)
echo "cached decision GET, CPU us/request (median of $ROUNDS x ${SECS}s, wrk -c64): HS256 $hs (${cpu[hs]# }), RS256 $rs (${cpu[rs]# }), RS256/HS256 $(python3 -c "print('%.3f' % ($rs / $hs))")"

base=$(python3 bench/first_verification.py "$SHEETD_PORT" "$SHEETD_PID" "$WORK/rs-cached.txt" repeat)
echo "one connection, one token repeated (cache hits): $base us/request"
for k in hs rsa ec ed; do
  first=$(python3 bench/first_verification.py "$SHEETD_PORT" "$SHEETD_PID" "$WORK/$k-first.txt")
  echo "first verification, $k ($FIRST new tokens): $first us/request, $(python3 -c "print('%.1f' % ($first - $base))") us above the cache hit"
done
