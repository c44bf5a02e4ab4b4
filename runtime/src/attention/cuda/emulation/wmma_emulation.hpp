// nvcuda::wmma on the host, for the block emulator. WMMA fragments are opaque: which lane holds which element is
// unspecified, and code may only load, store, mma, fill, or apply the same operation to every element. So a valid
// emulation lets lane 0 of each warp hold the whole tile (row-major), compute the whole product and store it, while
// the other lanes' fragments stay zero and their loads, products and stores do nothing: what a warp computes only
// becomes visible through a store. The block functions, like all correct WMMA code, synchronise before other lanes
// read a stored tile.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../../cpu/bf16.hpp"
#include "../../cpu/half.hpp"

namespace hcp::emu {

struct bf16 {
  uint16_t bits;
};
struct f16 {
  uint16_t bits;
};

namespace wmma {

inline thread_local int current_lane = 0;

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
  static constexpr int rows = std::is_same_v<Use, matrix_b> ? K : M;
  static constexpr int cols = std::is_same_v<Use, matrix_a> ? K : N;
  static constexpr int num_elements = rows * cols;
  T x[num_elements]{};  // row-major [rows][cols]; all zero except in lane 0
};

inline float element_value(float v) { return v; }
inline float element_value(bf16 v) { return cpu::bf16_to_float(v.bits); }
inline float element_value(f16 v) { return cpu::f16_to_float(v.bits); }

template <class Use, int M, int N, int K, class T, class Layout>
void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, T value) {
  for (auto& e : f.x) e = value;
}

template <class Use, int M, int N, int K, class T, class Layout>
void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const T* p, unsigned ldm) {
  using F = fragment<Use, M, N, K, T, Layout>;
  if (current_lane != 0) return;
  for (int r = 0; r < F::rows; ++r)
    for (int c = 0; c < F::cols; ++c)
      f.x[r * F::cols + c] = std::is_same_v<Layout, col_major> ? p[c * ldm + r] : p[r * ldm + c];
}

template <int M, int N, int K>
void load_matrix_sync(fragment<accumulator, M, N, K, float>& f, const float* p, unsigned ldm, layout_t layout) {
  if (current_lane != 0) return;
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) f.x[r * N + c] = layout == mem_col_major ? p[c * ldm + r] : p[r * ldm + c];
}

template <int M, int N, int K>
void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, float>& f, unsigned ldm, layout_t layout) {
  if (current_lane != 0) return;
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) (layout == mem_col_major ? p[c * ldm + r] : p[r * ldm + c]) = f.x[r * N + c];
}

template <int M, int N, int K, class T, class LA, class LB>
void mma_sync(fragment<accumulator, M, N, K, float>& d, const fragment<matrix_a, M, N, K, T, LA>& a,
              const fragment<matrix_b, M, N, K, T, LB>& b, const fragment<accumulator, M, N, K, float>& c) {
  if (current_lane != 0) return;
  float result[M * N];
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float acc = c.x[m * N + n];
      for (int k = 0; k < K; ++k) acc += element_value(a.x[m * K + k]) * element_value(b.x[k * N + n]);
      result[m * N + n] = acc;
    }
  for (int i = 0; i < M * N; ++i) d.x[i] = result[i];
}

}  // namespace wmma
}  // namespace hcp::emu
