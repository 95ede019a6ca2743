#!/bin/bash
# confine-peer.sh PATTERN [CPU] — holds every process whose command line matches PATTERN (as
# `pgrep -f` reads it) to CPU (0 by default) through a cgroup v1 cpuset, for as long as such
# processes come and go, until none has run for 60 s. Needs root.
#
# Why: ../shared/bench pins each cache to CPU 0 with `taskset`, but Apache Traffic Server sets its
# own threads' affinity (`proxy.config.exec_thread.affinity`): its ET_NET threads come back allowed
# on every core and run beside wrk on CPU 1, so it is measured on two cores while every other
# cache has one. A cpuset cannot be left by `sched_setaffinity`. Run it beside the harness:
#
#   scripts/confine-peer.sh traffic_server & WORKLOAD=miss ../shared/bench/bench.sh trafficserver
set -euo pipefail
pattern=$1
cpu=${2:-0}
group=/sys/fs/cgroup/cpuset/webcache-confined-$$
[ -d /sys/fs/cgroup/cpuset ] || { echo "confine-peer: no cgroup v1 cpuset controller" >&2; exit 1; }
mkdir -p "$group"
cat /sys/fs/cgroup/cpuset/cpuset.mems >"$group/cpuset.mems"
echo "$cpu" >"$group/cpuset.cpus"
cleanup() {
  while read -r pid; do echo "$pid" >/sys/fs/cgroup/cpuset/cgroup.procs 2>/dev/null || true; done <"$group/cgroup.procs"
  rmdir "$group" 2>/dev/null || true
}
trap cleanup EXIT
idle=0
while [ "$idle" -lt 600 ]; do
  pids=""
  for pid in $(pgrep -f "$pattern" || true); do
    # Not this script, nor the subshells it runs (their command line names the pattern too).
    { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q confine-peer || pids="$pids $pid"
  done
  if [ -z "${pids// /}" ]; then
    idle=$((idle + 1))
  else
    idle=0
    for pid in $pids; do
      grep -qx "$pid" "$group/cgroup.procs" 2>/dev/null || echo "$pid" >"$group/cgroup.procs" 2>/dev/null || true
    done
  fi
  sleep 0.1
done
