// The CP schemes' element-wise kernels as block functions (one source for nvcc and the block emulator, like
// flash_*.cuh): fp32 <-> 16-bit conversion and the fp32 sum of the in-process reduce-scatter. (The output
// correction of the ring is fused into the flash forward.)
#pragma once

#include <cstdint>

#include "kernel_env.cuh"

namespace hcp::kern {

// Element i = (bx * kThreads + tid) + k * stride for k = 0, 1, ... (a grid-stride loop over n elements).
template <class E>
HCP_KFN void convert_from_f32_block(const BlockCtx& ctx, const float* src, typename E::type* dst, int64_t n, int bx,
                                    int64_t stride) {
  for (int64_t i = int64_t{bx} * kThreads + ctx.tid(); i < n; i += stride) dst[i] = E::from_float(src[i]);
}

template <class E>
HCP_KFN void convert_to_f32_block(const BlockCtx& ctx, const typename E::type* src, float* dst, int64_t n, int bx,
                                  int64_t stride) {
  for (int64_t i = int64_t{bx} * kThreads + ctx.tid(); i < n; i += stride) dst[i] = E::to_float(src[i]);
}

// dst[i] += src[i], grid-stride as above.
HCP_KFN void add_f32_block(const BlockCtx& ctx, float* dst, const float* src, int64_t n, int bx, int64_t stride) {
  for (int64_t i = int64_t{bx} * kThreads + ctx.tid(); i < n; i += stride) dst[i] += src[i];
}

}  // namespace hcp::kern
