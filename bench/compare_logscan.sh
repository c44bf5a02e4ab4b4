#!/usr/bin/env bash
# hcp-logscan throughput and memory against ripgrep, GNU grep and zstd on the same generated log, in one run.
# Targets: plain >= 1 GB/s on one core and >= rg -c and grep -c with the same literals; .zst >= 80% of
# `zstd -dc > /dev/null` on one core and >= 90% with the cores it may use (hcp-logscan --jobs 2 decodes on a second
# thread; zstd decodes on one whatever it is given); peak RSS <= 64 MiB.
# Usage: bench/compare_logscan.sh [SIZE_MIB] [BUILD_DIR]
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

# Each tool runs once per round, pinned to one core, the tools interleaved so that a slow spell of a shared machine
# falls on all of them; output goes to a file (GNU grep stops early on /dev/null). A tool's figure is its best
# round; the ratios are also given as the median of the rounds' own ratios.
rounds=${ROUNDS:-7}
timed() { { /usr/bin/time -f %e taskset -c 0 "$@" > "${OUT:-$work/out}"; } 2>&1 | tail -1; }
unpinned() { { /usr/bin/time -f %e "$@" > "${OUT:-$work/out}"; } 2>&1 | tail -1; }
declare -a T_hcp T_rg T_grep T_hcpz T_zstd T_hcpz2 T_zstd2
for ((r = 0; r < rounds; r++)); do
  T_hcp+=("$(timed "$build/cli/hcp-logscan" --format json "$log")")
  T_rg+=("$(timed rg -c -F -f "$work/patterns.txt" "$log")")
  T_grep+=("$(timed grep -c -F -f "$work/patterns.txt" "$log")")
  T_hcpz+=("$(timed "$build/cli/hcp-logscan" --format json "$log.zst")")
  T_zstd+=("$(OUT=/dev/null timed zstd -q -dc "$log.zst")")
  T_hcpz2+=("$(unpinned "$build/cli/hcp-logscan" --jobs 2 --format json "$log.zst")")
  T_zstd2+=("$(OUT=/dev/null unpinned zstd -q -dc "$log.zst")")
done
best() { printf '%s\n' "$@" | sort -g | head -1; }
rate() { awk -v b="$bytes" -v t="$1" 'BEGIN{printf "%.2f GB/s", b / t / 1e9}'; }
median_ratio() {  # median over rounds of ($1[r] / $2[r]); the arrays are passed as two strings
  paste -d' ' <(tr ' ' '\n' <<< "$1") <(tr ' ' '\n' <<< "$2") | awk '{print $1 / $2}' | sort -g |
    awk '{v[NR] = $1} END {printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
hcp=$(best "${T_hcp[@]}")
rg=$(best "${T_rg[@]}")
grep=$(best "${T_grep[@]}")
hcpz=$(best "${T_hcpz[@]}")
zstdc=$(best "${T_zstd[@]}")
hcpz2=$(best "${T_hcpz2[@]}")
zstdc2=$(best "${T_zstd2[@]}")
hits=$(grep -c -F -f "$work/patterns.txt" "$log" || true)
rss=$( { /usr/bin/time -v "$build/cli/hcp-logscan" "$log" > /dev/null; } 2>&1 | awk '/Maximum resident/ {print $6}')
rssz=$( { /usr/bin/time -v "$build/cli/hcp-logscan" "$log.zst" > /dev/null; } 2>&1 | awk '/Maximum resident/ {print $6}')

printf '%-34s %8s s  %s\n' "hcp-logscan (plain)" "$hcp" "$(rate "$hcp")"
printf '%-34s %8s s  %s\n' "rg -c -F (same literals)" "$rg" "$(rate "$rg")"
printf '%-34s %8s s  %s\n' "grep -c -F (same literals)" "$grep" "$(rate "$grep")"
printf '%-34s %8s s  %s\n' "hcp-logscan (.zst)" "$hcpz" "$(rate "$hcpz")"
printf '%-34s %8s s  %s\n' "zstd -dc > /dev/null" "$zstdc" "$(rate "$zstdc")"
printf '%-34s %8s s  %s\n' "hcp-logscan --jobs 2 (.zst, unpinned)" "$hcpz2" "$(rate "$hcpz2")"
printf '%-34s %8s s  %s\n' "zstd -dc (unpinned)" "$zstdc2" "$(rate "$zstdc2")"
echo "lines with a trigger literal: $hits"
echo "ratios (>= 1 is at least as fast), best rounds / median of the $rounds rounds' ratios:"
printf '  hcp / rg           %.2f / %s\n' "$(awk -v a="$rg" -v b="$hcp" 'BEGIN {print a / b}')" \
  "$(median_ratio "${T_rg[*]}" "${T_hcp[*]}")"
printf '  hcp / grep         %.2f / %s\n' "$(awk -v a="$grep" -v b="$hcp" 'BEGIN {print a / b}')" \
  "$(median_ratio "${T_grep[*]}" "${T_hcp[*]}")"
printf '  hcp.zst / zstd -dc %.2f / %s  (target 0.80)\n' "$(awk -v a="$zstdc" -v b="$hcpz" 'BEGIN {print a / b}')" \
  "$(median_ratio "${T_zstd[*]}" "${T_hcpz[*]}")"
printf '  hcp.zst -j2 / zstd %.2f / %s  (target 0.90; unpinned)\n' \
  "$(awk -v a="$zstdc2" -v b="$hcpz2" 'BEGIN {print a / b}')" "$(median_ratio "${T_zstd2[*]}" "${T_hcpz2[*]}")"
echo "peak RSS: plain $((rss / 1024)) MiB, zst $((rssz / 1024)) MiB (target 64 MiB)"
