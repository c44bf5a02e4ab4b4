// Attention bias (Transformer Engine's post_scale_bias) under every CP scheme, forward and backward, in each of TE's
// shapes (bhss, b1ss, 1hss, 11ss, 111s), with windows, GQA and KV heads replicated for a wide a2a, against a naive
// double-precision attention with the bias: outputs, gradients and the bias's own gradient summed over its broadcast
// dimensions. Each rank holds its query rows of the bias against all keys, as TE's CP takes it; TE runs bias with
// p2p only. On the CPU kernels in fp32 and on the CUDA engine's kernels (block emulator) in bf16. Packed sequences
// are refused, saying why (as TE).
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
    // Several kernel threads a rank: a gradient per (batch row, head), summed after (one thread shares one).
    FeatureCase threads{s.comm, s.cp, s.sizes, SoftmaxType::vanilla, false};
    threads.bias = "11ss", threads.threads = 2;
    cases.push_back(threads);
    FeatureCase all{s.comm, s.cp, s.sizes, SoftmaxType::learnable, false};
    all.bias = "1hss", all.head_dim = 40, all.head_dim_v = 24;
    cases.push_back(all);
    // The CUDA kernels (block emulator) in bf16, with TE's MLA dims and a window in turn.
    if (s.cp == 8) continue;  // the emulator's time
    FeatureCase gpu{s.comm, s.cp, s.sizes, SoftmaxType::vanilla, false, true};
    gpu.bias = s.comm == CpComm::a2a ? "bhss" : "b1ss";
    cases.push_back(gpu);
    FeatureCase gpu_mla{s.comm, s.cp, s.sizes, SoftmaxType::vanilla, false, true, 21};
    gpu_mla.bias = "111s", gpu_mla.head_dim = 128, gpu_mla.head_dim_v = 64;
    cases.push_back(gpu_mla);
    if (s.comm != CpComm::p2p) continue;
    FeatureCase gpu_wide{s.comm, s.cp, s.sizes, SoftmaxType::vanilla, false, true};  // the 256 kernels' backward
    gpu_wide.bias = "1hss", gpu_wide.head_dim = 192, gpu_wide.head_dim_v = 128;
    cases.push_back(gpu_wide);
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

TEST(CpBias, PackedSequencesAreRefused) {
  FeatureCase packed{CpComm::p2p, 2, {}, SoftmaxType::vanilla, true};
  packed.bias = "1hss";
  const Status p = run_refused(packed);
  EXPECT_EQ(p.code(), Errc::shape);
  EXPECT_NE(p.message().find("attention bias does not take packed sequences"), std::string::npos) << p.message();
}

}  // namespace
}  // namespace hcp
