#!/usr/bin/env bash
# What a miss costs above forwarding alone. Every request names a new URL (as WORKLOAD=miss of
# the shared harness), and four servers in turn forward it to the same static nginx origin:
#   raw          forwarding-floor --decoder none: SwiftNIO's channels alone, no HTTP codec (byte searches)
#   floor        forwarding-floor: SwiftNIO parsing both legs, nothing else (no cache, no task)
#   nginx        nginx proxy_pass with kept-alive upstream connections, no cache
#   forwarded    WebCache, the origin answering `Cache-Control: no-store` (decided, not stored)
#   stored       WebCache, the origin answering `max-age=3600` (fetched, stored and answered)
# The gap between floor and forwarded is the engine and the proxy around a miss; between
# forwarded and stored, storing it. Server and origin on CPU 0, wrk on CPU 1 with CONNS
# connections for DURATION seconds; server CPU per request (user + system) from /proc.
#   scripts/bench-miss-floor.sh           # SIZES="1k 16k 128k" DURATION=5 CONNS=64;
#                                         # BINARY=path/to/webcache measures another build
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"1k 16k 128k"}
DURATION=${DURATION:-5}
CONNS=${CONNS:-64}
source "$(dirname "$0")/lib/harness.sh"
install_missing nginx wrk
start_harness forwarding-floor
bin=${BINARY:-$bin}
floor="$PWD/.build/release/forwarding-floor"
for size in $SIZES; do
  random_file "$work/www/$size.bin" "$size"
  random_file "$work/www/ns/$size.bin" "$size"
done
start_origin <<'CONF'
    location /ns/ { add_header Cache-Control "no-store"; }
    location / { add_header Cache-Control "max-age=3600"; }
CONF
miss_script

# run NAME PATH → starts the server NAME, sends new URLs under PATH, sets $result to
# "rps · µs · p99" (not in a subshell, so that the harness stops the server whatever happens).
run() {
  local name=$1 target=$2 port server_pids=() before after out
  port=$(free_port)
  case $name in
    floor | raw)
      decoder=nio
      [ "$name" != raw ] || decoder=none
      taskset -c 0 "$floor" --port "$port" --upstream "$origin_port" --decoder "$decoder" >"$work/floor.log" 2>&1 &
      server_pids=($!) ;;
    nginx)
      nginx_config front <<CONF
  access_log off;
  upstream origin { server 127.0.0.1:$origin_port; keepalive 256; }
  server {
    listen 127.0.0.1:$port;
    keepalive_requests 10000000;
    location / { proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
CONF
      taskset -c 0 nginx -c "$work/front.conf" -g 'daemon off;' &
      server_pids=($!) ;;
    forwarded | stored)
      start_webcache "$port" "$origin_port"
      server_pids=("$webcache_pid") ;;
  esac
  pids+=("${server_pids[@]}")
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port$target?warm" && break; sleep 0.1; done
  [ "$name" != nginx ] || server_pids+=($(ps --ppid "${server_pids[0]}" -o pid= | tr -d ' '))
  before=$(cpu_ticks "${server_pids[@]}")
  out=$(TARGET="$target" taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -s "$work/miss.lua" \
    "http://127.0.0.1:$port/" 2>&1)
  after=$(cpu_ticks "${server_pids[@]}")
  kill "${server_pids[0]}" 2>/dev/null || true
  wait "${server_pids[0]}" 2>/dev/null || true
  result=$(wrk_figures "$name" "$out" "$before" "$after")
}

echo "| size | raw floor (SwiftNIO, no codec) | floor (SwiftNIO) | nginx proxy_pass | WebCache forwarded (no-store) | WebCache stored |"
echo "| --- | --- | --- | --- | --- | --- |"
for size in $SIZES; do
  row="| $size"
  for name in raw floor nginx forwarded stored; do
    target="/$size.bin"
    [ "$name" != forwarded ] || target="/ns/$size.bin"
    run "$name" "$target"
    row="$row | $result"
  done
  echo "$row |"
done
echo
echo "requests/s · server CPU µs per request · p99; every request a new URL"
