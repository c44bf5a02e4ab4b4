// Attention bias in the CPU kernels (AttnParams::bias, dbias): a score row gets its bias row added before the
// softmax, and the backward's dS row goes to the bias's gradient. O(cols) per row against the row's O(cols x D)
// products, so plain loops; keys walked out of their stored order (key_order.hpp) are looked up by stored row.
#pragma once

#include <cstdint>

#include "hcp/attention_params.hpp"
#include "tiles.hpp"

namespace hcp::cpu {

inline const float* pair_row(const AttnPairs& t, int64_t b, int64_t h, int64_t i) {
  return t.data + b * t.stride_b + h * t.stride_h + i * t.stride_q;
}

// srow[j] += bias(b, h, i, key j0 + j) for j < cols.
HCP_INLINE void add_bias_row(const AttnParams& p, int64_t b, int64_t h, int64_t i, int64_t j0, int64_t cols,
                             const int64_t* key_rows, float* srow) {
  const float* row = pair_row(p.bias, b, h, i);
  const int64_t sk = p.bias.stride_k;
  if (key_rows == nullptr && sk == 1) {
    for (int64_t j = 0; j < cols; ++j) srow[j] += row[j0 + j];
    return;
  }
  for (int64_t j = 0; j < cols; ++j) srow[j] += row[stored_row(key_rows, j0 + j) * sk];
}

// dbias(b, h, i, key j0 + j) += ds[j] for j < cols.
HCP_INLINE void add_dbias_row(const AttnParams& p, int64_t b, int64_t h, int64_t i, int64_t j0, int64_t cols,
                              const int64_t* key_rows, const float* ds) {
  float* row = p.dbias.data + b * p.dbias.stride_b + h * p.dbias.stride_h + i * p.dbias.stride_q;
  const int64_t sk = p.dbias.stride_k;
  for (int64_t j = 0; j < cols; ++j) row[stored_row(key_rows, j0 + j) * sk] += ds[j];
}

}  // namespace hcp::cpu
