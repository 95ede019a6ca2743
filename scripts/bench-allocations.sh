#!/usr/bin/env bash
# Exact counts per request through the proxy: heap allocations (a uprobe on glibc's malloc),
# system calls and context switches, for four shapes of traffic. Unlike CPU time, which moves
# by a quarter between runs on a shared 2-core VM, these counts repeat closely, so that a
# change too small to show in requests per second can still be judged (measured here: hits and
# forwarded misses repeat within ±0.5 allocations, stored misses within ±2, as the number of rows
# sharing a transaction varies; so do their system calls). They do not replace the
# speed runs (README "Speed"): fewer allocations is a means, time is what users feel.
#
#   sudo scripts/bench-allocations.sh                    # every shape, 2 s each
#   SHAPES="miss forward" BINARY=path/to/webcache scripts/bench-allocations.sh
#
# Shapes (a 419-byte stylesheet of the sample site, 64 connections):
#   identical  the same request bytes again and again (hits)
#   varied     hits whose requests all differ (X-Request-Id, one of 500 User-Agents)
#   miss       every request a new URL (?u=N): fetched, stored and answered
#   forward    every request a new URL from an origin that sends no-store: fetched and
#              answered, nothing stored (the origin exchange on its own)
#
# Needs root (uprobes), perf (Debian's linux-perf), wrk and curl. The origins
# (`webcache demo --serve`, no added latency) and the proxy run on CPU 0, wrk on CPU 1. Binds
# 127.0.0.1 only; stops what it starts and removes the uprobe it adds.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/harness.sh
SHAPES=${SHAPES:-"identical varied miss forward"}
DURATION=${DURATION:-2}
CONNS=${CONNS:-64}
for tool in perf wrk curl; do
    command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install linux-perf wrk curl)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "needs root to place a uprobe on malloc" >&2; exit 1; }
if [ -z "${BINARY:-}" ]; then
    start_harness
    BINARY=$bin
else
    work="$(mktemp -d)"
    trap harness_cleanup EXIT
fi

libc=$(ldd "$BINARY" | awk '$1 == "libc.so.6" {print $3}')
probe_added=0
on_exit() { [ "$probe_added" = 1 ] && perf probe -q -d probe_libc:malloc; }
perf probe -q -d probe_libc:malloc 2>/dev/null || true
perf probe -q -x "$libc" malloc
probe_added=1

stored_port=$(free_port)
taskset -c 0 "$BINARY" demo --serve "127.0.0.1:$stored_port" --latency 0 --cache-control "max-age=3600" \
    >"$work/origin.log" 2>&1 &
pids+=($!)
unstored_port=$(free_port)
taskset -c 0 "$BINARY" demo --serve "127.0.0.1:$unstored_port" --latency 0 --cache-control "no-store" \
    >"$work/origin-no-store.log" 2>&1 &
pids+=($!)

cat >"$work/identical.lua" <<'LUA'
request = function() return wrk.format("GET", "/css/site.css") end
LUA
cat >"$work/varied.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/css/site.css", { ["User-Agent"] = "client/" .. (n % 500) .. " (bench)",
    ["X-Request-Id"] = tostring(n) })
end
LUA
miss_script
cp "$work/miss.lua" "$work/forward.lua"

echo "| shape | requests | allocations / request | system calls / request | context switches / request |"
echo "| --- | --- | --- | --- | --- |"
for shape in $SHAPES; do
    case $shape in
        identical | varied | miss) upstream=$stored_port ;;
        forward) upstream=$unstored_port ;;
        *) echo "unknown shape $shape" >&2; exit 2 ;;
    esac
    port=$(free_port)
    rm -rf "$work/cache"
    taskset -c 0 "$BINARY" proxy --cache-dir "$work/cache" --listen "127.0.0.1:$port" \
        --upstream "http://127.0.0.1:$upstream" >"$work/proxy.log" 2>&1 &
    proxy=$!
    pids+=("$proxy")
    for _ in $(seq 1 100); do
        curl -s -o /dev/null "http://127.0.0.1:$port/css/site.css" && break
        sleep 0.05
    done
    # The count covers wrk's whole run (an idle proxy allocates next to nothing), so that it and
    # wrk's total are of the same requests.
    perf stat -x, -e probe_libc:malloc,raw_syscalls:sys_enter,context-switches -p "$proxy" -o "$work/counts" &
    counter=$!
    sleep 0.3
    TARGET=/css/site.css taskset -c 1 wrk -t1 -c"$CONNS" -d"$DURATION" -s "$work/$shape.lua" "http://127.0.0.1:$port/" \
        >"$work/wrk.log" 2>&1
    sleep 0.3
    kill -INT "$counter"
    wait "$counter" || true
    requests=$(awk '/requests in/ {print $1}' "$work/wrk.log")
    python3 - "$work/counts" "$requests" "$shape" <<'PY'
import sys
counts, requests, shape = sys.argv[1], int(sys.argv[2]), sys.argv[3]
values = {}
for line in open(counts):
    fields = line.strip().split(",")
    if len(fields) > 2 and fields[0].replace(".", "").isdigit():
        values[fields[2]] = float(fields[0])
row = [values.get(name, 0) / requests for name in ("probe_libc:malloc", "raw_syscalls:sys_enter", "context-switches")]
print("| %s | %d | %.1f | %.2f | %.2f |" % (shape, requests, *row))
PY
    kill "$proxy"
    wait "$proxy" 2>/dev/null || true
done
