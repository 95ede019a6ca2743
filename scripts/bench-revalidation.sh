#!/usr/bin/env bash
# A page sent `Cache-Control: no-cache` (most HTML), asked for again and again through a caching
# proxy: WebCache revalidates it on every use (the origin answers 304 to its If-None-Match, the
# stored body is served); nginx's proxy_cache does not store such a response and passes every
# request through (the origin answers 200 with the body). Both in front of the same static nginx
# origin; server and origin on CPU 0, wrk on CPU 1 with each of CONNS connections in turn for
# DURATION seconds; server CPU per request (user + system) from /proc, and how many origin
# requests each client request cost (concurrent requests for the page share one validation).
#   scripts/bench-revalidation.sh          # SIZES="1k 16k" CONNS="1 16" DURATION=5;
#                                          # BINARY=path/to/webcache measures another build
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"1k 16k"}
CONNS=${CONNS:-"1 16"}
DURATION=${DURATION:-5}
source "$(dirname "$0")/lib/harness.sh"
install_missing nginx wrk
start_harness
bin=${BINARY:-$bin}
for size in $SIZES; do random_file "$work/www/nc/$size.bin" "$size"; done
start_origin <<'CONF'
    location = /status { stub_status; }
    location /nc/ { add_header Cache-Control "no-cache"; etag on; }
CONF
origin_requests() { curl -sf "http://127.0.0.1:$origin_port/status" | awk 'NR == 3 { print $3 }'; }

# run NAME PATH CONNS → starts the server NAME, asks for PATH over CONNS connections, sets
# $result to "rps · µs · p99 · origin requests per request" (not in a subshell, so that the
# harness stops the server whatever happens).
run() {
  local name=$1 target=$2 conns=$3 port server_pids=() before after first last out requests figures
  port=$(free_port)
  case $name in
    nginx)
      rm -rf "$work/nginx-cache"
      nginx_config front <<CONF
  access_log off;
  proxy_cache_path $work/nginx-cache levels=1:2 keys_zone=bench:10m max_size=1g inactive=1h use_temp_path=off;
  upstream origin { server 127.0.0.1:$origin_port; keepalive 256; }
  server {
    listen 127.0.0.1:$port;
    keepalive_requests 10000000;
    location / {
      proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_cache bench; proxy_cache_revalidate on;
    }
  }
CONF
      taskset -c 0 nginx -c "$work/front.conf" -g 'daemon off;' &
      server_pids=($!) ;;
    webcache)
      start_webcache "$port" "$origin_port"
      server_pids=("$webcache_pid") ;;
  esac
  pids+=("${server_pids[@]}")
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port$target" && break; sleep 0.1; done
  [ "$name" != nginx ] || server_pids+=($(ps --ppid "${server_pids[0]}" -o pid= | tr -d ' '))
  first=$(origin_requests)
  before=$(cpu_ticks "${server_pids[@]}")
  out=$(taskset -c 1 wrk -t1 -c"$conns" -d"${DURATION}s" --latency "http://127.0.0.1:$port$target" 2>&1)
  after=$(cpu_ticks "${server_pids[@]}")
  last=$(origin_requests)
  kill "${server_pids[0]}" 2>/dev/null || true
  wait "${server_pids[0]}" 2>/dev/null || true
  figures=$(wrk_figures "$name" "$out" "$before" "$after")
  requests=$(echo "$out" | awk '/requests in/ { print $1 }')
  result="$figures · $(python3 -c "print(round(($last - $first - 1) / max(1, $requests), 2))")"
}

echo "| size, connections | WebCache (revalidates: 304) | nginx proxy_cache (passes through: 200) | WebCache / nginx |"
echo "| --- | --- | --- | --- |"
for size in $SIZES; do
  for conns in $CONNS; do
    run webcache "/nc/$size.bin" "$conns"
    ours=$result
    run nginx "/nc/$size.bin" "$conns"
    echo "| $size, $conns | $ours | $result | $(python3 -c "print(round(${ours%% *} / max(1, ${result%% *}), 2))") |"
  done
done
echo
echo "requests/s · server CPU µs per request · p99 · origin requests per client request"
