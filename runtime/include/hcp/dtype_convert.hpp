// Whole-tensor conversions between fp32 and bf16/fp16 (round to nearest even) or fp32 (a copy).
#pragma once

#include <cstdint>

#include "hcp/attention_params.hpp"

namespace hcp {

void convert_from_f32(const float* src, void* dst, DType dtype, int64_t n);
void convert_to_f32(const void* src, DType dtype, float* dst, int64_t n);

}  // namespace hcp
