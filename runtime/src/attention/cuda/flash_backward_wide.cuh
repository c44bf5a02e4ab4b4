// Flash attention backward at head dim 256, where flash_backward.cuh's layout - each warp owns 16 keys with all
// their dK and dV columns - would need 256 accumulator registers per thread. Here a block owns 32 keys of one
// (batch, kv head) and visits the query rows that see them in 32-row steps; the 4 warps split each step three ways,
// with w = warp, kw = w % 2 and half = w / 2:
//   1. S^T = K Q^T and dP^T = V dO^T for keys 16 kw .. + 15 x queries 16 half .. + 15, then P^T and dS^T in
//      registers (backward_softmax_grad.cuh), written to shared memory rounded to the 16-bit type.
//   2. dV += P^T dO and dK += dS^T Q for keys 16 kw .. + 15 x columns 128 half .. + 127, with P^T and dS^T as A
//      operands from shared memory; dK and dV stay in registers for the whole block (128 per thread) and are added
//      to the f32 outputs without atomics, since the block owns those rows.
//   3. dQ = dS K for queries 16 kw .. + 15 x columns 128 half .. + 127, in two 64-column halves whose results are
//      added to dq with atomics, since every key block contributes to them.
// Phases 1 and 3 do the same products as flash_backward.cuh; phase 2 reads P^T and dS^T from shared memory where
// that kernel keeps them in registers. mma.sync m16n8k16 from ldmatrix throughout; the next step's Q and dO load
// by cp.async into a second buffer while this step computes. Labelled masks (label_mask.cuh) are applied per
// element in phase 1, whose products a warp skips when none of its pairs is visible (its P^T and dS^T are zero).
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

constexpr int kWideKeys = 32;  // keys per block: 16 per warp pair
constexpr int kWideRows = 32;  // query rows per step
static_assert(kThreads == 128, "4 warps: 2 key halves x 2 column (or query) halves");

template <int D>
struct WideBwdSmem {
  static constexpr int ld = D + 8;            // k, v, q, dout rows (16-bit); the pad as in FwdSmem
  static constexpr int ldp = kWideRows + 8;   // P^T and dS^T rows: keys x queries (16-bit)
  static constexpr size_t q_bytes = size_t{kWideRows} * ld * 2;  // one buffer of q or dout
  static constexpr size_t k = 0;
  static constexpr size_t v = k + size_t{kWideKeys} * ld * 2;
  static constexpr size_t q = v + size_t{kWideKeys} * ld * 2;  // two buffers
  static constexpr size_t dout = q + 2 * q_bytes;               // two buffers
  static constexpr size_t pt = dout + 2 * q_bytes;
  static constexpr size_t ds = pt + size_t{kWideKeys} * ldp * 2;
  static constexpr size_t lse = ds + size_t{kWideKeys} * ldp * 2;  // two buffers of kWideRows floats
  static constexpr size_t delta = lse + 2 * kWideRows * 4;         // two buffers
  static constexpr size_t bytes = delta + 2 * kWideRows * 4;
};

// Grid: x = 32-key tile, y = kv head, z = batch. Adds to dq (atomically), dk and dv (f32).
template <class E, int D, bool Causal>
HCP_KFN void flash_backward_wide_block(const BlockCtx& ctx, const AttnParams& p, int bx, int by, int bz,
                                       char* smem) {
  using T = typename E::type;
  using L = WideBwdSmem<D>;
  constexpr int kHalf = D / 2;               // columns of dK, dV and dQ per warp
  constexpr int kHalfTiles = kHalf / 8;      // their 8-column tiles
  constexpr int kDqChunk = 64;               // dQ columns per accumulator pass (phase 3)
  static_assert(kHalf % kDqChunk == 0, "dQ in whole passes");
  T* ks = reinterpret_cast<T*>(smem + L::k);
  T* vs = reinterpret_cast<T*>(smem + L::v);
  T* qs = reinterpret_cast<T*>(smem + L::q);
  T* dos = reinterpret_cast<T*>(smem + L::dout);
  T* pt16 = reinterpret_cast<T*>(smem + L::pt);
  T* ds16 = reinterpret_cast<T*>(smem + L::ds);
  float* lse_s = reinterpret_cast<float*>(smem + L::lse);
  float* delta_s = reinterpret_cast<float*>(smem + L::delta);

  const int tid = ctx.tid(), warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;  // fragment coordinates (warp_ops.cuh)
  const int kw = warp % 2, half = warp / 2;
  const int64_t b = bz, hk = by, k0 = int64_t{bx} * kWideKeys;
  const float scale_log2 = p.scale * kLog2e;

  // ldmatrix lane addresses (see flash_backward.cuh) for the first tile of each operand. A from [m][k]: K and V
  // (phase 1), P^T and dS^T (phase 2); A read transposed from dS^T: dS (phase 3). B from [n][k]: Q and dO
  // (phase 1); B from [k][n], transposed: dO and Q (phase 2), K (phase 3).
  const int mk_row = lane % 16, mk_col = 8 * (lane / 16);
  const int nk_row = 8 * (lane / 16) + lane % 8, nk_col = 8 * (lane / 8 % 2);
  const int kn_row = 8 * (lane / 8 % 2) + lane % 8, kn_col = 8 * (lane / 16);
  const SmemAddr k_a = smem_addr_of(ks) + 2 * ((16 * kw + mk_row) * L::ld + mk_col);
  const SmemAddr v_a = smem_addr_of(vs) + 2 * ((16 * kw + mk_row) * L::ld + mk_col);
  const SmemAddr q_nk = smem_addr_of(qs) + 2 * ((16 * half + nk_row) * L::ld + nk_col);
  const SmemAddr do_nk = smem_addr_of(dos) + 2 * ((16 * half + nk_row) * L::ld + nk_col);
  const SmemAddr pt_a = smem_addr_of(pt16) + 2 * ((16 * kw + mk_row) * L::ldp + mk_col);
  const SmemAddr dst_a = smem_addr_of(ds16) + 2 * ((16 * kw + mk_row) * L::ldp + mk_col);
  const SmemAddr do_kn = smem_addr_of(dos) + 2 * (kn_row * L::ld + kHalf * half + kn_col);
  const SmemAddr q_kn = smem_addr_of(qs) + 2 * (kn_row * L::ld + kHalf * half + kn_col);
  const SmemAddr ds_a = smem_addr_of(ds16) + 2 * (nk_row * L::ldp + 16 * kw + nk_col);
  const SmemAddr k_kn = smem_addr_of(ks) + 2 * (kn_row * L::ld + kHalf * half + kn_col);
  // This lane's first pair of P^T and dS^T in phase 1: row 16 kw + g, column 16 half + 2t.
  const int pairs = ((16 * kw + g) * L::ldp + 16 * half + 2 * t) / 2;

  BwdSteps<T, D, kWideKeys, kWideRows, Causal> steps(ctx, p, b, hk, k0, ks, vs, qs, dos, lse_s, delta_s);
  const bool labelled = label_masked(p);
  const LabelDist dist = label_dist(p);
  const RowLabel key_labels[2] = {labelled ? key_label(p, k0 + 16 * kw + g) : RowLabel{-1, 0},
                                  labelled ? key_label(p, k0 + 16 * kw + g + 8) : RowLabel{-1, 0}};

  float dk[kHalfTiles][4], dv[kHalfTiles][4];
  zero_tiles(dk);
  zero_tiles(dv);

  for (int64_t step = 0; step < steps.count; ++step) {
    const int buf = steps.begin(ctx, p, step);  // also: every warp is done with the step before's P^T and dS^T
    const int64_t m0 = steps.row0(step);
    const int q_off = 2 * buf * kWideRows * L::ld;  // bytes to this step's buffer of q and dout

    // Phase 1: S^T and dP^T for this warp's 16 keys x 16 queries, over all D columns.
    {
      uint64_t visible = 0;
      bool active = true;
      if (labelled) {
        visible = visible_bits<2>(p, dist, key_labels, m0 + 16 * half + 2 * t);
        active = warp_any(visible != 0);
      }
      float st[2][4], dpt[2][4];
      zero_tiles(st);
      zero_tiles(dpt);
      if (active) HCP_UNROLL
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t ka[4], va[4], qb[4], dob[4];
        ldmatrix_x4(ka, k_a + 2 * 16 * kk);
        ldmatrix_x4(va, v_a + 2 * 16 * kk);
        ldmatrix_x4(qb, q_nk + q_off + 2 * 16 * kk);
        ldmatrix_x4(dob, do_nk + q_off + 2 * 16 * kk);
        mma_16816_x2<E>(st[0], st[1], ka, qb);
        mma_16816_x2<E>(dpt[0], dpt[1], va, dob);
      }
      const float* lse_b = lse_s + buf * kWideRows + 16 * half;
      const float* delta_b = delta_s + buf * kWideRows + 16 * half;
      if (p.bias.data) add_bias_keys(p, b, steps.head(step), k0 + 16 * kw + g, m0 + 16 * half + 2 * t, st);
      if (labelled) {
        softmax_grad_tiles_labelled(st, dpt, lse_b, delta_b, scale_log2, visible, t);
      } else {
        const bool mask = k0 + kWideKeys > p.sk || (Causal && k0 + kWideKeys - 1 > m0 + p.causal_offset);
        softmax_grad_tiles<Causal>(st, dpt, lse_b, delta_b, scale_log2, mask, k0 + 16 * kw + g,
                                   m0 + 16 * half + 2 * t, p.sk, p.causal_offset, t);
      }
      if (p.dbias.data) add_dbias_keys(p, b, steps.head(step), k0 + 16 * kw + g, m0 + 16 * half + 2 * t, dpt);
      uint32_t pa[4], dsa[4];
      pack_a<E>(pa, st[0], st[1]);
      pack_a<E>(dsa, dpt[0], dpt[1]);
      store_a<L::ldp>(reinterpret_cast<uint32_t*>(pt16) + pairs, pa);
      store_a<L::ldp>(reinterpret_cast<uint32_t*>(ds16) + pairs, dsa);
    }
    ctx.sync();  // all of P^T and dS^T is written

    // Phase 2: dV += P^T dO and dK += dS^T Q (dK scaled at the end); queries 16 kk .. 16 kk + 15 are k-step kk.
    HCP_UNROLL
    for (int kk = 0; kk < kWideRows / 16; ++kk) {
      uint32_t pa[4], dsa[4];
      ldmatrix_x4(pa, pt_a + 2 * 16 * kk);
      ldmatrix_x4(dsa, dst_a + 2 * 16 * kk);
      const int row = q_off + 2 * 16 * kk * L::ld;
      add_dv_dk_kstep<E>(dv, dk, pa, dsa, do_kn + row, q_kn + row);
    }

    // Phase 3: dQ for queries 16 kw .. + 15 of the step = dS K over the block's 32 keys, added atomically (scaled).
    uint32_t dsq[kWideKeys / 16][4];
    HCP_UNROLL
    for (int kk = 0; kk < kWideKeys / 16; ++kk) ldmatrix_x4_trans(dsq[kk], ds_a + 2 * 16 * kk * L::ldp);
    HCP_UNROLL
    for (int chunk = 0; chunk < kHalf / kDqChunk; ++chunk) {
      float dq[kDqChunk / 8][4];
      zero_tiles(dq);
      HCP_UNROLL
      for (int kk = 0; kk < kWideKeys / 16; ++kk)
        HCP_UNROLL
        for (int np = 0; np < kDqChunk / 16; ++np) {
          uint32_t kb[4];
          ldmatrix_x4_trans(kb, k_kn + 2 * (16 * kk * L::ld + kDqChunk * chunk + 16 * np));
          mma_16816_x2<E>(dq[2 * np], dq[2 * np + 1], dsq[kk], kb);
        }
      add_dq(p, b, steps.head(step), m0 + 16 * kw, kHalf * half + kDqChunk * chunk, dq, lane);
    }
    steps.end(ctx, step);
  }
  steps.finish();
  add_dk_dv(p, b, hk, k0 + 16 * kw, kHalf * half, dk, dv, lane);  // the block owns keys [k0, k0 + 32) of this kv head
}

}  // namespace hcp::kern
