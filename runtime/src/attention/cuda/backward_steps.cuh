// The query steps of a backward block, shared by both backward kernels (flash_backward.cuh, flash_backward_wide.cuh).
// A block owns Keys keys of one (batch, kv head) and visits every (head of its GQA group, Rows-row query tile) that
// can see them: under a causal mask, the tiles from the first one whose rows reach the block's first key on. Each
// step's Q and dO arrive by cp.async in one of two buffers while the step before computes.
#pragma once

#include "hcp/attention_params.hpp"
#include "kernel_env.cuh"
#include "tile_loads.cuh"

namespace hcp::kern {

template <class T, int D, int Keys, int Rows, bool Causal>
struct BwdSteps {
  // Shared memory: qs and dos are [2][Rows][D + 8], lse_s and delta_s [2][Rows].
  T *qs, *dos;
  float *lse_s, *delta_s;
  int64_t b, hk, group, m_begin, tiles, count;

  // Starts the block: its keys [k0, k0 + Keys) of K and V into ks and vs ([Keys][D + 8]) and step 0's loads.
  HCP_KFN BwdSteps(const BlockCtx& ctx, const AttnParams& p, int64_t batch, int64_t kv_head, int64_t k0, T* ks, T* vs,
                   T* q_smem, T* dout_smem, float* lse_smem, float* delta_smem)
      : qs(q_smem), dos(dout_smem), lse_s(lse_smem), delta_s(delta_smem), b(batch), hk(kv_head),
        group(p.heads / p.kv_heads) {
    m_begin = 0;
    if (Causal) {
      const int64_t first_row = k0 - p.causal_offset;
      m_begin = first_row <= 0 ? 0 : first_row / Rows * Rows;
    }
    tiles = m_begin < p.sq ? (p.sq - m_begin + Rows - 1) / Rows : 0;
    count = group * tiles;
    load_rows_async<T, D, Keys>(ctx, ks, static_cast<const T*>(p.k.data) + b * p.k.stride_b + hk * p.k.stride_h,
                                p.k.stride_s, k0, p.sk, p.k_labels.seg, p.head_dim);
    load_rows_async<T, D, Keys>(ctx, vs, static_cast<const T*>(p.v.data) + b * p.v.stride_b + hk * p.v.stride_h,
                                p.v.stride_s, k0, p.sk, p.k_labels.seg, value_dim(p));
    if (count > 0) {
      load(ctx, p, 0, 0);
      store(ctx, 0);
    } else {
      cp_async_commit();
    }
  }

  HCP_KFN int64_t head(int64_t step) const { return hk * group + step / tiles; }
  HCP_KFN int64_t row0(int64_t step) const { return m_begin + step % tiles * Rows; }

  // Opens step `step`: waits for its loads, meets the block (so every warp is done with the other buffer and with
  // what the step before shared), and starts the next step's loads into the other buffer. Returns this step's
  // buffer.
  HCP_KFN int begin(const BlockCtx& ctx, const AttnParams& p, int64_t step) {
    const int buf = static_cast<int>(step % 2);
    cp_async_wait<0>();
    ctx.sync();
    if (step + 1 < count) load(ctx, p, step + 1, buf ^ 1);
    return buf;
  }

  // Closes step `step`: the next step's lse and delta into the buffer this step did not read; the next begin()'s
  // barrier publishes them.
  HCP_KFN void end(const BlockCtx& ctx, int64_t step) const { store(ctx, static_cast<int>(step % 2) ^ 1); }

  // After the last step: the K and V loads of a block without steps.
  HCP_KFN void finish() const { cp_async_wait<0>(); }

 private:
  // The loaded step's lse (log2 units; +inf where the row has no key or does not exist, so that P = exp2(S - lse)
  // is 0 there) and delta, in the registers of threads < Rows until store() puts them into shared memory.
  float lse_next = 0.0f, delta_next = 0.0f;

  // Step `step`'s Q and dO by cp.async (committed as one group) into buffer `buf`; its lse and delta into
  // registers.
  HCP_KFN void load(const BlockCtx& ctx, const AttnParams& p, int64_t step, int buf) {
    const int64_t h = head(step), m0 = row0(step);
    load_rows_async<T, D, Rows>(ctx, qs + buf * Rows * (D + 8),
                                static_cast<const T*>(p.q.data) + b * p.q.stride_b + h * p.q.stride_h, p.q.stride_s,
                                m0, p.sq, p.q_labels.seg, p.head_dim);
    load_rows_async<T, D, Rows>(ctx, dos + buf * Rows * (D + 8),
                                static_cast<const T*>(p.dout.data) + b * p.dout.stride_b + h * p.dout.stride_h,
                                p.dout.stride_s, m0, p.sq, p.q_labels.seg, value_dim(p));
    cp_async_commit();
    const int tid = ctx.tid();
    if (tid < Rows) {
      const int64_t qi = m0 + tid;
      const float lse = qi < p.sq ? p.lse.data[b * p.lse.stride_b + h * p.lse.stride_h + qi] : -INFINITY;
      lse_next = lse == -INFINITY ? INFINITY : lse * kLog2e;
      delta_next = qi < p.sq ? p.delta.data[b * p.delta.stride_b + h * p.delta.stride_h + qi] : 0.0f;
    }
  }

  HCP_KFN void store(const BlockCtx& ctx, int buf) const {
    const int tid = ctx.tid();
    if (tid < Rows) lse_s[buf * Rows + tid] = lse_next, delta_s[buf * Rows + tid] = delta_next;
  }
};

}  // namespace hcp::kern
