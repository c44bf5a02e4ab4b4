#include "hcp/dtype_convert.hpp"

#include <cstring>

#include "cpu/bf16.hpp"
#include "cpu/half.hpp"

namespace hcp {

void convert_from_f32(const float* src, void* dst, DType dtype, int64_t n) {
  if (dtype == DType::f32) {
    if (src != dst) std::memmove(dst, src, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  auto* out = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) out[i] = dtype == DType::bf16 ? cpu::float_to_bf16(src[i]) : cpu::float_to_f16(src[i]);
}

void convert_to_f32(const void* src, DType dtype, float* dst, int64_t n) {
  if (dtype == DType::f32) {
    if (src != dst) std::memmove(dst, src, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  const auto* in = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = dtype == DType::bf16 ? cpu::bf16_to_float(in[i]) : cpu::f16_to_float(in[i]);
}

}  // namespace hcp
