#!/usr/bin/env bash
# Neither libhcp.so nor the hcp command may need a CUDA or NCCL library to load: the GPU path is a module
# (libhcp_cuda.so) loaded on first use. Lists each file's NEEDED entries and fails on any CUDA or NCCL one.
set -euo pipefail
status=0
for file in "$@"; do
  needed=$(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  gpu=$(echo "$needed" | grep -E '^lib(cuda|cudart|nccl|cublas|cublasLt|nvrtc)[.-]' || true)
  if [ -n "$gpu" ]; then
    echo "$file needs GPU libraries: $(echo "$gpu" | tr '\n' ' ')" >&2
    status=1
  else
    echo "$file needs: $(echo "$needed" | tr '\n' ' ')"
  fi
done
exit $status
