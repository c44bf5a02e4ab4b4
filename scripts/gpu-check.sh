#!/usr/bin/env bash
# Verifies the CUDA path on a machine with a GPU, in build-gpu/ (about 3 minutes on 16 cores and an H200):
# builds with CUDA (architectures from HCP_CUDA_ARCHS, default 90), runs the GPU tests, checks every kernel
# instantiation against the CPU kernels through `hcp attn --device cuda --check`, benchmarks the kernels
# (B 1, S 8192 and 16384, H 32, D 128, causal, bf16, and D 256 at S 16384; cuBLAS's bf16 GEMM rate as the in-run
# reference) and the CP simulation on one GPU (W 4, a2a+p2p [2, 2]), and writes a Markdown report (tables by
# scripts/gpu_report.py) to HCP_GPU_REPORT (default build-gpu/gpu-report.md), also printed.
# Exit 0 when everything passed, 1 when a test or check failed, 2 when there is no usable GPU (after the build).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
hcp_install_missing_packages
gpu_build=${HCP_GPU_BUILD:-$HCP_ROOT/build-gpu}
report=${HCP_GPU_REPORT:-$gpu_build/gpu-report.md}
if [ ! -f "$gpu_build/CMakeCache.txt" ]; then
  cmake -S "$HCP_ROOT" -B "$gpu_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHCP_WITH_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="${HCP_CUDA_ARCHS:-90}" -DHCP_BUILD_TESTS=ON -DHCP_BUILD_BENCH=ON
fi
build_start=$(date +%s)
cmake --build "$gpu_build" -j "$HCP_JOBS" --target hcp_cuda_tests hcp_cuda_emulation_tests hcp_cli attention_cuda_bench
build_s=$(( $(date +%s) - build_start ))
hcp=$gpu_build/cli/hcp
mkdir -p "$(dirname "$report")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

{
  echo "# hcp GPU check"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$HCP_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- build: ${build_s} s with $HCP_JOBS jobs, CUDA architectures ${HCP_CUDA_ARCHS:-90}"
  if command -v nvidia-smi >/dev/null; then
    echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
  fi
} >"$report"

# Tests: the emulated kernels (any machine) and the GPU tests (skip without a device).
for t in hcp_cuda_emulation_tests hcp_cuda_tests; do
  bin=$(find "$gpu_build/tests" -name "$t" -type f | head -1)
  if "$bin" >"$work/$t.log" 2>&1; then result=passed; else result=FAILED; failed=1; fi
  { echo; echo "## $t: $result"; echo; echo '```'; grep -E '^\[ *(PASSED|FAILED) *\]|^\[  SKIPPED \] [0-9]+ tests?' "$work/$t.log" | head -40
    grep -m1 'no CUDA device' "$work/$t.log" || true; echo '```'; } >>"$report"
done

device_reason=$("$hcp" attn --device cuda --cp 1 --seq 128 --heads 2 --head-dim 64 --dtype bf16 2>&1 >/dev/null) \
  || { { echo; echo "No usable GPU: $device_reason"; } >>"$report"; cat "$report"; exit 2; }

# Every instantiation against the CPU kernels (cp 1: the single-rank kernels; S 2048, H 8, Hkv 4: GQA).
render() { python3 "$HCP_ROOT/scripts/gpu_report.py" "$@" >>"$report"; }
{ echo; echo "## Kernels against the CPU kernels (max relative error, \`hcp attn --device cuda --cp 1 --check\`)"; echo
} >>"$report"
render check-header
for dtype in bf16 fp16; do for dim in 64 128 256; do for mask in causal full; do
  flag=$([ $mask = causal ] && echo --causal || true)
  "$hcp" attn --device cuda --cp 1 --seq 2048 --heads 8 --kv-heads 4 --head-dim $dim --dtype $dtype $flag \
    --backward --check --format json >"$work/check.json" 2>"$work/check.err" || failed=1
  render check "$work/check.json" $dtype $dim $mask "$work/check.err"
done; done; done

# Kernel speed, and cuBLAS's bf16 GEMM rate on the same GPU as the reference.
bench=$(find "$gpu_build/bench" -name attention_cuda_bench -type f | head -1)
"$bench" --seq 8192 --seq 16384 --json >"$work/bench.json" 2>"$work/bench.err" || failed=1
echo >>"$report"
render bench "$work/bench.json" "$work/bench.err"
# Head dim 256 (its own backward kernel), at the longer length only; the GEMM reference is the one above.
"$bench" --seq 16384 --head-dim 256 --gemm 0 --json >"$work/bench256.json" 2>"$work/bench256.err" || failed=1
echo >>"$report"
render bench "$work/bench256.json" "$work/bench256.err"

# The CP simulation on one GPU: 4 in-process ranks, a2a+p2p [2, 2], exchanging device to device.
{ echo; echo "## CP simulation on one GPU (W 4, a2a+p2p [2, 2], B 1, H 32, D 128, causal, bf16)"; echo; } >>"$report"
render cp-header
for seq in 8192 16384; do
  check=$([ $seq = 8192 ] && echo --check || true)
  "$hcp" attn --device cuda --cp 4 --comm a2a+p2p --hcp-sizes 2,2 --seq $seq --heads 32 --head-dim 128 --causal \
    --dtype bf16 --backward --bench $check --format json >"$work/cp.json" 2>"$work/cp.err" || failed=1
  render cp "$work/cp.json" "$work/cp.err"
done

{ echo; echo "Result: $([ $failed = 0 ] && echo 'all passed' || echo 'FAILURES above')"; } >>"$report"
cat "$report"
exit $failed
