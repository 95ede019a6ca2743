#!/usr/bin/env bash
# Hits spread over many URLs, as a shared proxy in front of a real site sees them, with nginx as
# a caching proxy beside WebCache in the same run. Every request differs (its own X-Request-Id,
# one of 500 User-Agents) and names one of N URLs (/SIZE.bin?v=0 … N-1 of an nginx origin that
# answers `Cache-Control: max-age=3600`). The shared benchmark harness's `varied` workload asks
# for one URL per size, which hides what thousands of entries cost (the memory tier's room, the
# index, the per-entry tables): this measures it.
#
#   scripts/bench-many-urls.sh             # 5,000 and 50,000 URLs, uniform and Zipf, 1 KiB, both servers
#   COUNTS="50000" DISTRIBUTIONS="zipf" ZIPF_ALPHA=0.8 SIZE=1k DURATION=5 CONNS=64 \
#     TARGETS="webcache nginx" WEBCACHE_OPTIONS="--memory-capacity 256m" BINARY=path/to/webcache \
#     scripts/bench-many-urls.sh
#
# DISTRIBUTIONS: `uniform` (every URL as likely) and `zipf` (the URL of rank r asked for in
# proportion to 1/r^ZIPF_ALPHA, as web pages' popularity falls off; ranks are spread over the
# URLs, so that popular ones are not neighbours in any index). Each run starts a fresh server
# and cache, asks for every URL once (one origin fetch each), then runs wrk; the origin's own
# counter says how many requests of the measured run went to it (first visits of a cache that
# let URLs go). CPU and peak resident memory are the server's (WebCache's process, or nginx's
# master and worker), from /proc. The origin and the server run on CPU 0, wrk on CPU 1. Needs nginx, wrk and python3
# (nginx and wrk installed when missing). Binds 127.0.0.1 only; stops what it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNTS=${COUNTS:-"5000 50000"}
DISTRIBUTIONS=${DISTRIBUTIONS:-"uniform zipf"}
ZIPF_ALPHA=${ZIPF_ALPHA:-0.8}
SIZE=${SIZE:-1k}
DURATION=${DURATION:-5}
CONNS=${CONNS:-64}
TARGETS=${TARGETS:-"webcache nginx"}
source "$(dirname "$0")/lib/harness.sh"
install_missing nginx wrk
if [ -z "${BINARY:-}" ]; then
  start_harness
else
  [ -x "$BINARY" ] || { echo "not an executable: $BINARY" >&2; exit 1; }
  bin=$(cd "$(dirname "$BINARY")" && pwd)/$(basename "$BINARY")
  work="$(mktemp -d)"
  trap harness_cleanup EXIT
fi
webcache_options=${WEBCACHE_OPTIONS:-}
random_file "$work/www/$SIZE.bin" "$SIZE"
start_origin <<'LOCATIONS'
    location / { add_header Cache-Control "max-age=3600"; }
    location = /__origin_status { stub_status; }
LOCATIONS

# origin_requests → the requests the origin has answered so far (its status page counts itself).
origin_requests() {
  curl -sf "http://127.0.0.1:$origin_port/__origin_status" | awk 'NR == 3 { print $3 }'
}

# requests_script COUNT DISTRIBUTION → $work/requests.lua: wrk's requests for the run.
requests_script() {
  {
    echo "local urls = $1"
    echo "local distribution = \"$2\""
    echo "local alpha = $ZIPF_ALPHA"
    cat <<'LUA'
local cdf = {}
if distribution == "zipf" then
  local total = 0
  for rank = 1, urls do total = total + 1 / (rank ^ alpha); cdf[rank] = total end
  for rank = 1, urls do cdf[rank] = cdf[rank] / total end
end
local function pick()
  if distribution ~= "zipf" then return math.random(0, urls - 1) end
  local u, low, high = math.random(), 1, urls
  while low < high do
    local middle = math.floor((low + high) / 2)
    if cdf[middle] < u then low = middle + 1 else high = middle end
  end
  return math.fmod((low - 1) * 7919, urls)
end
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", wrk.path .. "?v=" .. pick(), { ["User-Agent"] = "client/" .. (n % 500) .. " (bench)",
    ["X-Request-Id"] = tostring(n) })
end
LUA
  } >"$work/requests.lua"
}

# start_nginx PORT: nginx as a caching reverse proxy on CPU 0 in front of the origin, its cache
# new; its master's pid in $nginx_pid.
start_nginx() {
  rm -rf "$work/nginx-cache"
  mkdir -p "$work/nginx-cache"
  chmod 777 "$work/nginx-cache"
  nginx_config proxy <<CONF
  access_log off;
  proxy_cache_path $work/nginx-cache levels=1:2 keys_zone=pages:32m max_size=4g inactive=600m use_temp_path=off;
  upstream origin { server 127.0.0.1:$origin_port; keepalive 64; }
  server {
    listen 127.0.0.1:$1;
    keepalive_requests 10000000;
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache pages;
      proxy_cache_key \$uri\$is_args\$args;
    }
  }
CONF
  taskset -c 0 nginx -c "$work/proxy.conf" -g 'daemon off;' &
  nginx_pid=$!
  pids+=("$nginx_pid")
}

# warm PORT COUNT: asks for every URL once, on one kept-alive connection.
warm() {
  python3 - "$1" "$2" "$SIZE" <<'PY'
import http.client, sys
port, count, size = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
connection = http.client.HTTPConnection("127.0.0.1", port)
for index in range(count):
    connection.request("GET", "/%s.bin?v=%d" % (size, index))
    response = connection.getresponse()
    response.read()
    if response.status != 200:
        sys.exit("warming /%s.bin?v=%d: status %d" % (size, index, response.status))
PY
}

# peak_rss PID… → the peak resident memory of the processes, summed, in MiB.
peak_rss() {
  local kib=0 pid
  for pid in "$@"; do
    kib=$((kib + $(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)))
  done
  echo $((kib / 1024))
}

echo "| URLs | distribution | server | requests/s · CPU µs per request · p99 | origin fetches in the run | peak RSS |"
echo "| --- | --- | --- | --- | --- | --- |"
for count in $COUNTS; do
  for distribution in $DISTRIBUTIONS; do
    requests_script "$count" "$distribution"
    for target in $TARGETS; do
      port=$(free_port)
      case $target in
        webcache) start_webcache "$port" "$origin_port"; server_pids=("$webcache_pid") ;;
        nginx) start_nginx "$port" ;;
        *) echo "unknown target: $target" >&2; exit 2 ;;
      esac
      for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
      [ "$target" = nginx ] && server_pids=("$nginx_pid" $(pgrep -P "$nginx_pid"))
      warm "$port" "$count"
      fetched=$(origin_requests)
      before=$(cpu_ticks "${server_pids[@]}")
      out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -s "$work/requests.lua" \
        "http://127.0.0.1:$port/$SIZE.bin" 2>&1)
      after=$(cpu_ticks "${server_pids[@]}")
      fetched=$(($(origin_requests) - fetched - 1))
      echo "| $count | $distribution | $target | $(wrk_figures "$target" "$out" "$before" "$after") | $fetched |" \
        "$(peak_rss "${server_pids[@]}") MiB |"
      for pid in "${server_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
      for pid in "${server_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    done
  done
done
