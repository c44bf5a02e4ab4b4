#!/usr/bin/env bash
# hcp-logscan on per-rank log directories (torchrun --log-dir of a job: one file per rank) against `rg -c` with the
# same literals, in one run, on two shapes: many small files (16,384 ranks x 32 KiB) and few large ones (16 ranks x
# 64 MiB, a long log cut into ranks). Targets: on every core at least 1.2x as fast as rg on every core; on two
# threads at least 1.8x as fast as on one; peak RSS <= 64 MiB + 16 MiB per thread; the same report for 1 thread
# and for all of them.
# Usage: bench/compare_logscan_ranks.sh [RANKS KIB_PER_RANK] [BUILD_DIR]   (one shape; both when none is given)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ $# -ge 2 ]]; then shapes=("$1:$2"); build=${3:-$here/../build}; else shapes=(16384:32 16:65536); build=${1:-$here/../build}; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed -n '/trigger_literals()/,/^}/p' "$here/../logscan/src/match/triggers.cpp" |
  grep -o '{"[^"]*", k' | sed 's/^{"//; s/", k$//; s/\\"/"/g' > "$work/patterns.txt"
cores=$(nproc)
rounds=${ROUNDS:-5}
timed() { { /usr/bin/time -f "%e %M" "$@" > "$work/out"; } 2>&1 | tail -1; }
best() { printf '%s\n' "$@" | sort -g | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
# The median over rounds of ($1[r] / $2[r]), the arrays passed as two strings: this VM's speed drifts 2x between
# minutes and the single-thread path (mapped files) swings most with it, so the best rounds of two tools can come
# from different minutes; a round's two timings come from the same one.
median_ratio() {
  paste -d' ' <(tr ' ' '\n' <<< "$1") <(tr ' ' '\n' <<< "$2") | awk '{print $1 / $2}' | sort -g |
    awk '{v[NR] = $1} END {printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
for shape in "${shapes[@]}"; do
  ranks=${shape%%:*}
  kib=${shape##*:}
  rm -rf "$work/logs"
  python3 "$here/make_rank_dir.py" "$ranks" "$kib" "$work/logs"
  bytes=$(du -sb "$work/logs" | cut -f1)
  echo "== per-rank directory: $ranks files x $kib KiB, $((bytes >> 20)) MiB, $(wc -l < "$work/patterns.txt") literals, $cores cores"
  cat "$work"/logs/attempt_0/*/stdout.log > /dev/null  # warm the page cache; then the tools run interleaved
  T_all=() T_one=() T_two=() T_rg=()
  for ((r = 0; r < rounds; r++)); do
    T_all+=("$(timed "$build/cli/hcp-logscan" --jobs "$cores" --format json "$work/logs" | cut -d' ' -f1)")
    T_rg+=("$(timed rg -c -F -j "$cores" -f "$work/patterns.txt" "$work/logs" | cut -d' ' -f1)")
    T_one+=("$(timed "$build/cli/hcp-logscan" --jobs 1 --format json "$work/logs" | cut -d' ' -f1)")
    T_two+=("$(timed "$build/cli/hcp-logscan" --jobs 2 --format json "$work/logs" | cut -d' ' -f1)")
  done
  all=$(best "${T_all[@]}") rg=$(best "${T_rg[@]}") one=$(best "${T_one[@]}") two=$(best "${T_two[@]}")
  rss=$( { /usr/bin/time -f %M "$build/cli/hcp-logscan" --jobs "$cores" "$work/logs" > /dev/null; } 2>&1 | tail -1)
  "$build/cli/hcp-logscan" --jobs 1 --format json "$work/logs" > "$work/one.json"
  "$build/cli/hcp-logscan" --jobs "$cores" --format json "$work/logs" > "$work/all.json"
  same=$(cmp -s "$work/one.json" "$work/all.json" && echo yes || echo NO)
  rate() { awk -v b="$bytes" -v t="$1" 'BEGIN{printf "%.2f GB/s", b/t/1e9}'; }
  printf '%-40s %8s s  %s\n' "hcp-logscan --jobs $cores" "$all" "$(rate "$all")"
  printf '%-40s %8s s  %s\n' "rg -c -F -j $cores (same literals)" "$rg" "$(rate "$rg")"
  printf '%-40s %8s s  %s\n' "hcp-logscan --jobs 1" "$one" "$(rate "$one")"
  printf '%-40s %8s s  %s\n' "hcp-logscan --jobs 2" "$two" "$(rate "$two")"
  echo "ratios, best rounds / median of the $rounds rounds' ratios:"
  echo "  hcp / rg, all cores (target >= 1.2): $(ratio "$rg" "$all") / $(median_ratio "${T_rg[*]}" "${T_all[*]}")"
  echo "  --jobs 2 / --jobs 1 (target >= 1.8): $(ratio "$one" "$two") / $(median_ratio "${T_one[*]}" "${T_two[*]}")"
  echo "peak RSS: $((rss / 1024)) MiB (target $((64 + 16 * cores)) MiB)"
  echo "report with 1 thread == report with $cores threads: $same"
done
