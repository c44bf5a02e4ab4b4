// What the CUDA forward kernel needs of a tensor's layout beyond check_attention_params: its q, k and v rows are
// read 16 bytes at a time by cp.async, which traps on a misaligned address. So every q, k, v base address is
// 16-byte aligned and every stride a multiple of 8 elements - true of any contiguous [B, S, H, D] or [B, H, S, D]
// tensor with head dim 64 or 128 that starts where an allocator put it, and of their row and head slices.
// Host-only code, so the tests check it without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "hcp/attention_params.hpp"

namespace hcp::kern {

inline bool rows_aligned16(const AttnTensor& t) {
  return reinterpret_cast<uintptr_t>(t.data) % 16 == 0 && t.stride_b % 8 == 0 && t.stride_s % 8 == 0 &&
         t.stride_h % 8 == 0;
}

// Empty when the forward kernel can read q, k and v; else what is wrong, naming the tensor.
inline std::string forward_layout_problem(const AttnParams& p) {
  const std::pair<const char*, const AttnTensor*> inputs[] = {{"q", &p.q}, {"k", &p.k}, {"v", &p.v}};
  for (const auto& [name, t] : inputs)
    if (!rows_aligned16(*t))
      return std::string("attention (CUDA): ") + name +
             " must start at a 16-byte aligned address with strides that are multiples of 8 elements (the kernel "
             "reads rows 16 bytes at a time)";
  return {};
}

}  // namespace hcp::kern
