// Attention bias (Transformer Engine's post_scale_bias) under every CP scheme, forward and backward, in each of TE's
// shapes (bhss, b1ss, 1hss, 11ss, 111s), with windows, GQA and KV heads replicated for a wide a2a, against a naive
// double-precision attention with the bias: outputs, gradients and the bias's own gradient summed over its broadcast
// dimensions. Each rank holds its query rows of the bias against all keys, as TE's CP takes it; TE runs bias with
// p2p only. Packed sequences and the CUDA engine are refused, saying why.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cp_feature_run.hpp"
#include "hcp/cp_attention.hpp"

namespace hcp {
namespace {

using testing::FeatureCase;

class CpBias : public ::testing::TestWithParam<FeatureCase> {};

TEST_P(CpBias, EqualsNaiveAttentionWithTheBias) { testing::expect_equals_reference(GetParam()); }

std::vector<FeatureCase> bias_cases() {
  const std::vector<testing::FeatureScheme> schemes = testing::feature_schemes();
  std::vector<FeatureCase> cases;
  for (const testing::FeatureScheme& s : schemes) {
    for (const char* shape : {"bhss", "b1ss", "1hss", "11ss", "111s"}) {
      FeatureCase c{s.comm, s.cp, s.sizes, SoftmaxType::vanilla, false};
      c.bias = shape;
      cases.push_back(c);
    }
    // With a window (labelled rows in the kernels), and with sinks and MLA head dims.
    FeatureCase window{s.comm, s.cp, s.sizes, SoftmaxType::vanilla, false, false, 11};
    window.bias = "b1ss";
    cases.push_back(window);
    FeatureCase all{s.comm, s.cp, s.sizes, SoftmaxType::learnable, false};
    all.bias = "1hss", all.head_dim = 40, all.head_dim_v = 24;
    cases.push_back(all);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Schemes, CpBias, ::testing::ValuesIn(bias_cases()), testing::feature_case_name);

Status run_refused(FeatureCase c) {
  testing::FeatureRun r = testing::make_run(c);
  std::vector<float> out(r.dout.size() * 4), lse(static_cast<size_t>(r.o.batch * r.o.heads * r.o.seq));
  SimulateTensors t;
  auto data = [&](int i, const std::vector<float>& f) -> const void* {
    return r.o.dtype == DType::f32 ? static_cast<const void*>(f.data()) : r.bits[i].data();
  };
  t.q = data(0, r.q), t.k = data(1, r.k), t.v = data(2, r.v), t.out = out.data(), t.lse = lse.data();
  return attention_simulate(r.o, t);
}

TEST(CpBias, PackedSequencesAndTheCudaEngineAreRefused) {
  FeatureCase packed{CpComm::p2p, 2, {}, SoftmaxType::vanilla, true};
  packed.bias = "1hss";
  const Status p = run_refused(packed);
  EXPECT_EQ(p.code(), Errc::shape);
  EXPECT_NE(p.message().find("attention bias does not take packed sequences"), std::string::npos) << p.message();
  FeatureCase gpu{CpComm::p2p, 2, {}, SoftmaxType::vanilla, false, true};
  gpu.bias = "11ss";
  const Status g = run_refused(gpu);
  EXPECT_EQ(g.code(), Errc::shape);
  EXPECT_NE(g.message().find("attention bias runs on the CPU engine only"), std::string::npos) << g.message();
}

}  // namespace
}  // namespace hcp
