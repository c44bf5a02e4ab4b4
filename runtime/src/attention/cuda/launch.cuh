// The __global__ wrappers around the block functions and their launchers (nvcc only). Each instantiation is
// compiled in its own generated translation unit (instance.cu.in); launchers.cuh declares them for the dispatcher.
#pragma once

#include <cuda_runtime.h>

#include "backward_kernel.cuh"
#include "flash_forward.cuh"
#include "launchers.cuh"

namespace hcp::kern {

// Causal blocks start with the last query tiles, which see the most keys, so the long blocks do not run last.
template <class E, int D, bool Causal>
__global__ void __launch_bounds__(kThreads) flash_forward_kernel(const AttnParams p) {
  extern __shared__ __align__(128) char smem[];
  const int bx = Causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  flash_forward_block<E, D, Causal>(BlockCtx{}, p, bx, blockIdx.y, blockIdx.z, smem);
}

template <class E, int D, bool Causal>
__global__ void __launch_bounds__(kThreads) flash_backward_kernel(const AttnParams p) {
  extern __shared__ __align__(128) char smem[];
  backward_block<E, D, Causal>(BlockCtx{}, p, blockIdx.x, blockIdx.y, blockIdx.z, smem);
}

// Shared memory beyond 48 KiB needs the per-kernel opt-in; both kernels fit the 163 KiB of sm_80 and up.
template <class Kernel>
cudaError_t launch_tiles(Kernel kernel, size_t smem, int64_t rows, int64_t tile, int64_t heads, int64_t batch,
                         const AttnParams& p, cudaStream_t stream) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>((rows + tile - 1) / tile), static_cast<unsigned>(heads),
                  static_cast<unsigned>(batch));
  kernel<<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <class E, int D, bool Causal>
cudaError_t launch_flash_forward(const AttnParams& p, cudaStream_t stream) {
  return launch_tiles(flash_forward_kernel<E, D, Causal>, FwdSmem<D>::bytes, p.sq, kFwdRows<D>, p.heads, p.batch, p,
                      stream);
}

template <class E, int D, bool Causal>
cudaError_t launch_flash_backward(const AttnParams& p, cudaStream_t stream) {
  return launch_tiles(flash_backward_kernel<E, D, Causal>, kBwdSmemBytes<D>, p.sk, kBwdBlockKeys<D>, p.kv_heads,
                      p.batch, p, stream);
}

}  // namespace hcp::kern
