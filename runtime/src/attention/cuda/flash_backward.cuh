// Flash attention backward for one block, FlashAttention-2 style: 64 keys of one (batch, kv head), every query row
// of every head in its GQA group that can see them, in 64-row steps. Each warp owns 16 keys and works keys x
// queries (S^T), so that every product it needs takes the C fragment of the one before as its A fragment, in
// registers: S^T = K Q^T and dP^T = V dO^T, then P^T = exp(S^T - lse) and dS^T = P^T (dP^T - delta), then
// dV += P^T dO and dK += dS^T Q. dK and dV stay in registers for the whole block (the block owns those rows, so they
// are added to the f32 outputs without atomics). dQ = dS K needs dS with queries as rows: dS^T goes through shared
// memory once, the warps split the step's queries, and each adds its dQ rows with atomics, since every key block
// contributes to them. mma.sync m16n8k16 from ldmatrix throughout; the next step's Q and dO load by cp.async into
// a second buffer while this step computes.
#pragma once

#include "hcp/attention_params.hpp"
#include "kernel_env.cuh"
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
  uint32_t* ds32 = reinterpret_cast<uint32_t*>(smem + L::ds);  // packed pairs
  float* lse_s = reinterpret_cast<float*>(smem + L::lse);
  float* delta_s = reinterpret_cast<float*>(smem + L::delta);

  const int tid = ctx.tid(), warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;  // fragment coordinates (warp_ops.cuh)
  const int64_t b = bz, hk = by, k0 = int64_t{bx} * kBwdKeys;
  const int64_t group = p.heads / p.kv_heads;
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
  const SmemAddr ds_a = smem_addr_of(ds32) + 2 * (nk_row * L::lds + 16 * warp + nk_col);

  // Query rows before the first one that sees key k0 contribute nothing; the steps run over (head of the group,
  // query tile from there on).
  int64_t m_begin = 0;
  if (Causal) {
    const int64_t first_row = k0 - p.causal_offset;
    m_begin = first_row <= 0 ? 0 : first_row / kBwdRows * kBwdRows;
  }
  const int64_t tiles = m_begin < p.sq ? (p.sq - m_begin + kBwdRows - 1) / kBwdRows : 0;
  const int64_t steps = group * tiles;
  auto head_of = [&](int64_t step) { return hk * group + step / tiles; };
  auto row0_of = [&](int64_t step) { return m_begin + step % tiles * kBwdRows; };

  // Step `step`'s Q and dO by cp.async into buffer `buf`; its lse (log2 units; +inf where the row has no key or
  // does not exist, so that P = exp2(S - lse) is 0 there) and delta into registers of threads < kBwdRows, stored
  // into shared memory by store_rows once this step's readers of that buffer are done.
  float lse_next = 0.0f, delta_next = 0.0f;
  auto load_step = [&](int64_t step, int buf) {
    const int64_t h = head_of(step), m0 = row0_of(step);
    load_rows_async<T, D, kBwdRows>(ctx, qs + buf * kBwdRows * L::ld,
                                    static_cast<const T*>(p.q.data) + b * p.q.stride_b + h * p.q.stride_h,
                                    p.q.stride_s, m0, p.sq);
    load_rows_async<T, D, kBwdRows>(ctx, dos + buf * kBwdRows * L::ld,
                                    static_cast<const T*>(p.dout.data) + b * p.dout.stride_b + h * p.dout.stride_h,
                                    p.dout.stride_s, m0, p.sq);
    cp_async_commit();
    if (tid < kBwdRows) {
      const int64_t qi = m0 + tid;
      const float lse = qi < p.sq ? p.lse.data[b * p.lse.stride_b + h * p.lse.stride_h + qi] : -INFINITY;
      lse_next = lse == -INFINITY ? INFINITY : lse * kLog2e;
      delta_next = qi < p.sq ? p.delta.data[b * p.delta.stride_b + h * p.delta.stride_h + qi] : 0.0f;
    }
  };
  auto store_rows = [&](int buf) {
    if (tid < kBwdRows) lse_s[buf * kBwdRows + tid] = lse_next, delta_s[buf * kBwdRows + tid] = delta_next;
  };

  const T* kg = static_cast<const T*>(p.k.data) + b * p.k.stride_b + hk * p.k.stride_h;
  const T* vg = static_cast<const T*>(p.v.data) + b * p.v.stride_b + hk * p.v.stride_h;
  load_rows_async<T, D, kBwdKeys>(ctx, ks, kg, p.k.stride_s, k0, p.sk);
  load_rows_async<T, D, kBwdKeys>(ctx, vs, vg, p.v.stride_s, k0, p.sk);
  if (steps > 0) {
    load_step(0, 0);
    store_rows(0);
  } else {
    cp_async_commit();
  }

  float dk[kOutTiles][4], dv[kOutTiles][4];
  zero_tiles(dk);
  zero_tiles(dv);

  for (int64_t step = 0; step < steps; ++step) {
    const int buf = static_cast<int>(step % 2);
    const int64_t m0 = row0_of(step);
    cp_async_wait<0>();
    ctx.sync();  // this step's Q, dO, lse, delta are in; every warp is done with the other buffer and with dS^T
    if (step + 1 < steps) load_step(step + 1, buf ^ 1);
    const int q_off = 2 * buf * kBwdRows * L::ld;  // bytes to this step's buffer of q and dout
    const float* lse_b = lse_s + buf * kBwdRows;
    const float* delta_b = delta_s + buf * kBwdRows;

    // S^T = K Q^T and dP^T = V dO^T for this warp's 16 keys and the step's 64 queries.
    float st[kRowTiles][4], dpt[kRowTiles][4];
    zero_tiles(st);
    zero_tiles(dpt);
    HCP_UNROLL
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

    // P^T and dS^T in place of S^T and dP^T. Element i of tile nt is key k0 + 16 warp + g + r of query
    // m0 + 2 t + c, with r = 8 (i >= 2) and c = 8 nt + i % 2; masking (as in the forward kernel) only where the
    // block's last key passes the end of the keys or the diagonal of the step's first query.
    const bool mask = k0 + kBwdKeys > p.sk || (Causal && k0 + kBwdKeys - 1 > m0 + p.causal_offset);
    const int key_room = clamp_room(p.sk - k0 - 16 * warp - g);
    const int diag_room = clamp_room(m0 + p.causal_offset - k0 - 16 * warp - g + 2 * t);
    HCP_UNROLL
    for (int nt = 0; nt < kRowTiles; ++nt)
      HCP_UNROLL
      for (int i = 0; i < 4; ++i) {
        const int r = i >= 2 ? 8 : 0, c = 8 * nt + i % 2;
        const bool visible = !mask || (r < key_room && (!Causal || r - c <= diag_room));
        const float pv = visible ? fast_exp2(fmaf(st[nt][i], scale_log2, -lse_b[c + 2 * t])) : 0.0f;
        st[nt][i] = pv;
        dpt[nt][i] = pv * (dpt[nt][i] - delta_b[c + 2 * t]);
      }

    // dV += P^T dO and dK += dS^T Q (dK scaled at the end): queries 16 kk .. 16 kk + 15 are k-step kk.
    HCP_UNROLL
    for (int kk = 0; kk < kBwdRows / 16; ++kk) {
      uint32_t pa[4], dsa[4];
      pack_a<E>(pa, st[2 * kk], st[2 * kk + 1]);
      pack_a<E>(dsa, dpt[2 * kk], dpt[2 * kk + 1]);
      // dS^T to shared memory for dQ: this lane's pairs are rows 16 warp + g (+ 8), columns 16 kk + 2 t (+ 8).
      uint32_t* ds_row = ds32 + ((16 * warp + g) * L::lds + 16 * kk + 2 * t) / 2;
      ds_row[0] = dsa[0], ds_row[8 * L::lds / 2] = dsa[1], ds_row[4] = dsa[2], ds_row[8 * L::lds / 2 + 4] = dsa[3];
      HCP_UNROLL
      for (int np = 0; np < kOutTiles / 2; ++np) {
        uint32_t dob[4], qb[4];
        ldmatrix_x4_trans(dob, do_kn + q_off + 2 * (16 * kk * L::ld + 16 * np));
        ldmatrix_x4_trans(qb, q_kn + q_off + 2 * (16 * kk * L::ld + 16 * np));
        mma_16816_x2<E>(dv[2 * np], dv[2 * np + 1], pa, dob);
        mma_16816_x2<E>(dk[2 * np], dk[2 * np + 1], dsa, qb);
      }
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
    const int64_t h = head_of(step);
    float* dqg = static_cast<float*>(p.dq.data) + b * p.dq.stride_b + h * p.dq.stride_h;
    HCP_UNROLL
    for (int hf = 0; hf < 2; ++hf) {
      const int64_t qi = m0 + 16 * warp + g + 8 * hf;
      if (qi >= p.sq) continue;
      HCP_UNROLL
      for (int nd = 0; nd < kOutTiles; ++nd) {
        float* dst = dqg + qi * p.dq.stride_s + 8 * nd + 2 * t;
        atomic_add(dst, dq[nd][2 * hf] * p.scale);
        atomic_add(dst + 1, dq[nd][2 * hf + 1] * p.scale);
      }
    }
    store_rows(buf ^ 1);  // the next step's lse and delta; published by its first barrier
  }
  cp_async_wait<0>();  // the K and V loads of a block without queries

  // The block owns keys [k0, k0 + 64) of this kv head: add dK (scaled) and dV without atomics.
  float* dkg = static_cast<float*>(p.dk.data) + b * p.dk.stride_b + hk * p.dk.stride_h;
  float* dvg = static_cast<float*>(p.dv.data) + b * p.dv.stride_b + hk * p.dv.stride_h;
  HCP_UNROLL
  for (int hf = 0; hf < 2; ++hf) {
    const int64_t kj = k0 + 16 * warp + g + 8 * hf;
    if (kj >= p.sk) continue;
    HCP_UNROLL
    for (int nd = 0; nd < kOutTiles; ++nd)
      HCP_UNROLL
      for (int j = 0; j < 2; ++j) {
        dkg[kj * p.dk.stride_s + 8 * nd + 2 * t + j] += dk[nd][2 * hf + j] * p.scale;
        dvg[kj * p.dv.stride_s + 8 * nd + 2 * t + j] += dv[nd][2 * hf + j];
      }
  }
}

// delta[b, h, s] = sum_d dout * out, one thread per row. Grid: x = 128-row tile, y = head, z = batch.
template <class E>
HCP_KFN void attention_delta_block(const BlockCtx& ctx, const AttnParams& p, int bx, int by, int bz) {
  using T = typename E::type;
  const int64_t s = int64_t{bx} * kThreads + ctx.tid();
  if (s >= p.sq) return;
  const T* dout = static_cast<const T*>(p.dout.data) + bz * p.dout.stride_b + s * p.dout.stride_s + by * p.dout.stride_h;
  const float* out = static_cast<const float*>(p.out.data) + bz * p.out.stride_b + s * p.out.stride_s +
                     by * p.out.stride_h;
  float sum = 0.0f;
  for (int64_t d = 0; d < p.head_dim; ++d) sum += E::to_float(dout[d]) * out[d];
  p.delta.data[bz * p.delta.stride_b + by * p.delta.stride_h + s] = sum;
}

}  // namespace hcp::kern
