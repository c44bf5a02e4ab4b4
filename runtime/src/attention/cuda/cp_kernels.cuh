// The CP schemes' element-wise kernels as block functions (one source for nvcc and the block emulator, like
// flash_*.cuh): fp32 <-> 16-bit conversion, the fp32 sum of the in-process reduce-scatter and attention sinks.
// (The output correction of the ring is fused into the flash forward.)
#pragma once

#include <math.h>

#include <cstdint>

#include "hcp/attention_params.hpp"
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

// Attention sinks (SinkParams, attention_params.hpp): one thread per row (b, h, r) of batch x heads x rows,
// grid-stride as above; full-precision expf/logf, as the CPU engine computes it.
HCP_KFN void apply_sink_block(const BlockCtx& ctx, const SinkParams& p, int bx, int64_t stride) {
  const int64_t n = p.batch * p.heads * p.rows;
  for (int64_t i = int64_t{bx} * kThreads + ctx.tid(); i < n; i += stride) {
    const float lse = p.lse[i];
    if (lse == -INFINITY) continue;  // sees no key: padding stays empty
    const int64_t r = i % p.rows, h = (i / p.rows) % p.heads, b = i / (p.rows * p.heads);
    const float sink = p.sink[h], top = fmaxf(lse, sink);
    const float merged = top + logf(expf(lse - top) + expf(sink - top));
    const float keep = expf(lse - merged);
    float* row = p.out + b * p.out_b + r * p.out_r + h * p.out_h;
    for (int64_t d = 0; d < p.head_dim; ++d) row[d] *= keep;
    p.lse[i] = merged;
  }
}

}  // namespace hcp::kern
