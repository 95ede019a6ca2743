# Shared by the measuring scripts (sourced, not run): a release build of webcache, a scratch
# folder, processes stopped and the folder removed on exit, free ports, CPU time of processes,
# nginx configurations, an nginx origin, files of random bytes, missing tools installed.
#   source "$(dirname "$0")/lib/harness.sh"
#   start_harness [product…]    # builds webcache (and the products named), sets $bin and $work
#   pids+=("$!")                # every background process started is stopped on exit
#   on_exit() { …; }            # optional: runs on exit once they are stopped (unmounting, say)
#   cap_cpu PERCENT PID…        # the processes share PERCENT of one core (cgroup v1 cpu quota)
# KEEP=1 leaves $work in place for a look afterwards.
export PATH="/opt/swift/usr/bin:$PATH"
pids=()

start_harness() {
  local product
  for product in webcache "$@"; do swift build -c release --product "$product" >/dev/null; done
  bin="$PWD/.build/release/webcache"
  work="$(mktemp -d)"
  trap harness_cleanup EXIT
}

harness_cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if declare -F on_exit >/dev/null; then on_exit || true; fi
  if [ -n "${cpu_cap_group:-}" ]; then
    while read -r pid; do echo "$pid" >/sys/fs/cgroup/cpu/cgroup.procs 2>/dev/null || true; done \
      <"$cpu_cap_group/cgroup.procs"
    rmdir "$cpu_cap_group" 2>/dev/null || true
  fi
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}

# cap_cpu PERCENT PID…: the processes given (all their threads) share PERCENT of one core, through
# a cgroup of the cpu controller (v1, /sys/fs/cgroup/cpu; needs root), removed on exit. With the
# servers capped below a core, the load generator on its own core is never what limits the rate:
# requests per second become what the server does with the same CPU.
cap_cpu() {
  local percent=$1 pid
  shift
  [ -w /sys/fs/cgroup/cpu/cgroup.procs ] || { echo "cap_cpu: no writable cgroup v1 cpu controller" >&2; return 1; }
  cpu_cap_group="/sys/fs/cgroup/cpu/webcache-bench-$$"
  mkdir -p "$cpu_cap_group"
  echo 100000 >"$cpu_cap_group/cpu.cfs_period_us"
  echo $((percent * 1000)) >"$cpu_cap_group/cpu.cfs_quota_us"
  for pid in "$@"; do echo "$pid" >"$cpu_cap_group/cgroup.procs"; done
}

# nginx_config NAME: writes $work/NAME.conf, one nginx worker with its pid and error log in
# $work (NAME.pid, NAME-error.log), whose http block's contents come on standard input.
nginx_config() {
  {
    echo "worker_processes 1;"
    echo "pid $work/$1.pid;"
    echo "error_log $work/$1-error.log;"
    echo "events { worker_connections 4096; }"
    echo "http {"
    cat
    echo "}"
  } >"$work/$1.conf"
}

# install_missing TOOL…: installs with apt-get the tools not on PATH (Debian packages of the same
# names).
install_missing() {
  local tool missing=()
  for tool in "$@"; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  [ ${#missing[@]} -eq 0 ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }
}

# A port nothing listens on, on 127.0.0.1.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# User + system clock ticks used so far by the processes given (those gone count 0).
cpu_ticks() {
  local total=0 pid
  for pid in "$@"; do [ -r "/proc/$pid/stat" ] && total=$(( total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat") )); done
  echo "$total"
}

# start_webcache PORT ORIGIN_PORT: a fresh reverse proxy on CPU 0, one event loop, in front of
# 127.0.0.1:ORIGIN_PORT, its cache in $work/cache and its log in $work/webcache.log; its pid
# in $webcache_pid (and in $pids, stopped on exit).
start_webcache() {
  # The last run's cache is moved aside, not deleted: on ext4 without a journal every file
  # created in the 30 s after a deletion scans the inodes it freed (docs/Benchmarks.md, "Misses
  # of 128 KB: what the file system adds"), which would charge the next run for this one's
  # bodies. $work, and these with it, goes when the script ends.
  if [ -d "$work/cache" ]; then
    mkdir -p "$work/retired"
    mv "$work/cache" "$(mktemp -d "$work/retired/cache.XXXXXX")/"
  fi
  # shellcheck disable=SC2086 # $webcache_options holds several words on purpose
  taskset -c 0 "$bin" proxy --cache-dir "$work/cache" --listen "127.0.0.1:$1" \
    --upstream "http://127.0.0.1:$2" --threads 1 ${webcache_options:-} >"$work/webcache.log" 2>&1 &
  webcache_pid=$!
  pids+=("$webcache_pid")
}

# wrk_figures NAME OUTPUT TICKS_BEFORE TICKS_AFTER: "requests/s · server CPU µs per request ·
# p99" of a wrk run (its OUTPUT, with --latency) during which the server used the CPU ticks
# between the two; fails when any answer was not 2xx.
wrk_figures() {
  local name=$1 out=$2 before=$3 after=$4 requests
  requests=$(echo "$out" | awk '/requests in/ { print $1 }')
  [ -z "$(echo "$out" | awk '/Non-2xx/ { print $NF }')" ] || { echo "FAIL: $name answered non-2xx" >&2; return 1; }
  printf '%.0f · %s · %s' "$(echo "$out" | awk '/Requests\/sec/ { print $2 }')" \
    "$(python3 -c "print(round(($after - $before) / $(getconf CLK_TCK) * 1e6 / max(1, $requests)))")" \
    "$(echo "$out" | awk '$1 == "99%" { print $2 }')"
}

# size_bytes SIZE: the bytes of a size written as 1k, 16k or 1m.
size_bytes() { python3 -c "print(int('$1'[:-1]) * {'k': 1024, 'm': 1048576}['$1'[-1]])"; }

# random_file PATH SIZE: PATH (its folders made) holding SIZE random bytes (1k, 1m…).
random_file() {
  mkdir -p "$(dirname "$1")"
  head -c "$(size_bytes "$2")" /dev/urandom >"$1"
}

# start_origin: nginx as the origin on CPU 0 (one worker, kept-alive connections, no access
# log), serving the files under $work/www on a free port, $origin_port; the server block's
# locations come on standard input. Its worker runs as another user: the folders are opened to it.
start_origin() {
  local locations
  locations=$(cat)
  origin_port=$(free_port)
  mkdir -p "$work/www"
  chmod 755 "$work"
  find "$work/www" -type d -exec chmod 755 {} +
  nginx_config origin <<CONF
  access_log off;
  server {
    listen 127.0.0.1:$origin_port;
    keepalive_requests 10000000;
    root $work/www;
$locations
  }
CONF
  taskset -c 0 nginx -c "$work/origin.conf" -g 'daemon off;' &
  pids+=($!)
}

# miss_script: $work/miss.lua, a wrk script whose every request names a new URL: the path in
# the environment's TARGET with ?u=<run>-<counter>, <run> new for every run of wrk (a kernel
# UUID). wrk's Lua random numbers are not seeded: a random tag repeats from one run to the
# next, so a run after a fill or a warm-up would ask again for the URLs it stored.
miss_script() {
  cat >"$work/miss.lua" <<'LUA'
local counter = 0
local run = io.open("/proc/sys/kernel/random/uuid"):read("*l")
request = function()
  counter = counter + 1
  return wrk.format("GET", os.getenv("TARGET") .. "?u=" .. run .. "-" .. counter)
end
LUA
}
