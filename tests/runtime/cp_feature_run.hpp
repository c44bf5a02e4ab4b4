// One CP attention run with the features of Transformer Engine's CP tests (attention sinks, MLA head dims, the
// maximum logit), its naive double-precision reference and the simulated CP run, for the tests of each feature:
// plain (batch 2) or packed documents with padding and an empty one, on the CPU kernels in fp32 or on the CUDA
// engine's kernels (block emulator) in bf16.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../../runtime/src/attention/cpu/bf16.hpp"
#include "attention_reference.hpp"
#include "dtype_values.hpp"
#include "emulated_engine.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/packed_sequences.hpp"
#include "test_names.hpp"

namespace hcp::testing {

struct FeatureCase {
  CpComm comm;
  int cp;
  std::vector<int64_t> sizes;
  SoftmaxType softmax;
  bool packed;  // documents of odd lengths with padding and an empty one; else batch 2, 2 cp x 21 tokens
  bool emulated_gpu = false;
  int64_t window_left = -1;
  // Head dims of q and k, and of v (MLA); 0: 24 on the CPU kernels, 64 on the emulated GPU, and v's equal to it.
  int64_t head_dim = 0, head_dim_v = 0;
  // Attention bias in Transformer Engine's shapes: "" (none), "bhss", "b1ss", "1hss", "11ss" or "111s".
  std::string bias = "";
  int threads = 1;  // CPU kernel threads per rank
};

inline std::string feature_case_name(const ::testing::TestParamInfo<FeatureCase>& info) {
  const FeatureCase& c = info.param;
  std::string sizes;
  for (int64_t s : c.sizes) {
    sizes += '_';
    sizes += std::to_string(s);
  }
  const std::string dims = c.head_dim_v > 0 ? "_d" + std::to_string(c.head_dim) + "_dv" + std::to_string(c.head_dim_v)
                                            : std::string();
  const char* softmax = c.softmax == SoftmaxType::learnable    ? "_learnable"
                        : c.softmax == SoftmaxType::off_by_one ? "_off_by_one"
                                                               : "";
  return name_of(c.comm == CpComm::a2a_p2p ? "a2a_p2p" : std::string(cp_comm_name(c.comm)), "_cp", c.cp,
                          sizes, softmax, dims, c.bias.empty() ? "" : "_bias_" + c.bias, c.packed ? "_thd" : "_bshd",
                          c.window_left >= 0 ? "_window" : "", c.threads > 1 ? "_threads" : "",
                          c.emulated_gpu ? "_emulated_gpu" : "");
}

// The CP layouts the feature tests run: every scheme, a2a also wider than the KV heads (8 ranks, 4 KV heads:
// replicated), a2a+p2p on 4 and 8 ranks, all_gather on an odd count.
struct FeatureScheme {
  CpComm comm;
  int cp;
  std::vector<int64_t> sizes;
};
inline std::vector<FeatureScheme> feature_schemes() {
  return {{CpComm::p2p, 4, {}},         {CpComm::a2a, 4, {}},        {CpComm::a2a, 8, {}},
          {CpComm::a2a_p2p, 4, {2, 2}}, {CpComm::a2a_p2p, 8, {2, 4}}, {CpComm::all_gather, 3, {}}};
}

inline constexpr int64_t kHeads = 8, kKvHeads = 4;

struct FeatureRun {
  SimulateOptions o;
  std::vector<float> q, k, v, dout, sink;  // q, k, v, dout rounded to the dtype when it is 16-bit
  std::vector<float> bias;                 // [bias_batch, bias_heads, bias_rows, S]
  std::vector<uint16_t> bits[4];
};

inline FeatureRun make_run(const FeatureCase& c) {
  FeatureRun r;
  SimulateOptions& o = r.o;
  o.comm = c.comm, o.cp = c.cp, o.hcp_sizes = c.sizes, o.causal = true;
  o.heads = kHeads, o.kv_heads = kKvHeads, o.head_dim = c.head_dim > 0 ? c.head_dim : c.emulated_gpu ? 64 : 24;
  o.head_dim_v = c.head_dim_v;
  o.kernel_threads = c.threads;
  const int64_t dv = c.head_dim_v > 0 ? c.head_dim_v : o.head_dim;
  o.dtype = c.emulated_gpu ? DType::bf16 : DType::f32;
  o.window_left = c.window_left;
  if (c.packed) {
    o.packed.cu_seqlens = {0, 13, 13, 50, 57, 80};
    o.packed.cu_seqlens_padded = pad_for_cp(o.packed.cu_seqlens, c.cp);
    o.seq = o.packed.total_padded();
  } else {
    o.batch = 2, o.seq = 2 * c.cp * 21;
  }
  o.softmax = c.softmax;
  // Sinks around the logits' own scale, one head far above it (most mass on the sink) and one far below.
  r.sink = random_floats(kHeads, 5, -1.5f, 2.5f);
  r.sink[1] = 6.0f, r.sink[2] = -9.0f;
  if (c.softmax == SoftmaxType::learnable) o.sink = r.sink.data();
  const size_t tokens = static_cast<size_t>(o.batch * o.seq);
  const size_t nq = tokens * kHeads * static_cast<size_t>(o.head_dim), nk = tokens * kKvHeads * static_cast<size_t>(o.head_dim);
  const size_t no = tokens * kHeads * static_cast<size_t>(dv), nv = tokens * kKvHeads * static_cast<size_t>(dv);
  r.q = random_floats(nq, 11, -2, 2), r.k = random_floats(nk, 12, -2, 2);
  r.v = random_floats(nv, 13), r.dout = random_floats(no, 14);
  if (o.dtype == DType::bf16) {
    std::vector<float>* t[4] = {&r.q, &r.k, &r.v, &r.dout};
    for (int i = 0; i < 4; ++i)
      for (float& x : *t[i]) {
        r.bits[i].push_back(cpu::float_to_bf16(x));
        x = cpu::bf16_to_float(r.bits[i].back());
      }
  }
  if (!c.bias.empty()) {  // [B|1, H|1, S|1, S]
    o.bias_batch = c.bias[0] == 'b' ? o.batch : 1;
    o.bias_heads = c.bias[1] == 'h' ? o.heads : 1;
    o.bias_rows = c.bias[2] == 's' ? o.seq : 1;
    r.bias = random_floats(static_cast<size_t>(o.bias_batch * o.bias_heads * o.bias_rows * o.seq), 15, -3, 3);
    o.bias = r.bias.data();
  }
  if (c.emulated_gpu) o.make_engine = [] { return std::make_unique<EmulatedGpuEngine>(0); };
  return r;
}

inline RefResult reference(const FeatureRun& r) {
  const SimulateOptions& o = r.o;
  RefProblem p;
  p.batch = o.batch, p.sq = p.sk = o.seq, p.heads = o.heads, p.kv_heads = o.kv_heads, p.head_dim = o.head_dim;
  p.head_dim_v = o.head_dim_v;
  p.causal = true, p.scale = 1.0 / std::sqrt(static_cast<double>(o.head_dim));
  p.window_left = o.window_left;
  p.q.assign(r.q.begin(), r.q.end()), p.k.assign(r.k.begin(), r.k.end());
  p.v.assign(r.v.begin(), r.v.end()), p.dout.assign(r.dout.begin(), r.dout.end());
  if (!o.packed.empty()) {
    packed_row_labels(o.packed, o.seq, &p.q_seg, &p.q_pos);
    p.k_seg = p.q_seg, p.k_pos = p.q_pos;
  }
  if (o.softmax == SoftmaxType::off_by_one) p.sink.assign(o.heads, 0.0);
  if (o.softmax == SoftmaxType::learnable) p.sink.assign(r.sink.begin(), r.sink.end());
  if (o.bias) {
    p.bias.resize(static_cast<size_t>(o.batch * o.heads * o.seq * o.seq));
    for (int64_t b = 0; b < o.batch; ++b)
      for (int64_t h = 0; h < o.heads; ++h)
        for (int64_t i = 0; i < o.seq; ++i)
          for (int64_t j = 0; j < o.seq; ++j)
            p.bias[static_cast<size_t>(((b * o.heads + h) * o.seq + i) * o.seq + j)] =
                r.bias[static_cast<size_t>(((std::min(b, o.bias_batch - 1) * o.bias_heads + std::min(h, o.bias_heads - 1)) *
                                                o.bias_rows + std::min(i, o.bias_rows - 1)) * o.seq + j)];
  }
  return reference_attention(p, true);
}

struct Outputs {
  std::vector<float> out, lse, dq, dk, dv, d_sink, max_logit, d_bias;
};

// The CP run of `r` (forward, and backward when `backward`), outputs as floats.
inline Outputs simulate(const FeatureRun& r, bool backward) {
  const SimulateOptions& o = r.o;
  const size_t e = dtype_size(o.dtype);
  std::vector<unsigned char> out(r.dout.size() * e), dq(r.q.size() * e), dk(r.k.size() * e), dv(r.v.size() * e);
  Outputs got;
  got.lse.resize(static_cast<size_t>(o.batch * o.heads * o.seq));
  got.d_sink.assign(static_cast<size_t>(o.heads), NAN);
  got.max_logit.assign(static_cast<size_t>(o.heads), NAN);
  SimulateTensors t;
  auto data = [&](int i, const std::vector<float>& f) -> const void* {
    return o.dtype == DType::f32 ? static_cast<const void*>(f.data()) : r.bits[i].data();
  };
  t.q = data(0, r.q), t.k = data(1, r.k), t.v = data(2, r.v), t.out = out.data(), t.lse = got.lse.data();
  t.max_logit = got.max_logit.data();
  if (backward) {
    t.dout = data(3, r.dout), t.dq = dq.data(), t.dk = dk.data(), t.dv = dv.data();
    t.d_sink = got.d_sink.data();
    got.d_bias.assign(r.bias.size(), NAN);
    if (o.bias) t.d_bias = got.d_bias.data();
  }
  const Status s = attention_simulate(o, t);
  EXPECT_TRUE(s.ok()) << s.message();
  auto floats = [&](const std::vector<unsigned char>& raw) { return as_floats(raw, o.dtype); };
  got.out = floats(out), got.dq = floats(dq), got.dk = floats(dk), got.dv = floats(dv);
  return got;
}


// The CP run of case c against the naive attention: outputs, lse and gradients within the dtype's tolerance, the
// maximum logit of every head, the learnable sink's gradient (and none written without one).
inline void expect_equals_reference(const FeatureCase& c) {
  const FeatureRun r = make_run(c);
  const RefResult want = reference(r);
  const Outputs got = simulate(r, true);
  // bf16: the output rounding alone is 2^-9 relative; the GPU kernels also round P and dS to bf16.
  const double tol = c.emulated_gpu ? 3e-2 : 1e-5;
  EXPECT_LE(max_rel_error(got.out, want.out), tol);
  EXPECT_LE(max_rel_error(got.lse, want.lse), c.emulated_gpu ? 1e-2 : 1e-6);
  EXPECT_LE(max_rel_error(got.dq, want.dq), tol);
  EXPECT_LE(max_rel_error(got.dk, want.dk), tol);
  EXPECT_LE(max_rel_error(got.dv, want.dv), tol);
  // The largest logit of each head over every row: scores from the same rounded inputs, fp32 on both kernels.
  std::vector<double> head_max(static_cast<size_t>(kHeads), -INFINITY);
  for (int64_t b = 0; b < r.o.batch; ++b)
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t i = 0; i < r.o.seq; ++i)
        head_max[static_cast<size_t>(h)] = std::max(head_max[static_cast<size_t>(h)],
                                                    want.max_logit[static_cast<size_t>((b * kHeads + h) * r.o.seq + i)]);
  EXPECT_LE(max_rel_error(got.max_logit, head_max), 1e-6);
  if (!c.bias.empty()) {  // the pairs' dS summed over the dimensions the bias broadcasts
    const SimulateOptions& o = r.o;
    std::vector<double> d_bias(r.bias.size(), 0.0);
    for (int64_t b = 0; b < o.batch; ++b)
      for (int64_t h = 0; h < o.heads; ++h)
        for (int64_t i = 0; i < o.seq; ++i)
          for (int64_t j = 0; j < o.seq; ++j)
            d_bias[static_cast<size_t>(((std::min(b, o.bias_batch - 1) * o.bias_heads + std::min(h, o.bias_heads - 1)) *
                                            o.bias_rows + std::min(i, o.bias_rows - 1)) * o.seq + j)] +=
                want.dbias[static_cast<size_t>(((b * o.heads + h) * o.seq + i) * o.seq + j)];
    EXPECT_LE(max_rel_error(got.d_bias, d_bias), tol) << "d_bias";
  }
  if (c.softmax == SoftmaxType::learnable) {
    EXPECT_LE(max_rel_error(got.d_sink, want.d_sink), c.emulated_gpu ? 3e-2 : 1e-5);
  } else {
    for (float x : got.d_sink) EXPECT_TRUE(std::isnan(x)) << "no gradient is written without a learnable sink";
  }
}

}  // namespace hcp::testing
