// Tile geometry and the packing of bshd rows into the zero-padded fp32 tiles the kernels work on. Packing is
// O(rows * head_dim) per tile against O(rows * cols * head_dim) of arithmetic, so it stays plain code; it is forced
// inline, so that the compiler vectorises its loops for the kernel body's instruction set (out of line, compiled for
// the baseline, read_row, pack_rows and add_rows had a third of the samples of a packed p2p CP backward; inlined,
// that backward takes 14% less time and the single-rank backward about 10% less).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "bf16.hpp"
#include "half.hpp"
#include "hcp/attention_params.hpp"
#include "simd.hpp"

namespace hcp::cpu {

inline constexpr int64_t kBlockQ = 64;  // query rows per tile
inline constexpr int64_t kBlockK = 64;  // key rows per tile
inline constexpr int64_t kMaxHeadDim = 512;

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Number of keys of block [j0, j0 + cols) that query row `row` may see.
inline int64_t visible_keys(const AttnParams& p, int64_t row, int64_t j0, int64_t cols) {
  if (!p.causal) return cols;
  const int64_t last = row + p.causal_offset - j0;  // last visible key, relative to j0
  return last < 0 ? 0 : (last + 1 < cols ? last + 1 : cols);
}

// dst[d] = mul * src[d] for d < n, src holding n values of `dtype`.
HCP_INLINE void read_row(DType dtype, const unsigned char* src, int64_t n, float mul, float* dst) {
  switch (dtype) {
    case DType::f32: {
      const float* s = reinterpret_cast<const float*>(src);
      for (int64_t d = 0; d < n; ++d) dst[d] = mul * s[d];
      break;
    }
    case DType::bf16:
      for (int64_t d = 0; d < n; ++d) {
        uint16_t h;
        std::memcpy(&h, src + 2 * d, 2);
        dst[d] = mul * bf16_to_float(h);
      }
      break;
    case DType::f16:
      for (int64_t d = 0; d < n; ++d) {
        uint16_t h;
        std::memcpy(&h, src + 2 * d, 2);
        dst[d] = mul * f16_to_float(h);
      }
      break;
  }
}

// The stored row of row s of a call's key order (key_order.hpp): rows_at[s], or s itself without one.
inline int64_t stored_row(const int64_t* rows_at, int64_t s) { return rows_at ? rows_at[s] : s; }

// How many of the rows [s0, s0 + rows) of a key order, from s0 on, are consecutive stored rows. (A loop over these
// runs rather than a helper taking a lambda: a lambda is not inlined into the kernels' target-specific bodies and
// would be compiled for the baseline instruction set.)
inline int64_t stored_run(const int64_t* rows_at, int64_t s0, int64_t rows) {
  int64_t n = 1;
  while (n < rows && stored_row(rows_at, s0 + n) == stored_row(rows_at, s0 + n - 1) + 1) ++n;
  return n;
}

inline const unsigned char* element(DType dtype, const AttnTensor& t, int64_t b, int64_t s, int64_t h) {
  return static_cast<const unsigned char*>(t.data) +
         (b * t.stride_b + s * t.stride_s + h * t.stride_h) * static_cast<int64_t>(dtype_size(dtype));
}
inline float* f32_row(const AttnTensor& t, int64_t b, int64_t s, int64_t h) {
  return static_cast<float*>(t.data) + b * t.stride_b + s * t.stride_s + h * t.stride_h;
}
inline float* row_values(const AttnRows& r, int64_t b, int64_t h) { return r.data + b * r.stride_b + h * r.stride_h; }

// Rows of a bshd tensor sit a whole row of heads apart (often 4 KiB or more), so each row starts on a new page and
// the hardware prefetchers, which stay inside a page, miss it. The kernels ask for the next tile's rows while they
// compute on the current one, and packing asks for the row kPrefetchAhead rows on, keeping several misses in flight.
inline constexpr int64_t kPrefetchAhead = 12;
HCP_INLINE void prefetch_row(DType dtype, const AttnTensor& t, int64_t b, int64_t s, int64_t h, int64_t head_dim) {
  const unsigned char* row = element(dtype, t, b, s, h);
  const int64_t bytes = head_dim * static_cast<int64_t>(dtype_size(dtype));
  for (int64_t off = 0; off < bytes; off += 64) __builtin_prefetch(row + off);
}
HCP_INLINE void prefetch_rows(DType dtype, const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h,
                              int64_t head_dim) {
  for (int64_t r = 0; r < rows; ++r) prefetch_row(dtype, t, b, s0 + r, h, head_dim);
}

// dst[r * dp + d] = mul * t[b, s0 + r, h, d] for r < rows, d < head_dim; zero elsewhere in block_rows x dp. With
// rows_at, row s0 + r is the stored row rows_at[s0 + r].
HCP_INLINE void pack_rows(DType dtype, const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h,
                          int64_t head_dim, float mul, float* dst, int64_t dp, int64_t block_rows,
                          const int64_t* rows_at = nullptr) {
  for (int64_t r = 0; r < rows; ++r) {
    if (r + kPrefetchAhead < rows)
      prefetch_row(dtype, t, b, stored_row(rows_at, s0 + r + kPrefetchAhead), h, head_dim);
    read_row(dtype, element(dtype, t, b, stored_row(rows_at, s0 + r), h), head_dim, mul, dst + r * dp);
    std::fill(dst + r * dp + head_dim, dst + (r + 1) * dp, 0.0f);
  }
  std::fill(dst + rows * dp, dst + block_rows * dp, 0.0f);
}

// t[b, s0 + r, h, d] += mul * src[r * dp + d] (t is f32); with rows_at, row s0 + r is the stored row
// rows_at[s0 + r].
HCP_INLINE void add_rows(const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h, int64_t head_dim,
                         float mul, const float* src, int64_t dp, const int64_t* rows_at = nullptr) {
  for (int64_t r = 0; r < rows; ++r) {
    float* out = f32_row(t, b, stored_row(rows_at, s0 + r), h);
    const float* in = src + r * dp;
    for (int64_t d = 0; d < head_dim; ++d) out[d] += mul * in[d];
  }
}

}  // namespace hcp::cpu
