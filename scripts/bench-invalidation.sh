#!/usr/bin/env bash
# What an invalidation costs in a large cache: fills a proxy's cache with ENTRIES new URLs (1 KB
# misses from a static nginx origin), then sends POSTs that succeed (each invalidates its target,
# RFC 9111 §4.4, on the proxy's event loop) and reports their median and p90 time, for each
# build given, in alternating rounds on the same cache directory.
#   scripts/bench-invalidation.sh                         # this build; ENTRIES=150000 ROUNDS=2 POSTS=60
#   BINARIES="old/webcache .build/release/webcache" scripts/bench-invalidation.sh
# Proxy and origin on CPU 0, wrk on CPU 1; binds 127.0.0.1 only; stops what it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
ENTRIES=${ENTRIES:-150000}
ROUNDS=${ROUNDS:-2}
POSTS=${POSTS:-60}
source scripts/lib/harness.sh
install_missing nginx wrk curl
start_harness
binaries=(${BINARIES:-$bin})
port=$(free_port)
random_file "$work/www/f.bin" 1k
start_origin <<'CONF'
    location /post { return 200 "ok"; }
    location / { add_header Cache-Control "max-age=36000"; }
CONF
cat >"$work/fill.lua" <<'LUA'
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/f.bin?u=" .. counter)
end
done_at = tonumber(os.getenv("ENTRIES"))
response = function() if counter >= done_at then wrk.thread:stop() end end
LUA

# proxy BINARY: starts BINARY as the proxy on $port over $work/cache; its pid in $proxy_pid.
proxy() {
  taskset -c 0 "$1" proxy --cache-dir "$work/cache" --listen "127.0.0.1:$port" \
    --upstream "http://127.0.0.1:$origin_port" --threads 1 --disk-capacity 4g >>"$work/proxy.log" 2>&1 &
  proxy_pid=$!
  pids+=("$proxy_pid")
  for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/f.bin" && return; sleep 0.1; done
}

proxy "${binaries[0]}"
ENTRIES=$ENTRIES taskset -c 1 wrk -t1 -c64 -d600s -s "$work/fill.lua" "http://127.0.0.1:$port/" >/dev/null
kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true
echo "entries stored: $(python3 -c "import sqlite3; print(sqlite3.connect('$work/cache/index.sqlite').execute('select count(*) from entry').fetchone()[0])")"
for round in $(seq 1 "$ROUNDS"); do
  for binary in "${binaries[@]}"; do
    proxy "$binary"
    for i in $(seq 1 "$POSTS"); do
      curl -s -o /dev/null -w "%{time_total}\n" -X POST "http://127.0.0.1:$port/post?r=$round&i=$i"
    done | sort -n | awk -v name="$binary" -v round="$round" '{ t[NR] = $1 } END {
      printf "round %s, %s: POST median %.2f ms, p90 %.2f ms\n", round, name, t[int((NR + 1) / 2)] * 1000, t[int(NR * 0.9)] * 1000 }'
    kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true
  done
done
