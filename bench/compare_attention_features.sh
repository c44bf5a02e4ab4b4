#!/usr/bin/env bash
# What each attention feature of issue 55 costs the CPU kernels: `hcp attn --bench` on the same shape without the
# feature and with it, rounds interleaved, in one run; prints the medians of the ranks' summed CPU seconds (forward,
# backward) and each feature's ratio to the plain run. CPU seconds, not wall time: the ranks are threads sharing
# the machine's cores, and their CPU time is the work.
# Usage: bench/compare_attention_features.sh [CP SEQ HEADS HEAD_DIM COMM [A,P]]   (build tree: $BUILD; ROUNDS)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
cp=${1:-4} seq=${2:-8192} heads=${3:-8} dim=${4:-128} comm=${5:-a2a+p2p} sizes=${6:-2,2}
rounds=${ROUNDS:-5}
shape=(--cp "$cp" --seq "$seq" --heads "$heads" --head-dim "$dim" --comm "$comm" --causal --backward --bench
  --format json)
[ "$comm" = a2a+p2p ] && shape+=(--hcp-sizes "$sizes")
features=("" "--softmax off-by-one" "--softmax learnable" "--max-logit")
names=("plain" "off-by-one sinks" "learnable sinks" "max logit")
declare -A fwd bwd
for ((r = 0; r < rounds; r++)); do
  for i in "${!features[@]}"; do
    # shellcheck disable=SC2086 - a feature is its flags
    read -r f b < <("$build/cli/hcp" attn "${shape[@]}" ${features[$i]} 2>/dev/null |
      python3 -c 'import json, sys; b = json.load(sys.stdin)["bench"]
print(b["rank_cpu_forward_s"], b["rank_cpu_backward_s"])')
    fwd[$i]+="$f " bwd[$i]+="$b "
  done
done
median() {
  printf '%s\n' $1 | sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
echo "shape: cp $cp, $comm${sizes:+ [$sizes]}, seq $seq, heads $heads, head dim $dim, causal, fp32; $(nproc) cores, $rounds rounds"
base_f=$(median "${fwd[0]}") base_b=$(median "${bwd[0]}")
for i in "${!features[@]}"; do
  f=$(median "${fwd[$i]}") b=$(median "${bwd[$i]}")
  awk -v n="${names[$i]}" -v f="$f" -v b="$b" -v bf="$base_f" -v bb="$base_b" \
    'BEGIN {printf "%-18s forward %.3f s (%.3fx)  backward %.3f s (%.3fx)\n", n, f, f / bf, b, b / bb}'
done
