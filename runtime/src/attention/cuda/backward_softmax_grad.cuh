// The elementwise middle of both backward kernels: S^T and dP^T (keys x queries, one warp's C fragments) become
// P^T = exp(S^T - lse) and dS^T = P^T (dP^T - delta) in place, with the masks.
#pragma once

#include <cstdint>

#include "kernel_env.cuh"
#include "label_mask.cuh"
#include "tile_loads.cuh"

namespace hcp::kern {

// st and dpt hold N 16 x 8 tiles: element i of tile nt is key key_lane + r of query query_lane + c, with
// r = 8 (i >= 2) and c = 8 nt + i % 2, where key_lane is this lane's first key (g of the warp's first) and
// query_lane its first query (2t of the warp's first). lse (log2 units, +inf for rows without keys) and delta are
// indexed by c + 2t. Masks only when `mask` (the block's last key passes the end of the keys or the diagonal of
// the step's first query): then a key is visible iff it is below sk and, when causal, at or before its query's
// diagonal - two clamped int rooms per lane, so the compile-time r and c leave no 64-bit arithmetic in the loop.
template <bool Causal, int N>
HCP_KFN void softmax_grad_tiles(float (&st)[N][4], float (&dpt)[N][4], const float* lse, const float* delta,
                                float scale_log2, bool mask, int64_t key_lane, int64_t query_lane, int64_t sk,
                                int64_t causal_offset, int t) {
  const int key_room = clamp_room(sk - key_lane);
  const int diag_room = clamp_room(query_lane + causal_offset - key_lane);
  HCP_UNROLL
  for (int nt = 0; nt < N; ++nt)
    HCP_UNROLL
    for (int i = 0; i < 4; ++i) {
      const int r = i >= 2 ? 8 : 0, c = 8 * nt + i % 2;
      const bool visible = !mask || (r < key_room && (!Causal || r - c <= diag_room));
      const float pv = visible ? fast_exp2(fmaf(st[nt][i], scale_log2, -lse[c + 2 * t])) : 0.0f;
      st[nt][i] = pv;
      dpt[nt][i] = pv * (dpt[nt][i] - delta[c + 2 * t]);
    }
}

// The labelled mask's element bits of this lane's S^T tiles (label_mask.cuh): bit 4 nt + i for element i of tile
// nt, i.e. key key_lane + r and query query_lane + c as above; `keys` holds the labels of key_lane and key_lane + 8.
template <int N>
HCP_KFN uint64_t visible_bits(const AttnParams& p, const LabelDist& dist, const RowLabel (&keys)[2],
                              int64_t query_lane) {
  static_assert(4 * N <= 64, "one bit per element");
  uint64_t bits = 0;
  HCP_UNROLL
  for (int nt = 0; nt < N; ++nt)
    HCP_UNROLL
    for (int ci = 0; ci < 2; ++ci) {
      const RowLabel query = query_label(p, query_lane + 8 * nt + ci);
      HCP_UNROLL
      for (int hf = 0; hf < 2; ++hf)
        if (label_sees(dist, query, keys[hf])) bits |= uint64_t{1} << (4 * nt + 2 * hf + ci);
    }
  return bits;
}

// softmax_grad_tiles for labelled masks: the visible elements are the set bits of `visible` (visible_bits).
template <int N>
HCP_KFN void softmax_grad_tiles_labelled(float (&st)[N][4], float (&dpt)[N][4], const float* lse, const float* delta,
                                         float scale_log2, uint64_t visible, int t) {
  HCP_UNROLL
  for (int nt = 0; nt < N; ++nt)
    HCP_UNROLL
    for (int i = 0; i < 4; ++i) {
      const int c = 8 * nt + i % 2;
      const bool seen = (visible >> (4 * nt + i)) & 1;
      const float pv = seen ? fast_exp2(fmaf(st[nt][i], scale_log2, -lse[c + 2 * t])) : 0.0f;
      st[nt][i] = pv;
      // Selected, not multiplied by pv = 0: a padding query's delta is NaN when its dO was.
      dpt[nt][i] = seen ? pv * (dpt[nt][i] - delta[c + 2 * t]) : 0.0f;
    }
}

}  // namespace hcp::kern
