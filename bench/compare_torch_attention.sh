#!/usr/bin/env bash
# What hcp.torch costs over the C++ per-rank API: one causal forward + backward of CP attention on the same shapes,
# through hcp.torch.CpAttention (autograd, torch.distributed on gloo processes: bench/torch_attention_bench.py) and
# through hcp's own per-rank API on in-process ranks (`hcp attn --bench`: the forward's and the backward's wall time
# per call), in one run, rounds interleaved; prints both medians and their ratio. Needs /usr/bin/python3 with torch.
# Usage: bench/compare_torch_attention.sh [CP SEQ HEADS KV_HEADS HEAD_DIM [COMM [A,P]]]   (build tree: $BUILD)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
cp=${1:-4} seq=${2:-2048} heads=${3:-4} kv=${4:-2} dim=${5:-64} comm=${6:-p2p} sizes=${7:-}
rounds=${ROUNDS:-5}
export HCP_LIBRARY=${HCP_LIBRARY:-$build/capi/libhcp.so}
shape=(--cp "$cp" --seq "$seq" --heads "$heads" --kv-heads "$kv" --head-dim "$dim"
  --comm "$comm")
[ -n "$sizes" ] && shape+=(--hcp-sizes "$sizes")
T_cpp=() T_torch=()
for ((r = 0; r < rounds; r++)); do
  T_cpp+=("$("$build/cli/hcp" attn "${shape[@]}" --causal --backward --bench --format json 2>/dev/null |
    python3 -c 'import json, sys; b = json.load(sys.stdin)["bench"]
print(b["forward_wall_s"] + b["backward_wall_s"])')")
  T_torch+=("$(/usr/bin/python3 "$here/torch_attention_bench.py" "${shape[@]}" 2>/dev/null |
    sed -n 's/^hcp.torch forward+backward: \([0-9.]*\) s.*/\1/p')")
done
median() {
  printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
cpp=$(median "${T_cpp[@]}") torch=$(median "${T_torch[@]}")
echo "shape: cp $cp, seq $seq, heads $heads, kv heads $kv, head dim $dim, $comm${sizes:+ [$sizes]}, causal, fp32, batch 1; $(nproc) cores"
echo "hcp C++ per-rank API (in-process ranks), forward+backward: $cpp s (median of $rounds)"
echo "hcp.torch (gloo processes, autograd), forward+backward:    $torch s (median of $rounds)"
awk -v a="$torch" -v b="$cpp" 'BEGIN {printf "hcp.torch / C++: %.2fx\n", a / b}'
echo "torch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)')"
