// A CpEngine that runs the CUDA engine's kernels (flash and conversion block functions) on the host block
// emulator, and claims device memory so that CpContext stages its exchanges (StagedCommunicator) as it does for
// CUDA. With it the CP schemes run end to end with the GPU kernels' arithmetic on machines without a GPU.
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../../runtime/src/attention/cuda/cp_kernels.cuh"
#include "emulated_attention.hpp"
#include "hcp/attention_cpu.hpp"
#include "hcp/cp_engine.hpp"

namespace hcp::testing {

class EmulatedGpuEngine final : public CpEngine {
 public:
  // `staged_copies` (optional) counts downloads and uploads: proof that exchanges went through the staging path.
  explicit EmulatedGpuEngine(std::atomic<int64_t>* staged_copies = nullptr) : staged_copies_(staged_copies) {}
  const char* name() const override { return "emulated-cuda"; }
  bool device_memory() const override { return true; }
  Status supports(DType dtype, int64_t head_dim) const override {
    if (dtype == DType::f32 || !kern::head_dim_supported(head_dim))
      return {Errc::unsupported, "the CUDA kernels take bf16/fp16 and head dim 64 or 128"};
    return {};
  }
  Status alloc(size_t bytes, EngineBuffer* out) override {
    void* ptr = std::aligned_alloc(128, (bytes + 127) / 128 * 128 + 128);
    if (!ptr) return {Errc::out_of_memory, "emulated engine: " + std::to_string(bytes) + " bytes"};
    std::memset(ptr, 0xff, bytes);  // NaN bytes: a read of memory nobody wrote shows up in the results
    *out = EngineBuffer(ptr, [](void*, void* p) { std::free(p); }, nullptr);
    return {};
  }
  Status zero(void* ptr, size_t bytes) override {
    std::memset(ptr, 0, bytes);
    return {};
  }
  Status copy_rows(int64_t batch, int64_t rows, size_t row_bytes, void* dst, size_t dst_b, size_t dst_r,
                   const void* src, size_t src_b, size_t src_r) override {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(static_cast<char*>(dst) + b * dst_b + r * dst_r,
                    static_cast<const char*>(src) + b * src_b + r * src_r, row_bytes);
    return {};
  }
  Status download(void* host, const void* src, size_t bytes) override {
    if (staged_copies_) ++*staged_copies_;
    std::memcpy(host, src, bytes);
    return {};
  }
  Status upload(void* dst, const void* host, size_t bytes) override { return download(dst, host, bytes); }
  Status convert_from_f32(const float* src, void* dst, DType dtype, int64_t n) override {
    return elementwise(dtype, [&]<class E>(const kern::BlockCtx& ctx, int bx, int64_t stride) {
      kern::convert_from_f32_block<E>(ctx, src, static_cast<typename E::type*>(dst), n, bx, stride);
    });
  }
  Status convert_to_f32(const void* src, DType dtype, float* dst, int64_t n) override {
    return elementwise(dtype, [&]<class E>(const kern::BlockCtx& ctx, int bx, int64_t stride) {
      kern::convert_to_f32_block<E>(ctx, static_cast<const typename E::type*>(src), dst, n, bx, stride);
    });
  }
  Status forward(const AttnParams& p) override {
    HCP_TRY(check_attention_params(p, false));
    return dispatched(emulated_forward(p));
  }
  Status backward(const AttnParams& p) override {
    HCP_TRY(check_attention_params(p, true));
    return dispatched(emulated_backward_only(p));
  }
  Status delta(const AttnParams& p) override { return dispatched(emulated_delta(p)); }

 private:
  std::atomic<int64_t>* staged_copies_;

  static Status dispatched(bool found) {
    return found ? Status{} : Status{Errc::unsupported, "emulated engine: no kernel instance"};
  }
  // Two blocks with a grid stride, so the grid-stride loop really loops (fn bounds itself by its element count).
  template <class Fn>
  Status elementwise(DType dtype, Fn fn) {
    constexpr int64_t kBlocks = 2;
    auto run = [&]<class E>() {
      emu::launch({kBlocks, 1, 1}, kern::kThreads, 0, [&](const kern::BlockCtx& ctx, int bx, int, int, char*) {
        fn.template operator()<E>(ctx, bx, kBlocks * kern::kThreads);
      });
    };
    if (dtype == DType::bf16)
      run.template operator()<kern::ElemBf16>();
    else if (dtype == DType::f16)
      run.template operator()<kern::ElemF16>();
    else
      return {Errc::unsupported, "emulated engine: fp32 tensors"};
    return {};
  }
};

}  // namespace hcp::testing
