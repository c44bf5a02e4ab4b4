#!/usr/bin/env bash
# What each attention feature of issue 55 costs the CPU kernels: `hcp attn --bench` on the same shape without the
# feature and with it, rounds interleaved, in one run; prints the medians of the ranks' summed CPU seconds (forward,
# backward) and each feature's ratio to the plain run. CPU seconds, not wall time: the ranks are threads sharing
# the machine's cores, and their CPU time is the work. MLA head dims (MLA_DIMS, default 192,128: q and k 192, v 128)
# are compared with the same q/k head dim and v padded to it, what a CP path without them does (TE pads v for thd).
# The bias run (11ss, with its gradient) holds O(B H S^2 / cp) floats a rank: about 1 GiB a rank at S 8192, H 8.
# Usage: bench/compare_attention_features.sh [CP SEQ HEADS HEAD_DIM COMM [A,P]]   (build tree: $BUILD; ROUNDS)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
cp=${1:-4} seq=${2:-8192} heads=${3:-8} dim=${4:-128} comm=${5:-a2a+p2p} sizes=${6:-2,2}
rounds=${ROUNDS:-5}
mla_dims=${MLA_DIMS:-192,128}
mla_d=${mla_dims%,*} mla_dv=${mla_dims#*,}
shape=(--cp "$cp" --seq "$seq" --heads "$heads" --comm "$comm" --causal --backward --bench --format json)
[ "$comm" = a2a+p2p ] && shape+=(--hcp-sizes "$sizes")
plain="--head-dim $dim"
features=("$plain" "$plain --softmax off-by-one" "$plain --softmax learnable" "$plain --max-logit"
  "$plain --bias 11ss" "--head-dim $mla_d" "--head-dim $mla_d --head-dim-v $mla_dv")
names=("plain" "off-by-one sinks" "learnable sinks" "max logit" "bias 11ss + grad" "v padded $mla_d/$mla_d"
  "MLA $mla_d/$mla_dv")
base=(0 0 0 0 0 5 5)  # the run each feature's ratio is to
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
for i in "${!features[@]}"; do
  base_f=$(median "${fwd[${base[$i]}]}") base_b=$(median "${bwd[${base[$i]}]}")
  f=$(median "${fwd[$i]}") b=$(median "${bwd[$i]}")
  awk -v n="${names[$i]}" -v f="$f" -v b="$b" -v bf="$base_f" -v bb="$base_b" \
    'BEGIN {printf "%-18s forward %.3f s (%.3fx)  backward %.3f s (%.3fx)\n", n, f, f / bf, b, b / bb}'
done
