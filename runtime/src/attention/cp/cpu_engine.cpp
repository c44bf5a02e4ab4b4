// The CPU engine: host memory (64-byte aligned, freed blocks reused), memcpy row copies and the CPU kernels.
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <unordered_map>
#include <new>

#include "hcp/attention_cpu.hpp"
#include "hcp/cp_engine.hpp"
#include "hcp/dtype_convert.hpp"
#include "sequence_layout.hpp"

namespace hcp {
namespace {

// Freed buffers are kept for reuse, up to kPoolBytes or the most this engine has had live at once, whichever is
// larger: a CP call allocates the same sizes every time, and fresh pages would each cost a page fault and a zeroing
// (about 5% of a rank's forward time at S/W = 512 before; an all_gather forward of 16k packed tokens holds 285 MB a
// rank, and with a fixed 256 MB the page faults were most of its time). What the pool keeps is never more than the
// most one moment of this engine's life had live.
constexpr size_t kPoolBytes = size_t{256} << 20;

class CpuEngine final : public CpEngine {
 public:
  ~CpuEngine() override {
    for (auto& [bytes, ptr] : pool_) std::free(ptr);
  }

  const char* name() const override { return "cpu"; }
  bool device_memory() const override { return false; }
  Status supports(DType, int64_t head_dim) const override {
    if (head_dim < 1 || head_dim > 512)
      return {Errc::unsupported, "the CPU kernels take head dims 1..512, got " + std::to_string(head_dim)};
    return {};
  }

  Status alloc(size_t bytes, EngineBuffer* out) override {
    if (bytes > std::numeric_limits<size_t>::max() - 63)  // rounding up would wrap to a small block
      return {Errc::out_of_memory, "out of memory for a CP buffer of " + std::to_string(bytes) + " bytes"};
    const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    void* ptr = nullptr;
    if (auto it = pool_.find(rounded); it != pool_.end()) {
      ptr = it->second;
      pool_bytes_ -= rounded;
      pool_.erase(it);
    } else {
      ptr = std::aligned_alloc(64, rounded);
      if (ptr == nullptr)
        return {Errc::out_of_memory, "out of memory for a CP buffer of " + std::to_string(bytes) + " bytes"};
    }
    sizes_[ptr] = rounded;
    live_bytes_ += rounded;
    peak_live_bytes_ = std::max(peak_live_bytes_, live_bytes_);
    *out = EngineBuffer(ptr, release, this);
    return {};
  }
  Status zero(void* ptr, size_t bytes) override {
    std::fill_n(static_cast<unsigned char*>(ptr), bytes, 0);
    return {};
  }
  Status copy_rows(int64_t batch, int64_t rows, size_t row_bytes, void* dst, size_t dst_b, size_t dst_r,
                   const void* src, size_t src_b, size_t src_r) override {
    cp::copy_rows(batch, rows, row_bytes, dst, dst_b, dst_r, src, src_b, src_r);
    return {};
  }
  Status download(void* host, const void* src, size_t bytes) override {
    std::copy_n(static_cast<const unsigned char*>(src), bytes, static_cast<unsigned char*>(host));
    return {};
  }
  Status upload(void* dst, const void* host, size_t bytes) override { return download(dst, host, bytes); }
  Status add_f32(float* dst, const float* src, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
    return {};
  }
  Status apply_sink(const SinkParams& p) override {
    apply_sink_cpu(p);
    return {};
  }
  Status convert_from_f32(const float* src, void* dst, DType dtype, int64_t n) override {
    hcp::convert_from_f32(src, dst, dtype, n);
    return {};
  }
  Status convert_to_f32(const void* src, DType dtype, float* dst, int64_t n) override {
    hcp::convert_to_f32(src, dtype, dst, n);
    return {};
  }
  Status forward(const AttnParams& p) override { return attention_forward_cpu(p); }
  Status backward(const AttnParams& p) override { return attention_backward_cpu(p); }
  int64_t packed_keys_floats(const AttnParams& p) const override { return attention_packed_keys_floats_cpu(p); }
  Status pack_keys(const AttnParams& p, int64_t part, int64_t parts, float* dst) override {
    return attention_pack_keys_cpu(p, part, parts, dst);
  }
  Status delta(const AttnParams& p) override {
    attention_delta_cpu(p.dtype, p.batch, p.sq, p.heads, value_dim(p), p.dout, p.out, p.delta);
    return {};
  }


 private:
  static void release(void* engine, void* ptr) {
    auto* self = static_cast<CpuEngine*>(engine);
    const auto it = self->sizes_.find(ptr);
    const size_t bytes = it->second;
    self->sizes_.erase(it);
    self->live_bytes_ -= bytes;
    if (self->pool_bytes_ + bytes > std::max(kPoolBytes, self->peak_live_bytes_)) {
      std::free(ptr);
      return;
    }
    self->pool_.emplace(bytes, ptr);
    self->pool_bytes_ += bytes;
  }

  std::multimap<size_t, void*> pool_;          // free blocks by size
  std::unordered_map<void*, size_t> sizes_;    // live blocks
  size_t pool_bytes_ = 0;
  size_t live_bytes_ = 0, peak_live_bytes_ = 0;
};

}  // namespace

std::unique_ptr<CpEngine> make_cpu_engine() { return std::make_unique<CpuEngine>(); }

}  // namespace hcp
