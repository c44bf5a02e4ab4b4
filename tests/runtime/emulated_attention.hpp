// Runs the CUDA flash attention block functions on the host block emulator, with the grids the CUDA launchers use.
#pragma once

#include "../../runtime/src/attention/cuda/backward_kernel.cuh"
#include "../../runtime/src/attention/cuda/flash_forward.cuh"
#include "../../runtime/src/attention/cuda/instances.hpp"

namespace hcp::testing {

inline int64_t tiles(int64_t n, int64_t tile) { return (n + tile - 1) / tile; }

inline bool emulated_forward(const AttnParams& p) {
  return kern::dispatch_instance<kern::ElemBf16, kern::ElemF16>(
      p.dtype, kern::kernel_head_dim(p), kern::diagonal_mask(p), [&]<class E, int D, bool Causal>() {
        emu::launch({tiles(p.sq, kern::kFwdRows<D>), p.heads, p.batch}, kern::kThreads, kern::FwdSmem<D>::bytes,
                    [&](const kern::BlockCtx& ctx, int bx, int by, int bz, char* smem) {
                      kern::flash_forward_block<E, D, Causal>(ctx, p, bx, by, bz, smem);
                    });
      });
}

inline bool emulated_delta(const AttnParams& p) {
  auto run = [&]<class E>() {
    emu::launch({tiles(p.sq, kern::kThreads), p.heads, p.batch}, kern::kThreads, 0,
                [&](const kern::BlockCtx& ctx, int bx, int by, int bz, char*) {
                  kern::attention_delta_block<E>(ctx, p, bx, by, bz);
                });
    return true;
  };
  if (p.dtype == DType::bf16) return run.template operator()<kern::ElemBf16>();
  if (p.dtype == DType::f16) return run.template operator()<kern::ElemF16>();
  return false;
}

// The backward blocks only (delta must be there).
inline bool emulated_backward_only(const AttnParams& p) {
  return kern::dispatch_instance<kern::ElemBf16, kern::ElemF16>(
      p.dtype, kern::kernel_head_dim(p), kern::diagonal_mask(p), [&]<class E, int D, bool Causal>() {
        emu::launch({tiles(p.sk, kern::kBwdBlockKeys<D>), p.kv_heads, p.batch}, kern::kThreads,
                    kern::kBwdSmemBytes<D>, [&](const kern::BlockCtx& ctx, int bx, int by, int bz, char* smem) {
                      kern::backward_block<E, D, Causal>(ctx, p, bx, by, bz, smem);
                    });
      });
}

// delta from dout and out, then the backward blocks.
inline bool emulated_backward(const AttnParams& p) { return emulated_delta(p) && emulated_backward_only(p); }

}  // namespace hcp::testing
