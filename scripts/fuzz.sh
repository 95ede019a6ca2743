#!/usr/bin/env bash
# Fuzzes the parsers that read what the network sends — Cache-Control and targeted fields
# (structured-field dictionaries), HTTP dates, Vary, Range — the proxy's handling of a client's
# bytes on a connection without a socket (proxy-request), and its request parser beside
# SwiftNIO's (request-parser: whatever it reads as requests, SwiftNIO's reads the same), and the
# origin leg's response parser the same way (response-parser), and the preloader's HTML scanner
# (html-references: libxml2 and the C code of CHTMLScan, built with AddressSanitizer too) — with
# libFuzzer and AddressSanitizer,
# SECONDS_PER_TARGET each (default 60), starting from the committed seeds in Fuzz/corpus/<target>
# (new inputs go to a scratch corpus, not the repo). Each target checks a property of what it
# accepts (round trips, ranges in bounds), so a wrong answer is a crash too. Prints executions,
# coverage and crashes per target; a crashing input is kept in .build-fuzz/artifacts/ and the
# script exits 1. Replay the committed corpus without libFuzzer (as CI does):
#   swift run webcache-fuzz Fuzz/corpus/*
#
#   scripts/fuzz.sh [target…]          # SECONDS_PER_TARGET=60
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
SECONDS_PER_TARGET=${SECONDS_PER_TARGET:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(cache-control http-date vary range proxy-request request-parser response-parser html-references)
swift build --product webcache-fuzz --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
  -Xcc -fsanitize=fuzzer-no-link,address 2>&1 \
  | grep -E "error:" && exit 1
fuzzer=".build-fuzz/debug/webcache-fuzz"
mkdir -p .build-fuzz/artifacts
status=0
printf '%-14s %12s %8s %8s %8s\n' target executions cov features crashes
for target in "${targets[@]}"; do
  scratch=".build-fuzz/corpus/$target"
  mkdir -p "$scratch"
  log=".build-fuzz/$target.log"
  set +e
  # LeakSanitizer, at exit, reports index rows' Data (65 bytes each, about 60 over 20,000 inputs:
  # as many as entries kept in memory, not one per request) as leaked for the proxy target; it
  # does not see every reference Swift holds. scripts/soak.sh (RSS flat over 500,000 requests)
  # is the check of the proxy's memory.
  leaks=1
  [ "$target" = proxy-request ] && leaks=0
  ASAN_OPTIONS="detect_leaks=$leaks" SWIFT_BACKTRACE=enable=no WEBCACHE_FUZZ_TARGET="$target" "$fuzzer" "$scratch" "Fuzz/corpus/$target" \
    -max_total_time="$SECONDS_PER_TARGET" -detect_leaks=$leaks \
    -artifact_prefix=".build-fuzz/artifacts/$target-" -print_final_stats=1 >"$log" 2>&1
  result=$?
  set -e
  executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  coverage=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)
  features=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)
  crashes=$(ls .build-fuzz/artifacts | grep -c "^$target-" || true)
  printf '%-14s %12s %8s %8s %8s\n' "$target" "$executions" "$coverage" "$features" "$crashes"
  if [ "$result" -ne 0 ]; then
    status=1
    grep -E "Precondition failed|Fatal error|ERROR: AddressSanitizer|SUMMARY" "$log" | head -3 | sed 's/^/    /'
  fi
done
exit $status
