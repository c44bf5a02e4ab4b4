// The CUDA engine: device memory allocated in stream order, strided row copies as 2D memcpys, the flash kernels
// (whose forward merges into an earlier result: AttnParams::accumulate) and the conversion kernels of
// cp_kernels.cuh - everything enqueued on one stream, in order.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "attention/cuda/cp_kernels.cuh"
#include "attention/cuda/instances.hpp"
#include "cuda_module/cuda_impl.hpp"
#include "hcp/attention_cuda.hpp"
#include "hcp/cp_engine.hpp"

// Inside libhcp_cuda.so: the loader (cuda_module_loader.cpp) reaches these through the module's table.
namespace hcp::cuda_impl {
namespace {

Status cuda_check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return {};
  const Errc code = err == cudaErrorMemoryAllocation ? Errc::out_of_memory : Errc::internal;
  return {code, std::string("CUDA engine: ") + what + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err)};
}

template <class E>
__global__ void __launch_bounds__(kern::kThreads) from_f32_kernel(const float* src, typename E::type* dst, int64_t n) {
  kern::convert_from_f32_block<E>(kern::BlockCtx{}, src, dst, n, blockIdx.x, int64_t{gridDim.x} * kern::kThreads);
}

template <class E>
__global__ void __launch_bounds__(kern::kThreads) to_f32_kernel(const typename E::type* src, float* dst, int64_t n) {
  kern::convert_to_f32_block<E>(kern::BlockCtx{}, src, dst, n, blockIdx.x, int64_t{gridDim.x} * kern::kThreads);
}

__global__ void __launch_bounds__(kern::kThreads) add_f32_kernel(float* dst, const float* src, int64_t n) {
  kern::add_f32_block(kern::BlockCtx{}, dst, src, n, blockIdx.x, int64_t{gridDim.x} * kern::kThreads);
}

__global__ void __launch_bounds__(kern::kThreads) apply_sink_kernel(SinkParams p) {
  kern::apply_sink_block(kern::BlockCtx{}, p, blockIdx.x, int64_t{gridDim.x} * kern::kThreads);
}

// Enough blocks to fill the GPU, few enough that each thread loops a little.
unsigned elementwise_blocks(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kern::kThreads - 1) / kern::kThreads, 1, 65536));
}

void free_async(void* stream, void* ptr) { cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream)); }

class CudaEngine final : public CpEngine {
 public:
  CudaEngine(cudaStream_t stream, int device) : stream_(stream), device_(device) {}

  const char* name() const override { return "cuda"; }
  bool device_memory() const override { return true; }
  int device_ordinal() const override { return device_; }
  Status supports(DType dtype, int64_t head_dim) const override {
    if (dtype == DType::f32) return {Errc::unsupported, "the CUDA kernels take bf16 or fp16 inputs, not fp32"};
    if (!cuda_head_dim_supported(head_dim))
      return {Errc::unsupported,
              std::string("the CUDA kernels take head dim ") + kCudaHeadDims + ", got " + std::to_string(head_dim)};
    return {};
  }

  Status alloc(size_t bytes, EngineBuffer* out) override {
    void* ptr = nullptr;
    HCP_TRY(cuda_check(cudaMallocAsync(&ptr, std::max<size_t>(bytes, 1), stream_), "cudaMallocAsync"));
    *out = EngineBuffer(ptr, free_async, stream_);
    return {};
  }
  Status zero(void* ptr, size_t bytes) override {
    return cuda_check(cudaMemsetAsync(ptr, 0, bytes, stream_), "cudaMemsetAsync");
  }
  Status copy_rows(int64_t batch, int64_t rows, size_t row_bytes, void* dst, size_t dst_b, size_t dst_r,
                   const void* src, size_t src_b, size_t src_r) override {
    if (rows == 1 && batch == 1)  // one block: a plain copy (2D copies limit the pitch)
      return cuda_check(cudaMemcpyAsync(dst, src, row_bytes, cudaMemcpyDefault, stream_), "cudaMemcpyAsync");
    if (rows == 1)  // one row per batch: a 2D copy over the batches
      return cuda_check(cudaMemcpy2DAsync(dst, dst_b, src, src_b, row_bytes, static_cast<size_t>(batch),
                                          cudaMemcpyDefault, stream_),
                        "cudaMemcpy2DAsync");
    for (int64_t b = 0; b < batch; ++b)
      HCP_TRY(cuda_check(cudaMemcpy2DAsync(static_cast<unsigned char*>(dst) + b * dst_b, dst_r,
                                           static_cast<const unsigned char*>(src) + b * src_b, src_r, row_bytes,
                                           static_cast<size_t>(rows), cudaMemcpyDefault, stream_),
                         "cudaMemcpy2DAsync"));
    return {};
  }
  Status download(void* host, const void* src, size_t bytes) override {
    HCP_TRY(cuda_check(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDefault, stream_), "download"));
    return cuda_check(cudaStreamSynchronize(stream_), "download");
  }
  Status upload(void* dst, const void* host, size_t bytes) override {
    HCP_TRY(cuda_check(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyDefault, stream_), "upload"));
    return cuda_check(cudaStreamSynchronize(stream_), "upload");
  }
  Status add_f32(float* dst, const float* src, int64_t n) override {
    add_f32_kernel<<<elementwise_blocks(n), kern::kThreads, 0, stream_>>>(dst, src, n);
    return cuda_check(cudaGetLastError(), "add_f32");
  }
  Status apply_sink(const SinkParams& p) override {
    const int64_t rows = p.batch * p.heads * p.rows;
    if (rows < 1) return {};
    apply_sink_kernel<<<elementwise_blocks(rows), kern::kThreads, 0, stream_>>>(p);
    return cuda_check(cudaGetLastError(), "apply_sink");
  }
  Status convert_from_f32(const float* src, void* dst, DType dtype, int64_t n) override {
    if (dtype == DType::f32) return copy_rows(1, 1, static_cast<size_t>(n) * 4, dst, 0, 0, src, 0, 0);
    if (dtype == DType::bf16)
      from_f32_kernel<kern::ElemBf16><<<elementwise_blocks(n), kern::kThreads, 0, stream_>>>(
          src, static_cast<kern::ElemBf16::type*>(dst), n);
    else
      from_f32_kernel<kern::ElemF16><<<elementwise_blocks(n), kern::kThreads, 0, stream_>>>(
          src, static_cast<kern::ElemF16::type*>(dst), n);
    return cuda_check(cudaGetLastError(), "convert_from_f32");
  }
  Status convert_to_f32(const void* src, DType dtype, float* dst, int64_t n) override {
    if (dtype == DType::f32) return copy_rows(1, 1, static_cast<size_t>(n) * 4, dst, 0, 0, src, 0, 0);
    if (dtype == DType::bf16)
      to_f32_kernel<kern::ElemBf16><<<elementwise_blocks(n), kern::kThreads, 0, stream_>>>(
          static_cast<const kern::ElemBf16::type*>(src), dst, n);
    else
      to_f32_kernel<kern::ElemF16><<<elementwise_blocks(n), kern::kThreads, 0, stream_>>>(
          static_cast<const kern::ElemF16::type*>(src), dst, n);
    return cuda_check(cudaGetLastError(), "convert_to_f32");
  }
  Status forward(const AttnParams& p) override { return cuda_impl::attention_forward_cuda(p, stream_); }
  Status backward(const AttnParams& p) override { return cuda_impl::attention_backward_cuda(p, stream_); }
  Status delta(const AttnParams& p) override { return cuda_impl::attention_delta_cuda(p, stream_); }
  Status synchronize() override { return cuda_check(cudaStreamSynchronize(stream_), "synchronize"); }

 private:
  cudaStream_t stream_;
  int device_;
};

}  // namespace

Status make_cuda_engine(void* stream, std::unique_ptr<CpEngine>* out) {
  if (out == nullptr) return {Errc::invalid_argument, "make_cuda_engine: out is NULL"};
  HCP_TRY(cuda_impl::cuda_device_status());
  int device = 0;
  HCP_TRY(cuda_check(cudaGetDevice(&device), "cudaGetDevice"));
  *out = std::make_unique<CudaEngine>(static_cast<cudaStream_t>(stream), device);
  return {};
}

}  // namespace hcp::cuda_impl
