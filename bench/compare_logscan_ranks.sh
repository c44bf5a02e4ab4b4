#!/usr/bin/env bash
# hcp-logscan on a per-rank log directory (torchrun --log-dir of a large job: one file per rank) against
# `rg -c` with the same literals, both on every core, in one run. Targets: hcp-logscan at least as fast as rg;
# peak RSS <= 64 MiB + 16 MiB per thread; the same report for 1 thread and for all of them.
# Usage: bench/compare_logscan_ranks.sh [RANKS] [KIB_PER_RANK] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ranks=${1:-16384}
kib=${2:-32}
build=${3:-$here/../build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/make_rank_dir.py" "$ranks" "$kib" "$work/logs"
sed -n '/trigger_literals()/,/^}/p' "$here/../logscan/src/match/triggers.cpp" |
  grep -o '{"[^"]*", k' | sed 's/^{"//; s/", k$//; s/\\"/"/g' > "$work/patterns.txt"
bytes=$(du -sb "$work/logs" | cut -f1)
cores=$(nproc)
echo "per-rank directory: $ranks files, $((bytes >> 20)) MiB, $(wc -l < "$work/patterns.txt") literals, $cores cores"
# Warm the page cache once; then each tool runs once per round, interleaved.
cat "$work"/logs/attempt_0/*/stdout.log > /dev/null
rounds=${ROUNDS:-5}
timed() { { /usr/bin/time -f "%e %M" "$@" > "$work/out"; } 2>&1 | tail -1; }
declare -a T_hcp T_rg
for ((r = 0; r < rounds; r++)); do
  T_hcp+=("$(timed "$build/cli/hcp-logscan" --jobs "$cores" --format json "$work/logs" | cut -d' ' -f1)")
  T_rg+=("$(timed rg -c -F -j "$cores" -f "$work/patterns.txt" "$work/logs" | cut -d' ' -f1)")
done
best() { printf '%s\n' "$@" | sort -g | head -1; }
hcp=$(best "${T_hcp[@]}")
rg=$(best "${T_rg[@]}")
rss=$( { /usr/bin/time -f %M "$build/cli/hcp-logscan" --jobs "$cores" "$work/logs" > /dev/null; } 2>&1 | tail -1)
"$build/cli/hcp-logscan" --jobs 1 --format json "$work/logs" > "$work/one.json"
"$build/cli/hcp-logscan" --jobs "$cores" --format json "$work/logs" > "$work/all.json"
same=$(cmp -s "$work/one.json" "$work/all.json" && echo yes || echo NO)
printf '%-40s %8s s  %.2f GB/s\n' "hcp-logscan --jobs $cores" "$hcp" "$(awk -v b="$bytes" -v t="$hcp" 'BEGIN{print b/t/1e9}')"
printf '%-40s %8s s  %.2f GB/s\n' "rg -c -F -j $cores (same literals)" "$rg" "$(awk -v b="$bytes" -v t="$rg" 'BEGIN{print b/t/1e9}')"
printf 'ratio hcp / rg (>= 1 is at least as fast): %.2f\n' "$(awk -v a="$rg" -v b="$hcp" 'BEGIN{print a/b}')"
echo "peak RSS: $((rss / 1024)) MiB (target $((64 + 16 * cores)) MiB)"
echo "report with 1 thread == report with $cores threads: $same"
