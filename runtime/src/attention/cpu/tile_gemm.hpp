// C += A * B on the padded tiles of the attention kernels: A is M x K (row stride lda), B is K x N (row stride ldb),
// C is M x N (row stride ldc), all fp32, M a multiple of 4 and N a multiple of W. C is computed in register blocks of
// 4 rows x NB vectors: each step over k loads NB vectors of B and broadcasts four elements of A for 4 * NB FMAs.
// The widest block is the one the registers hold (kWidestBlock): on AVX-512 (32 registers) 4 x 4W, whose 16 FMAs
// per 8 loads keep both FMA units busy (measured on one Zen 5 core: 200 GFLOP/s against 160 for 4 x 2W, peak 222);
// on AVX2 and the generic build (16 registers) 4 x 2W. Every element is summed over k in the same order whatever
// the block, so the blocking never changes a result bit.
#pragma once

#include "simd.hpp"

namespace hcp::cpu {

// kAcc: C += A * B; otherwise C = A * B (C's old values are neither read nor need zeroing first).
template <int W, bool kAcc>
HCP_INLINE typename Simd<W>::V start(const float* c) {
  if constexpr (kAcc) return load<W>(c);
  return typename Simd<W>::V{};
}

// The 4 x NB*W block of C at c. The loops over the block are unrolled so that its 4 * NB accumulators stay in
// registers (without the pragmas GCC keeps the array in memory: 60 GFLOP/s instead of 186 for 4 x 3W).
template <int W, int NB, bool kAcc>
HCP_INLINE void gemm_block(int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                           int64_t ldc) {
  using V = typename Simd<W>::V;
  V acc[4][NB];
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
    for (int x = 0; x < NB; ++x) acc[r][x] = start<W, kAcc>(c + r * ldc + x * W);
  for (int64_t k = 0; k < K; ++k) {
    V bk[NB];
#pragma GCC unroll 4
    for (int x = 0; x < NB; ++x) bk[x] = load<W>(b + k * ldb + x * W);
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) {
      const V ar = broadcast<W>(a + r * lda + k);
#pragma GCC unroll 4
      for (int x = 0; x < NB; ++x) acc[r][x] += ar * bk[x];
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
    for (int x = 0; x < NB; ++x) store<W>(c + r * ldc + x * W, acc[r][x]);
}

// Vectors per block row that the registers hold: 4 * NB accumulators, NB B vectors and a broadcast.
template <int W>
inline constexpr int kWidestBlock = W >= 16 ? 4 : 2;

// The columns of four rows, widest blocks first, then one block for what is left: a short document's CP chunk
// of 33-48 keys is a 3W score tile on AVX-512, one block instead of 2W + 1W (the 1W block issues as many
// broadcasts as FMAs). The kernels' N is at most 4W (key tiles) or a multiple of 2W (head dims).
template <int W, bool kAcc>
HCP_INLINE void gemm_rows(int64_t N, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                          int64_t ldc) {
  constexpr int kWide = kWidestBlock<W>;
  int64_t left = N / W;
  for (; left >= kWide; left -= kWide, b += kWide * W, c += kWide * W)
    gemm_block<W, kWide, kAcc>(K, a, lda, b, ldb, c, ldc);
  if constexpr (kWide == 4) {
    if (left == 3) return gemm_block<W, 3, kAcc>(K, a, lda, b, ldb, c, ldc);
  }
  if (left >= 2) {
    gemm_block<W, 2, kAcc>(K, a, lda, b, ldb, c, ldc);
    left -= 2, b += 2 * W, c += 2 * W;
  }
  if (left == 1) gemm_block<W, 1, kAcc>(K, a, lda, b, ldb, c, ldc);
}

template <int W, bool kAcc>
HCP_INLINE void gemm(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb,
                     float* c, int64_t ldc) {
  for (int64_t i = 0; i < M; i += 4) gemm_rows<W, kAcc>(N, K, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
}
template <int W>
HCP_INLINE void gemm_acc(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb,
                         float* c, int64_t ldc) {
  gemm<W, true>(M, N, K, a, lda, b, ldb, c, ldc);
}
// C = A * B.
template <int W>
HCP_INLINE void gemm_set(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb,
                         float* c, int64_t ldc) {
  gemm<W, false>(M, N, K, a, lda, b, ldb, c, ldc);
}

}  // namespace hcp::cpu
