// The CPU kernels' tile GEMM against a plain triple loop, for every width its register blocking splits differently
// (1 to 9 vectors: the widest blocks, then 3W, 2W or 1W), on each instruction set this machine has, with C += A*B
// and C = A*B. Entries of C outside the M x N product must stay as they were.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "../../runtime/src/attention/cpu/tile_gemm.hpp"
#include "isa_variants.hpp"

namespace hcp::cpu {
namespace {

using GemmFn = void (*)(bool acc, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b,
                        int64_t ldb, float* c, int64_t ldc);

template <int W>
HCP_INLINE void call_gemm(bool acc, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b,
                          int64_t ldb, float* c, int64_t ldc) {
  if (acc)
    gemm_acc<W>(M, N, K, a, lda, b, ldb, c, ldc);
  else
    gemm_set<W>(M, N, K, a, lda, b, ldb, c, ldc);
}

void gemm_generic(bool acc, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb,
                  float* c, int64_t ldc) {
  call_gemm<4>(acc, M, N, K, a, lda, b, ldb, c, ldc);
}
#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] void gemm_avx2(bool acc, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                                           const float* b, int64_t ldb, float* c, int64_t ldc) {
  call_gemm<8>(acc, M, N, K, a, lda, b, ldb, c, ldc);
}
[[gnu::target("avx512f,avx2,fma")]] void gemm_avx512(bool acc, int64_t M, int64_t N, int64_t K, const float* a,
                                                     int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  call_gemm<16>(acc, M, N, K, a, lda, b, ldb, c, ldc);
}
#endif

std::vector<IsaVariant<GemmFn>> isas() {
#if defined(__x86_64__)
  return isa_variants<GemmFn>(gemm_generic, gemm_avx2, gemm_avx512);
#else
  return isa_variants<GemmFn>(gemm_generic);
#endif
}

TEST(TileGemm, EveryWidthMatchesAPlainProduct) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  int checked = 0;
  for (const IsaVariant<GemmFn>& isa : isas()) {
    if (!isa.available) continue;
    const int W = isa.width;
    for (int vectors = 1; vectors <= 9; ++vectors) {
      for (int64_t K : {1, 7, 64}) {
        for (bool acc : {false, true}) {
          const int64_t M = 8, N = vectors * W;
          const int64_t lda = K + 3, ldb = N + W, ldc = N + 2 * W;  // padded rows: strides are honoured
          std::vector<float> a(static_cast<size_t>(M * lda)), b(static_cast<size_t>(K * ldb));
          std::vector<float> c(static_cast<size_t>((M + 1) * ldc));
          for (float& x : a) x = value(gen);
          for (float& x : b) x = value(gen);
          for (float& x : c) x = value(gen);
          const std::vector<float> before = c;
          isa.fn(acc, M, N, K, a.data(), lda, b.data(), ldb, c.data(), ldc);
          for (int64_t i = 0; i < M + 1; ++i) {
            for (int64_t j = 0; j < ldc; ++j) {
              const size_t at = static_cast<size_t>(i * ldc + j);
              if (i >= M || j >= N) {
                ASSERT_EQ(c[at], before[at]) << isa.name << " N " << N << " K " << K << " outside at " << i << "," << j;
                continue;
              }
              double want = acc ? before[at] : 0.0;
              for (int64_t k = 0; k < K; ++k)
                want += static_cast<double>(a[static_cast<size_t>(i * lda + k)]) * b[static_cast<size_t>(k * ldb + j)];
              ASSERT_NEAR(c[at], want, 1e-5 * (1.0 + static_cast<double>(K)))
                  << isa.name << " N " << N << " K " << K << (acc ? " acc" : " set") << " at " << i << "," << j;
            }
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GE(checked, 54);  // the generic build always runs: 9 widths x 3 depths x 2 modes
}

}  // namespace
}  // namespace hcp::cpu
