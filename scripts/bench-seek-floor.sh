#!/usr/bin/env bash
# What a 64 KB seek costs on SwiftNIO before any caching: four servers answer the same random
# ranges (bytes=N-(N+65535) of one 1 MB object), in alternating rounds in one sitting:
#   nginx       nginx proxy_cache in front of a static nginx origin (the range served from its cache)
#   nio-floor   seek-floor --decoder nio: SwiftNIO's HTTP/1 decoder, a 206 head, sendfile; no cache
#   raw-floor   seek-floor --decoder none: the same without an HTTP decoder (a byte search)
#   webcache    WebCache's proxy in front of the same origin (the range served from its store)
# Servers and origin on CPU 0, wrk on CPU 1 with CONNS connections for DURATION seconds a run;
# user and system CPU per request from /proc, and the median of ROUNDS rounds per server.
# CPU_CAP=50 gives each server half a core (a cgroup quota) so that wrk, on a core of its own,
# is never what limits the rate: requests per second then compare what each server does with
# the same CPU.
#   scripts/bench-seek-floor.sh        # ROUNDS=5 DURATION=5 CONNS=64 CPU_CAP=; BINARY=path/to/webcache
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5}
CONNS=${CONNS:-64}
source "$(dirname "$0")/lib/harness.sh"
install_missing nginx wrk
start_harness seek-floor
bin=${BINARY:-$bin}
floor="$PWD/.build/release/seek-floor"
origin_port=$(free_port)
nginx_port=$(free_port)
mkdir -p "$work/www" "$work/nginx-cache"
chmod 755 "$work" "$work/www"
chmod 777 "$work/nginx-cache"
head -c 1048576 /dev/urandom >"$work/www/1m.bin"
nginx_config origin <<CONF
  access_log $work/origin-access.log;
  server { listen 127.0.0.1:$origin_port; root $work/www; location / { add_header Cache-Control "max-age=3600"; } }
CONF
nginx_config front <<CONF
  access_log off;
  sendfile on;
  proxy_cache_path $work/nginx-cache levels=1:2 keys_zone=bench:10m max_size=1g inactive=1h use_temp_path=off;
  server {
    listen 127.0.0.1:$nginx_port;
    keepalive_requests 10000000;
    location / {
      proxy_pass http://127.0.0.1:$origin_port;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache bench;
    }
  }
CONF
taskset -c 0 nginx -c "$work/origin.conf" -g 'daemon off;' & pids+=($!)
taskset -c 0 nginx -c "$work/front.conf" -g 'daemon off;' & front_master=$!; pids+=($front_master)
declare -A port server
port[nginx]=$nginx_port
port[nio-floor]=$(free_port)
taskset -c 0 "$floor" --port "${port[nio-floor]}" --decoder nio "$work/www/1m.bin" >/dev/null 2>&1 &
server[nio-floor]=$!; pids+=($!)
port[raw-floor]=$(free_port)
taskset -c 0 "$floor" --port "${port[raw-floor]}" --decoder none "$work/www/1m.bin" >/dev/null 2>&1 &
server[raw-floor]=$!; pids+=($!)
port[webcache]=$(free_port)
start_webcache "${port[webcache]}" "$origin_port"
server[webcache]=$webcache_pid
for name in nginx nio-floor raw-floor webcache; do
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:${port[$name]}/1m.bin" && break; sleep 0.1; done
  curl -sf -o /dev/null "http://127.0.0.1:${port[$name]}/1m.bin"
  status=$(curl -s -o "$work/part" -w '%{http_code}' -H 'Range: bytes=1000-1999' "http://127.0.0.1:${port[$name]}/1m.bin")
  [ "$status" = 206 ] && cmp -s "$work/part" <(tail -c +1001 "$work/www/1m.bin" | head -c 1000) \
    || { echo "FAIL: $name answered $status or wrong bytes"; exit 1; }
done
server[nginx]="$front_master $(ps --ppid "$front_master" -o pid=,args= | awk '/worker process/ { print $1 }' | tr '\n' ' ')"
if [ -n "${CPU_CAP:-}" ]; then
  # shellcheck disable=SC2086
  cap_cpu "$CPU_CAP" ${server[nginx]} ${server[nio-floor]} ${server[raw-floor]} ${server[webcache]}
fi
echo 'request = function() local s = math.random(0, 1048576 - 65536); return wrk.format("GET", "/1m.bin", {["Range"] = "bytes=" .. s .. "-" .. (s + 65535)}) end' >"$work/seek.lua"
hz=$(getconf CLK_TCK)
ticks() { # user and system clock ticks of the processes given
  local user=0 system=0 pid
  for pid in "$@"; do
    [ -r "/proc/$pid/stat" ] || continue
    read -r u s < <(awk '{ print $14, $15 }' "/proc/$pid/stat")
    user=$((user + u)); system=$((system + s))
  done
  echo "$user $system"
}
origin_before=$(wc -l <"$work/origin-access.log")
rows="$work/rows"
for round in $(seq "$ROUNDS"); do
  for name in nginx nio-floor raw-floor webcache; do
    # shellcheck disable=SC2086
    read -r u0 s0 < <(ticks ${server[$name]})
    out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" -s "$work/seek.lua" "http://127.0.0.1:${port[$name]}/" 2>&1)
    # shellcheck disable=SC2086
    read -r u1 s1 < <(ticks ${server[$name]})
    requests=$(echo "$out" | awk '/requests in/ { print $1 }')
    rate=$(echo "$out" | awk '/Requests\/sec/ { print $2 }')
    [ -z "$(echo "$out" | awk '/Non-2xx/ { print $NF }')" ] || { echo "FAIL: $name answered non-2xx"; exit 1; }
    echo "$round $name $rate $(python3 -c "print(($u1 - $u0) / $hz * 1e6 / $requests, ($s1 - $s0) / $hz * 1e6 / $requests)")" >>"$rows"
  done
done
echo "| server | requests/s | user µs | system µs | CPU µs per seek | over nginx (CPU) |"
echo "| --- | --- | --- | --- | --- | --- |"
python3 - "$rows" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
by = {}
for _, name, rate, user, system in rows:
    by.setdefault(name, []).append((float(rate), float(user), float(system)))
median = lambda name, i: statistics.median(r[i] for r in by[name])
nginx = median("nginx", 1) + median("nginx", 2)
for name in ["nginx", "nio-floor", "raw-floor", "webcache"]:
    rate, user, system = median(name, 0), median(name, 1), median(name, 2)
    print(f"| {name} | {rate:,.0f} | {user:.1f} | {system:.1f} | {user + system:.1f} | {(user + system) / nginx:.2f} |")
PY
echo
echo "medians of $ROUNDS alternating rounds of ${DURATION}s at $CONNS connections${CPU_CAP:+, each server capped at $CPU_CAP % of a core}; the origin saw $(( $(wc -l <"$work/origin-access.log") - origin_before )) requests during them"
