// An hcp_tensor over host memory with contiguous strides, as the C ABI tests pass their buffers.
#pragma once

#include <cstdint>
#include <vector>

#include "hcp/hcp.h"

namespace hcp::test {

inline hcp_tensor tensor(void* data, std::vector<int64_t> shape, int32_t dtype = HCP_DTYPE_F32) {
  hcp_tensor t = HCP_TENSOR_INIT;
  t.data = data;
  t.dtype = dtype;
  t.ndim = static_cast<int32_t>(shape.size());
  int64_t stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.shape[i] = shape[static_cast<size_t>(i)];
    t.strides[i] = stride;
    stride *= shape[static_cast<size_t>(i)];
  }
  return t;
}

}  // namespace hcp::test
