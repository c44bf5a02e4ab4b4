// The CUDA attention entry points: argument checks, the choice of kernel instantiation, and CUDA errors as Status.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "attention/cuda/flash_backward.cuh"
#include "attention/cuda/instances.hpp"
#include "attention/cuda/layout_requirements.hpp"
#include "attention/cuda/launchers.cuh"
#include "cuda_module/cuda_impl.hpp"
#include "hcp/attention_cpu.hpp"
#include "hcp/attention_cuda.hpp"

// Inside libhcp_cuda.so: the loader (cuda_module_loader.cpp) reaches these through the module's table.
namespace hcp::cuda_impl {
namespace {

Status from_cuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return {};
  std::string message = std::string(what) + ": CUDA error " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  switch (err) {
    case cudaErrorMemoryAllocation:
      return {Errc::out_of_memory, message};
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return {Errc::unsupported, message};
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
      return {Errc::invalid_argument, message};
    default:
      return {Errc::internal, message};
  }
}

Status require_device_pointer(const void* ptr, const char* name) {
  cudaPointerAttributes attr{};
  const cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    cudaGetLastError();  // a non-sticky error: clear it so that the next call does not report it
    return from_cuda(err, name);
  }
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    return {Errc::invalid_argument, std::string("attention (CUDA): ") + name + " is not device memory"};
  return {};
}

Status check_cuda_params(const AttnParams& p, bool backward) {
  HCP_TRY(check_attention_params(p, backward));
  if (p.dtype == DType::f32)
    return {Errc::unsupported, "attention (CUDA): inputs must be bf16 or fp16 (fp32 runs on the CPU kernels)"};
  for (const int64_t d : {p.head_dim, value_dim(p)})
    if (!cuda_head_dim_supported(d))
      return {Errc::unsupported, "attention (CUDA): head dim " + std::to_string(d) + " has no kernel (" +
                                     kCudaHeadDims + " do)"};
  constexpr int64_t kMaxGridYZ = 65535;
  if (p.heads > kMaxGridYZ || p.batch > kMaxGridYZ)
    return {Errc::shape, "attention (CUDA): batch and heads must be at most 65535"};
  if (p.sq > INT32_MAX || p.sk > INT32_MAX)  // the kernels count tiles and steps in int
    return {Errc::shape, "attention (CUDA): sequence lengths must be below 2^31"};
  HCP_TRY(require_device_pointer(p.q.data, "q"));
  HCP_TRY(require_device_pointer(p.k.data, "k"));
  HCP_TRY(require_device_pointer(p.v.data, "v"));
  HCP_TRY(require_device_pointer(p.lse.data, "lse"));
  if (p.q_labels.seg) {
    HCP_TRY(require_device_pointer(p.q_labels.seg, "query labels"));
    HCP_TRY(require_device_pointer(p.q_labels.pos, "query labels"));
    HCP_TRY(require_device_pointer(p.k_labels.seg, "key labels"));
    HCP_TRY(require_device_pointer(p.k_labels.pos, "key labels"));
  }
  if (std::string problem = kern::layout_problem(p, backward); !problem.empty())
    return {Errc::invalid_argument, problem};
  if (!backward) return require_device_pointer(p.out.data, "out");
  HCP_TRY(require_device_pointer(p.dout.data, "dout"));
  HCP_TRY(require_device_pointer(p.delta.data, "delta"));
  HCP_TRY(require_device_pointer(p.dq.data, "dq"));
  HCP_TRY(require_device_pointer(p.dk.data, "dk"));
  return require_device_pointer(p.dv.data, "dv");
}

template <class E>
__global__ void __launch_bounds__(kern::kThreads) attention_delta_kernel(const AttnParams p) {
  kern::attention_delta_block<E>(kern::BlockCtx{}, p, blockIdx.x, blockIdx.y, blockIdx.z);
}

}  // namespace

Status cuda_device_status() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    Status s = from_cuda(err, "no usable CUDA device");
    return {Errc::unsupported, s.message()};
  }
  if (count == 0) return {Errc::unsupported, "no CUDA device"};
  return {};
}

Status cuda_stream_create(void** stream) {
  HCP_TRY(cuda_impl::cuda_device_status());
  cudaStream_t s = nullptr;
  HCP_TRY(from_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"));
  *stream = s;
  return {};
}

void cuda_stream_destroy(void* stream) {
  if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

Status cuda_stream_synchronize(void* stream) {
  return from_cuda(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

Status attention_forward_cuda(const AttnParams& p, void* stream) {
  HCP_TRY(check_cuda_params(p, false));
  cudaError_t err = cudaSuccess;
  kern::dispatch_instance<kern::ElemBf16, kern::ElemF16>(p.dtype, kern::kernel_head_dim(p), kern::diagonal_mask(p), [&]<class E, int D, bool C>() {
    err = kern::launch_flash_forward<E, D, C>(p, static_cast<cudaStream_t>(stream));
  });
  return from_cuda(err, "attention forward (CUDA)");
}

Status attention_backward_cuda(const AttnParams& p, void* stream) {
  HCP_TRY(check_cuda_params(p, true));
  cudaError_t err = cudaSuccess;
  kern::dispatch_instance<kern::ElemBf16, kern::ElemF16>(p.dtype, kern::kernel_head_dim(p), kern::diagonal_mask(p), [&]<class E, int D, bool C>() {
    err = kern::launch_flash_backward<E, D, C>(p, static_cast<cudaStream_t>(stream));
  });
  return from_cuda(err, "attention backward (CUDA)");
}

Status attention_delta_cuda(const AttnParams& p, void* stream) {
  if (p.dtype == DType::f32)
    return {Errc::unsupported, "attention delta (CUDA): dout must be bf16 or fp16"};
  if (p.batch <= 0 || p.sq <= 0 || p.heads <= 0 || p.head_dim <= 0 || p.batch > 65535 || p.heads > 65535)
    return {Errc::shape, "attention delta (CUDA): batch, sq, heads and head dim must be positive (batch and heads "
                         "at most 65535)"};
  HCP_TRY(require_device_pointer(p.dout.data, "dout"));
  HCP_TRY(require_device_pointer(p.out.data, "out"));
  HCP_TRY(require_device_pointer(p.delta.data, "delta"));
  const dim3 grid(static_cast<unsigned>((p.sq + kern::kThreads - 1) / kern::kThreads), static_cast<unsigned>(p.heads),
                  static_cast<unsigned>(p.batch));
  auto stream_ = static_cast<cudaStream_t>(stream);
  if (p.dtype == DType::bf16)
    attention_delta_kernel<kern::ElemBf16><<<grid, kern::kThreads, 0, stream_>>>(p);
  else
    attention_delta_kernel<kern::ElemF16><<<grid, kern::kThreads, 0, stream_>>>(p);
  return from_cuda(cudaGetLastError(), "attention delta (CUDA)");
}

}  // namespace hcp::cuda_impl
