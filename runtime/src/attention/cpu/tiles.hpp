// Tile geometry and the packing of bshd rows into the zero-padded fp32 tiles the kernels work on. Packing is
// O(rows * head_dim) per tile against O(rows * cols * head_dim) of arithmetic, so it stays plain scalar code.
#pragma once

#include <cstdint>

#include "hcp/attention_params.hpp"

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
void read_row(DType dtype, const unsigned char* src, int64_t n, float mul, float* dst);
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

// dst[r * dp + d] = mul * t[b, s0 + r, h, d] for r < rows, d < head_dim; zero elsewhere in block_rows x dp. With
// rows_at, row s0 + r is the stored row rows_at[s0 + r].
void pack_rows(DType dtype, const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h, int64_t head_dim,
               float mul, float* dst, int64_t dp, int64_t block_rows, const int64_t* rows_at = nullptr);
// t[b, s0 + r, h, d] += mul * src[r * dp + d] (t is f32); with rows_at, row s0 + r is the stored row
// rows_at[s0 + r].
void add_rows(const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h, int64_t head_dim, float mul,
              const float* src, int64_t dp, const int64_t* rows_at = nullptr);

// Rows of a bshd tensor sit a whole row of heads apart (often 4 KiB or more), so each row starts on a new page and
// the hardware prefetchers, which stay inside a page, miss it. The kernels ask for the next tile's rows while they
// compute on the current one.
void prefetch_rows(DType dtype, const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h,
                   int64_t head_dim);

inline const unsigned char* element(DType dtype, const AttnTensor& t, int64_t b, int64_t s, int64_t h) {
  return static_cast<const unsigned char*>(t.data) +
         (b * t.stride_b + s * t.stride_s + h * t.stride_h) * static_cast<int64_t>(dtype_size(dtype));
}
inline float* f32_row(const AttnTensor& t, int64_t b, int64_t s, int64_t h) {
  return static_cast<float*>(t.data) + b * t.stride_b + s * t.stride_s + h * t.stride_h;
}
inline float* row_values(const AttnRows& r, int64_t b, int64_t h) { return r.data + b * r.stride_b + h * r.stride_h; }

}  // namespace hcp::cpu
