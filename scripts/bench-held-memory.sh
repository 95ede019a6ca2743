#!/usr/bin/env bash
# What the cache holds in memory on behalf of others — the figures of docs/Robustness.md's third
# pass, measured on the build under test (BINARY=path/to/an/older/webcache to compare):
#   1. CLIENTS clients sending BODY-byte request bodies to the proxy at once (all but the last
#      byte, held), with no shared bound (--max-buffered-bodies of 1 TiB) and with the default
#      (bodies of 1 MiB or more stream to the origin since 2026-11-28: the bound no longer applies);
#   2. `webcache preload` of a page with VIDEOS videos of VIDEO bytes (peak RSS);
#   3. `webcache get` of one of those videos once stored (peak RSS);
#   4. the proxy asked for the first two bytes of four videos (background completions, peak RSS);
#   5. the proxy restarted, then asked for a 64 KB range in the middle of each (peak RSS);
#   6. `webcache get` of a whole file of VIDEO bytes stored as a prefix of three quarters, which
#      the cache completes (peak RSS);
#   7. `webcache get` of a 64 KB range just past such a stored prefix, which combines with it;
#   8. `webcache get` of a 64 KB range in the middle of a stored video, in a new process;
#   9. a POST through the proxy answered with a video's bytes (as an export or a stream of
#      events is): when its first bytes reach the client, and the proxy's peak RSS;
#  10. a GET through the proxy of a stored `no-cache` file of VIDEO bytes that has changed, so
#      that its revalidation brings the new body: when its first bytes come, and the peak RSS;
#  11. a `no-store` download of VIDEO bytes through the proxy by a client reading 20 MB/s: what
#      the proxy wrote to disk (its `write_bytes`), and its peak RSS;
#  12. the same for a storable download of three times VIDEO bytes sent chunked, which the store
#      gives up on half-way (past its largest entry, 64 MiB), read at 100 MB/s.
# Everything runs on 127.0.0.1 (Python origins), in a scratch folder removed on exit.
#   scripts/bench-held-memory.sh        # CLIENTS=40 BODY=60000000 VIDEOS=8 VIDEO=40000000
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${CLIENTS:-40}
BODY=${BODY:-60000000}
VIDEOS=${VIDEOS:-8}
VIDEO=${VIDEO:-40000000}
source "$(dirname "$0")/lib/harness.sh"
start_harness
bin=${BINARY:-$bin}
mkdir -p "$work/site"
for ((i = 0; i < VIDEOS; i++)); do head -c "$VIDEO" /dev/urandom >"$work/site/v$i.webm"; done
for i in 0 1; do head -c "$VIDEO" /dev/urandom >"$work/site/p$i.bin"; done
python3 -c "import sys; print('<html><body>' + ''.join(f'<video src=\"/v{i}.webm\"></video>' for i in range(int(sys.argv[1]))) + '</body></html>')" \
  "$VIDEOS" >"$work/site/index.html"

# The origin: the site with ranges (one per request) and a sink for request bodies.
cat >"$work/origin.py" <<'PY'
import http.server, os, re, sys, time
root = sys.argv[2]
class Origin(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        left = int(self.headers.get("Content-Length", 0))
        while left > 0: left -= len(self.rfile.read(min(left, 1 << 20)))
        if self.path.startswith("/export/"): return self.do_GET()
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"ok")
    def do_GET(self):
        path = os.path.join(root, re.sub(r"^/(export|changing|private|long)/", "/", self.path.split("?")[0]).lstrip("/"))
        if self.path.startswith("/long/"):  # storable, three times the file, chunked: its length unannounced
            self.send_response(200); self.send_header("Cache-Control", "max-age=3600")
            self.send_header("Transfer-Encoding", "chunked"); self.end_headers()
            for _ in range(3):
                with open(path, "rb") as body:
                    while chunk := body.read(1 << 20): self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n"); return
        size = os.path.getsize(path)
        ranged = re.match(r"bytes=(\d+)-(\d*)$", self.headers.get("Range", ""))
        start, end = (int(ranged[1]), int(ranged[2] or size - 1)) if ranged else (0, size - 1)
        self.send_response(206 if ranged else 200)
        if ranged: self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        kind = {".html": "text/html", ".webm": "video/webm"}.get(os.path.splitext(path)[1], "application/octet-stream")
        self.send_header("Content-Type", kind)
        if self.path.startswith("/private/"):  # a download the cache does not keep
            self.send_header("Cache-Control", "no-store")
        elif self.path.startswith("/changing/"):  # validated on every use, and new every time
            self.send_header("Cache-Control", "no-cache"); self.send_header("ETag", f'"{time.monotonic_ns()}"')
        else:
            self.send_header("Cache-Control", "max-age=3600"); self.send_header("ETag", f'"{size}"')
        self.send_header("Content-Length", str(end - start + 1)); self.end_headers()
        with open(path, "rb") as body:
            body.seek(start); left = end - start + 1
            while left > 0:
                chunk = body.read(min(left, 1 << 20)); self.wfile.write(chunk); left -= len(chunk)
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Origin).serve_forever()
PY
# Clients: `bodies PORT PID CLIENTS SIZE`, `ranges PORT PID RANGE PATH…`, `first PORT PID METHOD PATH`,
# `slow PORT PID PATH RATE`, `peak COMMAND…`.
cat >"$work/clients.py" <<'PY'
import resource, socket, subprocess, sys, threading, time
def rss(pid, field="VmRSS"):
    return next(int(line.split()[1]) // 1024 for line in open(f"/proc/{pid}/status") if line.startswith(field))
mode = sys.argv[1]
if mode == "bodies":
    port, pid, clients, size = map(int, sys.argv[2:6])
    start, held = rss(pid), []
    def send(i):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(f"POST /upload{i} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {size}\r\n\r\n".encode())
        left, chunk = size - 1, b"x" * (1 << 20)
        try:
            while left > 0: s.sendall(chunk[:min(left, len(chunk))]); left -= min(left, len(chunk))
        except OSError: pass
        held.append(s)
    threads = [threading.Thread(target=send, args=(i,)) for i in range(clients)]
    for t in threads: t.start()
    for t in threads: t.join()
    time.sleep(2)
    holding, statuses = rss(pid), {}
    for s in held:
        s.settimeout(30)
        try: s.sendall(b"x"); answer = s.recv(64).split(b" ")[1].decode()
        except Exception as error: answer = type(error).__name__
        statuses[answer] = statuses.get(answer, 0) + 1
        s.close()
    print(f"RSS {start} -> {holding} MB; answers {dict(sorted(statuses.items()))}")
elif mode == "ranges":
    port, pid, wanted, paths = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]
    start, codes = rss(pid), []
    def get(path):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: {wanted}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(1 << 16): data += chunk
        codes.append(data.split(b" ")[1].decode()); s.close()
    threads = [threading.Thread(target=get, args=(p,)) for p in paths]
    for t in threads: t.start()
    for t in threads: t.join()
    time.sleep(3)  # completions started in the background run on
    print(f"RSS {start} MB, peak {rss(pid, 'VmHWM')} MB; answers {sorted(codes)}")
elif mode == "first":  # first PORT PID METHOD PATH: when the first body bytes come
    port, pid, method, path = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    start, began = rss(pid), time.monotonic()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
    head, received, first = bytearray(), 0, None
    while chunk := s.recv(1 << 16):
        if first is None:
            head += chunk
            if b"\r\n\r\n" in head and len(head) > head.index(b"\r\n\r\n") + 4:
                first = time.monotonic() - began
        received += len(chunk)
    status = head.split(b" ")[1].decode() if head else "none"
    print(f"{status}, first body bytes after {first or 0:.2f} s, {received >> 20} MB after {time.monotonic() - began:.2f} s; RSS {start} MB, peak {rss(pid, 'VmHWM')} MB")
elif mode == "slow":  # slow PORT PID PATH RATE: read at RATE bytes a second
    port, pid, path, rate = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    def written(): return next(int(l.split()[1]) for l in open(f"/proc/{pid}/io") if l.startswith("write_bytes"))
    before, began, received = written(), time.monotonic(), 0
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    while chunk := s.recv(1 << 16):
        received += len(chunk)
        ahead = received / rate - (time.monotonic() - began)
        if ahead > 0: time.sleep(ahead)
    print(f"{received >> 20} MB in {time.monotonic() - began:.1f} s; {(written() - before) >> 20} MB written to disk; peak RSS {rss(pid, 'VmHWM')} MB")
elif mode == "peak":
    done = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"exit {done.returncode}, peak RSS {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024} MB")
PY

origin_port=$(free_port)
python3 "$work/origin.py" "$origin_port" "$work/site" &
pids+=("$!")
sleep 1
origin="http://127.0.0.1:$origin_port"

proxy() {  # proxy PORT [flags…]: a proxy on $work/cache in front of the origin; pid in $proxy_pid
  local port=$1
  shift
  "$bin" proxy --cache-dir "$work/cache" --listen "127.0.0.1:$port" --upstream "$origin" "$@" >>"$work/proxy.log" 2>&1 &
  proxy_pid=$!
  pids+=("$proxy_pid")
  sleep 1.5
  kill -0 "$proxy_pid" 2>/dev/null  # an older build may not take the flags
}
stop_proxy() { kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true; }
# through_proxy LABEL MODE ARGS…: `clients.py MODE PORT PID ARGS…` against a proxy started for it
# (WARM=PATH fetches PATH through it first), its line printed after LABEL.
through_proxy() {
  local label=$1 mode=$2 port
  shift 2
  port=$(free_port)
  proxy "$port"
  if [ -n "${WARM:-}" ]; then curl -sf -o /dev/null "http://127.0.0.1:$port$WARM"; fi
  echo "$label: $(python3 "$work/clients.py" "$mode" "$port" "$proxy_pid" "$@")"
  stop_proxy
}

for bound in "--max-buffered-bodies 1099511627776" ""; do
  port=$(free_port)
  # shellcheck disable=SC2086
  if proxy "$port" $bound; then
    echo "1. $CLIENTS request bodies of $BODY bytes, ${bound:-the default bound}: $(python3 "$work/clients.py" bodies "$port" "$proxy_pid" "$CLIENTS" "$BODY")"
    stop_proxy
  else
    echo "1. $CLIENTS request bodies of $BODY bytes, $bound: not taken by this build"
  fi
  rm -rf "$work/cache"
done
echo "2. preload of a page with $VIDEOS videos of $VIDEO bytes: $(python3 "$work/clients.py" peak "$bin" preload "$origin/index.html" --cache-dir "$work/cache")"
echo "3. get of a stored video: $(python3 "$work/clients.py" peak "$bin" get "$origin/v0.webm" --cache-dir "$work/cache")"
rm -rf "$work/cache"
through_proxy "4. first two bytes of four videos" ranges bytes=0-1 /v0.webm /v1.webm /v2.webm /v3.webm
middle=$((VIDEO / 2))
through_proxy "5. after a restart, a 64 KB range in the middle of each" ranges "bytes=$middle-$((middle + 65535))" \
  /v0.webm /v1.webm /v2.webm /v3.webm
rm -rf "$work/cache"
prefix=$((VIDEO * 3 / 4))
for i in 0 1; do "$bin" get -r "0-$((prefix - 1))" "$origin/p$i.bin" --cache-dir "$work/cache" >/dev/null; done
echo "6. get of a whole file stored as a prefix of $prefix bytes: $(python3 "$work/clients.py" peak "$bin" get "$origin/p0.bin" --cache-dir "$work/cache")"
echo "7. get of 64 KB just past such a prefix: $(python3 "$work/clients.py" peak "$bin" get -r "$prefix-$((prefix + 65535))" "$origin/p1.bin" --cache-dir "$work/cache")"
"$bin" get "$origin/v1.webm" --cache-dir "$work/cache" >/dev/null
echo "8. get of 64 KB in the middle of a stored video: $(python3 "$work/clients.py" peak "$bin" get -r "$middle-$((middle + 65535))" "$origin/v1.webm" --cache-dir "$work/cache")"
through_proxy "9. a POST answered with $VIDEO bytes" first POST /export/v0.webm
WARM=/changing/v2.webm through_proxy "10. a stored no-cache file of $VIDEO bytes that changed" first GET /changing/v2.webm
through_proxy "11. a no-store download of $VIDEO bytes read at 20 MB/s" slow /private/v3.webm 20000000
through_proxy "12. a storable download of $((3 * VIDEO)) bytes, length unannounced, past the store's largest entry (64 MiB), read at 100 MB/s" \
  slow /long/v3.webm 100000000
