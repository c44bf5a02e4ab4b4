// The CUDA flash attention block functions, run on the host block emulator, against the CPU kernels on the same
// bf16 / fp16 inputs (flash_cases.hpp). This checks the kernels' indexing, masking, online softmax and gradient
// algebra on any machine; attention_cuda_test runs the compiled kernels on a GPU when there is one.
#include <gtest/gtest.h>

#include "emulated_attention.hpp"
#include "flash_cases.hpp"

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

TEST(CudaKernelEmulation, InstancesCoverBf16AndF16AtHeadDims64And128Only) {
  auto has = [](DType dtype, int64_t head_dim) {
    return kern::dispatch_instance<kern::ElemBf16, kern::ElemF16>(dtype, head_dim, false,
                                                                 []<class E, int D, bool C>() {});
  };
  EXPECT_TRUE(has(DType::bf16, 64) && has(DType::bf16, 128) && has(DType::f16, 64) && has(DType::f16, 128));
  EXPECT_FALSE(has(DType::f32, 64));
  EXPECT_FALSE(has(DType::bf16, 96));
  EXPECT_FALSE(has(DType::f16, 256));
}

}  // namespace
}  // namespace hcp
