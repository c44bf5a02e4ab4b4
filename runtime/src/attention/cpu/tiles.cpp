#include "tiles.hpp"

#include <algorithm>
#include <cstring>

#include "bf16.hpp"
#include "half.hpp"

namespace hcp::cpu {

void read_row(DType dtype, const unsigned char* src, int64_t n, float mul, float* dst) {
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

namespace {

// Rows sit a page apart (tiles.hpp); reading them one after the other waits on each one's miss. Asking for the row
// a few ahead keeps several misses in flight.
constexpr int64_t kPrefetchAhead = 12;
void prefetch_row(DType dtype, const AttnTensor& t, int64_t b, int64_t s, int64_t h, int64_t head_dim) {
  const unsigned char* row = element(dtype, t, b, s, h);
  const int64_t bytes = head_dim * static_cast<int64_t>(dtype_size(dtype));
  for (int64_t off = 0; off < bytes; off += 64) __builtin_prefetch(row + off);
}

}  // namespace

void pack_rows(DType dtype, const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h, int64_t head_dim,
               float mul, float* dst, int64_t dp, int64_t block_rows, const int64_t* rows_at) {
  for (int64_t r = 0; r < rows; ++r) {
    if (r + kPrefetchAhead < rows)
      prefetch_row(dtype, t, b, stored_row(rows_at, s0 + r + kPrefetchAhead), h, head_dim);
    read_row(dtype, element(dtype, t, b, stored_row(rows_at, s0 + r), h), head_dim, mul, dst + r * dp);
    std::fill(dst + r * dp + head_dim, dst + (r + 1) * dp, 0.0f);
  }
  std::fill(dst + rows * dp, dst + block_rows * dp, 0.0f);
}

void prefetch_rows(DType dtype, const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h,
                   int64_t head_dim) {
  for (int64_t r = 0; r < rows; ++r) prefetch_row(dtype, t, b, s0 + r, h, head_dim);
}

void add_rows(const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h, int64_t head_dim, float mul,
              const float* src, int64_t dp, const int64_t* rows_at) {
  for (int64_t r = 0; r < rows; ++r) {
    float* out = f32_row(t, b, stored_row(rows_at, s0 + r), h);
    const float* in = src + r * dp;
    for (int64_t d = 0; d < head_dim; ++d) out[d] += mul * in[d];
  }
}

}  // namespace hcp::cpu
