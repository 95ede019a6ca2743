#!/usr/bin/env bash
# Hits spread over many entries, as a shared proxy in front of a real site sees them: every
# request differs (its own X-Request-Id, one of 500 User-Agents) and names one of N URLs
# (/css/site.css?v=0 … N-1 of the sample site, 419 bytes, Cache-Control: max-age=3600). The
# shared benchmark harness's `varied` workload asks for one URL per size, which hides what
# thousands of entries cost (the reverse-target and shared-encoding tables, the per-entry facts,
# access times written to the index, the memory tier): this measures it.
#
#   scripts/bench-many-urls.sh                 # N in "1 5000 50000", 5 s each, 64 connections
#   COUNTS="1 5000" DURATION=10 CONNS=64 BINARY=path/to/webcache scripts/bench-many-urls.sh
#
# The origin (`webcache demo --serve`, no added latency) and the proxy run on CPU 0, wrk on
# CPU 1. Each count starts a fresh proxy and cache, warms every URL once (one origin fetch
# each), then runs wrk and reads the proxy's CPU time from /proc. Needs wrk and python3. Binds
# 127.0.0.1 only; stops what it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
COUNTS=${COUNTS:-"1 5000 50000"}
DURATION=${DURATION:-5}
CONNS=${CONNS:-64}
ORIGIN_PORT=${ORIGIN_PORT:-9100}
PROXY_PORT=${PROXY_PORT:-8110}
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 1; }
if [ -z "${BINARY:-}" ]; then
    swift build -c release --product webcache >/dev/null
    BINARY=$PWD/.build/release/webcache
fi
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

taskset -c 0 "$BINARY" demo --serve "127.0.0.1:$ORIGIN_PORT" --latency 0 --cache-control "max-age=3600" \
    >"$work/origin.log" 2>&1 &
pids+=($!)
sleep 1

echo "| URLs | requests/s | proxy CPU µs/request | p99 | origin fetches |"
echo "| --- | --- | --- | --- | --- |"
for count in $COUNTS; do
    rm -rf "$work/cache"
    taskset -c 0 "$BINARY" proxy --cache-dir "$work/cache" --listen "127.0.0.1:$PROXY_PORT" \
        --upstream "http://127.0.0.1:$ORIGIN_PORT" >"$work/proxy.log" 2>&1 &
    proxy=$!
    pids+=("$proxy")
    for _ in $(seq 1 100); do
        curl -s -o /dev/null "http://127.0.0.1:$PROXY_PORT/_webcache/metrics" && break
        sleep 0.05
    done
    python3 - "$count" "$PROXY_PORT" <<'PY'
import http.client, sys
count, port = int(sys.argv[1]), int(sys.argv[2])
connection = http.client.HTTPConnection("127.0.0.1", port)
for index in range(count):
    connection.request("GET", "/css/site.css?v=%d" % index)
    response = connection.getresponse()
    response.read()
    if response.status != 200:
        sys.exit("warming /css/site.css?v=%d: status %d" % (index, response.status))
PY
    cat >"$work/requests.lua" <<LUA
local n = 0
request = function()
  n = n + 1
  local path = "/css/site.css?v=" .. math.random(0, $count - 1)
  return wrk.format("GET", path, { ["User-Agent"] = "client/" .. (n % 500) .. " (bench)",
    ["X-Request-Id"] = tostring(n) })
end
LUA
    before=$(awk '{print $14 + $15}' "/proc/$proxy/stat")
    taskset -c 1 wrk -t1 -c"$CONNS" -d"$DURATION" --latency -s "$work/requests.lua" \
        "http://127.0.0.1:$PROXY_PORT/" >"$work/wrk.log" 2>&1
    after=$(awk '{print $14 + $15}' "/proc/$proxy/stat")
    requests=$(awk '/requests in/ {print $1}' "$work/wrk.log")
    rate=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.log")
    p99=$(awk '$1 == "99%" {print $2}' "$work/wrk.log")
    misses=$(curl -s "http://127.0.0.1:$PROXY_PORT/_webcache/metrics" | awk '/^webcache_misses_total/ {print $2}')
    ticks=$(getconf CLK_TCK)
    cpu=$(python3 -c "print(round(($after - $before) * 1e6 / $ticks / $requests, 1))")
    echo "| $count | $rate | $cpu | $p99 | $misses |"
    kill "$proxy"
    wait "$proxy" 2>/dev/null || true
done
