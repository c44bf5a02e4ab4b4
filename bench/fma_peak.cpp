#include "fma_peak.hpp"

#include <cstring>

namespace hcp::bench {
namespace {

template <int W>
struct Vec {
  typedef float V __attribute__((vector_size(4 * W)));
};

// 12 chains x W lanes x 2 flops per iteration, in named variables so that they stay in registers (an array
// would live on the stack and the probe would measure store forwarding instead).
template <int W>
[[gnu::always_inline]] inline float chains(long iterations) {
  using V = typename Vec<W>::V;
  V c0 = V{} + 1.00f, c1 = V{} + 1.01f, c2 = V{} + 1.02f, c3 = V{} + 1.03f, c4 = V{} + 1.04f, c5 = V{} + 1.05f;
  V c6 = V{} + 1.06f, c7 = V{} + 1.07f, c8 = V{} + 1.08f, c9 = V{} + 1.09f, c10 = V{} + 1.10f, c11 = V{} + 1.11f;
  const V a = V{} + 0.999999f, b = V{} + 1e-7f;
  for (long it = 0; it < iterations; ++it) {
    c0 = c0 * a + b, c1 = c1 * a + b, c2 = c2 * a + b, c3 = c3 * a + b, c4 = c4 * a + b, c5 = c5 * a + b;
    c6 = c6 * a + b, c7 = c7 * a + b, c8 = c8 * a + b, c9 = c9 * a + b, c10 = c10 * a + b, c11 = c11 * a + b;
    asm volatile("" : "+x"(c0), "+x"(c5), "+x"(c11));  // keep the loop from being folded
  }
  const V sum = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11;
  float out = 0;
  for (int i = 0; i < W; ++i) out += sum[i];
  return out;
}

#if defined(__x86_64__)
[[gnu::target("avx512f,avx2,fma")]] float chains16(long n) { return chains<16>(n); }
[[gnu::target("avx2,fma")]] float chains8(long n) { return chains<8>(n); }
#endif
float chains4(long n) { return chains<4>(n); }

template <class F>
double best_gflops(F run, int width) {
  const long iterations = 20'000'000;
  double best = 0;
  volatile float sink = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    sink = sink + run(iterations);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 12.0 * width * 2.0 * static_cast<double>(iterations) / s / 1e9);
  }
  return best;
}

}  // namespace

Peak measure_fma_peak() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512", best_gflops(chains16, 16)};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"avx2", best_gflops(chains8, 8)};
#endif
  return {"generic", best_gflops(chains4, 4)};
}

}  // namespace hcp::bench
