// The compiled CUDA kernels on a GPU against the CPU kernels (the cases of flash_cases.hpp), and the entry points'
// checks. Without a CUDA build the entry points must say so; without a device the GPU tests skip with the reason.
#include <gtest/gtest.h>

#include <vector>

#include "flash_cases.hpp"
#include "hcp/attention_cuda.hpp"

#if HCP_HAS_CUDA
#include <cuda_runtime.h>
#endif

namespace hcp {
namespace {

using testing::FlashCase;

TEST(AttentionCuda, SaysWhyItCannotRun) {
  const Status device = cuda_device_status();
  if (!cuda_built()) {
    EXPECT_EQ(device.code(), Errc::unsupported);
    EXPECT_EQ(attention_forward_cuda(AttnParams{}, nullptr).code(), Errc::unsupported);
    EXPECT_EQ(attention_backward_cuda(AttnParams{}, nullptr).code(), Errc::unsupported);
    EXPECT_EQ(attention_delta_cuda(AttnParams{}, nullptr).code(), Errc::unsupported);
  } else if (!device.ok()) {
    EXPECT_EQ(device.code(), Errc::unsupported);
    EXPECT_FALSE(device.message().empty());
  }
}

#if HCP_HAS_CUDA

// One device allocation holding a copy of a host vector.
template <class T>
class DeviceCopy {
 public:
  explicit DeviceCopy(const std::vector<T>& host) : bytes_(host.size() * sizeof(T)) {
    EXPECT_EQ(cudaMalloc(&ptr_, bytes_), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr_, host.data(), bytes_, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceCopy() { cudaFree(ptr_); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  void* get() const { return ptr_; }
  void copy_to(std::vector<T>& host) const {
    EXPECT_EQ(cudaMemcpy(host.data(), ptr_, bytes_, cudaMemcpyDeviceToHost), cudaSuccess);
  }

 private:
  size_t bytes_;
  void* ptr_ = nullptr;
};

// The host buffers mirrored on the device, with params pointing at the device copies.
struct DeviceBuffers {
  DeviceCopy<uint16_t> q, k, v, dout;
  DeviceCopy<float> out, lse, delta, dq, dk, dv;
  explicit DeviceBuffers(const testing::Buffers& b)
      : q(b.q), k(b.k), v(b.v), dout(b.dout), out(b.out), lse(b.lse), delta(b.delta), dq(b.dq), dk(b.dk), dv(b.dv) {}
  AttnParams params(AttnParams p) const {
    p.q.data = q.get(), p.k.data = k.get(), p.v.data = v.get(), p.dout.data = dout.get(), p.out.data = out.get();
    p.dq.data = dq.get(), p.dk.data = dk.get(), p.dv.data = dv.get();
    p.lse.data = static_cast<float*>(lse.get()), p.delta.data = static_cast<float*>(delta.get());
    return p;
  }
  void copy_results_to(testing::Buffers& b) const {
    out.copy_to(b.out), lse.copy_to(b.lse), delta.copy_to(b.delta), dq.copy_to(b.dq), dk.copy_to(b.dk),
        dv.copy_to(b.dv);
  }
};

// Skips the calling test, with the reason, when no CUDA device can be used.
#define HCP_REQUIRE_CUDA_DEVICE()                                                 \
  do {                                                                            \
    const Status hcp_device_ = cuda_device_status();                              \
    if (!hcp_device_.ok()) GTEST_SKIP() << "no CUDA device: " << hcp_device_.message(); \
  } while (0)

class AttentionCudaKernels : public ::testing::TestWithParam<FlashCase> {};

TEST_P(AttentionCudaKernels, MatchTheCpuKernels) {
  HCP_REQUIRE_CUDA_DEVICE();
  const FlashCase& c = GetParam();
  testing::Buffers gpu = testing::make_buffers(c), cpu = testing::make_buffers(c);
  testing::run_cpu_kernels(testing::make_params(c, cpu));
  const DeviceBuffers dev(gpu);
  const AttnParams p = dev.params(testing::make_params(c, gpu));
  const Status fwd = attention_forward_cuda(p, nullptr);
  ASSERT_TRUE(fwd.ok()) << fwd.message();
  const Status delta = attention_delta_cuda(p, nullptr);
  ASSERT_TRUE(delta.ok()) << delta.message();
  const Status bwd = attention_backward_cuda(p, nullptr);
  ASSERT_TRUE(bwd.ok()) << bwd.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  dev.copy_results_to(gpu);
  testing::expect_close_to_cpu(c, gpu, cpu);
}

INSTANTIATE_TEST_SUITE_P(Instances, AttentionCudaKernels, ::testing::ValuesIn(testing::flash_cases()),
                         testing::flash_case_name);

TEST(AttentionCudaChecks, UnsupportedInputsAndHostPointersAreReported) {
  HCP_REQUIRE_CUDA_DEVICE();
  const FlashCase c{DType::bf16, 64, false, 1, 64, 64, 2, 2, 0, false};
  testing::Buffers host = testing::make_buffers(c);
  const DeviceBuffers dev(host);
  const AttnParams on_device = dev.params(testing::make_params(c, host));
  EXPECT_EQ(attention_forward_cuda(testing::make_params(c, host), nullptr).code(), Errc::invalid_argument);
  AttnParams p = on_device;
  p.dtype = DType::f32;
  EXPECT_EQ(attention_forward_cuda(p, nullptr).code(), Errc::unsupported);
  p = on_device;
  p.head_dim = 32;  // a real size with no kernel
  EXPECT_EQ(attention_forward_cuda(p, nullptr).code(), Errc::unsupported);
  p = on_device;
  p.heads = 3;  // not a multiple of kv_heads
  EXPECT_EQ(attention_backward_cuda(p, nullptr).code(), Errc::shape);
  EXPECT_TRUE(attention_forward_cuda(on_device, nullptr).ok());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

#endif  // HCP_HAS_CUDA

}  // namespace
}  // namespace hcp
