// The CP tests' outputs, written in the run's dtype (fp32 or bf16), read back as floats.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "../../runtime/src/attention/cpu/bf16.hpp"
#include "hcp/attention_params.hpp"

namespace hcp::testing {

inline std::vector<float> as_floats(const std::vector<unsigned char>& raw, DType dtype) {
  const size_t e = dtype_size(dtype);
  std::vector<float> f(raw.size() / e);
  for (size_t i = 0; i < f.size(); ++i) {
    if (dtype == DType::f32) {
      std::memcpy(&f[i], raw.data() + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, raw.data() + 2 * i, 2);
      f[i] = cpu::bf16_to_float(h);
    }
  }
  return f;
}

}  // namespace hcp::testing
