#!/usr/bin/env bash
# Builds the DocC documentation of every library into .build/plugins/Swift-DocC/outputs and
# fails on any DocC warning (a broken symbol link, an undocumented parameter, a bad topic list).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
targets=(HTTPCaching WebCacheStore WebCache WebCacheNIO WebCacheAsyncHTTPClient WebCacheYAML WebCacheProxy WebCacheTLS WebCachePreload)
arguments=()
for target in "${targets[@]}"; do arguments+=(--target "$target"); done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
swift package generate-documentation "${arguments[@]}" >"$log" 2>&1 || status=$?
# SwiftPM's own notes about files in dependencies' checkouts are not about these docs.
problems=$(grep -E "^(warning|error):" "$log" | grep -vE "^warning: '[^']+': found [0-9]+ file\(s\) which are unhandled" || true)
if [ "$status" -ne 0 ] || [ -n "$problems" ]; then
    grep -vE "^warning: '[^']+': found [0-9]+ file\(s\) which are unhandled|^    /.*/\.build/checkouts/" "$log" | grep -A6 -E "^(warning|error):" | head -300
    echo "documentation: DocC reported problems (above)" >&2
    exit 1
fi
echo "documentation: ${#targets[@]} libraries, no warnings; archives in .build/plugins/Swift-DocC/outputs/"
