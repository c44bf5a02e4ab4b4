// A CpEngine that does what another one does: tests derive from it to inject failures or count calls, overriding
// only what they watch.
#pragma once

#include <memory>
#include <utility>

#include "hcp/cp_engine.hpp"

namespace hcp::testing {

class ForwardingEngine : public CpEngine {
 public:
  explicit ForwardingEngine(std::unique_ptr<CpEngine> inner) : inner_(std::move(inner)) {}
  const char* name() const override { return inner_->name(); }
  bool device_memory() const override { return inner_->device_memory(); }
  int device_ordinal() const override { return inner_->device_ordinal(); }
  Status supports(DType d, int64_t h) const override { return inner_->supports(d, h); }
  Status alloc(size_t bytes, EngineBuffer* out) override { return inner_->alloc(bytes, out); }
  Status zero(void* p, size_t bytes) override { return inner_->zero(p, bytes); }
  Status copy_rows(int64_t batch, int64_t rows, size_t row_bytes, void* dst, size_t dst_b, size_t dst_r,
                   const void* src, size_t src_b, size_t src_r) override {
    return inner_->copy_rows(batch, rows, row_bytes, dst, dst_b, dst_r, src, src_b, src_r);
  }
  Status download(void* host, const void* src, size_t bytes) override { return inner_->download(host, src, bytes); }
  Status upload(void* dst, const void* host, size_t bytes) override { return inner_->upload(dst, host, bytes); }
  Status add_f32(float* dst, const float* src, int64_t n) override { return inner_->add_f32(dst, src, n); }
  Status apply_sink(const SinkParams& p) override { return inner_->apply_sink(p); }
  Status convert_from_f32(const float* src, void* dst, DType d, int64_t n) override {
    return inner_->convert_from_f32(src, dst, d, n);
  }
  Status convert_to_f32(const void* src, DType d, float* dst, int64_t n) override {
    return inner_->convert_to_f32(src, d, dst, n);
  }
  Status forward(const AttnParams& p) override { return inner_->forward(p); }
  Status backward(const AttnParams& p) override { return inner_->backward(p); }
  Status delta(const AttnParams& p) override { return inner_->delta(p); }
  Status synchronize() override { return inner_->synchronize(); }

 private:
  std::unique_ptr<CpEngine> inner_;
};

}  // namespace hcp::testing
