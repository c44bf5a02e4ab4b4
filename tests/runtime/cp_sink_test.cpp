// Attention sinks (Transformer Engine's softmax_type "off-by-one" and "learnable") under every CP scheme, plain and
// packed, forward and backward, against a naive double-precision attention with the sink in its denominator; the
// learnable sink's gradient also against a central finite difference of the CP forward itself. Every run also asks
// for the per-head maximum logit (TE's return_max_logit), checked against the naive attention's. On the CPU kernels
// in fp32 and on the CUDA engine's kernels (block emulator) in bf16.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../../runtime/src/attention/cpu/bf16.hpp"
#include "attention_reference.hpp"
#include "dtype_values.hpp"
#include "emulated_engine.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/inprocess_world.hpp"
#include "hcp/packed_sequences.hpp"
#include "test_names.hpp"

namespace hcp {
namespace {

struct SinkCase {
  CpComm comm;
  int cp;
  std::vector<int64_t> sizes;
  SoftmaxType softmax;
  bool packed;  // documents of odd lengths with padding and an empty one; else batch 2, 2 cp x 21 tokens
  bool emulated_gpu = false;
  int64_t window_left = -1;
};

std::string sink_case_name(const ::testing::TestParamInfo<SinkCase>& info) {
  const SinkCase& c = info.param;
  std::string sizes;
  for (int64_t s : c.sizes) {
    sizes += '_';
    sizes += std::to_string(s);
  }
  return testing::name_of(c.comm == CpComm::a2a_p2p ? "a2a_p2p" : std::string(cp_comm_name(c.comm)), "_cp", c.cp,
                          sizes, c.softmax == SoftmaxType::learnable ? "_learnable" : "_off_by_one",
                          c.packed ? "_thd" : "_bshd", c.window_left >= 0 ? "_window" : "",
                          c.emulated_gpu ? "_emulated_gpu" : "");
}

constexpr int64_t kHeads = 8, kKvHeads = 4;

struct SinkRun {
  SimulateOptions o;
  std::vector<float> q, k, v, dout, sink;  // q, k, v, dout rounded to the dtype when it is 16-bit
  std::vector<uint16_t> bits[4];
};

SinkRun make_run(const SinkCase& c) {
  SinkRun r;
  SimulateOptions& o = r.o;
  o.comm = c.comm, o.cp = c.cp, o.hcp_sizes = c.sizes, o.causal = true;
  o.heads = kHeads, o.kv_heads = kKvHeads, o.head_dim = c.emulated_gpu ? 64 : 24;
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
  r.sink = testing::random_floats(kHeads, 5, -1.5f, 2.5f);
  r.sink[1] = 6.0f, r.sink[2] = -9.0f;
  if (c.softmax == SoftmaxType::learnable) o.sink = r.sink.data();
  const size_t nq = static_cast<size_t>(o.batch * o.seq * kHeads * o.head_dim);
  const size_t nk = static_cast<size_t>(o.batch * o.seq * kKvHeads * o.head_dim);
  r.q = testing::random_floats(nq, 11, -2, 2), r.k = testing::random_floats(nk, 12, -2, 2);
  r.v = testing::random_floats(nk, 13), r.dout = testing::random_floats(nq, 14);
  if (o.dtype == DType::bf16) {
    std::vector<float>* t[4] = {&r.q, &r.k, &r.v, &r.dout};
    for (int i = 0; i < 4; ++i)
      for (float& x : *t[i]) {
        r.bits[i].push_back(cpu::float_to_bf16(x));
        x = cpu::bf16_to_float(r.bits[i].back());
      }
  }
  if (c.emulated_gpu) o.make_engine = [] { return std::make_unique<testing::EmulatedGpuEngine>(0); };
  return r;
}

testing::RefResult reference(const SinkRun& r) {
  const SimulateOptions& o = r.o;
  testing::RefProblem p;
  p.batch = o.batch, p.sq = p.sk = o.seq, p.heads = o.heads, p.kv_heads = o.kv_heads, p.head_dim = o.head_dim;
  p.causal = true, p.scale = 1.0 / std::sqrt(static_cast<double>(o.head_dim));
  p.window_left = o.window_left;
  p.q.assign(r.q.begin(), r.q.end()), p.k.assign(r.k.begin(), r.k.end());
  p.v.assign(r.v.begin(), r.v.end()), p.dout.assign(r.dout.begin(), r.dout.end());
  if (!o.packed.empty()) {
    packed_row_labels(o.packed, o.seq, &p.q_seg, &p.q_pos);
    p.k_seg = p.q_seg, p.k_pos = p.q_pos;
  }
  p.sink.assign(o.heads, 0.0);
  if (o.softmax == SoftmaxType::learnable) p.sink.assign(r.sink.begin(), r.sink.end());
  return testing::reference_attention(p, true);
}

struct Outputs {
  std::vector<float> out, lse, dq, dk, dv, d_sink, max_logit;
};

// The CP run of `r` (forward, and backward when `backward`), outputs as floats.
Outputs simulate(const SinkRun& r, bool backward) {
  const SimulateOptions& o = r.o;
  const size_t e = dtype_size(o.dtype), nq = r.q.size(), nk = r.k.size();
  std::vector<unsigned char> out(nq * e), dq(nq * e), dk(nk * e), dv(nk * e);
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
  }
  const Status s = attention_simulate(o, t);
  EXPECT_TRUE(s.ok()) << s.message();
  auto floats = [&](const std::vector<unsigned char>& raw) { return testing::as_floats(raw, o.dtype); };
  got.out = floats(out), got.dq = floats(dq), got.dk = floats(dk), got.dv = floats(dv);
  return got;
}

class CpSinks : public ::testing::TestWithParam<SinkCase> {};

TEST_P(CpSinks, EqualNaiveAttentionWithTheSink) {
  const SinkCase& c = GetParam();
  const SinkRun r = make_run(c);
  const testing::RefResult want = reference(r);
  const Outputs got = simulate(r, true);
  // bf16: the output rounding alone is 2^-9 relative; the GPU kernels also round P and dS to bf16.
  const double tol = c.emulated_gpu ? 3e-2 : 1e-5;
  EXPECT_LE(testing::max_rel_error(got.out, want.out), tol);
  EXPECT_LE(testing::max_rel_error(got.lse, want.lse), c.emulated_gpu ? 1e-2 : 1e-6);
  EXPECT_LE(testing::max_rel_error(got.dq, want.dq), tol);
  EXPECT_LE(testing::max_rel_error(got.dk, want.dk), tol);
  EXPECT_LE(testing::max_rel_error(got.dv, want.dv), tol);
  // The largest logit of each head over every row: scores from the same rounded inputs, fp32 on both kernels.
  std::vector<double> head_max(static_cast<size_t>(kHeads), -INFINITY);
  for (int64_t b = 0; b < r.o.batch; ++b)
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t i = 0; i < r.o.seq; ++i)
        head_max[static_cast<size_t>(h)] = std::max(head_max[static_cast<size_t>(h)],
                                                    want.max_logit[static_cast<size_t>((b * kHeads + h) * r.o.seq + i)]);
  EXPECT_LE(testing::max_rel_error(got.max_logit, head_max), 1e-6);
  if (c.softmax == SoftmaxType::learnable) {
    EXPECT_LE(testing::max_rel_error(got.d_sink, want.d_sink), c.emulated_gpu ? 3e-2 : 1e-5);
  } else {
    for (float x : got.d_sink) EXPECT_TRUE(std::isnan(x)) << "no gradient is written without a learnable sink";
  }
}

std::vector<SinkCase> sink_cases() {
  std::vector<SinkCase> cases;
  struct Scheme {
    CpComm comm;
    int cp;
    std::vector<int64_t> sizes;
  };
  const std::vector<Scheme> schemes = {{CpComm::p2p, 4, {}},
                                       {CpComm::a2a, 4, {}},
                                       {CpComm::a2a_p2p, 4, {2, 2}},
                                       {CpComm::a2a_p2p, 8, {2, 4}},
                                       {CpComm::all_gather, 3, {}}};
  for (const Scheme& s : schemes)
    for (SoftmaxType softmax : {SoftmaxType::off_by_one, SoftmaxType::learnable})
      for (bool packed : {false, true}) cases.push_back({s.comm, s.cp, s.sizes, softmax, packed});
  cases.push_back({CpComm::p2p, 4, {}, SoftmaxType::learnable, true, false, 9});
  cases.push_back({CpComm::a2a, 4, {}, SoftmaxType::learnable, false, false, 17});
  for (CpComm comm : {CpComm::p2p, CpComm::a2a, CpComm::a2a_p2p, CpComm::all_gather})
    cases.push_back({comm, 4, comm == CpComm::a2a_p2p ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{},
                     SoftmaxType::learnable, comm != CpComm::a2a, true});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Schemes, CpSinks, ::testing::ValuesIn(sink_cases()), sink_case_name);

// d loss / d sink[h] for loss = sum(out * dout), by central differences of the CP forward in fp32, against the
// backward's gradient.
TEST(CpSinks, LearnableGradientEqualsAFiniteDifference) {
  for (CpComm comm : {CpComm::p2p, CpComm::a2a_p2p}) {
    SCOPED_TRACE(std::string(cp_comm_name(comm)));
    const SinkCase c{comm, 4, comm == CpComm::a2a_p2p ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{},
                     SoftmaxType::learnable, true};
    SinkRun r = make_run(c);
    const std::vector<float> d_sink = simulate(r, true).d_sink;
    const std::vector<float> base = r.sink;
    for (int64_t h = 0; h < kHeads; ++h) {
      const float eps = 1e-2f;
      double loss[2];
      for (int side = 0; side < 2; ++side) {
        r.sink = base;
        r.sink[static_cast<size_t>(h)] += side ? eps : -eps;
        r.o.sink = r.sink.data();
        const std::vector<float> out = simulate(r, false).out;
        double sum = 0;
        for (size_t i = 0; i < out.size(); ++i) sum += static_cast<double>(out[i]) * r.dout[i];
        loss[side] = sum;
      }
      const double numeric = (loss[1] - loss[0]) / (2.0 * eps);
      EXPECT_NEAR(d_sink[static_cast<size_t>(h)], numeric, 2e-3 * std::max(1.0, std::abs(numeric)))
          << "head " << h;
    }
  }
}

TEST(CpSinks, AMissingOrNonFiniteSinkIsRefused) {
  SinkCase c{CpComm::p2p, 2, {}, SoftmaxType::learnable, false};
  SinkRun r = make_run(c);
  r.o.softmax = SoftmaxType::learnable;
  r.o.sink = nullptr;
  std::vector<float> out(r.q.size()), lse(static_cast<size_t>(r.o.batch * r.o.heads * r.o.seq));
  SimulateTensors t;
  t.q = r.q.data(), t.k = r.k.data(), t.v = r.v.data(), t.out = out.data(), t.lse = lse.data();
  const Status s = attention_simulate(r.o, t);
  EXPECT_EQ(s.code(), Errc::shape);
  EXPECT_NE(s.message().find("a learnable softmax needs its sink values"), std::string::npos) << s.message();
  r.sink[3] = NAN;
  r.o.sink = r.sink.data();
  const Status nan = attention_simulate(r.o, t);
  EXPECT_NE(nan.message().find("the sink of head 3 is not finite"), std::string::npos) << nan.message();
}

// Ranks that pass different sink values, or where one asks for the maximum logit and another does not, fail
// together with the field named (check_shape), instead of computing different softmaxes or waiting in a collective.
TEST(CpSinks, RanksThatDisagreeFailTogether) {
  for (const char* field : {"sink values", "max logit"}) {
    SCOPED_TRACE(field);
    InProcessWorld world(2, std::chrono::milliseconds(20000));
    std::vector<std::string> messages(2);
    const Status s = world.run([&](Communicator& comm) -> Status {
      ParallelConfig config;
      config.world_size = 2, config.cp = 2;
      std::unique_ptr<CpContext> ctx;
      HCP_TRY(CpContext::create(comm, config, CpComm::p2p, &ctx, LogLevel::debug));
      const int r = comm.rank();
      CpShape shape;
      shape.seq_local = 8, shape.heads = 2, shape.kv_heads = 2, shape.head_dim = 8;
      const float sinks[2][2] = {{0.5f, 1.0f}, {0.5f, r == 1 && field[0] == 's' ? 2.0f : 1.0f}};
      shape.softmax = SoftmaxType::learnable, shape.sink = sinks[1];
      float max_logit[2];
      if (field[0] == 'm' && r == 0) shape.max_logit = max_logit;
      std::vector<float> q(8 * 2 * 8, 0.25f), out(q.size()), lse(2 * 8);
      const Status got = ctx->forward(shape, q.data(), q.data(), q.data(), out.data(), lse.data());
      messages[static_cast<size_t>(r)] = got.message();
      EXPECT_EQ(got.code(), Errc::shape) << got.message();
      return got;
    });
    EXPECT_FALSE(s.ok());
    for (const std::string& m : messages) EXPECT_NE(m.find(field), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace hcp
