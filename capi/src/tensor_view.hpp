// hcp_tensor descriptors, checked, and contiguous staging copies for strided ones: the CP schemes work on
// contiguous [B, S, H, D] / [B, H, S] tensors, so a strided input is packed into engine memory first and a strided
// output is written there and unpacked after the call.
#pragma once

#include <cstdint>
#include <vector>

#include "hcp/attention_params.hpp"
#include "hcp/cp_engine.hpp"
#include "hcp/hcp.h"

namespace hcp::capi {

hcp_device to_device(int32_t value, const char* fn, const char* name);

// A validated descriptor: dtype, device, rank-`ndim` shape and strides (the last dimension contiguous).
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  hcp_device device = HCP_DEVICE_CPU;
  int ndim = 0;
  int64_t shape[4] = {};
  int64_t strides[4] = {};
  bool contiguous() const;
  // Contiguous, and on the GPU 16-byte aligned: the CUDA kernels read input rows 16 bytes at a time, so a device
  // tensor that starts elsewhere is staged like a strided one.
  bool usable_in_place() const;
  size_t elem() const { return dtype_size(dtype); }
};

// Throws Error naming fn and name: invalid_argument (NULL, bad enums, non-positive strides), shape (rank, sizes,
// overflow), unsupported (a last dimension that is not contiguous, CUDA without the GPU path).
TensorView view(const hcp_tensor* t, int ndim, const char* fn, const char* name);
// Same device, dtype and shape as `ref` (shape[0..ndim)), else Error{shape} / {invalid_argument} naming both.
void expect_like(const TensorView& t, const TensorView& ref, int ndim, DType dtype, const char* fn, const char* name,
                 const char* ref_name);

// Contiguous stand-ins for strided tensors, in `eng`'s memory. input() packs at once; output() hands out a
// scratch buffer that finish() unpacks into the caller's tensor.
class ContiguousStaging {
 public:
  explicit ContiguousStaging(CpEngine& eng) : eng_(eng) {}
  void* input(const TensorView& t);
  void* output(const TensorView& t);
  void finish();

 private:
  void* stage(const TensorView& t, bool pack);
  void copy(const TensorView& t, void* contiguous, bool pack);

  CpEngine& eng_;
  std::vector<EngineBuffer> buffers_;
  std::vector<std::pair<TensorView, void*>> outputs_;
};

}  // namespace hcp::capi
