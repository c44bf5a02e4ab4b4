// How both backward kernels hand their accumulators to the f32 outputs: dQ rows by atomics (every key block
// contributes to them), dK and dV rows by plain adds (one block owns each key).
#pragma once

#include <cstdint>

#include "hcp/attention_params.hpp"
#include "kernel_env.cuh"

namespace hcp::kern {

// Adds N C fragments (rows row0 + g and row0 + 8 + g, 8-column tiles from column col0) times `scale` to the rows
// of `rows` below `limit`, in the columns below `cols` (the tensor's head dim; the kernel's padding columns past it
// hold zeros); lane = 4g + t holds columns 2t and 2t + 1 of each tile.
template <bool Atomic, int N>
HCP_KFN void add_fragment_rows(float* rows, int64_t stride_s, int64_t row0, int64_t limit, int col0, int64_t cols,
                               const float (&c)[N][4], float scale, int lane) {
  const int g = lane / 4, t = lane % 4;
  HCP_UNROLL
  for (int hf = 0; hf < 2; ++hf) {
    const int64_t r = row0 + g + 8 * hf;
    if (r >= limit) continue;
    float* row = rows + r * stride_s + col0 + 2 * t;
    HCP_UNROLL
    for (int nd = 0; nd < N; ++nd) {
      if (col0 + 8 * nd >= cols) break;
      HCP_UNROLL
      for (int j = 0; j < 2; ++j) {
        if (Atomic)
          atomic_add(row + 8 * nd + j, c[nd][2 * hf + j] * scale);
        else
          row[8 * nd + j] += c[nd][2 * hf + j] * scale;
      }
    }
  }
}

// dK (scaled by p.scale) and dV of keys key0 + g (+ 8), columns from col0, of kv head hk in batch b.
template <int N>
HCP_KFN void add_dk_dv(const AttnParams& p, int64_t b, int64_t hk, int64_t key0, int col0, const float (&dk)[N][4],
                       const float (&dv)[N][4], int lane) {
  float* dkg = static_cast<float*>(p.dk.data) + b * p.dk.stride_b + hk * p.dk.stride_h;
  float* dvg = static_cast<float*>(p.dv.data) + b * p.dv.stride_b + hk * p.dv.stride_h;
  add_fragment_rows<false>(dkg, p.dk.stride_s, key0, p.sk, col0, p.head_dim, dk, p.scale, lane);
  add_fragment_rows<false>(dvg, p.dv.stride_s, key0, p.sk, col0, value_dim(p), dv, 1.0f, lane);
}

// dQ (scaled by p.scale) of queries row0 + g (+ 8), columns from col0, of head h in batch b, atomically.
template <int N>
HCP_KFN void add_dq(const AttnParams& p, int64_t b, int64_t h, int64_t row0, int col0, const float (&dq)[N][4],
                    int lane) {
  float* dqg = static_cast<float*>(p.dq.data) + b * p.dq.stride_b + h * p.dq.stride_h;
  add_fragment_rows<true>(dqg, p.dq.stride_s, row0, p.sq, col0, p.head_dim, dq, p.scale, lane);
}

}  // namespace hcp::kern
