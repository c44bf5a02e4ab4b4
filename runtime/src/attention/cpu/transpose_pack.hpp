// The transposed packing of key (and, in the backward, value) rows: dst[d * block_rows + r] = mul * t[b, s0 + r, h, d].
// Done W rows by W dims at a time, as a register transpose of W vectors (log2 W stages of two-input shuffles), so
// each store is a whole vector instead of one float. Scalar, it stored one float per dim and row and took 10% of a
// packed CP ring forward and 21% of an all_gather one (every rank packs every key block it receives; the single
// rank packs each key once), at about half a float per cycle.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "simd.hpp"
#include "tiles.hpp"

namespace hcp::cpu {

// Swaps the off-diagonal H x H blocks of rows a and b: lane l of a takes b[l ^ H] where bit H of l is set, lane l
// of b takes a[l ^ H] where it is clear.
template <int W, int H, size_t... L>
HCP_INLINE void swap_lane_blocks(typename Simd<W>::V& a, typename Simd<W>::V& b, std::index_sequence<L...>) {
  const typename Simd<W>::V x = __builtin_shufflevector(a, b, ((L & H) ? W + (L ^ H) : L)...);
  const typename Simd<W>::V y = __builtin_shufflevector(a, b, ((L & H) ? W + L : (L ^ H))...);
  a = x, b = y;
}

// Transposes the W x W matrix held in rows v[0..W): block swaps of size W/2, W/4, ..., 1.
template <int W, int H = W / 2>
HCP_INLINE void transpose_rows(typename Simd<W>::V* v) {
  if constexpr (H >= 1) {
#pragma GCC unroll 16
    for (int i = 0; i < W; ++i)
      if ((i & H) == 0) swap_lane_blocks<W, H>(v[i], v[i + H], std::make_index_sequence<W>{});
    transpose_rows<W, H / 2>(v);
  }
}

// Writes columns [0, width) of the dp x block_rows tile: the transposed rows [0, rows), zero past `rows` and in the
// pad dims [head_dim, dp). width is a multiple of W (the callers round the key count up to the GEMM's width) and at
// most block_rows. With rows_at, row s0 + r is the stored row rows_at[s0 + r] (tiles.hpp).
template <int W>
HCP_INLINE void pack_rows_transposed(DType dtype, const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h,
                                     int64_t head_dim, float mul, float* dst, int64_t dp, int64_t block_rows,
                                     int64_t width, const int64_t* rows_at = nullptr) {
  using V = typename Simd<W>::V;
  for (int64_t d = head_dim; d < dp; ++d) std::fill(dst + d * block_rows, dst + d * block_rows + width, 0.0f);
  const int64_t full_dims = head_dim / W * W;
  for (int64_t r0 = 0; r0 < width; r0 += W) {
    const unsigned char* src[W];
    for (int i = 0; i < W; ++i)
      src[i] = r0 + i < rows ? element(dtype, t, b, stored_row(rows_at, s0 + r0 + i), h) : nullptr;
    if (r0 + W < rows) {
      const int64_t next = std::min<int64_t>(W, rows - r0 - W);
      for (int64_t i = 0, n = 0; i < next; i += n) {
        n = stored_run(rows_at, s0 + r0 + W + i, next - i);
        prefetch_rows(dtype, t, b, stored_row(rows_at, s0 + r0 + W + i), n, h, head_dim);
      }
    }
    for (int64_t d0 = 0; d0 < full_dims; d0 += W) {
      V v[W];
#pragma GCC unroll 16
      for (int i = 0; i < W; ++i) {
        if (src[i] == nullptr) {
          v[i] = splat<W>(0.0f);
        } else if (dtype == DType::f32) {
          v[i] = load<W>(reinterpret_cast<const float*>(src[i]) + d0) * mul;
        } else {
          float values[W] = {};
          read_row(dtype, src[i] + d0 * static_cast<int64_t>(dtype_size(dtype)), W, mul, values);
          v[i] = load<W>(values);
        }
      }
      transpose_rows<W>(v);
#pragma GCC unroll 16
      for (int i = 0; i < W; ++i) store<W>(dst + (d0 + i) * block_rows + r0, v[i]);
    }
    // Dims past the last whole vector (head dims that are not a multiple of W), one float at a time. Skipped
    // whole where there are none: its W cleared rows and calls took 3% of a packed all_gather forward.
    if (full_dims == head_dim) continue;
    for (int i = 0; i < W; ++i) {
      float values[W] = {};
      if (src[i] != nullptr)
        read_row(dtype, src[i] + full_dims * static_cast<int64_t>(dtype_size(dtype)), head_dim - full_dims, mul,
                 values);
      for (int64_t d = full_dims; d < head_dim; ++d) dst[d * block_rows + r0 + i] = values[d - full_dims];
    }
  }
}

}  // namespace hcp::cpu
