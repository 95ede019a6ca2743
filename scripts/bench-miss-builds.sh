#!/usr/bin/env bash
# Stored misses, two or more builds of webcache taking turns: the way to tell whether a change
# to the miss path pays on a machine whose speed drifts by a quarter from one minute to the next.
# Every request names a new URL (as WORKLOAD=miss of the shared harness) of a static nginx
# origin that answers `Cache-Control: max-age=3600`, so each one is fetched, stored and
# answered: a run in which the origin answered fewer requests than wrk made fails, as some were
# not misses. Each round runs every build once per size, each with a fresh proxy and cache;
# the medians over the rounds close every size's table.
#   BINARIES="/tmp/webcache-before .build/release/webcache" scripts/bench-miss-builds.sh
#   SIZES="1k 128k 1m" ROUNDS=5 DURATION=5 CONNS=64 CAPACITY=512m FILL=0 BINARIES="A B …" scripts/bench-miss-builds.sh
# Without BINARIES it builds and measures the current release build alone. FILL=6 sends that many
# seconds of misses first, so that a CAPACITY the run outgrows (64m, say) measures a full
# cache. Proxy and origin on CPU 0, wrk on CPU 1; server CPU per request (user + system) from
# /proc. Needs nginx and wrk (installed when missing). Binds 127.0.0.1 only; stops what it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"1k 128k 1m"}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5}
CONNS=${CONNS:-64}
CAPACITY=${CAPACITY:-512m}
FILL=${FILL:-0}
source "$(dirname "$0")/lib/harness.sh"
install_missing nginx wrk
if [ -z "${BINARIES:-}" ]; then
  start_harness
  builds=("$bin")
else
  builds=()
  for build in $BINARIES; do
    [ -x "$build" ] || { echo "not an executable: $build" >&2; exit 1; }
    builds+=("$(cd "$(dirname "$build")" && pwd)/$(basename "$build")")
  done
  work="$(mktemp -d)"
  trap harness_cleanup EXIT
fi
webcache_options="--disk-capacity $CAPACITY"
for size in $SIZES; do random_file "$work/www/$size.bin" "$size"; done
start_origin <<'LOCATIONS'
    location / { add_header Cache-Control "max-age=3600"; }
    location = /__origin_status { stub_status; }
LOCATIONS
miss_script

# origin_requests → the requests the origin has answered so far (its status page counts itself).
origin_requests() {
  curl -sf "http://127.0.0.1:$origin_port/__origin_status" | awk 'NR == 3 { print $3 }'
}

# run BUILD SIZE → a fresh proxy of BUILD, FILL seconds of misses, then DURATION seconds measured;
# sets $result to "rps · µs · p99".
run() {
  local port before after out fetched requests
  bin=$1
  port=$(free_port)
  start_webcache "$port" "$origin_port"
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/$2.bin?warm" && break; sleep 0.1; done
  if [ "$FILL" != 0 ]; then
    TARGET="/$2.bin" taskset -c 1 wrk -t1 -c"$CONNS" -d"${FILL}s" -s "$work/miss.lua" "http://127.0.0.1:$port/" >/dev/null
  fi
  fetched=$(origin_requests)
  before=$(cpu_ticks "$webcache_pid")
  out=$(TARGET="/$2.bin" taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -s "$work/miss.lua" \
    "http://127.0.0.1:$port/" 2>&1)
  after=$(cpu_ticks "$webcache_pid")
  fetched=$(($(origin_requests) - fetched - 1))
  kill "$webcache_pid" 2>/dev/null || true
  wait "$webcache_pid" 2>/dev/null || true
  # Every request measured must have been a miss: one the origin answered.
  requests=$(echo "$out" | awk '/requests in/ { print $1 }')
  if [ "$fetched" -lt "$requests" ]; then
    echo "FAIL: $1 $2: the origin answered $fetched of $requests requests; the rest were not misses" >&2
    exit 1
  fi
  result=$(wrk_figures "$1" "$out" "$before" "$after")
}

# median "a · b · c" … → the median of each of the three figures.
median() {
  python3 -c '
import statistics, sys
rows = [[float(x) for x in arg.split(" · ")[:2]] for arg in sys.argv[1:]]
print(" · ".join(f"{statistics.median(column):.0f}" for column in zip(*rows)))' "$@"
}

for index in "${!builds[@]}"; do echo "build $((index + 1)): ${builds[$index]}"; done
for size in $SIZES; do
  echo
  header="| $size round |"
  rule="| --- |"
  for index in "${!builds[@]}"; do header="$header build $((index + 1)) |"; rule="$rule --- |"; done
  echo "$header"
  echo "$rule"
  declare -A figures=()
  for round in $(seq "$ROUNDS"); do
    row="| $round |"
    # Which build goes first alternates, so that neither always follows a warm disk cache.
    order=("${!builds[@]}")
    if [ $((round % 2)) -eq 0 ]; then order=($(printf '%s\n' "${order[@]}" | tac)); fi
    declare -A cells=()
    for index in "${order[@]}"; do
      run "${builds[$index]}" "$size"
      cells[$index]=$result
      figures[$index]="${figures[$index]:-}|$result"
    done
    for index in "${!builds[@]}"; do row="$row ${cells[$index]} |"; done
    echo "$row"
  done
  row="| median (rps · µs) |"
  for index in "${!builds[@]}"; do
    IFS='|' read -r -a runs <<<"${figures[$index]#|}"
    row="$row $(median "${runs[@]}") |"
  done
  echo "$row"
done
echo
echo "requests/s · server CPU µs per request · p99; every request a new URL, stored ($CONNS connections, ${DURATION} s, --disk-capacity $CAPACITY)"
