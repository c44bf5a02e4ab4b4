// Test cases and host buffers shared by the CUDA kernel tests (block emulator and GPU): shapes, random bf16/fp16
// inputs, AttnParams over them, and the error measure against the CPU kernels.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "../../runtime/src/attention/cpu/bf16.hpp"
#include "../../runtime/src/attention/cpu/half.hpp"
#include "attention_reference.hpp"
#include "hcp/attention_cpu.hpp"
#include "test_names.hpp"

namespace hcp::testing {

struct FlashCase {
  DType dtype;
  int64_t head_dim;
  bool causal;
  int64_t batch, sq, sk, heads, kv_heads;
  int64_t causal_offset;
  bool bhsd;  // tensors laid out [B, H, S, D] instead of [B, S, H, D]
};

inline std::string describe(const FlashCase& c) {
  return name_of(dtype_name(c.dtype), "_d", c.head_dim, c.causal ? "_causal" : "_full", "_b", c.batch, "_q", c.sq,
                 "_k", c.sk, "_h", c.heads, "x", c.kv_heads, "_off", c.causal_offset < 0 ? "m" : "",
                 c.causal_offset < 0 ? -c.causal_offset : c.causal_offset, c.bhsd ? "_bhsd" : "");
}
inline std::string flash_case_name(const ::testing::TestParamInfo<FlashCase>& info) { return describe(info.param); }
inline void PrintTo(const FlashCase& c, std::ostream* os) { *os << describe(c); }

// One tensor of [batch, seq, heads, head_dim] logical shape in either layout.
struct Tensor4 {
  int64_t seq, heads;
  bool bhsd;
  AttnTensor view(void* data, int64_t head_dim) const {
    return bhsd ? AttnTensor{data, heads * seq * head_dim, head_dim, seq * head_dim}
                : AttnTensor{data, seq * heads * head_dim, heads * head_dim, head_dim};
  }
};

inline uint16_t to_bits(DType dtype, float x) { return dtype == DType::bf16 ? cpu::float_to_bf16(x) : cpu::float_to_f16(x); }

struct Buffers {
  std::vector<uint16_t> q, k, v, dout;
  std::vector<float> out, lse, delta, dq, dk, dv;
  std::vector<float> max_logit;  // AttnParams::max_logit, asked of every run
};

inline AttnParams make_params(const FlashCase& c, Buffers& buf) {
  AttnParams p;
  p.dtype = c.dtype;
  p.batch = c.batch, p.sq = c.sq, p.sk = c.sk, p.heads = c.heads, p.kv_heads = c.kv_heads, p.head_dim = c.head_dim;
  p.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  p.causal = c.causal, p.causal_offset = c.causal_offset;
  const Tensor4 tq{c.sq, c.heads, c.bhsd}, tk{c.sk, c.kv_heads, c.bhsd};
  p.q = tq.view(buf.q.data(), c.head_dim);
  p.k = tk.view(buf.k.data(), c.head_dim);
  p.v = tk.view(buf.v.data(), c.head_dim);
  p.dout = tq.view(buf.dout.data(), c.head_dim);
  p.out = tq.view(buf.out.data(), c.head_dim);
  p.dq = tq.view(buf.dq.data(), c.head_dim);
  p.dk = tk.view(buf.dk.data(), c.head_dim);
  p.dv = tk.view(buf.dv.data(), c.head_dim);
  p.lse = {buf.lse.data(), c.heads * c.sq, c.sq};
  p.delta = {buf.delta.data(), c.heads * c.sq, c.sq};
  p.max_logit = {buf.max_logit.data(), c.heads * c.sq, c.sq};
  return p;
}

inline Buffers make_buffers(const FlashCase& c) {
  const size_t nq = static_cast<size_t>(c.batch * c.sq * c.heads * c.head_dim);
  const size_t nk = static_cast<size_t>(c.batch * c.sk * c.kv_heads * c.head_dim);
  const size_t rows = static_cast<size_t>(c.batch * c.heads * c.sq);
  Buffers b;
  auto fill = [&](std::vector<uint16_t>& dst, size_t n, uint32_t seed, float lo, float hi) {
    for (float x : testing::random_floats(n, seed, lo, hi)) dst.push_back(to_bits(c.dtype, x));
  };
  fill(b.q, nq, 11, -2, 2);
  fill(b.k, nk, 12, -2, 2);
  fill(b.v, nk, 13, -1, 1);
  fill(b.dout, nq, 14, -1, 1);
  b.out.assign(nq, 0.0f), b.dq.assign(nq, 0.0f), b.dk.assign(nk, 0.0f), b.dv.assign(nk, 0.0f);
  b.lse.assign(rows, 0.0f), b.delta.assign(rows, 0.0f), b.max_logit.assign(rows, NAN);
  return b;
}

// Max |a - b| over max |b|, with -inf lse entries required to match exactly; a NaN anywhere is an infinite error
// (std::max would drop it: every comparison with NaN is false).
inline double rel_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
    if (std::isinf(b[i]) || std::isinf(a[i])) {
      if (a[i] != b[i]) return INFINITY;
      continue;
    }
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

// The keys [k0, k0 + nk) of `p` as a call of their own (causal offset shifted to match), for accumulate tests.
inline AttnParams key_part(AttnParams p, int64_t k0, int64_t nk) {
  const int64_t bytes = k0 * static_cast<int64_t>(dtype_size(p.dtype));
  p.k.data = static_cast<char*>(p.k.data) + bytes * p.k.stride_s;
  p.v.data = static_cast<char*>(p.v.data) + bytes * p.v.stride_s;
  p.sk = nk;
  p.causal_offset -= k0;
  return p;
}

// Runs the CPU kernels (forward, delta, backward) on `buf`, the expected values for the CUDA kernels.
inline void run_cpu_kernels(const AttnParams& p) {
  ASSERT_TRUE(attention_forward_cpu(p).ok());
  attention_delta_cpu(p.dtype, p.batch, p.sq, p.heads, p.head_dim, p.dout, p.out, p.delta);
  ASSERT_TRUE(attention_backward_cpu(p).ok());
}

// P and dS are rounded to the 16-bit type before their products on the GPU path, as in FlashAttention.
inline void expect_close_to_cpu(const FlashCase& c, const Buffers& gpu, const Buffers& cpu) {
  const double tol = c.dtype == DType::bf16 ? 2e-2 : 4e-3;
  EXPECT_LT(rel_error(gpu.out, cpu.out), tol) << "out";
  EXPECT_LT(rel_error(gpu.lse, cpu.lse), 1e-5) << "lse";
  EXPECT_LT(rel_error(gpu.max_logit, cpu.max_logit), 1e-5) << "max logit";
  EXPECT_LT(rel_error(gpu.delta, cpu.delta), tol) << "delta";
  EXPECT_LT(rel_error(gpu.dq, cpu.dq), 2 * tol) << "dq";
  EXPECT_LT(rel_error(gpu.dk, cpu.dk), 2 * tol) << "dk";
  EXPECT_LT(rel_error(gpu.dv, cpu.dv), tol) << "dv";
}

// Every instantiation (dtype x head dim x causal) once, with tails in both directions, GQA, batch > 1, bottom-right
// and negative causal offsets (rows that see no key) and the [B, H, S, D] layout; then causal cases against the
// forward kernel's 128-row blocks and 64-key steps: an offset that is no multiple of 16 (the diagonal crosses a
// step that the block's first row sees whole), and a last step with one visible key. Head dim 256 (64-row forward
// blocks, the 32-key backward kernel) with tails, GQA, both layouts and an offset that is no multiple of 16.
inline std::vector<FlashCase> flash_cases() {
  const DType bf16 = DType::bf16, f16 = DType::f16;
  return {FlashCase{bf16, 64, false, 1, 128, 128, 2, 2, 0, false}, FlashCase{bf16, 64, true, 2, 100, 100, 4, 2, 0, false},
          FlashCase{bf16, 128, false, 1, 130, 65, 4, 1, 0, false}, FlashCase{bf16, 128, true, 1, 96, 160, 2, 2, 64, true},
          FlashCase{f16, 64, false, 2, 65, 127, 2, 1, 0, true},    FlashCase{f16, 64, true, 1, 150, 70, 2, 2, -20, false},
          FlashCase{f16, 128, false, 1, 64, 64, 2, 2, 0, false},   FlashCase{f16, 128, true, 1, 192, 192, 4, 2, 0, false},
          FlashCase{bf16, 64, true, 1, 300, 300, 1, 1, 40, false}, FlashCase{f16, 128, true, 1, 129, 129, 2, 1, 0, false},
          FlashCase{bf16, 256, false, 1, 70, 90, 2, 1, 0, false},  FlashCase{bf16, 256, true, 2, 100, 100, 2, 2, 0, true},
          FlashCase{f16, 256, false, 1, 64, 33, 4, 2, 0, true},    FlashCase{f16, 256, true, 1, 130, 97, 2, 1, -17, false}};
}

}  // namespace hcp::testing
