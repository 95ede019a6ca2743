#!/usr/bin/env bash
# Clients that never read: N connections each ask the proxy for one large miss (collapsed into one
# origin fetch) and never read a byte. Prints the proxy's RSS and open descriptors each second,
# and fails unless every such connection is let go within the idle timeout (+ 2 s) and the body
# was fetched from the origin once. Everything runs on 127.0.0.1 and stops by itself.
#
# usage: scripts/slow-clients.sh [CLIENTS=1000] [IDLE_TIMEOUT_S=4] [BODY_MB=5]
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-1000}
idle=${2:-4}
body_mb=${3:-5}
source "$(dirname "$0")/lib/harness.sh"
start_harness
origin_port=$(free_port)
proxy_port=$(free_port)

python3 - "$origin_port" "$body_mb" "$work/origin-count" <<'PY' &
import http.server, sys
port, size, counter = int(sys.argv[1]), int(sys.argv[2]) << 20, sys.argv[3]
body = b"y" * size
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        with open(counter, "a") as f: f.write("x")
        self.send_response(200)
        self.send_header("Cache-Control", "max-age=600")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
PY
pids+=("$!")
"$bin" proxy --cache-dir "$work/cache" --listen "127.0.0.1:$proxy_port" --upstream "http://127.0.0.1:$origin_port" \
  --idle-timeout "$idle" 2>"$work/proxy.log" &
proxy_pid=$!
pids+=("$proxy_pid")
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$proxy_port/_webcache/metrics" && break; sleep 0.1; done

python3 - "$proxy_port" "$clients" "$proxy_pid" "$idle" <<'PY'
import os, socket, sys, time
port, clients, pid, idle = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def rss_mb():
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmRSS"))
def descriptors():
    return len(os.listdir(f"/proc/{pid}/fd"))
base_fds = descriptors()
print(f"before: rss {rss_mb()} MB, {base_fds} descriptors; {clients} clients ask for the body and never read")
sockets = []
for _ in range(clients):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
    sockets.append(s)
peak, released_at = 0, None
for second in range(1, idle + 6):
    time.sleep(1)
    rss, fds = rss_mb(), descriptors()
    peak = max(peak, rss)
    print(f"t={second:2d} s  rss {rss:4d} MB  descriptors {fds}")
    if released_at is None and fds <= base_fds + 2:
        released_at = second
for s in sockets: s.close()
print(f"peak rss {peak} MB; connections let go after {released_at} s" if released_at else "connections still held")
sys.exit(0 if released_at is not None and released_at <= idle + 2 else 1)
PY
fetches=$(wc -c <"$work/origin-count")
echo "origin fetches: $fetches"
[ "$fetches" -eq 1 ] || { echo "FAIL: the body was fetched $fetches times"; exit 1; }
echo "ok"
