// Single-rank attention on a CUDA GPU: the flash kernels of attention/cuda (mma.sync tensor cores, bf16 or fp16
// inputs, head dim 64, 128 or 256, fp32 out / lse / gradients), with the same AttnParams as the CPU kernels; every
// pointer is device memory. Calls are asynchronous on `stream` (a cudaStream_t; nullptr is the legacy default stream): launch
// errors are returned, errors during execution surface at the caller's next synchronisation.
#pragma once

#include "hcp/attention_params.hpp"
#include "hcp/status.hpp"

namespace hcp {

// Whether this build has the CUDA path (HCP_WITH_CUDA found nvcc and NCCL).
bool cuda_built();
// ok when a CUDA device can be used; otherwise Errc::unsupported with the reason (no CUDA build, no driver, no
// device).
Status cuda_device_status();

// A non-blocking stream on the current device, its destruction, and waiting for it (Errc::unsupported without
// CUDA). Used by the in-process simulation, which gives every rank its own stream.
Status cuda_stream_create(void** stream);
void cuda_stream_destroy(void* stream);
Status cuda_stream_synchronize(void* stream);

// The kernel instantiation's head dim that serves `head_dim` (each of 64, 128 and 256 has its own): the smallest
// that holds it, whose tiles the kernels fill with zeros past the tensor's own dims (exact: the zero columns add
// nothing to q . k, and the output's and gradients' zero columns are not written). Any multiple of 8 up to 256
// (the kernels read rows 16 bytes at a time): MLA's 192 for q and k runs on the 256 kernels. 0: none.
constexpr int64_t cuda_kernel_head_dim(int64_t head_dim) {
  if (head_dim < 8 || head_dim > 256 || head_dim % 8 != 0) return 0;
  return head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : 256;
}
constexpr bool cuda_head_dim_supported(int64_t head_dim) { return cuda_kernel_head_dim(head_dim) != 0; }
inline constexpr const char* kCudaHeadDims = "a multiple of 8 up to 256";

// Errc::unsupported for fp32 inputs and other head dims (cuda_head_dim_supported; and in builds without CUDA);
// Errc::invalid_argument for host pointers.
Status attention_forward_cuda(const AttnParams& p, void* stream);
// Adds to dq, dk, dv (f32) from q, k, v, dout, the final lse and delta (attention_delta_cuda).
Status attention_backward_cuda(const AttnParams& p, void* stream);
// delta[b, h, s] = sum_d dout * out, from p.dout (dtype) and p.out (f32), for p.sq rows.
Status attention_delta_cuda(const AttnParams& p, void* stream);

}  // namespace hcp
