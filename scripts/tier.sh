#!/usr/bin/env bash
# A tier of WebCache proxies behind HAProxy (Debian's package): `balance uri` with
# `hash-type consistent` in front of three `webcache proxy` processes (reverse mode, a store
# each) on loopback, before one origin that counts its requests per URL. Checks that:
#  1. each of URLS URLs, requested twice through the tier, is fetched from the origin once;
#  2. when one node is killed, HAProxy's health check takes it out and requesting every URL again
#     fetches from the origin exactly the URLs that node had stored — the other nodes' keys stay
#     where they were (consistent hashing), still hits.
# Nothing leaves the machine; everything started is stopped.
#   scripts/tier.sh            # URLS=300
set -euo pipefail
cd "$(dirname "$0")/.."
URLS=${URLS:-300}
if ! command -v haproxy >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null
fi
source "$(dirname "$0")/lib/harness.sh"
start_harness

origin_port=$(free_port)
python3 - "$origin_port" "$work/origin.log" <<'PY' &
import http.server, sys, threading
log, lock = open(sys.argv[2], "a", buffering=1), threading.Lock()
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        if self.path != "/health":
            with lock: log.write(self.path + "\n")
        data = ("body of %s\n" % self.path).encode()
        self.send_response(200)
        self.send_header("Cache-Control", "max-age=3600")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
PY
pids+=("$!")
origin="http://127.0.0.1:$origin_port"

nodes=(a b c)
declare -A node_port node_pid
for node in "${nodes[@]}"; do
  node_port[$node]=$(free_port)
  "$bin" proxy --cache-dir "$work/cache-$node" --listen "127.0.0.1:${node_port[$node]}" --upstream "$origin" >"$work/$node.log" 2>&1 &
  node_pid[$node]=$!
  pids+=("$!")
done
front_port=$(free_port)
cat >"$work/haproxy.cfg" <<CFG
global
  maxconn 4096
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
frontend tier
  bind 127.0.0.1:$front_port
  default_backend webcache
backend webcache
  balance uri
  hash-type consistent
  option httpchk GET /_webcache/metrics
  server a 127.0.0.1:${node_port[a]} check inter 200ms fall 2 rise 2
  server b 127.0.0.1:${node_port[b]} check inter 200ms fall 2 rise 2
  server c 127.0.0.1:${node_port[c]} check inter 200ms fall 2 rise 2
CFG
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
pids+=("$!")
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$front_port/warm" && break; sleep 0.1; done
sleep 1   # every node seen up by the health checks
: >"$work/origin.log"

request_all() { for i in $(seq 1 "$URLS"); do curl -sf -o /dev/null "http://127.0.0.1:$front_port/item/$i" || echo "/item/$i failed" >>"$work/failures"; done; }
request_all
request_all
fetched=$(sort "$work/origin.log" | uniq | wc -l)
twice=$(sort "$work/origin.log" | uniq -d | wc -l)
echo "1. $URLS URLs requested twice through the tier: $(wc -l <"$work/origin.log") origin fetches, $fetched distinct, $twice fetched more than once"
declare -A share
for node in "${nodes[@]}"; do
  "$bin" ls --cache-dir "$work/cache-$node" --limit 100000 | awk 'NR > 1 { print $1 }' | sed "s|^$origin||" | grep '^/item/' | sort >"$work/stored-$node" || true
  share[$node]=$(wc -l <"$work/stored-$node")
done
echo "   stored per node: a ${share[a]}, b ${share[b]}, c ${share[c]}"
ok=1
[ "$fetched" -eq "$URLS" ] && [ "$twice" -eq 0 ] || { echo "FAIL: each URL must be fetched from the origin once across the tier"; ok=0; }
[ ! -s "$work/failures" ] || { echo "FAIL: $(wc -l <"$work/failures") requests failed"; ok=0; }

kill "${node_pid[b]}"; wait "${node_pid[b]}" 2>/dev/null || true
sleep 1.5   # two failed checks at 200 ms mark it down
: >"$work/origin.log"
request_all
sort -u "$work/origin.log" >"$work/refetched"
refetched=$(wc -l <"$work/refetched")
outside=$(comm -23 "$work/refetched" "$work/stored-b" | wc -l)
echo "2. node b killed: every URL requested again; $refetched fetched from the origin (b held ${share[b]}), $outside of them held by a or c"
[ "$refetched" -eq "${share[b]}" ] && [ "$outside" -eq 0 ] || { echo "FAIL: only node b's share may be fetched again"; ok=0; }
[ ! -s "$work/failures" ] || { echo "FAIL: $(wc -l <"$work/failures") requests failed"; ok=0; }
[ "$ok" -eq 1 ] && echo "ok: one origin fetch per URL across the tier; losing a node refetches only its share"
[ "$ok" -eq 1 ]
