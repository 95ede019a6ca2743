#!/usr/bin/env bash
# First hits: 64 connections ask for new URLs for STORE seconds (each fetched and stored), then
# one connection asks for the same URLs again, in the same order, for HITS seconds — each one's
# first hit, as a returning visitor's browser makes them. WebCache beside nginx's proxy_cache, in
# front of one static nginx origin; servers and origin on CPU 0, wrk on CPU 1. The one-connection
# latencies come from the packets (tcpdump on the loopback: request sent to answer's last
# segment), beside wrk's p99, which wrk corrects for coordinated omission (so one stall of the
# server counts once for each request it held up, and rules that figure).
#   scripts/bench-first-hits.sh         # SIZE=1k ROUNDS=3 STORE=5 HITS=2; BINARY=path/to/webcache
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${SIZE:-1k}
ROUNDS=${ROUNDS:-3}
STORE=${STORE:-5}
HITS=${HITS:-2}
source "$(dirname "$0")/lib/harness.sh"
install_missing nginx wrk tcpdump
start_harness
bin=${BINARY:-$bin}
origin_port=$(free_port)
nginx_port=$(free_port)
mkdir -p "$work/www" "$work/nginx-cache"
chmod 755 "$work" "$work/www"
chmod 777 "$work/nginx-cache"
head -c "$(python3 -c "print(int('$SIZE'[:-1]) * {'k': 1024, 'm': 1048576}['$SIZE'[-1]])")" /dev/urandom >"$work/www/$SIZE.bin"
nginx_config origin <<CONF
  access_log off;
  server { listen 127.0.0.1:$origin_port; keepalive_requests 10000000; root $work/www;
    location / { add_header Cache-Control "max-age=3600"; } }
CONF
nginx_config front <<CONF
  access_log off;
  proxy_cache_path $work/nginx-cache levels=1:2 keys_zone=bench:64m max_size=4g inactive=1h use_temp_path=off;
  upstream origin { server 127.0.0.1:$origin_port; keepalive 256; }
  server {
    listen 127.0.0.1:$nginx_port;
    keepalive_requests 10000000;
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache bench;
    }
  }
CONF
taskset -c 0 nginx -c "$work/origin.conf" -g 'daemon off;' & pids+=($!)
taskset -c 0 nginx -c "$work/front.conf" -g 'daemon off;' & front_master=$!; pids+=($front_master)
webcache_port=$(free_port)
# As much room as nginx's max_size: with the default 512 MiB, 5 s of storing 128 KB bodies
# evicts the first URLs, and their "first hits" are misses (nginx keeps them all).
webcache_options="--disk-capacity 4g"
start_webcache "$webcache_port" "$origin_port"
declare -A port server
port[nginx]=$nginx_port
port[webcache]=$webcache_port
server[webcache]=$webcache_pid
for name in nginx webcache; do
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:${port[$name]}/$SIZE.bin?warm" && break; sleep 0.1; done
done
server[nginx]="$front_master $(ps --ppid "$front_master" -o pid=,args= | awk '/worker process/ { print $1 }' | tr '\n' ' ')"
# wrk's Lua random numbers are the same in every run (it does not seed them): the URLs are told
# apart by a tag from the shell instead.
cat >"$work/urls.lua" <<LUA
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/$SIZE.bin?u=" .. os.getenv("TAG") .. "-" .. n)
end
LUA
rows="$work/rows"
for round in $(seq "$ROUNDS"); do
  for name in nginx webcache; do
    export TAG="r$round-$RANDOM$RANDOM"
    taskset -c 1 wrk -t1 -c64 -d"${STORE}s" -s "$work/urls.lua" "http://127.0.0.1:${port[$name]}/" >/dev/null
    sleep 1
    tcpdump -i lo -nn -B 65536 -w "$work/hits.pcap" "tcp port ${port[$name]}" 2>/dev/null &
    capture=$!
    sleep 0.5
    # shellcheck disable=SC2086
    before=$(cpu_ticks ${server[$name]})
    out=$(taskset -c 1 wrk -t1 -c1 -d"${HITS}s" --latency -s "$work/urls.lua" "http://127.0.0.1:${port[$name]}/" 2>&1)
    # shellcheck disable=SC2086
    after=$(cpu_ticks ${server[$name]})
    sleep 0.3
    kill "$capture"
    wait "$capture" 2>/dev/null || true
    tcpdump -r "$work/hits.pcap" -nn -tt 2>/dev/null >"$work/hits.txt"
    echo "$name $(wrk_figures "$name" "$out" "$before" "$after" | tr -d ' ' | tr '·' ' ') ${port[$name]}" >>"$rows"
    python3 - "$work/hits.txt" "${port[$name]}" >>"$rows" <<'PY'
import re, sys
server_port = sys.argv[2]
sent = last = None
latencies = []
for line in open(sys.argv[1]):
    m = re.match(r"([\d.]+) IP 127\.0\.0\.1\.\d+ > 127\.0\.0\.1\.(\d+): .* length (\d+)", line)
    if not m or m[3] == "0":
        continue
    if m[2] == server_port:  # a request: the one before it was answered by `last`
        if sent is not None and last is not None:
            latencies.append(last - sent)
        sent, last = float(m[1]), None
    else:
        last = float(m[1])
latencies.sort()
n = len(latencies)
print("packets", n, *(f"{latencies[min(n - 1, int(n * q))] * 1e6:.0f}" for q in (0.5, 0.99, 0.999)), f"{latencies[-1] * 1e3:.1f}")
PY
  done
done
echo "| server | requests/s | CPU µs per first hit | p50 | p99 | p99.9 | max | wrk's p99 (corrected) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
python3 - "$rows" <<'PY'
import statistics, sys
lines = [line.split() for line in open(sys.argv[1])]
by = {}
for wrk_row, packets in zip(lines[0::2], lines[1::2]):
    name, rate, cpu, p99 = wrk_row[0], float(wrk_row[1]), float(wrk_row[2]), wrk_row[3]
    by.setdefault(name, []).append((rate, cpu, float(packets[2]), float(packets[3]), float(packets[4]), float(packets[5]), p99))
for name in ["nginx", "webcache"]:
    runs = by[name]
    med = lambda i: statistics.median(r[i] for r in runs)
    print(f"| {name} | {med(0):,.0f} | {med(1):.0f} | {med(2):.0f} µs | {med(3):.0f} µs | {med(4):.0f} µs | "
          f"{' / '.join(f'{r[5]:.1f}' for r in runs)} ms | {' / '.join(r[6] for r in runs)} |")
PY
echo
echo "medians of $ROUNDS alternating rounds ($SIZE; max and wrk's p99 per round); one connection, ${HITS}s after ${STORE}s of storing at 64"
