// The compiled CUDA kernels on a GPU against the CPU kernels (the cases of flash_cases.hpp), and the entry points'
// checks, a one-rank NCCL communicator, and the CP schemes on one GPU. Without a CUDA build the entry points must
// say so; without a device the GPU tests skip with the reason.
#include <gtest/gtest.h>

#include <vector>

#include "flash_cases.hpp"
#include "hcp/attention_cuda.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/nccl_communicator.hpp"

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
    std::unique_ptr<CpEngine> engine;
    EXPECT_EQ(make_cuda_engine(nullptr, &engine).code(), Errc::unsupported);
    unsigned char id[kNcclUniqueIdBytes];
    EXPECT_EQ(nccl_unique_id(id).code(), Errc::unsupported);
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
  p = on_device;
  p.q.data = static_cast<char*>(p.q.data) + 2;  // one element in: rows no longer 16-byte aligned
  EXPECT_EQ(attention_forward_cuda(p, nullptr).code(), Errc::invalid_argument);
  p = on_device;
  p.dout.stride_s += 1;
  EXPECT_EQ(attention_backward_cuda(p, nullptr).code(), Errc::invalid_argument);
  p = on_device;
  p.sq = int64_t{1} << 31;  // offsets still fit int64; the kernels count rows in int
  const Status long_seq = attention_forward_cuda(p, nullptr);
  EXPECT_EQ(long_seq.code(), Errc::shape);
  EXPECT_NE(long_seq.message().find("below 2^31"), std::string::npos) << long_seq.message();
  EXPECT_TRUE(attention_forward_cuda(on_device, nullptr).ok());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// A one-rank NCCL communicator (NCCL allows one rank per GPU) over device memory: every operation, and split.
TEST(NcclCommunicator, OneRankOperationsMoveDeviceMemory) {
  HCP_REQUIRE_CUDA_DEVICE();
  unsigned char id[kNcclUniqueIdBytes];
  ASSERT_TRUE(nccl_unique_id(id).ok());
  std::unique_ptr<Communicator> comm;
  const Status made = make_nccl_communicator(id, 0, 1, NcclOptions{}, &comm);
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_TRUE(comm->device_memory());
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 4.0f};
  const DeviceCopy<float> src(values);
  DeviceCopy<float> dst(std::vector<float>(values.size(), 0.0f));
  std::vector<float> back(values.size());
  auto expect_moved = [&](const Status& s, const char* op) {
    ASSERT_TRUE(s.ok()) << op << ": " << s.message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    dst.copy_to(back);
    EXPECT_EQ(back, values) << op;
    DeviceCopy<float> zero(std::vector<float>(values.size(), 0.0f));
    ASSERT_EQ(cudaMemcpy(dst.get(), zero.get(), values.size() * 4, cudaMemcpyDeviceToDevice), cudaSuccess);
  };
  expect_moved(comm->send_recv(src.get(), 16, 0, dst.get(), 16, 0), "send_recv");
  expect_moved(comm->all_to_all(src.get(), dst.get(), 16), "all_to_all");
  expect_moved(comm->all_gather(src.get(), dst.get(), 16), "all_gather");
  expect_moved(comm->reduce_scatter_sum(static_cast<const float*>(src.get()), static_cast<float*>(dst.get()), 4),
               "reduce_scatter_sum");
  EXPECT_TRUE(comm->barrier().ok());
  std::unique_ptr<Communicator> sub;
  ASSERT_TRUE(comm->split(0, 0, &sub).ok());
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->size(), 1);
  expect_moved(sub->all_gather(src.get(), dst.get(), 16), "split all_gather");
  std::unique_ptr<Communicator> none;
  ASSERT_TRUE(comm->split(-1, 0, &none).ok());
  EXPECT_EQ(none, nullptr);
  // Misuse aborts: later operations fail instead of hanging.
  EXPECT_EQ(comm->post_send_recv(src.get(), 16, 3, dst.get(), 16, 0).code(), Errc::invalid_argument);
  EXPECT_EQ(comm->barrier().code(), Errc::comm);
}

// The CP schemes on one GPU: 4 in-process ranks with CUDA engines (exchanging device to device) against
// the same simulation on the CPU engine.
TEST(CudaCpSimulation, EverySchemeMatchesTheCpuEngine) {
  HCP_REQUIRE_CUDA_DEVICE();
  const int64_t seq = 512, heads = 4, kv_heads = 2, dim = 64;
  const size_t nq = static_cast<size_t>(seq * heads * dim), nk = static_cast<size_t>(seq * kv_heads * dim);
  std::vector<uint16_t> in[4];
  const size_t sizes[4] = {nq, nk, nk, nq};
  for (int i = 0; i < 4; ++i)
    for (float x : testing::random_floats(sizes[i], 40 + i, -2, 2)) in[i].push_back(cpu::float_to_bf16(x));
  for (CpComm comm : {CpComm::p2p, CpComm::a2a, CpComm::a2a_p2p, CpComm::all_gather})
    for (bool causal : {true, false}) {
      std::vector<uint16_t> out[2], dq[2], dk[2], dv[2];
      std::vector<float> lse[2];
      for (int run = 0; run < 2; ++run) {
        SimulateOptions o;
        o.comm = comm, o.cp = 4, o.seq = seq, o.heads = heads, o.kv_heads = kv_heads, o.head_dim = dim;
        o.dtype = DType::bf16, o.causal = causal;
        if (comm == CpComm::a2a_p2p) o.hcp_sizes = {2, 2};
        if (run == 1) o.device.kind = CpDevice::Kind::cuda;
        out[run].resize(nq), dq[run].resize(nq), dk[run].resize(nk), dv[run].resize(nk);
        lse[run].resize(static_cast<size_t>(heads * seq));
        SimulateTensors t;
        t.q = in[0].data(), t.k = in[1].data(), t.v = in[2].data(), t.dout = in[3].data();
        t.out = out[run].data(), t.lse = lse[run].data(), t.dq = dq[run].data(), t.dk = dk[run].data();
        t.dv = dv[run].data();
        const Status s = attention_simulate(o, t);
        ASSERT_TRUE(s.ok()) << cp_comm_name(comm) << (run ? " cuda: " : " cpu: ") << s.message();
      }
      auto as_float = [](const std::vector<uint16_t>& bits) {
        std::vector<float> f;
        for (uint16_t b : bits) f.push_back(cpu::bf16_to_float(b));
        return f;
      };
      const std::string what = std::string(cp_comm_name(comm)) + (causal ? " causal" : " full");
      EXPECT_LT(testing::rel_error(as_float(out[1]), as_float(out[0])), 3e-2) << what << " out";
      EXPECT_LT(testing::rel_error(lse[1], lse[0]), 1e-4) << what << " lse";
      EXPECT_LT(testing::rel_error(as_float(dq[1]), as_float(dq[0])), 5e-2) << what << " dq";
      EXPECT_LT(testing::rel_error(as_float(dk[1]), as_float(dk[0])), 5e-2) << what << " dk";
      EXPECT_LT(testing::rel_error(as_float(dv[1]), as_float(dv[0])), 3e-2) << what << " dv";
    }
}

#endif  // HCP_HAS_CUDA

}  // namespace
}  // namespace hcp
