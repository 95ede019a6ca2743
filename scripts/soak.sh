#!/usr/bin/env bash
# Soak: the proxy (reverse mode) driven for MINUTES at CONNECTIONS connections with a mix of
# hits, misses, revalidations (no-cache pages with ETags), slow clients (a 1 MB body read at
# 64 KB per 100 ms) and aborted downloads (a 1 MB body dropped after its first bytes). Every
# INTERVAL seconds it prints the proxy's RSS, open descriptors, requests done, p50/p99 latency
# of the requests read at full speed, and 5xx answers; it fails if any answer is a 5xx or a body is wrong, or if RSS or descriptors
# in the last third exceed the first third's peak by more than 25% (a leak), after a warm-up.
# Nothing leaves the machine; everything started is stopped.
#   scripts/soak.sh            # MINUTES=10 CONNECTIONS=256 INTERVAL=30
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${MINUTES:-10}
CONNECTIONS=${CONNECTIONS:-256}
INTERVAL=${INTERVAL:-30}
source "$(dirname "$0")/lib/harness.sh"
start_harness
origin_port=$(free_port)
proxy_port=$(free_port)

# The origin: /hit/N (4 KB, fresh an hour), /miss/N (4 KB, never stored: every one is new),
# /page/N (8 KB, no-cache with an ETag: revalidated, 304 when it matches), /big/N (1 MB, fresh).
python3 - "$origin_port" <<'PY' &
import http.server, sys
def body(path, size):
    unit = (path.encode() + b"|") * 64
    return (unit * (size // len(unit) + 1))[:size]
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        kind = self.path.split("/")[1]
        size = {"hit": 4096, "miss": 4096, "page": 8192, "big": 1 << 20}.get(kind)
        if size is None:
            self.send_error(404); return
        etag = '"%s"' % self.path
        if kind == "page" and self.headers.get("If-None-Match") == etag:
            self.send_response(304); self.send_header("ETag", etag); self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", "0"); self.end_headers(); return
        data = body(self.path, size)
        self.send_response(200)
        self.send_header("Cache-Control", {"hit": "max-age=3600", "miss": "no-store", "page": "no-cache", "big": "max-age=3600"}[kind])
        self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args): pass
class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True
Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
PY
pids+=("$!")
"$bin" proxy --cache-dir "$work/cache" --listen "127.0.0.1:$proxy_port" --upstream "http://127.0.0.1:$origin_port" \
  --idle-timeout 10 >"$work/proxy.log" 2>&1 &
proxy_pid=$!
pids+=("$proxy_pid")
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$proxy_port/hit/1" && break; sleep 0.1; done

python3 - "$proxy_port" "$proxy_pid" "$MINUTES" "$CONNECTIONS" "$INTERVAL" <<'PY'
import asyncio, os, random, sys, time
port, pid, minutes, connections, interval = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
end = time.monotonic() + minutes * 60
latencies, counts = [], {"requests": 0, "5xx": 0, "wrong": 0, "slow": 0, "aborted": 0, "errors": 0}

def expected(path, size):
    unit = (path.encode() + b"|") * 64
    return (unit * (size // len(unit) + 1))[:size]

async def read_response(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return status, head, length

async def one(reader, writer, path, size, mode):
    started = time.monotonic()
    writer.write(b"GET %s HTTP/1.1\r\nHost: soak\r\nUser-Agent: soak/%d\r\n\r\n" % (path.encode(), random.randrange(500)))
    await writer.drain()
    status, head, length = await read_response(reader)
    if status >= 500:
        counts["5xx"] += 1
    if mode == "abort":
        await reader.read(16384)
        counts["aborted"] += 1
        return False
    if mode == "slow":
        data = b""
        while len(data) < length:
            data += await reader.read(65536)
            await asyncio.sleep(0.1)
        counts["slow"] += 1
    else:
        data = await reader.readexactly(length)
    if status == 200 and data != expected(path, size):
        counts["wrong"] += 1
    counts["requests"] += 1
    if mode == "read":   # a slow client's time is its own
        latencies.append(time.monotonic() - started)
    return True

async def client(number):
    serial = 0
    while time.monotonic() < end:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            keep = True
            for _ in range(random.randrange(1, 50)):
                if time.monotonic() >= end or not keep:
                    break
                roll = random.random()
                serial += 1
                if roll < 0.55:   path, size, mode = "/hit/%d" % random.randrange(2000), 4096, "read"
                elif roll < 0.75: path, size, mode = "/miss/%d-%d" % (number, serial), 4096, "read"
                elif roll < 0.93: path, size, mode = "/page/%d" % random.randrange(300), 8192, "read"
                elif roll < 0.97: path, size, mode = "/big/%d" % random.randrange(20), 1 << 20, "slow"
                else:             path, size, mode = "/big/%d" % random.randrange(20), 1 << 20, "abort"
                keep = await asyncio.wait_for(one(reader, writer, path, size, mode), 60)
            writer.close()
        except Exception as error:
            counts["errors"] += 1
            await asyncio.sleep(0.1)

def sample():
    rss = int(open("/proc/%d/statm" % pid).read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // (1 << 20)
    fds = len(os.listdir("/proc/%d/fd" % pid))
    return rss, fds

async def monitor(samples):
    start = time.monotonic()
    while time.monotonic() < end:
        await asyncio.sleep(interval)
        window = sorted(latencies); latencies.clear()
        p = lambda q: 1000 * window[min(len(window) - 1, int(len(window) * q))] if window else 0
        rss, fds = sample()
        samples.append((rss, fds))
        print("  %4.0f s  RSS %4d MB  fds %5d  requests %7d  p50 %6.1f ms  p99 %7.1f ms  5xx %d  wrong %d  slow %d  aborted %d  client errors %d"
              % (time.monotonic() - start, rss, fds, counts["requests"], p(0.5), p(0.99), counts["5xx"], counts["wrong"], counts["slow"], counts["aborted"], counts["errors"]), flush=True)

async def main():
    samples = []
    await asyncio.gather(monitor(samples), *(client(i) for i in range(connections)))
    third = max(1, len(samples) // 3)
    first, last = samples[1:third + 1] or samples[:1], samples[-third:]
    rss_growth = max(s[0] for s in last) / max(1, max(s[0] for s in first))
    fd_growth = max(s[1] for s in last) / max(1, max(s[1] for s in first))
    print("  RSS last third / first third peak: %.2f; descriptors: %.2f" % (rss_growth, fd_growth))
    ok = counts["5xx"] == 0 and counts["wrong"] == 0 and rss_growth <= 1.25 and fd_growth <= 1.25
    print("ok: stable under the mix" if ok else "FAIL: see the figures above")
    sys.exit(0 if ok else 1)

asyncio.run(main())
PY
