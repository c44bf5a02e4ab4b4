// Where a CP computation runs: memory, copies, conversions and the attention kernels. The CP schemes
// (cp_attention.hpp) are written once against this interface; the CPU engine runs them on host memory with the CPU
// kernels, the CUDA engine (CUDA builds) on device memory with the CUDA kernels, in order on one stream. An engine
// is driven by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "hcp/attention_params.hpp"
#include "hcp/status.hpp"

namespace hcp {

// Memory an engine allocated; freed by the engine's function when the buffer dies.
class EngineBuffer {
 public:
  using FreeFn = void (*)(void* context, void* ptr);
  EngineBuffer() = default;
  EngineBuffer(void* ptr, FreeFn free_fn, void* context) : ptr_(ptr), free_(free_fn), context_(context) {}
  EngineBuffer(EngineBuffer&& other) noexcept { *this = std::move(other); }
  EngineBuffer& operator=(EngineBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = other.ptr_, free_ = other.free_, context_ = other.context_;
      other.ptr_ = nullptr;
    }
    return *this;
  }
  EngineBuffer(const EngineBuffer&) = delete;
  EngineBuffer& operator=(const EngineBuffer&) = delete;
  ~EngineBuffer() { reset(); }
  void reset() {
    if (ptr_ && free_) free_(context_, ptr_);
    ptr_ = nullptr;
  }
  template <class T = unsigned char>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  FreeFn free_ = nullptr;
  void* context_ = nullptr;
};

class CpEngine {
 public:
  virtual ~CpEngine() = default;
  virtual const char* name() const = 0;
  // True when tensors live in device memory, so the communicators must move device memory.
  virtual bool device_memory() const = 0;
  // The CUDA device whose memory the engine allocates; -1 for host memory. Engines of one process on the same
  // device may read each other's buffers (copy_rows, add_f32 sources), which is how in-process ranks exchange.
  virtual int device_ordinal() const { return -1; }
  // Errc::unsupported when the kernels cannot run this dtype / head dim.
  virtual Status supports(DType dtype, int64_t head_dim) const = 0;

  virtual Status alloc(size_t bytes, EngineBuffer* out) = 0;  // contents undefined
  virtual Status zero(void* ptr, size_t bytes) = 0;
  // batch x rows rows of row_bytes: dst + b*dst_b + r*dst_r <- src + b*src_b + r*src_r (byte strides).
  virtual Status copy_rows(int64_t batch, int64_t rows, size_t row_bytes, void* dst, size_t dst_b, size_t dst_r,
                           const void* src, size_t src_b, size_t src_r) = 0;
  // Synchronous copies between the engine's memory and host memory (the staging of host communicators).
  virtual Status download(void* host, const void* src, size_t bytes) = 0;
  virtual Status upload(void* dst, const void* host, size_t bytes) = 0;
  // dst[i] += src[i] for i < n (the reduce-scatter of in-process ranks; src may be another engine's buffer).
  virtual Status add_f32(float* dst, const float* src, int64_t n) = 0;
  virtual Status convert_from_f32(const float* src, void* dst, DType dtype, int64_t n) = 0;
  virtual Status convert_to_f32(const void* src, DType dtype, float* dst, int64_t n) = 0;

  // Must honour AttnParams::accumulate (the ring merges every step into out/lse that way).
  virtual Status forward(const AttnParams& p) = 0;
  virtual Status backward(const AttnParams& p) = 0;
  // delta = rowsum(dout * out) from p.dout (p.dtype) and p.out (f32) into p.delta, for p.sq rows.
  virtual Status delta(const AttnParams& p) = 0;
  // Host engines whose forward reads key tiles packed once for several calls (AttnParams::packed_keys): the floats
  // the tiles of call `p` take (0: this engine packs none for it) and the packing of tiles part, part + parts, ...
  // into host memory at dst. Packing is only ever an offer: a forward given no packed keys packs its own.
  virtual int64_t packed_keys_floats(const AttnParams&) const { return 0; }
  virtual Status pack_keys(const AttnParams&, int64_t, int64_t, float*) {
    return {Errc::unsupported, "this engine packs no key tiles"};
  }
  // Attention sinks on a finished forward, in place (SinkParams; its sink in the engine's memory).
  virtual Status apply_sink(const SinkParams&) { return {Errc::unsupported, "this engine has no attention sinks"}; }
  // Waits until every operation enqueued so far has finished (CUDA: the stream); CPU engines work synchronously.
  virtual Status synchronize() { return {}; }
};

// Host memory and the CPU kernels (runtime dispatch to the widest vector unit).
std::unique_ptr<CpEngine> make_cpu_engine();
// Device memory of the current CUDA device and the CUDA kernels, in order on `stream` (a cudaStream_t; nullptr:
// the legacy default stream). Errc::unsupported in builds without CUDA or without a device.
Status make_cuda_engine(void* stream, std::unique_ptr<CpEngine>* out);

}  // namespace hcp
