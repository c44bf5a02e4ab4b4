// Flash attention backward for one block: 64 key rows of one (batch, kv head), every query row of every head in
// its GQA group that can see them. Recomputes P from the final lse, then dV += P^T dO, dP = dO V^T,
// dS = P (dP - delta), dK += scale dS^T Q on tensor cores; dK, dV stay in fragments for the whole block (the block
// owns those rows, so they are added to the f32 outputs without atomics) and each query tile's dQ = scale dS K is
// added with atomics, since every key block contributes to it. Everything is laid out keys x queries (S^T), so
// each warp owns 16 keys.
#pragma once

#include "hcp/attention_params.hpp"
#include "kernel_env.cuh"

namespace hcp::kern {

template <int D>
struct BwdSmem {
  static constexpr int ldt = D + 8;      // k, v, q, dout tiles (16-bit)
  static constexpr int lds = kTile + 4;  // fp32 P^T
  static constexpr int ldp = kTile + 8;  // 16-bit P^T and dS^T
  static constexpr int ldo = D + 4;      // fp32 dQ tile; also dP^T (ld lds) and the final dK / dV staging
  static constexpr size_t k = 0;
  static constexpr size_t v = align_smem(k + size_t{kTile} * ldt * 2);
  static constexpr size_t q = align_smem(v + size_t{kTile} * ldt * 2);
  static constexpr size_t dout = align_smem(q + size_t{kTile} * ldt * 2);
  static constexpr size_t pf = align_smem(dout + size_t{kTile} * ldt * 2);
  static constexpr size_t pt = align_smem(pf + size_t{kTile} * lds * 4);
  static constexpr size_t dst = align_smem(pt + size_t{kTile} * ldp * 2);
  static constexpr size_t work = align_smem(dst + size_t{kTile} * ldp * 2);
  static constexpr size_t lse = align_smem(work + size_t{kTile} * ldo * 4);
  static constexpr size_t delta = align_smem(lse + kTile * 4);
  static constexpr size_t bytes = align_smem(delta + kTile * 4);
  static_assert(kTile * lds <= kTile * ldo, "dP^T must fit in the dQ staging area");
};

// Scales this warp's 16 x D accumulator rows, stages them in `work` and adds them to rows k0 + 16 warp + r of `dst`
// (rows at or beyond `limit` are skipped).
template <int D, class Frag>
HCP_KFN void add_owned_rows(const BlockCtx& ctx, Frag (&acc)[D / 16], float mul, float* work, float* dst,
                            int64_t stride, int64_t k0, int64_t limit) {
  constexpr int ldo = BwdSmem<D>::ldo;
  const int warp = ctx.tid() / 32, lane = ctx.tid() % 32;
  HCP_UNROLL
  for (int j = 0; j < D / 16; ++j) {
    for (int e = 0; e < acc[j].num_elements; ++e) acc[j].x[e] *= mul;
    wmma::store_matrix_sync(work + warp * 16 * ldo + j * 16, acc[j], ldo, wmma::mem_row_major);
  }
  ctx.sync_warp();
  for (int i = lane; i < 16 * D; i += 32) {
    const int r = warp * 16 + i / D, d = i % D;
    if (k0 + r < limit) dst[(k0 + r) * stride + d] += work[r * ldo + d];
  }
  ctx.sync_warp();
}

// Grid: x = key tile, y = kv head, z = batch. Adds to dq, dk, dv (f32).
template <class E, int D, bool Causal>
HCP_KFN void flash_backward_block(const BlockCtx& ctx, const AttnParams& p, int bx, int by, int bz, char* smem) {
  using T = typename E::type;
  using L = BwdSmem<D>;
  using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major>;
  using FragAt = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::col_major>;
  using FragBt = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major>;
  using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major>;
  using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
  T* ks = reinterpret_cast<T*>(smem + L::k);
  T* vs = reinterpret_cast<T*>(smem + L::v);
  T* qs = reinterpret_cast<T*>(smem + L::q);
  T* dos = reinterpret_cast<T*>(smem + L::dout);
  float* pf = reinterpret_cast<float*>(smem + L::pf);
  T* pt = reinterpret_cast<T*>(smem + L::pt);
  T* dst = reinterpret_cast<T*>(smem + L::dst);
  float* work = reinterpret_cast<float*>(smem + L::work);
  float* lse_s = reinterpret_cast<float*>(smem + L::lse);
  float* delta_s = reinterpret_cast<float*>(smem + L::delta);

  const int tid = ctx.tid(), warp = tid / 32, lane = tid % 32;
  const int64_t b = bz, hk = by, k0 = int64_t{bx} * kTile;
  const int64_t group = p.heads / p.kv_heads;
  const float scale_log2 = p.scale * kLog2e;

  load_tile<E, D>(ctx, ks, L::ldt, static_cast<const T*>(p.k.data) + b * p.k.stride_b + hk * p.k.stride_h,
                  p.k.stride_s, k0, p.sk);
  load_tile<E, D>(ctx, vs, L::ldt, static_cast<const T*>(p.v.data) + b * p.v.stride_b + hk * p.v.stride_h,
                  p.v.stride_s, k0, p.sk);
  FragC dk_acc[D / 16], dv_acc[D / 16];
  HCP_UNROLL
  for (int j = 0; j < D / 16; ++j) {
    wmma::fill_fragment(dk_acc[j], 0.0f);
    wmma::fill_fragment(dv_acc[j], 0.0f);
  }
  // Query rows before the first one that sees key k0 contribute nothing.
  int64_t m_begin = 0;
  if (Causal) {
    const int64_t first_row = k0 - p.causal_offset;
    m_begin = first_row <= 0 ? 0 : first_row / kTile * kTile;
  }

  for (int64_t g = 0; g < group; ++g) {
    const int64_t h = hk * group + g;
    const T* qg = static_cast<const T*>(p.q.data) + b * p.q.stride_b + h * p.q.stride_h;
    const T* dog = static_cast<const T*>(p.dout.data) + b * p.dout.stride_b + h * p.dout.stride_h;
    const float* lseg = p.lse.data + b * p.lse.stride_b + h * p.lse.stride_h;
    const float* deltag = p.delta.data + b * p.delta.stride_b + h * p.delta.stride_h;
    float* dqg = static_cast<float*>(p.dq.data) + b * p.dq.stride_b + h * p.dq.stride_h;
    for (int64_t m0 = m_begin; m0 < p.sq; m0 += kTile) {
      ctx.sync();  // the previous tile's readers are done (and, the first time, K and V are loaded)
      load_tile<E, D>(ctx, qs, L::ldt, qg, p.q.stride_s, m0, p.sq);
      load_tile<E, D>(ctx, dos, L::ldt, dog, p.dout.stride_s, m0, p.sq);
      if (tid < kTile) {
        const bool row = m0 + tid < p.sq;
        lse_s[tid] = row ? lseg[m0 + tid] * kLog2e : -INFINITY;
        delta_s[tid] = row ? deltag[m0 + tid] : 0.0f;
      }
      ctx.sync();

      for (int j = 0; j < kTile / 16; ++j) {  // S^T = K Q^T and dP^T = V dO^T for this warp's 16 keys
        FragC s_acc, dp_acc;
        wmma::fill_fragment(s_acc, 0.0f);
        wmma::fill_fragment(dp_acc, 0.0f);
        for (int kk = 0; kk < D / 16; ++kk) {
          FragA a;
          FragBt bt;
          wmma::load_matrix_sync(a, ks + warp * 16 * L::ldt + kk * 16, L::ldt);
          wmma::load_matrix_sync(bt, qs + j * 16 * L::ldt + kk * 16, L::ldt);
          wmma::mma_sync(s_acc, a, bt, s_acc);
          wmma::load_matrix_sync(a, vs + warp * 16 * L::ldt + kk * 16, L::ldt);
          wmma::load_matrix_sync(bt, dos + j * 16 * L::ldt + kk * 16, L::ldt);
          wmma::mma_sync(dp_acc, a, bt, dp_acc);
        }
        wmma::store_matrix_sync(pf + warp * 16 * L::lds + j * 16, s_acc, L::lds, wmma::mem_row_major);
        wmma::store_matrix_sync(work + warp * 16 * L::lds + j * 16, dp_acc, L::lds, wmma::mem_row_major);
      }
      ctx.sync_warp();

      if (lane < 16) {  // P^T and dS^T = P^T (dP^T - delta), one lane per key
        const int r = warp * 16 + lane;
        const int64_t kj = k0 + r;
        for (int c = 0; c < kTile; ++c) {
          const int64_t qi = m0 + c;
          const bool visible =
              kj < p.sk && qi < p.sq && (!Causal || kj <= qi + p.causal_offset) && lse_s[c] != -INFINITY;
          const float pv = visible ? fast_exp2(pf[r * L::lds + c] * scale_log2 - lse_s[c]) : 0.0f;
          pt[r * L::ldp + c] = E::from_float(pv);
          dst[r * L::ldp + c] = E::from_float(pv * (work[r * L::lds + c] - delta_s[c]));
        }
      }
      ctx.sync_warp();

      HCP_UNROLL
      for (int j = 0; j < D / 16; ++j)  // dV += P^T dO, dK += dS^T Q (scaled at the end)
        for (int kk = 0; kk < kTile / 16; ++kk) {
          FragA a;
          FragB bm;
          wmma::load_matrix_sync(a, pt + warp * 16 * L::ldp + kk * 16, L::ldp);
          wmma::load_matrix_sync(bm, dos + kk * 16 * L::ldt + j * 16, L::ldt);
          wmma::mma_sync(dv_acc[j], a, bm, dv_acc[j]);
          wmma::load_matrix_sync(a, dst + warp * 16 * L::ldp + kk * 16, L::ldp);
          wmma::load_matrix_sync(bm, qs + kk * 16 * L::ldt + j * 16, L::ldt);
          wmma::mma_sync(dk_acc[j], a, bm, dk_acc[j]);
        }
      ctx.sync();  // all of dS^T is written, and nobody reads dP^T (in `work`) any more

      for (int j = 0; j < D / 16; ++j) {  // dQ for this warp's 16 query rows = dS K (dS read transposed)
        FragC acc;
        wmma::fill_fragment(acc, 0.0f);
        for (int kk = 0; kk < kTile / 16; ++kk) {
          FragAt at;
          FragB bm;
          wmma::load_matrix_sync(at, dst + kk * 16 * L::ldp + warp * 16, L::ldp);
          wmma::load_matrix_sync(bm, ks + kk * 16 * L::ldt + j * 16, L::ldt);
          wmma::mma_sync(acc, at, bm, acc);
        }
        wmma::store_matrix_sync(work + warp * 16 * L::ldo + j * 16, acc, L::ldo, wmma::mem_row_major);
      }
      ctx.sync_warp();
      for (int i = lane; i < 16 * D; i += 32) {
        const int r = warp * 16 + i / D, d = i % D;
        const int64_t qi = m0 + r;
        if (qi < p.sq) atomic_add(dqg + qi * p.dq.stride_s + d, work[r * L::ldo + d] * p.scale);
      }
    }
  }

  // The block owns keys [k0, k0 + 64) of this kv head: add dK (scaled) and dV without atomics.
  ctx.sync();
  add_owned_rows<D>(ctx, dk_acc, p.scale, work, static_cast<float*>(p.dk.data) + b * p.dk.stride_b +
                    hk * p.dk.stride_h, p.dk.stride_s, k0, p.sk);
  add_owned_rows<D>(ctx, dv_acc, 1.0f, work, static_cast<float*>(p.dv.data) + b * p.dv.stride_b +
                    hk * p.dv.stride_h, p.dv.stride_s, k0, p.sk);
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
