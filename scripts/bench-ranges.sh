#!/usr/bin/env bash
# Range requests answered from the cache, as a video player seeking makes them: WebCache's proxy
# (reverse mode) beside nginx's proxy_cache, both in front of the same static nginx origin
# serving a 1 MB, an 8 MB and a 16 MB object (Cache-Control: max-age=3600, ETag). Both caches are warmed with
# a whole GET; during the runs the origin must see no request (every range a hit). wrk drives
# CONNS connections for DURATION seconds per row with a Lua script per kind of range:
#   seek64k   bytes=N-(N+65535) at a random N of the 1 MB object (a player's chunk)
#   seek8m    bytes=N-(N+65535) at a random N of the 8 MB object (the same chunk of a longer video)
#   tail      bytes=N- at a random N of the 1 MB object (a seek, then play to the end)
#   seek16m   bytes=N-(N+262143) at a random N of the 16 MB object (large media)
#   multi     bytes=0-99,5000-5099,900000-900099 (multipart/byteranges)
# Caches and origin on CPU 0, wrk on CPU 1, one worker/thread each; server CPU per request from
# /proc. CPU_CAP=50 gives each cache half a core (a cgroup quota) so that wrk, on a core of its
# own, never limits the rate: requests per second then compare what each does with the same CPU.
# Nothing leaves the machine.
#   scripts/bench-ranges.sh            # DURATION=10 CONNS=64 CPU_CAP=; PERF_OUT=file records WebCache with perf;
#                                      # BINARY=path/to/webcache measures another build
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
CONNS=${CONNS:-64}
source "$(dirname "$0")/lib/harness.sh"
install_missing nginx wrk
start_harness
bin=${BINARY:-$bin}
mkdir -p "$work/www" "$work/nginx-cache"
chmod 755 "$work" "$work/www"; chmod 777 "$work/nginx-cache"
head -c 1048576 /dev/urandom >"$work/www/1m.bin"
head -c 8388608 /dev/urandom >"$work/www/8m.bin"
head -c 16777216 /dev/urandom >"$work/www/16m.bin"
nginx_config origin <<CONF
  access_log $work/origin-access.log;
  server {
    listen 127.0.0.1:9701;
    root $work/www;
    location / { add_header Cache-Control "max-age=3600"; }
  }
CONF
nginx_config front <<CONF
  access_log off;
  sendfile on;
  proxy_cache_path $work/nginx-cache levels=1:2 keys_zone=bench:10m max_size=1g inactive=1h use_temp_path=off;
  server {
    listen 127.0.0.1:9702;
    keepalive_requests 10000000;
    location / {
      proxy_pass http://127.0.0.1:9701;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache bench;
    }
  }
CONF
taskset -c 0 nginx -c "$work/origin.conf" -g 'daemon off;' & pids+=($!)
taskset -c 0 nginx -c "$work/front.conf" -g 'daemon off;' & front_master=$!; pids+=($front_master)
taskset -c 0 "$bin" proxy --cache-dir "$work/cache" --listen 127.0.0.1:9703 --upstream http://127.0.0.1:9701 --threads 1 >"$work/webcache.log" 2>&1 &
webcache_pid=$!; pids+=($webcache_pid)
for _ in $(seq 100); do curl -sf -o /dev/null http://127.0.0.1:9702/1m.bin && curl -sf -o /dev/null http://127.0.0.1:9703/1m.bin && break; sleep 0.1; done
for port in 9702 9703; do for object in 1m 8m 16m; do for _ in 1 2; do curl -sf -o /dev/null "http://127.0.0.1:$port/$object.bin"; done; done; done
sleep 1
# Each cache answers a range with 206 and the right bytes.
for port in 9702 9703; do
  status=$(curl -s -o "$work/part" -w '%{http_code}' -H 'Range: bytes=1000-1999' "http://127.0.0.1:$port/1m.bin")
  [ "$status" = 206 ] && cmp -s "$work/part" <(tail -c +1001 "$work/www/1m.bin" | head -c 1000) || { echo "FAIL: port $port answered $status or wrong bytes"; exit 1; }
done
front_pids=("$front_master" $(ps --ppid "$front_master" -o pid=,args= | awk '/worker process/ { print $1 }'))
hz=$(getconf CLK_TCK)
[ -z "${CPU_CAP:-}" ] || cap_cpu "$CPU_CAP" "${front_pids[@]}" "$webcache_pid"

script() { # kind → a wrk Lua script
  case $1 in
    seek64k) echo 'request = function() local s = math.random(0, 1048576 - 65536); return wrk.format("GET", "/1m.bin", {["Range"] = "bytes=" .. s .. "-" .. (s + 65535)}) end' ;;
    seek8m) echo 'request = function() local s = math.random(0, 8388608 - 65536); return wrk.format("GET", "/8m.bin", {["Range"] = "bytes=" .. s .. "-" .. (s + 65535)}) end' ;;
    tail) echo 'request = function() local s = math.random(0, 1048575); return wrk.format("GET", "/1m.bin", {["Range"] = "bytes=" .. s .. "-"}) end' ;;
    seek16m) echo 'request = function() local s = math.random(0, 16777216 - 262144); return wrk.format("GET", "/16m.bin", {["Range"] = "bytes=" .. s .. "-" .. (s + 262143)}) end' ;;
    multi) echo 'request = function() return wrk.format("GET", "/1m.bin", {["Range"] = "bytes=0-99,5000-5099,900000-900099"}) end' ;;
  esac
}
echo "| kind | nginx req/s · µs/req · p99 | WebCache req/s · µs/req · p99 | WebCache / nginx |"
echo "| --- | --- | --- | --- |"
origin_before=$(wc -l <"$work/origin-access.log")
for kind in seek64k seek8m tail seek16m multi; do
  script "$kind" >"$work/$kind.lua"
  declare -A rate cpu p99
  for name in nginx webcache; do
    if [ "$name" = nginx ]; then port=9702; server=("${front_pids[@]}"); else port=9703; server=("$webcache_pid"); fi
    before=$(cpu_ticks "${server[@]}")
    perf_pid=
    if [ -n "${PERF_OUT:-}" ] && [ "$name" = webcache ]; then
      perf record -q -F 1999 -g -p "$webcache_pid" -o "$PERF_OUT.$kind" -- sleep "$DURATION" 2>/dev/null & perf_pid=$!
    fi
    out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -s "$work/$kind.lua" "http://127.0.0.1:$port/" 2>&1)
    after=$(cpu_ticks "${server[@]}")
    [ -z "$perf_pid" ] || wait "$perf_pid" || true
    requests=$(echo "$out" | awk '/requests in/ { print $1 }')
    non2xx=$(echo "$out" | awk '/Non-2xx/ { print $NF }')
    [ -z "$non2xx" ] || { echo "FAIL: $name answered $non2xx non-2xx responses to $kind"; exit 1; }
    rate[$name]=$(echo "$out" | awk '/Requests\/sec/ { print $2 }')
    p99[$name]=$(echo "$out" | awk '$1 == "99%" { print $2 }')
    cpu[$name]=$(python3 -c "print(round(($after - $before) / $hz * 1e6 / max(1, $requests)))")
  done
  ratio=$(python3 -c "print('%.2f' % (${rate[webcache]} / ${rate[nginx]}))")
  printf '| %s | %.0f · %s · %s | %.0f · %s · %s | %s |\n' "$kind" "${rate[nginx]}" "${cpu[nginx]}" "${p99[nginx]}" "${rate[webcache]}" "${cpu[webcache]}" "${p99[webcache]}" "$ratio"
done
origin_after=$(wc -l <"$work/origin-access.log")
echo
[ -z "${CPU_CAP:-}" ] || echo "each cache capped at $CPU_CAP % of a core"
echo "origin requests during the runs: $((origin_after - origin_before)) (must be 0: every range answered from the cache)"
[ "$origin_after" -eq "$origin_before" ]
