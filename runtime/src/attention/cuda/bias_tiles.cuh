// Attention bias in the CUDA kernels (AttnParams::bias, dbias): each score element gets its bias before the softmax
// and each dS element goes to the bias's gradient. The kernels keep scores unscaled (scale is applied in the exp2's
// FMA), so the bias enters as bias / scale: scale x (s + bias / scale) = scale x s + bias. One global load (and, in the
// backward, one add) per element next to the D-long products that made it; keys are in stored order here.
#pragma once

#include <cstdint>

#include "hcp/attention_params.hpp"
#include "kernel_env.cuh"

namespace hcp::kern {

HCP_KFN const float* bias_plane(const AttnPairs& t, int64_t b, int64_t h) {
  return t.data + b * t.stride_b + h * t.stride_h;
}

// Forward: S tiles [Tiles][KeyTiles] of one warp (flash_forward.cuh's layout): element i of tile (mi, nt) is query
// row0 + 16 mi + g + 8 (i >= 2) and key k0 + 8 nt + 2 t + i % 2.
template <int Tiles, int KeyTiles>
HCP_KFN void add_bias_rows(const AttnParams& p, int64_t b, int64_t h, int64_t row0, int64_t k0, int g, int t,
                           float (&s)[Tiles][KeyTiles][4]) {
  const float* plane = bias_plane(p.bias, b, h);
  const float inv_scale = 1.0f / p.scale;
  HCP_UNROLL
  for (int mi = 0; mi < Tiles; ++mi)
    HCP_UNROLL
    for (int nt = 0; nt < KeyTiles; ++nt)
      HCP_UNROLL
      for (int i = 0; i < 4; ++i) {
        const int64_t row = row0 + 16 * mi + g + (i >= 2 ? 8 : 0), key = k0 + 8 * nt + 2 * t + i % 2;
        if (row < p.sq && key < p.sk) s[mi][nt][i] += plane[row * p.bias.stride_q + key * p.bias.stride_k] * inv_scale;
      }
}

// Backward: S^T tiles (backward_softmax_grad.cuh's layout): element i of tile nt is key key_lane + 8 (i >= 2) and
// query query_lane + 8 nt + i % 2. add_bias_keys before the softmax gradient, add_dbias_keys (dS^T) after it.
template <int N>
HCP_KFN void add_bias_keys(const AttnParams& p, int64_t b, int64_t h, int64_t key_lane, int64_t query_lane,
                           float (&st)[N][4]) {
  const float* plane = bias_plane(p.bias, b, h);
  const float inv_scale = 1.0f / p.scale;
  HCP_UNROLL
  for (int nt = 0; nt < N; ++nt)
    HCP_UNROLL
    for (int i = 0; i < 4; ++i) {
      const int64_t key = key_lane + (i >= 2 ? 8 : 0), query = query_lane + 8 * nt + i % 2;
      if (key < p.sk && query < p.sq) st[nt][i] += plane[query * p.bias.stride_q + key * p.bias.stride_k] * inv_scale;
    }
}
template <int N>
HCP_KFN void add_dbias_keys(const AttnParams& p, int64_t b, int64_t h, int64_t key_lane, int64_t query_lane,
                            const float (&dst)[N][4]) {
  float* plane = p.dbias.data + b * p.dbias.stride_b + h * p.dbias.stride_h;
  HCP_UNROLL
  for (int nt = 0; nt < N; ++nt)
    HCP_UNROLL
    for (int i = 0; i < 4; ++i) {
      const int64_t key = key_lane + (i >= 2 ? 8 : 0), query = query_lane + 8 * nt + i % 2;
      if (key < p.sk && query < p.sq) plane[query * p.dbias.stride_q + key * p.dbias.stride_k] += dst[nt][i];
    }
}

}  // namespace hcp::kern
