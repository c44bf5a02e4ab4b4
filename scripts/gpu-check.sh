#!/usr/bin/env bash
# Verifies the CUDA path on a machine with a GPU (about 3 minutes on 16 cores and an H200): builds with CUDA
# (architectures from HCP_CUDA_ARCHS, default 90) in build-gpu/, runs the GPU tests, checks every kernel
# instantiation against the CPU kernels through `hcp attn --device cuda --check`, benchmarks the kernels
# (B 1, S 8192 and 16384, H 32, D 128, causal, bf16, and D 256 at S 16384; cuBLAS's bf16 GEMM rate as the in-run
# reference), the CP simulation on one GPU (W 4, a2a+p2p [2, 2]) and hcp.torch on CUDA tensors where torch has CUDA,
# and writes a Markdown report (tables by scripts/gpu_report.py) to HCP_GPU_REPORT (default
# build-gpu/gpu-report.md), also printed.
# On a machine that can install nothing, HCP_GPU_BUNDLE=DIR takes the programs from a bundle that
# scripts/gpu-bundle.sh made elsewhere (the report says STALE when they were built from other sources than this
# tree), or builds them from the bundle's packages when they do not start here.
# Exit 0 when everything passed, 1 when a test or check failed, 2 when there is no usable GPU (after the build).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gpu_build=${HCP_GPU_BUILD:-$HCP_ROOT/build-gpu}
report=${HCP_GPU_REPORT:-$gpu_build/gpu-report.md}
build_start=$(date +%s)
library_path=${LD_LIBRARY_PATH:-}
if [ -n "${HCP_GPU_BUNDLE:-}" ]; then
  source "$HCP_ROOT/scripts/gpu_bundle_programs.sh"
  bundle=$(cd "$HCP_GPU_BUNDLE" && pwd)
  chmod +x "$bundle"/bin/*  # in case the copy that brought it here dropped the mode bits
  if library_path=$(hcp_bundle_library_path "$bundle") &&
     LD_LIBRARY_PATH=$library_path "$bundle/bin/hcp" --version >/dev/null; then
    programs=("$bundle"/bin/hcp_cuda_tests "$bundle"/bin/hcp "$bundle"/bin/attention_cuda_bench)
    build_note="prebuilt elsewhere by scripts/gpu-bundle.sh: $(cat "$bundle/manifest")"
    if [ "$(cat "$bundle/sources" 2>/dev/null)" != "$(hcp_source_digest)" ]; then
      build_note="$build_note. **STALE: built from other sources than this tree** (rerun scripts/gpu-bundle.sh)"
      echo "hcp gpu-check: the bundle was built from other sources than this tree" >&2
    fi
  else
    echo "hcp gpu-check: the bundle's programs do not start here; building them from its packages" >&2
    library_path=${LD_LIBRARY_PATH:-}
    hcp_bundle_build "$bundle" "$gpu_build"
  fi
else
  hcp_install_missing_packages
  hcp_gpu_build "$gpu_build"
fi
if [ -z "${programs:-}" ]; then
  programs=()
  for p in "${HCP_GPU_PROGRAMS[@]}"; do programs+=("$gpu_build/$p"); done
  build_note="$(( $(date +%s) - build_start )) s with $HCP_JOBS jobs, CUDA architectures ${HCP_CUDA_ARCHS:-90}"
fi
cuda_tests=${programs[0]} hcp=${programs[1]} bench=${programs[2]}
# The programs run with the bundle's libraries (the rest of the script - python3, git - with this machine's own),
# each for at most HCP_GPU_STEP_TIMEOUT seconds, so that a hung kernel costs one step of the report, not all of it.
run() {
  local seconds=${HCP_GPU_STEP_TIMEOUT:-240} rc=0
  LD_LIBRARY_PATH=$library_path timeout --kill-after=10 "$seconds" "$@" || rc=$?
  if [ $rc = 124 ] || [ $rc = 137 ]; then echo "hcp gpu-check: $(basename "$1") timed out after $seconds s" >&2; fi
  return $rc
}
mkdir -p "$(dirname "$report")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

{
  echo "# hcp GPU check"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$HCP_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- build: $build_note"
  if command -v nvidia-smi >/dev/null; then
    echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
  fi
} >"$report"

# The GPU tests (the emulated kernels' tests are CPU-only, and run in CI).
if run "$cuda_tests" >"$work/tests.log" 2>&1; then result=passed; else result=FAILED; failed=1; fi
{ echo; echo "## hcp_cuda_tests: $result"; echo; echo '```'
  grep -E '^\[ *(PASSED|FAILED) *\]|^\[  SKIPPED \] [0-9]+ tests?' "$work/tests.log" | head -40
  grep -m1 'no CUDA device' "$work/tests.log" || true; echo '```'
  if [ $result = FAILED ]; then  # what failed and why, for a fix within the same device session
    echo; echo '```'; grep -E -B1 -A8 'Failure$|^\[  FAILED  \]|timed out|Segmentation|Aborted' "$work/tests.log" | head -120
    echo '```'; fi; } >>"$report"

device_reason=$(run "$hcp" attn --device cuda --cp 1 --seq 128 --heads 2 --head-dim 64 --dtype bf16 2>&1 >/dev/null) \
  || { { echo; echo "No usable GPU: $device_reason"; } >>"$report"; cat "$report"; exit 2; }

# Every instantiation against the CPU kernels (cp 1: the single-rank kernels; S 2048, H 8, Hkv 4: GQA).
render() { python3 "$HCP_ROOT/scripts/gpu_report.py" "$@" >>"$report"; }
{ echo; echo "## Kernels against the CPU kernels (max relative error, \`hcp attn --device cuda --cp 1 --check\`)"; echo
} >>"$report"
render check-header
for dtype in bf16 fp16; do for dim in 64 128 256; do for mask in causal full; do
  flag=$([ $mask = causal ] && echo --causal || true)
  run "$hcp" attn --device cuda --cp 1 --seq 2048 --heads 8 --kv-heads 4 --head-dim $dim --dtype $dtype $flag \
    --backward --check --format json >"$work/check.json" 2>"$work/check.err" || failed=1
  render check "$work/check.json" $dtype $dim $mask "$work/check.err"
done; done; done

# Kernel speed, and cuBLAS's bf16 GEMM rate on the same GPU as the reference.
run "$bench" --seq 8192 --seq 16384 --json >"$work/bench.json" 2>"$work/bench.err" || failed=1
echo >>"$report"
render bench "$work/bench.json" "$work/bench.err"
# Head dim 256 (its own backward kernel), at the longer length only; the GEMM reference is the one above.
run "$bench" --seq 16384 --head-dim 256 --gemm 0 --json >"$work/bench256.json" 2>"$work/bench256.err" || failed=1
echo >>"$report"
render bench "$work/bench256.json" "$work/bench256.err"

# The CP simulation on one GPU: 4 in-process ranks, a2a+p2p [2, 2], exchanging device to device.
{ echo; echo "## CP simulation on one GPU (W 4, a2a+p2p [2, 2], B 1, H 32, D 128, causal, bf16)"; echo; } >>"$report"
render cp-header
for seq in 8192 16384; do
  check=$([ $seq = 8192 ] && echo --check || true)
  run "$hcp" attn --device cuda --cp 4 --comm a2a+p2p --hcp-sizes 2,2 --seq $seq --heads 32 --head-dim 128 --causal \
    --dtype bf16 --backward --bench $check --format json >"$work/cp.json" 2>"$work/cp.err" || failed=1
  render cp "$work/cp.json" "$work/cp.err"
done

# hcp.torch on CUDA tensors over NCCL, one GPU per rank (bindings/python/tests/test_torch.py): needs the library
# built here and a Python whose torch has CUDA (HCP_TORCH_PYTHON, default python3; Debian's python3-torch has none).
{ echo; echo "## hcp.torch on CUDA tensors (NCCL, one GPU per rank)"; echo; } >>"$report"
torch_python=${HCP_TORCH_PYTHON:-python3}
if [ ! -f "$gpu_build/capi/libhcp.so" ]; then
  echo "Not run: no libhcp.so in $gpu_build (a bundle carries the programs only)." >>"$report"
elif ! "$torch_python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "Not run: $torch_python has no torch with CUDA." >>"$report"
else
  torch_rc=0
  (cd "$HCP_ROOT/bindings/python" && HCP_LIBRARY="$gpu_build/capi/libhcp.so" \
     run "$torch_python" -m unittest -v tests.test_torch.TorchCpAttentionCuda) >"$work/torch.log" 2>&1 || torch_rc=$?
  [ $torch_rc = 0 ] || failed=1
  { echo "$([ $torch_rc = 0 ] && echo passed || echo "FAILED (exit $torch_rc)")"; echo; echo '```'
    grep -E '\.\.\. |^Ran |^OK|^FAILED|Error|assert' "$work/torch.log" | head -60; echo '```'; } >>"$report"
fi

{ echo; echo "Result: $([ $failed = 0 ] && echo 'all passed' || echo 'FAILURES above')"; } >>"$report"
cat "$report"
exit $failed
