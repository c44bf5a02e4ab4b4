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

#include "cp_feature_run.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/inprocess_world.hpp"

namespace hcp {
namespace {

using testing::FeatureCase;
using testing::FeatureRun;
using testing::kHeads;
using testing::make_run;
using testing::reference;
using testing::simulate;
using SinkCase = FeatureCase;

class CpSinks : public ::testing::TestWithParam<FeatureCase> {};

TEST_P(CpSinks, EqualNaiveAttentionWithTheSink) { testing::expect_equals_reference(GetParam()); }

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

INSTANTIATE_TEST_SUITE_P(Schemes, CpSinks, ::testing::ValuesIn(sink_cases()), testing::feature_case_name);

// d loss / d sink[h] for loss = sum(out * dout), by central differences of the CP forward in fp32, against the
// backward's gradient.
TEST(CpSinks, LearnableGradientEqualsAFiniteDifference) {
  for (CpComm comm : {CpComm::p2p, CpComm::a2a_p2p}) {
    SCOPED_TRACE(std::string(cp_comm_name(comm)));
    const SinkCase c{comm, 4, comm == CpComm::a2a_p2p ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{},
                     SoftmaxType::learnable, true};
    FeatureRun r = make_run(c);
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
  FeatureRun r = make_run(c);
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
