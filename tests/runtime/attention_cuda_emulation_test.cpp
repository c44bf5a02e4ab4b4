// The CUDA flash attention block functions, run on the host block emulator, against the CPU kernels on the same
// bf16 / fp16 inputs (flash_cases.hpp). This checks the kernels' indexing, masking, online softmax and gradient
// algebra on any machine, and the accumulate mode the ring uses (on the CPU kernel too); attention_cuda_test runs
// the compiled kernels on a GPU when there is one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../runtime/src/attention/cuda/layout_requirements.hpp"
#include "emulated_attention.hpp"
#include "flash_cases.hpp"
#include "hcp/attention_cuda.hpp"

namespace hcp {
namespace {

using testing::FlashCase;

class CudaKernelEmulation : public ::testing::TestWithParam<FlashCase> {};

TEST_P(CudaKernelEmulation, MatchesTheCpuKernels) {
  const FlashCase& c = GetParam();
  testing::Buffers gpu = testing::make_buffers(c), cpu = testing::make_buffers(c);
  const AttnParams pg = testing::make_params(c, gpu), pc = testing::make_params(c, cpu);
  ASSERT_TRUE(check_attention_params(pg, true).ok());
  testing::run_cpu_kernels(pc);
  ASSERT_TRUE(testing::emulated_forward(pg));
  ASSERT_TRUE(testing::emulated_backward(pg));
  testing::expect_close_to_cpu(c, gpu, cpu);
}

INSTANTIATE_TEST_SUITE_P(Instances, CudaKernelEmulation, ::testing::ValuesIn(testing::flash_cases()),
                         testing::flash_case_name);

// AttnParams::accumulate: the keys in two calls, the second merging into the first's out/lse, equal one call over
// all keys - on the CPU kernel (fp32 arithmetic: 1e-5) and on the emulated CUDA kernel. The split lands inside a
// key tile, and with the causal offsets of the cases some rows see keys in only one part, or in none.
class KernelAccumulate : public ::testing::TestWithParam<FlashCase> {};

TEST_P(KernelAccumulate, TwoCallsEqualOne) {
  const FlashCase& c = GetParam();
  testing::Buffers whole = testing::make_buffers(c), cpu = testing::make_buffers(c), gpu = testing::make_buffers(c);
  ASSERT_TRUE(attention_forward_cpu(testing::make_params(c, whole)).ok());
  const int64_t split = c.sk * 3 / 5;
  for (bool emulated : {false, true}) {
    testing::Buffers& b = emulated ? gpu : cpu;
    const AttnParams p = testing::make_params(c, b);
    AttnParams first = testing::key_part(p, 0, split), second = testing::key_part(p, split, c.sk - split);
    second.accumulate = true;
    if (emulated) {
      ASSERT_TRUE(testing::emulated_forward(first));
      ASSERT_TRUE(testing::emulated_forward(second));
    } else {
      ASSERT_TRUE(attention_forward_cpu(first).ok());
      ASSERT_TRUE(attention_forward_cpu(second).ok());
    }
  }
  EXPECT_LT(testing::rel_error(cpu.out, whole.out), 1e-5) << "cpu out";
  EXPECT_LT(testing::rel_error(cpu.lse, whole.lse), 1e-6) << "cpu lse";
  EXPECT_LT(testing::rel_error(gpu.out, whole.out), c.dtype == DType::bf16 ? 2e-2 : 4e-3) << "emulated out";
  EXPECT_LT(testing::rel_error(gpu.lse, whole.lse), 1e-5) << "emulated lse";
  EXPECT_EQ(testing::rel_error(cpu.max_logit, whole.max_logit), 0) << "cpu max logit: the larger of the two calls'";
  EXPECT_LT(testing::rel_error(gpu.max_logit, whole.max_logit), 1e-5) << "emulated max logit";
}

INSTANTIATE_TEST_SUITE_P(Instances, KernelAccumulate, ::testing::ValuesIn(testing::flash_cases()),
                         testing::flash_case_name);

TEST(CudaKernelEmulation, InstancesCoverBf16AndF16AtHeadDims64To256AndServeTheMultiplesOf8Below) {
  auto has = [](DType dtype, int64_t head_dim) {
    return kern::dispatch_instance<kern::ElemBf16, kern::ElemF16>(dtype, head_dim, false,
                                                                 []<class E, int D, bool C>() {});
  };
  for (int64_t d : {64, 128, 256}) EXPECT_TRUE(has(DType::bf16, d) && has(DType::f16, d)) << d;
  // The public list (hcp/attention_cuda.hpp, which the engines check) and the dispatcher agree: every head dim it
  // takes has an instantiation that holds it, the smallest one.
  for (int64_t d = 1; d <= 512; ++d) {
    const int64_t kernel = cuda_kernel_head_dim(d);
    EXPECT_EQ(kernel != 0 && has(DType::f16, kernel), cuda_head_dim_supported(d)) << d;
    EXPECT_EQ(cuda_head_dim_supported(d), d % 8 == 0 && d <= 256) << d;
    if (kernel != 0) {
      EXPECT_TRUE(kernel >= d && (kernel == 64 || kernel / 2 < d)) << d;
    }
  }
  EXPECT_FALSE(has(DType::f32, 64));
  EXPECT_FALSE(has(DType::bf16, 96));
  EXPECT_FALSE(has(DType::f16, 512));
}

// The kernels read q, k, v (and dout) rows with 16-byte cp.async: every test layout qualifies, and a base address
// or a stride off by one element is refused, naming the tensor (attention_*_cuda return it as invalid_argument).
TEST(CudaKernelLayout, InputRowsMustBeSixteenByteAligned) {
  for (const FlashCase& c : testing::flash_cases()) {
    testing::Buffers b = testing::make_buffers(c);
    EXPECT_EQ(kern::layout_problem(testing::make_params(c, b), true), "") << testing::describe(c);
  }
  const FlashCase c = testing::flash_cases()[0];
  testing::Buffers b = testing::make_buffers(c);
  const AttnParams good = testing::make_params(c, b);
  AttnParams p = good;
  p.q.data = static_cast<char*>(p.q.data) + 2;
  EXPECT_NE(kern::layout_problem(p, false).find("q must start at a 16-byte aligned address"), std::string::npos);
  p = good;
  p.v.stride_s += 1;
  EXPECT_NE(kern::layout_problem(p, false).find("v must"), std::string::npos);
  p = good;
  p.k.stride_h = 4;
  EXPECT_NE(kern::layout_problem(p, true).find("k must"), std::string::npos);
  p = good;
  p.dout.stride_s = 3;  // read by the backward kernel only
  EXPECT_EQ(kern::layout_problem(p, false), "");
  EXPECT_NE(kern::layout_problem(p, true).find("dout must"), std::string::npos);
  p = good;
  p.out.data = static_cast<char*>(p.out.data) + 4;  // fp32, written and read one element at a time
  EXPECT_EQ(kern::layout_problem(p, true), "");
}


// Labelled masks (packed documents with padding, CP chunks of one rank against another's, sliding windows) on the
// emulated CUDA kernels against the CPU kernels with the same labels, at every head dim (the 256 backward is the
// wide kernel), forward and backward.
struct LabelledCudaCase {
  DType dtype;
  int64_t head_dim;
  bool causal;
  int rows;  // 0: one plain sequence (window only), 1: packed documents, 2: CP chunks of packed documents
  int64_t window_left, window_right;
};

std::string labelled_name(const ::testing::TestParamInfo<LabelledCudaCase>& info) {
  const auto& c = info.param;
  static const char* const rows[] = {"plain", "packed", "cpchunks"};
  return testing::name_of(dtype_name(c.dtype), "_d", c.head_dim, c.causal ? "_causal_" : "_full_", rows[c.rows],
                          "_w", c.window_left < 0 ? "inf" : std::to_string(c.window_left), "x",
                          c.window_right < 0 ? "inf" : std::to_string(c.window_right));
}

class CudaLabelledEmulation : public ::testing::TestWithParam<LabelledCudaCase> {};

TEST_P(CudaLabelledEmulation, MatchesTheCpuKernels) {
  const LabelledCudaCase& lc = GetParam();
  std::vector<int32_t> q_seg, q_pos, k_seg, k_pos;
  if (lc.rows == 0) {
    for (int32_t i = 0; i < 150; ++i) q_seg.push_back(0), q_pos.push_back(i);
  } else {
    // Documents of 1..90 tokens, each padded to a multiple of 6 (2 x cp for cp 3); padding has segment -1.
    std::vector<int32_t> seg, pos;
    std::vector<size_t> starts;
    const std::vector<float> lens = testing::random_floats(6, 31, 1, 90);
    for (size_t d = 0; d < lens.size(); ++d) {
      const int32_t n = static_cast<int32_t>(lens[d]), padded = (n + 5) / 6 * 6;
      starts.push_back(seg.size());
      for (int32_t i = 0; i < padded; ++i) seg.push_back(i < n ? static_cast<int32_t>(d) : -1), pos.push_back(i);
    }
    starts.push_back(seg.size());
    if (lc.rows == 1) {
      q_seg = seg, q_pos = pos;
    } else {
      auto take = [&](int rank, std::vector<int32_t>* s, std::vector<int32_t>* p) {
        for (size_t d = 0; d + 1 < starts.size(); ++d) {
          const size_t chunk = (starts[d + 1] - starts[d]) / 6;
          for (size_t which : {size_t(rank), size_t(5 - rank)})
            for (size_t i = starts[d] + which * chunk; i < starts[d] + (which + 1) * chunk; ++i)
              s->push_back(seg[i]), p->push_back(pos[i]);
        }
      };
      take(1, &q_seg, &q_pos);
      take(2, &k_seg, &k_pos);
    }
  }
  if (k_seg.empty()) k_seg = q_seg, k_pos = q_pos;
  const int64_t sq = static_cast<int64_t>(q_seg.size()), sk = static_cast<int64_t>(k_seg.size());
  const FlashCase c{lc.dtype, lc.head_dim, lc.causal, 1, sq, sk, 4, 2, 0, false};
  testing::Buffers gpu = testing::make_buffers(c), cpu = testing::make_buffers(c);
  AttnParams pg = testing::make_params(c, gpu), pc = testing::make_params(c, cpu);
  for (AttnParams* p : {&pg, &pc}) {
    if (lc.rows != 0) p->q_labels = {q_seg.data(), q_pos.data()}, p->k_labels = {k_seg.data(), k_pos.data()};
    p->window_left = lc.window_left, p->window_right = lc.window_right;
  }
  ASSERT_TRUE(check_attention_params(pg, true).ok());
  testing::run_cpu_kernels(pc);
  ASSERT_TRUE(testing::emulated_forward(pg));
  ASSERT_TRUE(testing::emulated_backward(pg));
  testing::expect_close_to_cpu(c, gpu, cpu);
}

INSTANTIATE_TEST_SUITE_P(
    Labels, CudaLabelledEmulation,
    ::testing::Values(LabelledCudaCase{DType::bf16, 64, true, 1, -1, -1},
                      LabelledCudaCase{DType::f16, 128, false, 1, 30, 7},
                      LabelledCudaCase{DType::bf16, 256, true, 1, 25, 0},
                      LabelledCudaCase{DType::bf16, 64, true, 2, -1, -1},
                      LabelledCudaCase{DType::f16, 256, false, 2, -1, -1},
                      LabelledCudaCase{DType::bf16, 128, true, 0, 40, 0},
                      LabelledCudaCase{DType::f16, 64, false, 0, 3, 20}),
    labelled_name);
}  // namespace
}  // namespace hcp
