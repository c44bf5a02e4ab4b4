// The CP schemes' element-wise kernels as block functions (one source for nvcc and the block emulator, like
// flash_*.cuh): the fp32 merge of a partial result into the running out / lse, and fp32 <-> 16-bit conversion.
#pragma once

#include "hcp/cp_engine.hpp"
#include "kernel_env.cuh"

namespace hcp::kern {

constexpr int kMergeRows = 16;  // rows per merge block

// Grid: x = 16-row tile of [q0, q0 + nq), y = head, z = batch. Every thread reads a row's two lse values before
// thread 0 replaces the running one, so the rows of a block are merged one after another.
HCP_KFN void merge_block(const BlockCtx& ctx, const MergeRows& m, int bx, int by, int bz) {
  const int64_t end = m.q0 + m.nq, row_elems = m.heads * m.head_dim;
  for (int r = 0; r < kMergeRows; ++r) {
    const int64_t i = m.q0 + int64_t{bx} * kMergeRows + r;
    if (i >= end) break;  // uniform over the block
    float* lse = m.lse + (bz * m.heads + by) * m.n + i;
    const float old_lse = *lse, part_lse = m.part_lse[(bz * m.heads + by) * m.n + i];
    float* out = m.out + (bz * m.n + i) * row_elems + by * m.head_dim;
    const float* part = m.part_out + (bz * m.n + i) * row_elems + by * m.head_dim;
    float merged = old_lse;
    if (part_lse != -INFINITY) {
      if (old_lse == -INFINITY) {
        merged = part_lse;
        for (int64_t d = ctx.tid(); d < m.head_dim; d += kThreads) out[d] = part[d];
      } else {
        const float hi = fmaxf(old_lse, part_lse), lo = fminf(old_lse, part_lse);
        merged = hi + log1pf(expf(lo - hi));
        const float w_old = expf(old_lse - merged), w_new = expf(part_lse - merged);
        for (int64_t d = ctx.tid(); d < m.head_dim; d += kThreads) out[d] = out[d] * w_old + part[d] * w_new;
      }
    }
    ctx.sync();  // every thread has read *lse
    if (ctx.tid() == 0) *lse = merged;
  }
}

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

}  // namespace hcp::kern
