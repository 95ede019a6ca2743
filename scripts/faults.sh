#!/usr/bin/env bash
# Faults under a running proxy (reverse mode, in front of a local origin whose every body is
# known by its SHA-256), each checked, not just survived:
#
#  1. A full disk: the cache on a small tmpfs (MOUNT=1 and root; else a directory of that quota
#     is not available and the check is skipped with a note). More bodies than fit are fetched:
#     every client still gets its full, correct body, and the entries stored before the disk
#     filled are still served whole from the cache.
#  2. The index corrupted while the proxy runs (pages of index.sqlite overwritten): requests keep
#     being answered with correct bodies (from the origin when the store cannot answer); after a
#     restart the store recovers (the damaged index moved aside, a new one in use) and stores again.
#  3. The disk's syncs hang (`fsync` and `fdatasync` held by a preloaded shim,
#     scripts/lib/hung_syncs.c, built with cc; skipped without one): 2,000 misses from 16 clients
#     are all answered whole and none waits past a few seconds for the index, which cannot finish
#     its first checkpoint; entries past what may wait for it are not stored (store problems
#     counted). Once the syncs go on, new entries are stored again.
#  4. Two proxies and the CLI (`get`, `ls`, `stats`) on one directory for DURATION seconds under
#     concurrent clients: afterwards every stored body read back with `webcache get --mode
#     only-cache` matches the origin's.
#
# Nothing leaves the machine; everything started is stopped. Exit 0 only if all checks hold.
#   scripts/faults.sh            # DURATION=30 TMPFS_MB=4
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-30}
TMPFS_MB=${TMPFS_MB:-4}
source "$(dirname "$0")/lib/harness.sh"
start_harness
mounted=""
on_exit() { [ -z "$mounted" ] || umount "$mounted" 2>/dev/null || true; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The origin: /N.bin is N KiB of bytes derived from N, fresh for an hour; /sums lists SHA-256s.
origin_port=$(free_port)
python3 - "$origin_port" <<'PY' &
import hashlib, http.server, sys
def body(name):
    size = int(name) * 1024
    seed = hashlib.sha256(name.encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        name = self.path.lstrip("/").split("?")[0].removesuffix(".bin")
        if not name.isdigit():
            self.send_error(404)
            return
        data = body(name)
        self.send_response(200)
        self.send_header("Cache-Control", "max-age=3600")
        self.send_header("ETag", '"%s"' % hashlib.sha256(data).hexdigest()[:16])
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
PY
pids+=("$!")
origin="http://127.0.0.1:$origin_port"
for _ in $(seq 100); do curl -sf -o /dev/null "$origin/1.bin" && break; sleep 0.1; done
expected() { python3 -c 'import hashlib,sys; n=sys.argv[1]; s=hashlib.sha256(n.encode()).digest(); size=int(n)*1024; print(hashlib.sha256((s*(size//32+1))[:size]).hexdigest())' "$1"; }

start_proxy() { # cache-dir port → pid in $proxy_pid
  "$bin" proxy --cache-dir "$1" --listen "127.0.0.1:$2" --upstream "$origin" >>"$work/proxy-$2.log" 2>&1 &
  proxy_pid=$!
  pids+=("$proxy_pid")
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$2/_webcache/metrics" && return 0; sleep 0.1; done
  echo "the proxy on $2 did not start"; cat "$work/proxy-$2.log"; exit 1
}
fetch_ok() { # port name → 0 when the body's SHA-256 is the origin's
  local sum
  sum=$(curl -sf "http://127.0.0.1:$1/$2.bin" | sha256sum | cut -d' ' -f1) || return 1
  [ "$sum" = "$(expected "$2")" ]
}
metric() { curl -s "http://127.0.0.1:$1/_webcache/metrics" | awk -v name="$2" '$1 == name { print $2 }' | sed 's/\..*//;s/^$/0/'; }

echo "1. full disk: the cache on a ${TMPFS_MB} MB tmpfs, 40 bodies of 300 KiB (12 MB) through the proxy"
disk="$work/small-disk"
mkdir -p "$disk"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o "size=${TMPFS_MB}m" tmpfs "$disk" 2>/dev/null; then
  mounted="$disk"
  port=$(free_port)
  start_proxy "$disk/cache" "$port"
  bad=0
  for n in $(seq 300 339); do fetch_ok "$port" "$n" || bad=$((bad + 1)); done
  [ "$bad" -eq 0 ] || fail "$bad of 40 bodies were wrong or missing while the disk filled"
  stored=$(metric "$port" webcache_bytes_from_origin_total)
  problems=$(metric "$port" webcache_store_problems_total)
  echo "  40 bodies served whole; $problems store problems counted (the disk is full: $(df -h "$disk" | awk 'NR==2 { print $5 }') used)"
  [ "$problems" -gt 0 ] || fail "the full disk was never noticed (no store problem counted)"
  # The entries stored before the disk filled are still whole and served from the cache.
  hits_before=$(metric "$port" webcache_hits_total)
  bad=0
  for n in $(seq 300 304); do fetch_ok "$port" "$n" || bad=$((bad + 1)); done
  hits=$(( $(metric "$port" webcache_hits_total) - hits_before ))
  [ "$bad" -eq 0 ] || fail "$bad of the first 5 bodies were wrong after the disk filled"
  [ "$hits" -gt 0 ] || fail "none of the first bodies came from the cache after the disk filled"
  echo "  the first 5 bodies again: whole, $hits of 5 from the cache"
  kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true
  umount "$disk"; mounted=""
else
  echo "  skipped: mounting a tmpfs needs root and a mount namespace that allows it"
fi

echo "2. the index corrupted while the proxy runs"
cache="$work/cache-corrupt"
port=$(free_port)
start_proxy "$cache" "$port"
for n in $(seq 1 30); do fetch_ok "$port" "$n" || fail "body $n wrong before the corruption"; done
# Move what the write-ahead log holds into the database file (as SQLite does from time to time),
# then damage every page of it after the first, as a bad disk would.
python3 - "$cache/index.sqlite" <<'PY'
import os, sqlite3, sys
path = sys.argv[1]
connection = sqlite3.connect(path, timeout=10)
connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
connection.close()
size = os.path.getsize(path)
with open(path, "r+b") as f:
    for offset in range(4096, size, 4096):
        f.seek(offset); f.write(os.urandom(512))
print("  damaged %d of %d pages" % (max(0, size // 4096 - 1), size // 4096))
PY
bad=0
for n in $(seq 1 40); do fetch_ok "$port" "$n" || bad=$((bad + 1)); done
[ "$bad" -eq 0 ] || fail "$bad of 40 requests were not answered whole with the index corrupted"
echo "  40 requests answered whole with the index corrupted; $(metric "$port" webcache_store_problems_total) store problems counted"
kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true
start_proxy "$cache" "$port"
for n in $(seq 1 10); do fetch_ok "$port" "$n" || fail "body $n wrong after the restart"; done
hits_before=$(metric "$port" webcache_hits_total)
for n in $(seq 1 10); do fetch_ok "$port" "$n" || fail "body $n wrong from the recovered store"; done
hits=$(( $(metric "$port" webcache_hits_total) - hits_before ))
aside=$(ls "$cache" | grep -c "corrupt" || true)
echo "  after a restart: $aside damaged file(s) moved aside, $hits of 10 repeats from the recovered store"
[ "$hits" -eq 10 ] || fail "the store did not recover: $hits of 10 repeats were hits"
kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true

echo "3. the disk's syncs hang: 2,000 misses of 1 KiB from 16 clients"
shim="$work/hung_syncs.so"
if ${CC:-cc} -O2 -shared -fPIC -o "$shim" scripts/lib/hung_syncs.c -ldl 2>"$work/cc.log"; then
  hang="$work/syncs-hang"
  port=$(free_port)
  HUNG_SYNCS_WHILE="$hang" LD_PRELOAD="$shim" "$bin" proxy --cache-dir "$work/cache-hung" \
    --listen "127.0.0.1:$port" --upstream "$origin" >>"$work/proxy-$port.log" 2>&1 &
  proxy_pid=$!
  pids+=("$proxy_pid")
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/_webcache/metrics" && break; sleep 0.1; done
  # The syncs hang from now on: the index writer stops at its first checkpoint.
  touch "$hang"
  # Each client keeps its connection alive (as a browser does: a proxy that holds a connection's
  # next request shows there), checks every body against the origin's SHA-256 and keeps the
  # slowest answer.
  read -r wrong slowest < <(python3 - "$port" "$(expected 1)" <<'PY'
import concurrent.futures, hashlib, http.client, sys, time
port, expected = int(sys.argv[1]), sys.argv[2]
deadline = time.monotonic() + 60  # misses not sent by then count as not answered
def client(first):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    results = []
    for n in range(first, first + 125):
        started = time.monotonic()
        if started > deadline:
            results.append((False, 0))
            continue
        try:
            connection.request("GET", f"/1.bin?hung-{n}")
            answer = connection.getresponse()
            whole = answer.status == 200 and hashlib.sha256(answer.read()).hexdigest() == expected
        except Exception as error:
            if len(results) < 3: print(f"  miss {n}: {error!r}", file=sys.stderr)
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            whole = False
        results.append((whole, time.monotonic() - started))
    connection.close()
    return results
with concurrent.futures.ThreadPoolExecutor(16) as pool:
    results = [result for each in pool.map(client, range(0, 2000, 125)) for result in each]
print(sum(not whole for whole, _ in results), "%.2f" % max(took for _, took in results))
PY
  )
  problems=$(metric "$port" webcache_store_problems_total)
  waiting=$(metric "$port" webcache_index_entries_waiting)
  echo "  $((2000 - wrong)) of 2000 answered whole, the slowest in $slowest s; $problems entries not stored, $waiting waiting for the index"
  [ "$waiting" -le 1024 ] || fail "$waiting entries waited for the index, past the bound of 1,024"
  [ "$wrong" -eq 0 ] || fail "$wrong of 2000 misses were not answered whole while the syncs hung"
  python3 -c "import sys; sys.exit(0 if float('$slowest') < 5 else 1)" ||
    fail "a miss waited $slowest s for an index whose syncs hung"
  [ "$problems" -gt 0 ] || fail "no entry was refused: did the syncs hang at all?"
  rm -f "$hang"
  # The index catches up; then what is fetched is stored and served again.
  sleep 2
  waiting=$(metric "$port" webcache_index_entries_waiting)
  [ "$waiting" -eq 0 ] || fail "$waiting entries still waited for the index 2 s after the syncs went on"
  fetch_ok "$port" 2 || fail "body 2 wrong after the syncs went on"
  hits_before=$(metric "$port" webcache_hits_total)
  sleep 0.5
  fetch_ok "$port" 2 || fail "body 2 wrong from the cache after the syncs went on"
  hits=$(( $(metric "$port" webcache_hits_total) - hits_before ))
  echo "  after the syncs went on: a new body fetched again is $([ "$hits" -eq 1 ] && echo "a hit" || echo "not a hit")"
  [ "$hits" -eq 1 ] || fail "nothing was stored once the syncs went on"
  kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true
else
  echo "  skipped: no C compiler to build the shim ($(head -1 "$work/cc.log"))"
fi

echo "4. two proxies and the CLI on one directory for ${DURATION} s"
cache="$work/cache-shared"
port_a=$(free_port); start_proxy "$cache" "$port_a"; pid_a=$proxy_pid
port_b=$(free_port); start_proxy "$cache" "$port_b"; pid_b=$proxy_pid
end=$(( $(date +%s) + DURATION ))
client() { # port seed
  local requests=0 errors=0
  while [ "$(date +%s)" -lt "$end" ]; do
    n=$(( (RANDOM + $2) % 60 + 1 ))
    if fetch_ok "$1" "$n"; then requests=$((requests + 1)); else errors=$((errors + 1)); fi
  done
  echo "$requests $errors"
}
for i in 1 2 3 4; do client "$port_a" "$i" >"$work/client-a-$i" & pids+=("$!"); client "$port_b" "$((i * 7))" >"$work/client-b-$i" & pids+=("$!"); done
cli_runs=0
while [ "$(date +%s)" -lt "$end" ]; do
  "$bin" ls --cache-dir "$cache" --limit 5 >/dev/null 2>>"$work/cli.err" || echo "ls failed" >>"$work/cli.err"
  "$bin" stats --cache-dir "$cache" >/dev/null 2>>"$work/cli.err" || echo "stats failed" >>"$work/cli.err"
  "$bin" get --cache-dir "$cache" "$origin/$(( RANDOM % 60 + 1 )).bin" >/dev/null 2>>"$work/cli.err" || echo "get failed" >>"$work/cli.err"
  cli_runs=$((cli_runs + 1))
done
wait $(jobs -p | grep -v -e "^$pid_a\$" -e "^$pid_b\$" -e "^${pids[0]}\$") 2>/dev/null || true
requests=$(cat "$work"/client-* | awk '{ s += $1 } END { print s }')
errors=$(cat "$work"/client-* | awk '{ s += $2 } END { print s }')
echo "  $requests client requests ($errors wrong or failed), $cli_runs rounds of ls + stats + get"
[ "$errors" -eq 0 ] || fail "$errors client requests failed or got a wrong body"
[ ! -s "$work/cli.err" ] || { fail "the CLI failed beside the proxies"; sed 's/^/    /' "$work/cli.err" | head -5; }
kill "$pid_a" "$pid_b"; wait "$pid_a" "$pid_b" 2>/dev/null || true
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true   # the origin: what is read now must come from the store
verified=0; missing=0; wrong=0
for n in $(seq 1 60); do
  if body=$("$bin" get --cache-dir "$cache" --mode only-cache "$origin/$n.bin" 2>/dev/null | sha256sum | cut -d' ' -f1) && [ "$body" != "$(printf '' | sha256sum | cut -d' ' -f1)" ]; then
    if [ "$body" = "$(expected "$n")" ]; then verified=$((verified + 1)); else wrong=$((wrong + 1)); fi
  else
    missing=$((missing + 1))
  fi
done
echo "  afterwards, with the origin gone: $verified stored bodies verified, $wrong wrong, $missing not stored"
[ "$wrong" -eq 0 ] || fail "$wrong stored bodies did not match the origin's"
[ "$verified" -gt 0 ] || fail "nothing was stored"

[ "$failures" -eq 0 ] && echo "ok: every fault check held" || { echo "$failures check(s) failed"; exit 1; }
