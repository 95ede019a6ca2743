#!/usr/bin/env bash
# What writing a file costs when the page cache takes new memory, beside memory just freed and
# pages already cached: on a virtual machine whose hypervisor takes back memory the guest has
# freed (virtio-balloon free page reporting), the first write to such memory is far slower, and
# every body file that grows the page cache pays it. A cache that writes each body into a new
# file (WebCache while it fills, nginx's proxy_cache) pays it; one that writes over a fixed
# storage file (Traffic Server) or over spare files with their pages (WebCache when full) does not.
#   scripts/bench-new-pages.sh            # SIZE_MB=1000 WAIT=20 DIR=/tmp
# Four timed writes of SIZE_MB with dd (1 MiB blocks, page cache, no sync):
#   new          a new file, after WAIT seconds in which nothing was freed
#   just freed   a new file right after the first was deleted (its pages freed a moment ago)
#   cached       the same file written over (its pages already in the page cache)
#   freed, idle  a new file WAIT seconds after the second was deleted
# Needs SIZE_MB of free memory, twice over. Writes only under DIR; deletes what it writes.
set -euo pipefail
SIZE_MB=${SIZE_MB:-1000}
WAIT=${WAIT:-20}
DIR=${DIR:-/tmp}
free_mb=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
if [ "$free_mb" -lt $((2 * SIZE_MB)) ]; then
  echo "needs $((2 * SIZE_MB)) MiB of available memory, has $free_mb" >&2
  exit 1
fi
work=$(mktemp -d "$DIR/new-pages.XXXXXX")
trap 'rm -rf "$work"' EXIT

# write NAME [dd options…] → prints "MB/s · µs per 4 KiB page"
write() {
  local file="$work/$1" start end
  shift
  start=$(date +%s%N)
  dd if=/dev/zero of="$file" bs=1M count="$SIZE_MB" "$@" status=none
  end=$(date +%s%N)
  awk -v ns=$((end - start)) -v mb="$SIZE_MB" \
    'BEGIN { printf "%.0f MB/s · %.2f µs a page\n", mb * 1048576 / ns * 1000, ns / 1000 / (mb * 256) }'
}

sleep "$WAIT"
echo "new:          $(write a)"
rm "$work/a"
echo "just freed:   $(write b)"
echo "cached:       $(write b conv=notrunc)"
rm "$work/b"
sleep "$WAIT"
echo "freed, idle:  $(write c)"
if [ -d /sys/bus/virtio/drivers/virtio_balloon ]; then
  echo "(virtio_balloon is bound: the hypervisor may take back freed memory)"
fi
