#!/usr/bin/env bash
# hcp-logscan throughput and memory against ripgrep, GNU grep and zstd on the same generated log, in one run.
# Targets: plain >= 1 GB/s on one core and >= rg -c and grep -c with the same literals; .zst >= 80% of
# `zstd -dc > /dev/null`; peak RSS <= 64 MiB. Usage: bench/compare_logscan.sh [SIZE_MIB] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
size=${1:-1024}
build=${2:-$here/../build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/train.log
python3 "$here/make_log.py" "$size" "$log"
zstd -q -3 -T0 "$log" -o "$log.zst"
bytes=$(stat -c %s "$log")
# The trigger keys of the scanner, as fixed strings for rg and grep (logscan/src/match/triggers.cpp).
sed -n '/trigger_literals()/,/^}/p' "$here/../logscan/src/match/triggers.cpp" |
  grep -o '{"[^"]*", k' | sed 's/^{"//; s/", k$//; s/\\"/"/g' > "$work/patterns.txt"
echo "log: $((bytes >> 20)) MiB, $(wc -l < "$log") lines, $(wc -l < "$work/patterns.txt") literals"

best() {  # best wall time of 3 runs, pinned to one core; output to a file (GNU grep stops early on /dev/null)
  local t b=""
  for _ in 1 2 3; do
    t=$( { /usr/bin/time -f %e taskset -c 0 "$@" > "$work/out"; } 2>&1 | tail -1 )
    if [ -z "$b" ] || awk "BEGIN{exit !($t < $b)}"; then b=$t; fi
  done
  echo "$b"
}
rate() { awk -v b="$bytes" -v t="$1" 'BEGIN{printf "%.2f GB/s", b / t / 1e9}'; }

hcp=$(best "$build/cli/hcp-logscan" --format json "$log")
rg=$(best rg -c -F -f "$work/patterns.txt" "$log")
grep=$(best grep -c -F -f "$work/patterns.txt" "$log")
hcpz=$(best "$build/cli/hcp-logscan" --format json "$log.zst")
zstdc=$(best zstd -q -dc "$log.zst")
hits=$(grep -c -F -f "$work/patterns.txt" "$log" || true)
rss=$( { /usr/bin/time -v "$build/cli/hcp-logscan" "$log" > /dev/null; } 2>&1 | awk '/Maximum resident/ {print $6}')
rssz=$( { /usr/bin/time -v "$build/cli/hcp-logscan" "$log.zst" > /dev/null; } 2>&1 | awk '/Maximum resident/ {print $6}')

printf '%-34s %8s s  %s\n' "hcp-logscan (plain)" "$hcp" "$(rate "$hcp")"
printf '%-34s %8s s  %s\n' "rg -c -F (same literals)" "$rg" "$(rate "$rg")"
printf '%-34s %8s s  %s\n' "grep -c -F (same literals)" "$grep" "$(rate "$grep")"
printf '%-34s %8s s  %s\n' "hcp-logscan (.zst)" "$hcpz" "$(rate "$hcpz")"
printf '%-34s %8s s  %s\n' "zstd -dc > /dev/null" "$zstdc" "$(rate "$zstdc")"
echo "lines with a trigger literal: $hits"
echo "ratios (>= 1 is at least as fast):"
awk -v h="$hcp" -v r="$rg" -v g="$grep" -v hz="$hcpz" -v z="$zstdc" 'BEGIN {
  printf "  hcp / rg           %.2f\n  hcp / grep         %.2f\n  hcp.zst / zstd -dc %.2f  (target 0.80)\n", r/h, g/h, z/hz }'
echo "peak RSS: plain $((rss / 1024)) MiB, zst $((rssz / 1024)) MiB (target 64 MiB)"
