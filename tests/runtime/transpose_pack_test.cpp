// The transposed key/value packing (a register transpose W rows by W dims at a time) against its definition,
// dst[d * block_rows + r] = mul * t[b, s0 + r, h, d], on each instruction set this machine has: fp32, bf16 and fp16
// rows; row counts that fill, split and miss the W-row groups; head dims that are and are not multiples of W; zero
// past the rows and in the pad dims; nothing written outside columns [0, width) and dims [0, dp).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "../../runtime/src/attention/cpu/bf16.hpp"
#include "../../runtime/src/attention/cpu/half.hpp"
#include "../../runtime/src/attention/cpu/transpose_pack.hpp"
#include "isa_variants.hpp"

namespace hcp::cpu {
namespace {

using PackFn = void (*)(DType dtype, const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h,
                        int64_t head_dim, float mul, float* dst, int64_t dp, int64_t block_rows, int64_t width);

void pack_generic(DType dtype, const AttnTensor& t, int64_t b, int64_t s0, int64_t rows, int64_t h, int64_t head_dim,
                  float mul, float* dst, int64_t dp, int64_t block_rows, int64_t width) {
  pack_rows_transposed<4>(dtype, t, b, s0, rows, h, head_dim, mul, dst, dp, block_rows, width);
}
#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] void pack_avx2(DType dtype, const AttnTensor& t, int64_t b, int64_t s0, int64_t rows,
                                           int64_t h, int64_t head_dim, float mul, float* dst, int64_t dp,
                                           int64_t block_rows, int64_t width) {
  pack_rows_transposed<8>(dtype, t, b, s0, rows, h, head_dim, mul, dst, dp, block_rows, width);
}
[[gnu::target("avx512f,avx2,fma")]] void pack_avx512(DType dtype, const AttnTensor& t, int64_t b, int64_t s0,
                                                     int64_t rows, int64_t h, int64_t head_dim, float mul, float* dst,
                                                     int64_t dp, int64_t block_rows, int64_t width) {
  pack_rows_transposed<16>(dtype, t, b, s0, rows, h, head_dim, mul, dst, dp, block_rows, width);
}
#endif

std::vector<IsaVariant<PackFn>> isas() {
#if defined(__x86_64__)
  return isa_variants<PackFn>(pack_generic, pack_avx2, pack_avx512);
#else
  return isa_variants<PackFn>(pack_generic);
#endif
}

// A [batch 2, seq 80, heads 3, head_dim] tensor of `dtype` with random values, and the floats they stand for.
struct Rows {
  std::vector<unsigned char> bytes;
  std::vector<float> values;
  AttnTensor tensor;
  float at(int64_t b, int64_t s, int64_t h, int64_t d) const {
    return values[static_cast<size_t>(b * tensor.stride_b + s * tensor.stride_s + h * tensor.stride_h + d)];
  }
};
Rows make_rows(DType dtype, int64_t head_dim, std::mt19937& gen) {
  constexpr int64_t kBatch = 2, kSeq = 80, kHeads = 3;
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  Rows r;
  const size_t n = static_cast<size_t>(kBatch * kSeq * kHeads * head_dim);
  r.values.resize(n);
  r.bytes.resize(n * dtype_size(dtype));
  for (size_t i = 0; i < n; ++i) {
    const float x = value(gen);
    if (dtype == DType::f32) {
      r.values[i] = x;
      std::memcpy(r.bytes.data() + 4 * i, &x, 4);
      continue;
    }
    const uint16_t h = dtype == DType::bf16 ? float_to_bf16(x) : float_to_f16(x);
    r.values[i] = dtype == DType::bf16 ? bf16_to_float(h) : f16_to_float(h);
    std::memcpy(r.bytes.data() + 2 * i, &h, 2);
  }
  r.tensor = {r.bytes.data(), kSeq * kHeads * head_dim, kHeads * head_dim, head_dim};
  return r;
}

TEST(TransposePack, EveryShapeMatchesTheDefinition) {
  constexpr int64_t kBlockRows = 64;
  constexpr float kSentinel = 12345.0f;
  std::mt19937 gen(11);
  int checked = 0;
  for (const IsaVariant<PackFn>& isa : isas()) {
    if (!isa.available) continue;
    const int W = isa.width;
    for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
      for (const int64_t head_dim : {1, 5, 16, 40, 128}) {
        const Rows src = make_rows(dtype, head_dim, gen);
        const int64_t dp = round_up(head_dim, 2 * W);
        for (const int64_t rows : std::vector<int64_t>{1, 3, W, W + 1, 42, 63, 64}) {
          for (int64_t width = round_up(rows, W); width <= kBlockRows; width += 2 * W) {
            const int64_t b = 1, s0 = 7, h = 2;
            const float mul = 0.5f;
            std::vector<float> dst(static_cast<size_t>((dp + 1) * kBlockRows), kSentinel);
            isa.fn(dtype, src.tensor, b, s0, rows, h, head_dim, mul, dst.data(), dp, kBlockRows, width);
            for (int64_t d = 0; d < dp + 1; ++d) {
              for (int64_t r = 0; r < kBlockRows; ++r) {
                const float got = dst[static_cast<size_t>(d * kBlockRows + r)];
                float want = kSentinel;  // outside what the products read: untouched
                if (d < dp && r < width) want = d < head_dim && r < rows ? mul * src.at(b, s0 + r, h, d) : 0.0f;
                ASSERT_EQ(got, want) << isa.name << " dtype " << dtype_name(dtype) << " head_dim " << head_dim
                                     << " rows " << rows << " width " << width << " at dim " << d << ", row " << r;
              }
            }
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GE(checked, 3 * 5 * 7);  // the generic build always runs every dtype, head dim and row count
}

}  // namespace
}  // namespace hcp::cpu
