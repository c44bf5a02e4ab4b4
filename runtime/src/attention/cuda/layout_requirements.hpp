// What the CUDA flash kernels need of a tensor's layout beyond check_attention_params: the rows of q, k, v (and of
// dout, in the backward) are read 16 bytes at a time by cp.async, which traps on a misaligned address. So those
// base addresses are 16-byte aligned and every stride a multiple of 8 elements - true of any contiguous
// [B, S, H, D] or [B, H, S, D] tensor with head dim 64, 128 or 256 that starts where an allocator put it, and of
// their row and head slices.
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

// Empty when the kernels can read the 16-bit inputs (with dout when `backward`); else what is wrong, naming the
// tensor.
inline std::string layout_problem(const AttnParams& p, bool backward) {
  const std::pair<const char*, const AttnTensor*> inputs[] = {{"q", &p.q}, {"k", &p.k}, {"v", &p.v}, {"dout", &p.dout}};
  for (const auto& [name, t] : inputs) {
    if (t == &p.dout && !backward) break;
    if (!rows_aligned16(*t))
      return std::string("attention (CUDA): ") + name +
             " must start at a 16-byte aligned address with strides that are multiples of 8 elements (the kernels "
             "read rows 16 bytes at a time)";
  }
  return {};
}

}  // namespace hcp::kern
