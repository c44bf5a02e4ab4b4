// MLA head dims (a V head dim other than the QK one: DeepSeek's 192/128, Transformer Engine's CP test configs
// cp_3_* with 192/128 and 128/64) under every CP scheme, plain and packed, forward and backward, against a naive
// double-precision attention: V's head dim is carried through the ring's [K | V] messages, the a2a's exchanges (with
// KV heads replicated for an a2a wider than them), all_gather's gathers and reduce-scatter, and the kernels' tiles.
// On the CPU kernels in fp32 with V wider and narrower than Q and K (sizes off the vector widths, and ones the
// kernels read in place), also with sinks and a window; on the CUDA engine's kernels (block emulator) in bf16.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cp_feature_run.hpp"
#include "hcp/cp_attention.hpp"

namespace hcp {
namespace {

using testing::FeatureCase;

class CpMla : public ::testing::TestWithParam<FeatureCase> {};

TEST_P(CpMla, EqualsNaiveAttention) { testing::expect_equals_reference(GetParam()); }

std::vector<FeatureCase> mla_cases() {
  const std::vector<testing::FeatureScheme> schemes = testing::feature_schemes();
  std::vector<FeatureCase> cases;
  for (const testing::FeatureScheme& s : schemes)
    for (bool packed : {false, true}) {
      for (auto [d, dv] : {std::pair<int64_t, int64_t>{24, 40}, {40, 16}, {64, 32}}) {
        FeatureCase c{s.comm, s.cp, s.sizes, SoftmaxType::vanilla, packed};
        c.head_dim = d, c.head_dim_v = dv;
        cases.push_back(c);
      }
      // With a learnable sink (gpt-oss) and a window.
      FeatureCase sink{s.comm, s.cp, s.sizes, SoftmaxType::learnable, packed, false, 13};
      sink.head_dim = 40, sink.head_dim_v = 24;
      cases.push_back(sink);
    }
  // The CUDA kernels (block emulator) in bf16 with Transformer Engine's MLA dims: 128/64 on the 128 kernels, 192/128
  // on the 256 kernels with q's and k's padding columns zero-filled.
  for (const testing::FeatureScheme& s : schemes) {
    if (s.cp == 8) continue;  // the emulator's time; cp 4 covers the a2a+p2p and a2a paths
    for (auto [d, dv] : {std::pair<int64_t, int64_t>{128, 64}, {192, 128}}) {
      FeatureCase c{s.comm, s.cp, s.sizes, SoftmaxType::vanilla, s.comm != CpComm::a2a, true};
      c.head_dim = d, c.head_dim_v = dv;
      cases.push_back(c);
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Schemes, CpMla, ::testing::ValuesIn(mla_cases()), testing::feature_case_name);

// A V head dim the CPU kernels do not take is refused, naming it.
TEST(CpMla, AnUnsupportedValueHeadDimIsRefused) {
  FeatureCase c{CpComm::p2p, 2, {}, SoftmaxType::vanilla, false};
  c.head_dim = 24, c.head_dim_v = 600;
  testing::FeatureRun r = testing::make_run(c);
  std::vector<float> out(r.dout.size()), lse(static_cast<size_t>(r.o.batch * r.o.heads * r.o.seq));
  SimulateTensors t;
  t.q = r.q.data(), t.k = r.k.data(), t.v = r.v.data(), t.out = out.data(), t.lse = lse.data();
  const Status s = attention_simulate(r.o, t);
  EXPECT_EQ(s.code(), Errc::shape);
  EXPECT_NE(s.message().find("head_dim_v must be 0 (head_dim) or in [1, 512], got 600"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace hcp
