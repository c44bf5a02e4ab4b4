// A CpEngine that runs the CUDA engine's kernels (flash, conversion and sum block functions) on the host block
// emulator and models a GPU's memory and stream: its buffers belong to a device ordinal, and a copy or sum whose
// device-side operand is not a live buffer of that device (freed, never allocated, another device's) fails; its
// operations, frees included, run in order on an emulated stream, asynchronously to the caller, with download,
// upload and synchronize waiting for them as cudaMemcpy and cudaStreamSynchronize do. So the CP schemes run end to
// end with the GPU kernels' arithmetic on machines without a GPU, and the exchanges are held to what a GPU allows:
// ranks on one device read each other's buffers only once written and while alive (PeerCopyCommunicator), ranks
// on different devices go through host memory (StagedCommunicator).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../../runtime/src/attention/cuda/cp_kernels.cuh"
#include "emulated_attention.hpp"
#include "emulated_device_memory.hpp"
#include "emulated_stream.hpp"
#include "hcp/attention_cpu.hpp"
#include "hcp/attention_cuda.hpp"
#include "hcp/cp_engine.hpp"

namespace hcp::testing {

class EmulatedGpuEngine final : public CpEngine {
 public:
  // `peer_reads` (optional) counts the copies and sums that read another engine's buffer.
  explicit EmulatedGpuEngine(int device = 0, std::atomic<int64_t>* peer_reads = nullptr)
      : device_(device), peer_reads_(peer_reads) {}
  ~EmulatedGpuEngine() override { (void)stream_.synchronize(); }
  const char* name() const override { return "emulated-cuda"; }
  bool device_memory() const override { return true; }
  int device_ordinal() const override { return device_; }
  Status supports(DType dtype, int64_t head_dim) const override {
    if (dtype == DType::f32 || !cuda_head_dim_supported(head_dim))
      return {Errc::unsupported, std::string("the CUDA kernels take bf16/fp16 and head dim ") + kCudaHeadDims};
    return {};
  }
  // Usable at once by this stream's later operations (as cudaMallocAsync's memory is); freed in stream order.
  Status alloc(size_t bytes, EngineBuffer* out) override {
    void* ptr = std::aligned_alloc(128, (bytes + 127) / 128 * 128 + 128);
    if (!ptr) return {Errc::out_of_memory, "emulated engine: " + std::to_string(bytes) + " bytes"};
    std::memset(ptr, 0xff, bytes);  // NaN bytes: a read of memory nobody wrote shows up in the results
    {
      auto& memory = EmulatedDeviceMemory::instance();
      std::lock_guard lock(memory.mu);
      memory.blocks[reinterpret_cast<uintptr_t>(ptr)] = {std::max<size_t>(bytes, 1), device_, this};
    }
    *out = EngineBuffer(ptr, release, this);
    return {};
  }
  Status zero(void* ptr, size_t bytes) override {
    return enqueue([=, this]() -> Status {
      HCP_TRY(device_side(ptr, bytes, "zero"));
      std::memset(ptr, 0, bytes);
      return {};
    });
  }
  Status copy_rows(int64_t batch, int64_t rows, size_t row_bytes, void* dst, size_t dst_b, size_t dst_r,
                   const void* src, size_t src_b, size_t src_r) override {
    if (batch < 1 || rows < 1 || row_bytes == 0) return {};
    return enqueue([=, this]() -> Status {
      const size_t last = static_cast<size_t>(batch - 1), last_row = static_cast<size_t>(rows - 1);
      HCP_TRY(device_side(dst, last * dst_b + last_row * dst_r + row_bytes, "copy_rows destination"));
      HCP_TRY(device_side(src, last * src_b + last_row * src_r + row_bytes, "copy_rows source", true));
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t r = 0; r < rows; ++r)
          std::memcpy(static_cast<char*>(dst) + b * dst_b + r * dst_r,
                      static_cast<const char*>(src) + b * src_b + r * src_r, row_bytes);
      return {};
    });
  }
  // Synchronous, as the CUDA engine's are: after everything enqueued before.
  Status download(void* host, const void* src, size_t bytes) override {
    HCP_TRY(stream_.synchronize());
    HCP_TRY(device_side(src, bytes, "download"));
    std::memcpy(host, src, bytes);
    return {};
  }
  Status upload(void* dst, const void* host, size_t bytes) override {
    HCP_TRY(stream_.synchronize());
    HCP_TRY(device_side(dst, bytes, "upload"));
    std::memcpy(dst, host, bytes);
    return {};
  }
  Status add_f32(float* dst, const float* src, int64_t n) override {
    if (n < 1) return {};
    return enqueue([=, this]() -> Status {
      HCP_TRY(device_side(dst, static_cast<size_t>(n) * 4, "add_f32 destination"));
      HCP_TRY(device_side(src, static_cast<size_t>(n) * 4, "add_f32 source", true));
      grid_stride([&](const kern::BlockCtx& ctx, int bx, int64_t stride) {
        kern::add_f32_block(ctx, dst, src, n, bx, stride);
      });
      return {};
    });
  }
  Status apply_sink(const SinkParams& p) override {
    const int64_t rows = p.batch * p.heads * p.rows;
    if (rows < 1) return {};
    return enqueue([=, this]() -> Status {
      HCP_TRY(device_side(p.lse, static_cast<size_t>(rows) * 4, "apply_sink lse"));
      HCP_TRY(device_side(p.sink, static_cast<size_t>(p.heads) * 4, "apply_sink sink"));
      HCP_TRY(device_side(p.out, 4, "apply_sink out"));
      grid_stride([&](const kern::BlockCtx& ctx, int bx, int64_t stride) { kern::apply_sink_block(ctx, p, bx, stride); });
      return {};
    });
  }
  Status convert_from_f32(const float* src, void* dst, DType dtype, int64_t n) override {
    return elementwise(dtype, [=]<class E>(const kern::BlockCtx& ctx, int bx, int64_t stride) {
      kern::convert_from_f32_block<E>(ctx, src, static_cast<typename E::type*>(dst), n, bx, stride);
    });
  }
  Status convert_to_f32(const void* src, DType dtype, float* dst, int64_t n) override {
    return elementwise(dtype, [=]<class E>(const kern::BlockCtx& ctx, int bx, int64_t stride) {
      kern::convert_to_f32_block<E>(ctx, static_cast<const typename E::type*>(src), dst, n, bx, stride);
    });
  }
  // Checked when enqueued, as the CUDA entry points check before they launch.
  Status forward(const AttnParams& p) override {
    HCP_TRY(check_attention_params(p, false));
    return enqueue([=] { return dispatched(emulated_forward(p)); });
  }
  Status backward(const AttnParams& p) override {
    HCP_TRY(check_attention_params(p, true));
    return enqueue([=] { return dispatched(emulated_backward_only(p)); });
  }
  Status delta(const AttnParams& p) override {
    return enqueue([=] { return dispatched(emulated_delta(p)); });
  }
  Status synchronize() override { return stream_.synchronize(); }

 private:
  int device_;
  std::atomic<int64_t>* peer_reads_;
  EmulatedStream stream_;  // last: its worker stops (running the queued frees) before the rest goes

  Status enqueue(std::function<Status()> op) {
    stream_.enqueue(std::move(op));
    return {};
  }
  // cudaFreeAsync: the memory stays valid for the operations enqueued before the free.
  static void release(void* engine, void* ptr) {
    static_cast<EmulatedGpuEngine*>(engine)->stream_.enqueue([ptr]() -> Status {
      auto& memory = EmulatedDeviceMemory::instance();
      {
        std::lock_guard lock(memory.mu);
        memory.blocks.erase(reinterpret_cast<uintptr_t>(ptr));
      }
      std::free(ptr);
      return {};
    });
  }
  // [ptr, ptr + bytes) must lie in a live buffer of this engine's device, as a GPU copy or kernel requires. A
  // source in another engine's buffer counts as a peer read.
  Status device_side(const void* ptr, size_t bytes, const char* op, bool source = false) {
    auto& memory = EmulatedDeviceMemory::instance();
    std::lock_guard lock(memory.mu);
    const EmulatedDeviceMemory::Block* block = memory.find(ptr, bytes);
    if (block == nullptr || block->device != device_) {
      ++memory.faults;
      return {Errc::internal, std::string("emulated device ") + std::to_string(device_) + ": " + op + " of " +
                                  std::to_string(bytes) + " bytes outside this device's live buffers"};
    }
    if (source && block->owner != this && peer_reads_) ++*peer_reads_;
    return {};
  }

  static Status dispatched(bool found) {
    return found ? Status{} : Status{Errc::unsupported, "emulated engine: no kernel instance"};
  }
  // Two blocks with a grid stride, so the grid-stride loop really loops (fn bounds itself by its element count).
  template <class Fn>
  static void grid_stride(Fn fn) {
    constexpr int64_t kBlocks = 2;
    emu::launch({kBlocks, 1, 1}, kern::kThreads, 0, [&](const kern::BlockCtx& ctx, int bx, int, int, char*) {
      fn(ctx, bx, kBlocks * kern::kThreads);
    });
  }
  template <class Fn>
  Status elementwise(DType dtype, Fn fn) {
    if (dtype != DType::bf16 && dtype != DType::f16) return {Errc::unsupported, "emulated engine: fp32 tensors"};
    return enqueue([=]() -> Status {
      auto run = [&]<class E>() {
        grid_stride([&](const kern::BlockCtx& ctx, int bx, int64_t stride) {
          fn.template operator()<E>(ctx, bx, stride);
        });
      };
      if (dtype == DType::bf16)
        run.template operator()<kern::ElemBf16>();
      else
        run.template operator()<kern::ElemF16>();
      return {};
    });
  }
};

}  // namespace hcp::testing
