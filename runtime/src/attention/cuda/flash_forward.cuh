// Flash attention forward for one block: 64 query rows of one (batch, head), all visible keys in 64-row tiles.
// Tensor cores (WMMA 16x16x16, bf16/fp16 in, fp32 accumulate) compute S = Q K^T and O += P V; the online softmax
// runs in fp32 on shared memory, one lane per row, with scores in log2 units so exp2 does the work. The output
// accumulator lives in shared memory because WMMA fragments do not say which lane holds which row, and the
// per-row rescale needs rows.
#pragma once

#include "hcp/attention_params.hpp"
#include "kernel_env.cuh"

namespace hcp::kern {

template <int D>
struct FwdSmem {
  static constexpr int ldt = D + 8;      // q, k, v tiles (16-bit elements); the pad staggers banks
  static constexpr int lds = kTile + 4;  // fp32 scores
  static constexpr int ldp = kTile + 8;  // probabilities (16-bit)
  static constexpr int ldo = D + 4;      // fp32 output accumulator
  static constexpr size_t q = 0;
  static constexpr size_t k = align_smem(q + size_t{kTile} * ldt * 2);
  static constexpr size_t v = align_smem(k + size_t{kTile} * ldt * 2);
  static constexpr size_t s = align_smem(v + size_t{kTile} * ldt * 2);
  static constexpr size_t p = align_smem(s + size_t{kTile} * lds * 4);
  static constexpr size_t o = align_smem(p + size_t{kTile} * ldp * 2);
  static constexpr size_t row_max = align_smem(o + size_t{kTile} * ldo * 4);
  static constexpr size_t row_sum = align_smem(row_max + kTile * 4);
  static constexpr size_t bytes = align_smem(row_sum + kTile * 4);
};

// Grid: x = query tile, y = head, z = batch. Writes out (f32) and lse (natural log) for rows < sq.
template <class E, int D, bool Causal>
HCP_KFN void flash_forward_block(const BlockCtx& ctx, const AttnParams& p, int bx, int by, int bz, char* smem) {
  using T = typename E::type;
  using L = FwdSmem<D>;
  using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major>;
  using FragBt = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major>;
  using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major>;
  using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
  T* qs = reinterpret_cast<T*>(smem + L::q);
  T* ks = reinterpret_cast<T*>(smem + L::k);
  T* vs = reinterpret_cast<T*>(smem + L::v);
  float* ss = reinterpret_cast<float*>(smem + L::s);
  T* ps = reinterpret_cast<T*>(smem + L::p);
  float* os = reinterpret_cast<float*>(smem + L::o);
  float* row_max = reinterpret_cast<float*>(smem + L::row_max);
  float* row_sum = reinterpret_cast<float*>(smem + L::row_sum);

  const int tid = ctx.tid(), warp = tid / 32, lane = tid % 32;
  const int64_t b = bz, h = by, q0 = int64_t{bx} * kTile;
  const int64_t hk = h / (p.heads / p.kv_heads);
  const T* qg = static_cast<const T*>(p.q.data) + b * p.q.stride_b + h * p.q.stride_h;
  const T* kg = static_cast<const T*>(p.k.data) + b * p.k.stride_b + hk * p.k.stride_h;
  const T* vg = static_cast<const T*>(p.v.data) + b * p.v.stride_b + hk * p.v.stride_h;
  const float scale_log2 = p.scale * kLog2e;

  load_tile<E, D>(ctx, qs, L::ldt, qg, p.q.stride_s, q0, p.sq);
  float* outg = static_cast<float*>(p.out.data) + b * p.out.stride_b + h * p.out.stride_h;
  float* lseg = p.lse.data + b * p.lse.stride_b + h * p.lse.stride_h;
  // Fresh rows start empty; with p.accumulate they resume from the earlier result (max lse, sum 1, output out).
  for (int i = tid; i < kTile * L::ldo; i += kThreads) {
    const int r = i / L::ldo, d = i % L::ldo;
    const int64_t qi = q0 + r;
    const bool resume = p.accumulate && qi < p.sq && d < D && lseg[qi] != -INFINITY;
    os[i] = resume ? outg[qi * p.out.stride_s + d] : 0.0f;
  }
  if (tid < kTile) {
    const int64_t qi = q0 + tid;
    const bool resume = p.accumulate && qi < p.sq && lseg[qi] != -INFINITY;
    row_max[tid] = resume ? lseg[qi] * kLog2e : -INFINITY;
    row_sum[tid] = resume ? 1.0f : 0.0f;
  }
  // Keys past the last row's diagonal are invisible to the whole block.
  int64_t k_end = p.sk;
  if (Causal) {
    const int64_t last_row = (q0 + kTile < p.sq ? q0 + kTile : p.sq) - 1;
    const int64_t last_key = last_row + p.causal_offset;
    k_end = last_key < 0 ? 0 : (last_key + 1 < p.sk ? last_key + 1 : p.sk);
  }
  ctx.sync();

  for (int64_t k0 = 0; k0 < k_end; k0 += kTile) {
    load_tile<E, D>(ctx, ks, L::ldt, kg, p.k.stride_s, k0, p.sk);
    load_tile<E, D>(ctx, vs, L::ldt, vg, p.v.stride_s, k0, p.sk);
    ctx.sync();

    for (int j = 0; j < kTile / 16; ++j) {  // this warp's 16 rows of S = Q K^T
      FragC acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int kk = 0; kk < D / 16; ++kk) {
        FragA a;
        FragBt bt;
        wmma::load_matrix_sync(a, qs + warp * 16 * L::ldt + kk * 16, L::ldt);
        wmma::load_matrix_sync(bt, ks + j * 16 * L::ldt + kk * 16, L::ldt);
        wmma::mma_sync(acc, a, bt, acc);
      }
      wmma::store_matrix_sync(ss + warp * 16 * L::lds + j * 16, acc, L::lds, wmma::mem_row_major);
    }
    ctx.sync_warp();

    if (lane < 16) {  // online softmax, one lane per row
      const int r = warp * 16 + lane;
      const int64_t qi = q0 + r;
      const float* srow = ss + r * L::lds;
      T* prow = ps + r * L::ldp;
      float tile_max = -INFINITY;
      for (int c = 0; c < kTile; ++c) {
        const int64_t kj = k0 + c;
        if (kj < p.sk && (!Causal || kj <= qi + p.causal_offset)) tile_max = fmaxf(tile_max, srow[c] * scale_log2);
      }
      const float old_max = row_max[r];
      const float new_max = fmaxf(old_max, tile_max);
      float alpha = 1.0f, sum = 0.0f;
      if (new_max == -INFINITY) {  // nothing visible yet: the row stays empty
        for (int c = 0; c < kTile; ++c) prow[c] = E::from_float(0.0f);
      } else {
        alpha = fast_exp2(old_max - new_max);  // 0 when old_max is -inf
        for (int c = 0; c < kTile; ++c) {
          const int64_t kj = k0 + c;
          const bool visible = kj < p.sk && (!Causal || kj <= qi + p.causal_offset);
          const float pv = visible ? fast_exp2(srow[c] * scale_log2 - new_max) : 0.0f;
          prow[c] = E::from_float(pv);
          sum += pv;
        }
      }
      row_max[r] = new_max;
      row_sum[r] = row_sum[r] * alpha + sum;
      if (alpha != 1.0f)
        for (int d = 0; d < D; ++d) os[r * L::ldo + d] *= alpha;
    }
    ctx.sync_warp();

    for (int j = 0; j < D / 16; ++j) {  // this warp's 16 rows of O += P V
      FragC acc;
      wmma::load_matrix_sync(acc, os + warp * 16 * L::ldo + j * 16, L::ldo, wmma::mem_row_major);
      for (int kk = 0; kk < kTile / 16; ++kk) {
        FragA a;
        FragB bv;
        wmma::load_matrix_sync(a, ps + warp * 16 * L::ldp + kk * 16, L::ldp);
        wmma::load_matrix_sync(bv, vs + kk * 16 * L::ldt + j * 16, L::ldt);
        wmma::mma_sync(acc, a, bv, acc);
      }
      wmma::store_matrix_sync(os + warp * 16 * L::ldo + j * 16, acc, L::ldo, wmma::mem_row_major);
    }
    ctx.sync();  // every warp is done with this K, V tile and its stores are visible
  }

  for (int i = tid; i < kTile * D; i += kThreads) {
    const int r = i / D, d = i % D;
    const int64_t qi = q0 + r;
    if (qi < p.sq) outg[qi * p.out.stride_s + d] = row_sum[r] > 0.0f ? os[r * L::ldo + d] / row_sum[r] : 0.0f;
  }
  if (tid < kTile && q0 + tid < p.sq) {
    const float lse = row_max[tid] == -INFINITY ? -INFINITY : (row_max[tid] + fast_log2(row_sum[tid])) * kLn2;
    lseg[q0 + tid] = lse;
  }
}

}  // namespace hcp::kern
