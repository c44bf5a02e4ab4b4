// Flash attention backward for one block, FlashAttention-2 style: 64 keys of one (batch, kv head), every query row
// of every head in its GQA group that can see them, in 64-row steps. Each warp owns 16 keys and works keys x
// queries (S^T), so that every product it needs takes the C fragment of the one before as its A fragment, in
// registers: S^T = K Q^T and dP^T = V dO^T, then P^T = exp(S^T - lse) and dS^T = P^T (dP^T - delta), then
// dV += P^T dO and dK += dS^T Q. dK and dV stay in registers for the whole block (the block owns those rows, so they
// are added to the f32 outputs without atomics). dQ = dS K needs dS with queries as rows: dS^T goes through shared
// memory once, the warps split the step's queries, and each adds its dQ rows with atomics, since every key block
// contributes to them. mma.sync m16n8k16 from ldmatrix throughout; the next step's Q and dO load by cp.async into
// a second buffer while this step computes. Labelled masks (label_mask.cuh) are applied per element, and a warp that
// sees none of a step's pairs skips its products there (its dS^T is zero for the block's dQ).
#pragma once

#include "hcp/attention_params.hpp"
#include "backward_dk_dv_tiles.cuh"
#include "bias_tiles.cuh"
#include "backward_outputs.cuh"
#include "backward_softmax_grad.cuh"
#include "backward_steps.cuh"
#include "kernel_env.cuh"
#include "label_mask.cuh"
#include "tile_loads.cuh"
#include "warp_ops.cuh"

namespace hcp::kern {

constexpr int kBwdKeys = 64;  // keys per block: 16 per warp
constexpr int kBwdRows = 64;  // query rows per step
static_assert(kBwdKeys == 4 * 16 && kThreads == 128, "4 warps own 16 keys each");

template <int D>
struct BwdSmem {
  static constexpr int ld = D + 8;           // k, v, q, dout rows (16-bit); the pad as in FwdSmem
  static constexpr int lds = kBwdRows + 8;   // dS^T rows: keys x queries (16-bit)
  static constexpr size_t q_bytes = size_t{kBwdRows} * ld * 2;  // one buffer of q or dout
  static constexpr size_t k = 0;
  static constexpr size_t v = k + size_t{kBwdKeys} * ld * 2;
  static constexpr size_t q = v + size_t{kBwdKeys} * ld * 2;  // two buffers
  static constexpr size_t dout = q + 2 * q_bytes;              // two buffers
  static constexpr size_t ds = dout + 2 * q_bytes;
  static constexpr size_t lse = ds + size_t{kBwdKeys} * lds * 2;  // two buffers of kBwdRows floats
  static constexpr size_t delta = lse + 2 * kBwdRows * 4;         // two buffers
  static constexpr size_t bytes = delta + 2 * kBwdRows * 4;
};

// Grid: x = key tile, y = kv head, z = batch. Adds to dq (atomically), dk and dv (f32).
template <class E, int D, bool Causal>
HCP_KFN void flash_backward_block(const BlockCtx& ctx, const AttnParams& p, int bx, int by, int bz, char* smem) {
  using T = typename E::type;
  using L = BwdSmem<D>;
  constexpr int kOutTiles = D / 8;         // 8-column tiles of dK, dV, dQ
  constexpr int kRowTiles = kBwdRows / 8;  // 8-query tiles of S^T
  T* ks = reinterpret_cast<T*>(smem + L::k);
  T* vs = reinterpret_cast<T*>(smem + L::v);
  T* qs = reinterpret_cast<T*>(smem + L::q);
  T* dos = reinterpret_cast<T*>(smem + L::dout);
  T* ds16 = reinterpret_cast<T*>(smem + L::ds);
  float* lse_s = reinterpret_cast<float*>(smem + L::lse);
  float* delta_s = reinterpret_cast<float*>(smem + L::delta);

  const int tid = ctx.tid(), warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;  // fragment coordinates (warp_ops.cuh)
  const int64_t b = bz, hk = by, k0 = int64_t{bx} * kBwdKeys;
  const float scale_log2 = p.scale * kLog2e;

  // ldmatrix lane addresses (see flash_forward.cuh) for the first tile of each operand; the rest are constant byte
  // offsets away, plus the buffer's offset for q and dout. A operands (rows x 16): this warp's keys of K and V, and
  // dS (queries x keys) read transposed from dS^T. B operands: Q and dO as [n][k] (S^T, dP^T) and as [k][n]
  // transposed (dK, dV), K as [k][n] transposed (dQ).
  const SmemAddr k_a = smem_addr_of(ks) + 2 * ((warp * 16 + lane % 16) * L::ld + 8 * (lane / 16));
  const SmemAddr v_a = smem_addr_of(vs) + 2 * ((warp * 16 + lane % 16) * L::ld + 8 * (lane / 16));
  const int nk_row = 8 * (lane / 16) + lane % 8, nk_col = 8 * (lane / 8 % 2);  // B from [n][k]
  const int kn_row = 8 * (lane / 8 % 2) + lane % 8, kn_col = 8 * (lane / 16);  // B from [k][n], transposed
  const SmemAddr q_nk = smem_addr_of(qs) + 2 * (nk_row * L::ld + nk_col);
  const SmemAddr do_nk = smem_addr_of(dos) + 2 * (nk_row * L::ld + nk_col);
  const SmemAddr q_kn = smem_addr_of(qs) + 2 * (kn_row * L::ld + kn_col);
  const SmemAddr do_kn = smem_addr_of(dos) + 2 * (kn_row * L::ld + kn_col);
  const SmemAddr k_kn = smem_addr_of(ks) + 2 * (kn_row * L::ld + kn_col);
  // This lane's first pair of dS^T: row 16 warp + g, column 2t.
  uint32_t* ds_pairs = reinterpret_cast<uint32_t*>(ds16) + ((16 * warp + g) * L::lds + 2 * t) / 2;
  const SmemAddr ds_a = smem_addr_of(ds16) + 2 * (nk_row * L::lds + 16 * warp + nk_col);

  BwdSteps<T, D, kBwdKeys, kBwdRows, Causal> steps(ctx, p, b, hk, k0, ks, vs, qs, dos, lse_s, delta_s);
  const bool labelled = label_masked(p);
  const LabelDist dist = label_dist(p);
  const RowLabel key_labels[2] = {labelled ? key_label(p, k0 + 16 * warp + g) : RowLabel{-1, 0},
                                  labelled ? key_label(p, k0 + 16 * warp + g + 8) : RowLabel{-1, 0}};

  float dk[kOutTiles][4], dv[kOutTiles][4];
  zero_tiles(dk);
  zero_tiles(dv);

  for (int64_t step = 0; step < steps.count; ++step) {
    const int buf = steps.begin(ctx, p, step);  // also: every warp is done with the step before's dS^T
    const int64_t m0 = steps.row0(step);
    const int q_off = 2 * buf * kBwdRows * L::ld;  // bytes to this step's buffer of q and dout
    const float* lse_b = lse_s + buf * kBwdRows;
    const float* delta_b = delta_s + buf * kBwdRows;

    uint64_t visible = 0;
    bool active = true;
    if (labelled) {
      visible = visible_bits<kRowTiles>(p, dist, key_labels, m0 + 2 * t);
      active = warp_any(visible != 0);
    }

    // S^T = K Q^T and dP^T = V dO^T for this warp's 16 keys and the step's 64 queries.
    float st[kRowTiles][4], dpt[kRowTiles][4];
    zero_tiles(st);
    zero_tiles(dpt);
    if (active) HCP_UNROLL
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t ka[4], va[4];
      ldmatrix_x4(ka, k_a + 2 * 16 * kk);
      ldmatrix_x4(va, v_a + 2 * 16 * kk);
      HCP_UNROLL
      for (int np = 0; np < kRowTiles / 2; ++np) {
        uint32_t qb[4], dob[4];
        ldmatrix_x4(qb, q_nk + q_off + 2 * (16 * np * L::ld + 16 * kk));
        ldmatrix_x4(dob, do_nk + q_off + 2 * (16 * np * L::ld + 16 * kk));
        mma_16816_x2<E>(st[2 * np], st[2 * np + 1], ka, qb);
        mma_16816_x2<E>(dpt[2 * np], dpt[2 * np + 1], va, dob);
      }
    }

    // P^T and dS^T in place of S^T and dP^T: this warp's keys from k0 + 16 warp, the step's queries from m0.
    if (p.bias.data) add_bias_keys(p, b, steps.head(step), k0 + 16 * warp + g, m0 + 2 * t, st);
    if (labelled) {
      softmax_grad_tiles_labelled(st, dpt, lse_b, delta_b, scale_log2, visible, t);
    } else {
      const bool mask = k0 + kBwdKeys > p.sk || (Causal && k0 + kBwdKeys - 1 > m0 + p.causal_offset);
      softmax_grad_tiles<Causal>(st, dpt, lse_b, delta_b, scale_log2, mask, k0 + 16 * warp + g, m0 + 2 * t, p.sk,
                                 p.causal_offset, t);
    }
    if (p.dbias.data && active) add_dbias_keys(p, b, steps.head(step), k0 + 16 * warp + g, m0 + 2 * t, dpt);

    // dV += P^T dO and dK += dS^T Q (dK scaled at the end): queries 16 kk .. 16 kk + 15 are k-step kk.
    HCP_UNROLL
    for (int kk = 0; kk < kBwdRows / 16; ++kk) {
      uint32_t pa[4], dsa[4];
      pack_a<E>(pa, st[2 * kk], st[2 * kk + 1]);
      pack_a<E>(dsa, dpt[2 * kk], dpt[2 * kk + 1]);
      store_a<L::lds>(ds_pairs + 8 * kk, dsa);  // dS^T to shared memory, for dQ (zero from an inactive warp)
      const int row = q_off + 2 * 16 * kk * L::ld;
      if (active) add_dv_dk_kstep<E>(dv, dk, pa, dsa, do_kn + row, q_kn + row);
    }
    ctx.sync();  // all of dS^T is written

    // dQ for this warp's 16 queries of the step = dS K, over the block's 64 keys, added atomically (scaled).
    float dq[kOutTiles][4];
    zero_tiles(dq);
    HCP_UNROLL
    for (int kk = 0; kk < kBwdKeys / 16; ++kk) {
      uint32_t a[4];
      ldmatrix_x4_trans(a, ds_a + 2 * 16 * kk * L::lds);
      HCP_UNROLL
      for (int np = 0; np < kOutTiles / 2; ++np) {
        uint32_t kb[4];
        ldmatrix_x4_trans(kb, k_kn + 2 * (16 * kk * L::ld + 16 * np));
        mma_16816_x2<E>(dq[2 * np], dq[2 * np + 1], a, kb);
      }
    }
    add_dq(p, b, steps.head(step), m0 + 16 * warp, 0, dq, lane);
    steps.end(ctx, step);
  }
  steps.finish();
  add_dk_dv(p, b, hk, k0 + 16 * warp, 0, dk, dv, lane);  // the block owns keys [k0, k0 + 64) of this kv head
}

// delta[b, h, s] = sum_d dout * out, one thread per row. Grid: x = 128-row tile, y = head, z = batch.
template <class E>
HCP_KFN void attention_delta_block(const BlockCtx& ctx, const AttnParams& p, int bx, int by, int bz) {
  using T = typename E::type;
  const int64_t s = int64_t{bx} * kThreads + ctx.tid();
  if (s >= p.sq) return;
  const T* dout =
      static_cast<const T*>(p.dout.data) + bz * p.dout.stride_b + s * p.dout.stride_s + by * p.dout.stride_h;
  const float* out = static_cast<const float*>(p.out.data) + bz * p.out.stride_b + s * p.out.stride_s +
                     by * p.out.stride_h;
  float sum = 0.0f;
  for (int64_t d = 0; d < value_dim(p); ++d) sum += E::to_float(dout[d]) * out[d];
  p.delta.data[bz * p.delta.stride_b + by * p.delta.stride_h + s] = sum;
}

}  // namespace hcp::kern
