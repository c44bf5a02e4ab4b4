// C += A * B on the padded tiles of the attention kernels: A is M x K (row stride lda), B is K x N (row stride ldb),
// C is M x N (row stride ldc), all fp32, M a multiple of 4 and N a multiple of W. A 4 x 2W register block keeps
// 8 accumulators plus two B vectors in registers on AVX2 (16 ymm) and leaves room on AVX-512; each step issues two
// vector loads and four broadcasts for eight FMAs, so the loop is bound by the FMA units, not by loads.
#pragma once

#include "simd.hpp"

namespace hcp::cpu {

// kAcc: C += A * B; otherwise C = A * B (C's old values are neither read nor need zeroing first).
template <int W, bool kAcc>
HCP_INLINE typename Simd<W>::V start(const float* c) {
  if constexpr (kAcc) return load<W>(c);
  return typename Simd<W>::V{};
}

template <int W, bool kAcc>
HCP_INLINE void gemm_4x2w(int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  using V = typename Simd<W>::V;
  V c00 = start<W, kAcc>(c), c01 = start<W, kAcc>(c + W);
  V c10 = start<W, kAcc>(c + ldc), c11 = start<W, kAcc>(c + ldc + W);
  V c20 = start<W, kAcc>(c + 2 * ldc), c21 = start<W, kAcc>(c + 2 * ldc + W);
  V c30 = start<W, kAcc>(c + 3 * ldc), c31 = start<W, kAcc>(c + 3 * ldc + W);
  for (int64_t k = 0; k < K; ++k) {
    const V b0 = load<W>(b + k * ldb), b1 = load<W>(b + k * ldb + W);
    const V a0 = splat<W>(a[k]), a1 = splat<W>(a[lda + k]);
    const V a2 = splat<W>(a[2 * lda + k]), a3 = splat<W>(a[3 * lda + k]);
    c00 += a0 * b0;
    c01 += a0 * b1;
    c10 += a1 * b0;
    c11 += a1 * b1;
    c20 += a2 * b0;
    c21 += a2 * b1;
    c30 += a3 * b0;
    c31 += a3 * b1;
  }
  store<W>(c, c00), store<W>(c + W, c01);
  store<W>(c + ldc, c10), store<W>(c + ldc + W, c11);
  store<W>(c + 2 * ldc, c20), store<W>(c + 2 * ldc + W, c21);
  store<W>(c + 3 * ldc, c30), store<W>(c + 3 * ldc + W, c31);
}

// The last W columns when N is an odd multiple of W: a narrow key tile (a short document's CP chunk, often 30-60
// keys) would otherwise be padded to 2W columns of wasted products.
template <int W, bool kAcc>
HCP_INLINE void gemm_4x1w(int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  using V = typename Simd<W>::V;
  V c0 = start<W, kAcc>(c), c1 = start<W, kAcc>(c + ldc), c2 = start<W, kAcc>(c + 2 * ldc);
  V c3 = start<W, kAcc>(c + 3 * ldc);
  for (int64_t k = 0; k < K; ++k) {
    const V b0 = load<W>(b + k * ldb);
    c0 += splat<W>(a[k]) * b0;
    c1 += splat<W>(a[lda + k]) * b0;
    c2 += splat<W>(a[2 * lda + k]) * b0;
    c3 += splat<W>(a[3 * lda + k]) * b0;
  }
  store<W>(c, c0), store<W>(c + ldc, c1), store<W>(c + 2 * ldc, c2), store<W>(c + 3 * ldc, c3);
}

template <int W, bool kAcc>
HCP_INLINE void gemm(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb,
                     float* c, int64_t ldc) {
  const int64_t wide = N / (2 * W) * (2 * W);
  for (int64_t i = 0; i < M; i += 4) {
    for (int64_t j = 0; j < wide; j += 2 * W)
      gemm_4x2w<W, kAcc>(K, a + i * lda, lda, b + j, ldb, c + i * ldc + j, ldc);
    if (wide < N) gemm_4x1w<W, kAcc>(K, a + i * lda, lda, b + wide, ldb, c + i * ldc + wide, ldc);
  }
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
