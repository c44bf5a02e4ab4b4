// Which backward block function serves head dim D, with its grid tile and shared memory: flash_backward.cuh up to
// head dim 128, flash_backward_wide.cuh above (where one warp cannot hold dK and dV for all columns). The CUDA
// launcher and the block emulator both launch through these names.
#pragma once

#include <cstddef>

#include "flash_backward.cuh"
#include "flash_backward_wide.cuh"

namespace hcp::kern {

template <int D>
constexpr bool kWideBackward = D > 128;
template <int D>
constexpr int kBwdBlockKeys = kWideBackward<D> ? kWideKeys : kBwdKeys;  // keys per block: the grid's x tile
template <int D>
constexpr size_t kBwdSmemBytes = kWideBackward<D> ? WideBwdSmem<D>::bytes : BwdSmem<D>::bytes;

template <class E, int D, bool Causal>
HCP_KFN void backward_block(const BlockCtx& ctx, const AttnParams& p, int bx, int by, int bz, char* smem) {
  if constexpr (kWideBackward<D>)
    flash_backward_wide_block<E, D, Causal>(ctx, p, bx, by, bz, smem);
  else
    flash_backward_block<E, D, Causal>(ctx, p, bx, by, bz, smem);
}

}  // namespace hcp::kern
