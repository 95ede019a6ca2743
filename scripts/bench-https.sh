#!/usr/bin/env bash
# HTTPS hits: WebCache's intercepting forward proxy beside nginx terminating TLS in front of a
# proxy_cache, both in front of the same HTTPS origin, driven by the same client (https-load).
#
# Certificates: the origin has its own test CA; nginx's front certificate and the ones WebCache
# mints come from the same authority (this run's cache's), so the client trusts one CA. The
# caches and the origin run on CPU 0, the client on CPU 1 (as ../shared/bench pins them); each
# cache serves from one thread/worker. Per size: requests per second with keep-alive (CONNS
# connections), p50/p99, and server CPU per request; then new connections per second, each a full
# TLS handshake (no session resumption on either side) and one 1 KB request (HS_CONNS at once) —
# for WebCache a CONNECT, a handshake with an already-minted certificate and one request (with
# the same key exchange for both, P-256, and then with WebCache's post-quantum default); then
# the cost of minting a certificate. Every hit is checked: the origin must see no request during
# the measured runs. Nothing leaves the machine.
#
#   scripts/bench-https.sh                  # SIZES="1k 16k 128k 1m" DURATION=10 CONNS=64 HS_CONNS=16
#   PERF_OUT=/tmp/https.perf SIZES=128k scripts/bench-https.sh   # also perf-record WebCache's runs
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"1k 16k 128k 1m"}
DURATION=${DURATION:-10}
CONNS=${CONNS:-64}
HS_CONNS=${HS_CONNS:-16}
HS_CURVE=${HS_CURVE:-p256}

if ! command -v nginx >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
fi
source "$(dirname "$0")/lib/harness.sh"
start_harness https-load
load="$PWD/.build/release/https-load"

mkdir -p "$work/www" "$work/nginx-cache" "$work/cache"
# nginx's workers run as an unprivileged user: they read the files and write their cache.
chmod 755 "$work" "$work/www"
chmod 777 "$work/nginx-cache"
declare -A bytes=([1k]=1024 [16k]=16384 [128k]=131072 [1m]=1048576)
for size in $SIZES; do head -c "${bytes[$size]}" /dev/urandom >"$work/www/$size.bin"; done
"$bin" ca --cache-dir "$work/cache" >/dev/null
"$load" --make-certificates "$work/certs" --authority "$work/cache/ca"

nginx_config origin <<CONF
  access_log $work/origin-access.log;
  server {
    listen 127.0.0.1:9601 ssl;
    ssl_certificate $work/certs/origin.pem;
    ssl_certificate_key $work/certs/origin-key.pem;
    root $work/www;
    location / { add_header Cache-Control "max-age=3600"; }
  }
CONF
nginx_config front <<CONF
  access_log off;
  proxy_cache_path $work/nginx-cache levels=1:2 keys_zone=bench:10m max_size=1g inactive=1h use_temp_path=off;
  server {
    listen 127.0.0.1:9643 ssl;
    ssl_certificate $work/certs/front.pem;
    ssl_certificate_key $work/certs/front-key.pem;
    ssl_session_cache off;
    ssl_session_tickets off;
    keepalive_requests 10000000;
    location / {
      proxy_pass https://127.0.0.1:9601;
      proxy_ssl_verify on;
      proxy_ssl_trusted_certificate $work/certs/origin-ca.pem;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache bench;
      add_header X-Cache \$upstream_cache_status;
    }
  }
CONF
taskset -c 0 nginx -c "$work/origin.conf" -g 'daemon off;' & pids+=($!)
taskset -c 0 nginx -c "$work/front.conf" -g 'daemon off;' & front_master=$!; pids+=($front_master)
taskset -c 0 ${WEBCACHE_PREFIX:-} "$bin" proxy --cache-dir "$work/cache" --listen 127.0.0.1:9644 --intercept-https --cacert "$work/certs/origin-ca.pem" \
  --threads 1 --metrics-path none >"$work/webcache.log" 2>&1 & webcache_pid=$!; pids+=($webcache_pid)
for _ in $(seq 100); do
  curl -s -o /dev/null --cacert "$work/certs/front-ca.pem" https://127.0.0.1:9643/ && \
    curl -s -o /dev/null --proxy http://127.0.0.1:9644 --cacert "$work/certs/front-ca.pem" https://127.0.0.1:9601/ && break
  sleep 0.1
done

# Warm both caches, then check that hits do not reach the origin.
for size in $SIZES; do
  for _ in 1 2; do
    curl -sf -o /dev/null --cacert "$work/certs/front-ca.pem" "https://127.0.0.1:9643/$size.bin"
    curl -sf -o /dev/null --proxy http://127.0.0.1:9644 --cacert "$work/certs/front-ca.pem" "https://127.0.0.1:9601/$size.bin"
  done
done
# The master and its worker (not the cache loader, which exits).
front_pids=("$front_master" $(ps --ppid "$front_master" -o pid=,args= | awk '/worker process/ { print $1 }'))
ticks_per_second=$(getconf CLK_TCK)
origin_before=$(wc -l <"$work/origin-access.log")

run() { # name ticks-pids… -- load arguments…
  local name=$1; shift
  local server=()
  while [ "$1" != "--" ]; do server+=("$1"); shift; done
  shift
  local before after result requests
  before=$(cpu_ticks "${server[@]}")
  local perf_pid=
  if [ -n "${PERF_OUT:-}" ] && [[ "$name" == WebCache* ]]; then
    perf record -q -F 2000 -g -p "${server[0]}" -o "$PERF_OUT.$(echo "$name" | tr -c 'a-zA-Z0-9' '-')" -- sleep "$((${DURATION%.*} + 1))" 2>/dev/null &
    perf_pid=$!
  fi
  result=$(taskset -c 1 "$load" "$@" --duration "$DURATION")
  [ -z "$perf_pid" ] || wait "$perf_pid" || true
  after=$(cpu_ticks "${server[@]}")
  requests=$(echo "$result" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])')
  echo "$result" | python3 -c '
import json, sys
r = json.load(sys.stdin)
name, ticks, hz, duration = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
# The server ran 1 s of warm-up too: charge it the measured share of its CPU.
cpu_us = ticks / hz * 1e6 * duration / (duration + 1)
per = cpu_us / r["requests"] if r["requests"] else 0
print("| %s | %.2fk | %.0f | %.2f | %.2f | %d |" % (name, r["per_second"] / 1000, per, r["p50_ms"], r["p99_ms"], r["errors"]))
if r["errors"]:
    print("errors: %s" % r.get("error_kinds"), file=sys.stderr)
' "$name" "$((after - before))" "$ticks_per_second" "$DURATION"
}

echo "| run | per second | server CPU µs each | p50 ms | p99 ms | errors |"
echo "| --- | --- | --- | --- | --- | --- |"
for size in $SIZES; do
  run "nginx, keep-alive, $size" "${front_pids[@]}" -- --target 127.0.0.1:9643 --cacert "$work/certs/front-ca.pem" --path "/$size.bin" --connections "$CONNS"
  run "WebCache, keep-alive, $size" "$webcache_pid" -- --proxy 127.0.0.1:9644 --target 127.0.0.1:9601 --cacert "$work/certs/front-ca.pem" --path "/$size.bin" --connections "$CONNS"
done
first=$(echo "$SIZES" | awk '{ print $1 }')
# Handshakes: the same key exchange for both (P-256, which nginx chose with the client's default
# list; its OpenSSL 3.0 has no ML-KEM and refused X25519 here), then WebCache with what BoringSSL
# clients such as Chromium negotiate with it (X25519MLKEM768).
run "nginx, new TLS connection each ($HS_CURVE), $first" "${front_pids[@]}" -- --target 127.0.0.1:9643 --cacert "$work/certs/front-ca.pem" --path "/$first.bin" --connections "$HS_CONNS" --handshakes --curve "$HS_CURVE"
run "WebCache, CONNECT + new TLS connection each ($HS_CURVE), $first" "$webcache_pid" -- --proxy 127.0.0.1:9644 --target 127.0.0.1:9601 --cacert "$work/certs/front-ca.pem" --path "/$first.bin" --connections "$HS_CONNS" --handshakes --curve "$HS_CURVE"
run "WebCache, CONNECT + new TLS connection each (X25519MLKEM768), $first" "$webcache_pid" -- --proxy 127.0.0.1:9644 --target 127.0.0.1:9601 --cacert "$work/certs/front-ca.pem" --path "/$first.bin" --connections "$HS_CONNS" --handshakes
origin_after=$(wc -l <"$work/origin-access.log")
echo
echo "origin requests during the measured runs: $((origin_after - origin_before)) (must be 0: every answer a hit)"
echo "minting a leaf certificate: $("$load" --mint 2000)"
[ "$origin_after" -eq "$origin_before" ] || { echo "FAIL: a cache went to the origin during the runs"; exit 1; }
