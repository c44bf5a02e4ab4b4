// Flash attention forward for one block, FlashAttention-2 style: 128 query rows of one (batch, head), all visible
// keys in 64-key steps. 4 warps own 32 rows each (two 16-row mma tiles), so every K and V fragment a warp loads
// from shared memory feeds two tensor-core products (at head dim 256: 64 rows, one tile per warp). S = Q K^T and
// O += P V run on mma.sync m16n8k16 (bf16/fp16 in, fp32 accumulate) with operands from ldmatrix; O, S and the
// softmax state stay in registers for the whole block: the C fragment of S has the layout of the A fragment of P,
// so P never goes through shared memory, and a row's four lanes (one quad) meet by shuffles only for its running
// max. K and V arrive by cp.async: V of a step loads while S is computed, and K of the next step while the softmax
// and P V run. Scores are kept in log2 units so one FMA and exp2 give each probability. Labelled masks (packed
// sequences, windows; label_mask.cuh) are applied per element, and a warp none of whose elements of a step is
// visible skips that step's products.
#pragma once

#include "bias_tiles.cuh"
#include "hcp/attention_params.hpp"
#include "kernel_env.cuh"
#include "label_mask.cuh"
#include "tile_loads.cuh"
#include "warp_ops.cuh"

namespace hcp::kern {

constexpr int kFwdKeys = 64;  // keys per step
// 16-row mma tiles per warp: two while O fits in registers beside them; at head dim 256 O alone takes 128
// registers per thread, so one.
template <int D>
constexpr int kFwdWarpTiles = D <= 128 ? 2 : 1;
template <int D>
constexpr int kFwdRows = 4 * 16 * kFwdWarpTiles<D>;  // query rows per block: 4 warps own them all
static_assert(kThreads == 128, "4 warps per block");

template <int D>
struct FwdSmem {
  // 16-byte row pad: the 8 rows one ldmatrix matrix reads start in 8 different bank groups.
  static constexpr int ld = D + 8;
  static constexpr size_t q = 0;
  static constexpr size_t k = q + size_t{kFwdRows<D>} * ld * 2;
  static constexpr size_t v = k + size_t{kFwdKeys} * ld * 2;
  static constexpr size_t bytes = v + size_t{kFwdKeys} * ld * 2;
};

// Grid: x = query tile, y = head, z = batch. Writes out (f32) and lse (natural log) for rows < sq.
template <class E, int D, bool Causal>
HCP_KFN void flash_forward_block(const BlockCtx& ctx, const AttnParams& p, int bx, int by, int bz, char* smem) {
  using T = typename E::type;
  using L = FwdSmem<D>;
  constexpr int kOutTiles = D / 8;         // 8-column tiles of O
  constexpr int kKeyTiles = kFwdKeys / 8;  // 8-key tiles of S
  constexpr int kTiles = kFwdWarpTiles<D>, kRows = kFwdRows<D>, kWarpRows = 16 * kTiles;
  T* qs = reinterpret_cast<T*>(smem + L::q);
  T* ks = reinterpret_cast<T*>(smem + L::k);
  T* vs = reinterpret_cast<T*>(smem + L::v);

  const int tid = ctx.tid(), warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;  // fragment coordinates (warp_ops.cuh)
  // The rows this lane addresses in its ldmatrix calls (warp_ops.cuh), for the first tile of each operand: Q as A
  // (matrices: rows 0-7 / 8-15 x columns 0-7 / 8-15), K as two B tiles (keys 0-7 / 8-15 x dims 0-7 / 8-15), V as
  // two transposed B tiles (keys 0-7 / 8-15 x dims 0-7 / 8-15). The other tiles are constant byte offsets away.
  const SmemAddr q_lane = smem_addr_of(qs) + 2 * ((warp * kWarpRows + lane % 16) * L::ld + 8 * (lane / 16));
  const SmemAddr k_lane = smem_addr_of(ks) + 2 * ((8 * (lane / 16) + lane % 8) * L::ld + 8 * (lane / 8 % 2));
  const SmemAddr v_lane = smem_addr_of(vs) + 2 * ((8 * (lane / 8 % 2) + lane % 8) * L::ld + 8 * (lane / 16));
  const int64_t b = bz, h = by, q0 = int64_t{bx} * kRows;
  const int64_t hk = h / (p.heads / p.kv_heads);
  const T* qg = static_cast<const T*>(p.q.data) + b * p.q.stride_b + h * p.q.stride_h;
  const T* kg = static_cast<const T*>(p.k.data) + b * p.k.stride_b + hk * p.k.stride_h;
  const T* vg = static_cast<const T*>(p.v.data) + b * p.v.stride_b + hk * p.v.stride_h;
  // (Recomputed after the loop rather than held in registers through it.)
  auto out_rows = [&] { return static_cast<float*>(p.out.data) + b * p.out.stride_b + h * p.out.stride_h; };
  auto lse_rows = [&] { return p.lse.data + b * p.lse.stride_b + h * p.lse.stride_h; };
  const float scale_log2 = p.scale * kLog2e;
  const bool labelled = label_masked(p);
  const LabelDist dist = label_dist(p);
  RowLabel row_label[kTiles][2];  // this lane's rows (labelled calls)
  HCP_UNROLL
  for (int mi = 0; mi < kTiles; ++mi)
    HCP_UNROLL
    for (int hf = 0; hf < 2; ++hf)
      row_label[mi][hf] = labelled ? query_label(p, q0 + warp * kWarpRows + 16 * mi + g + 8 * hf) : RowLabel{-1, 0};

  // Keys past the last row's diagonal are invisible to the whole block.
  int64_t k_end = p.sk;
  if (Causal) {
    const int64_t last_key = (q0 + kRows < p.sq ? q0 + kRows : p.sq) - 1 + p.causal_offset;
    k_end = last_key < 0 ? 0 : (last_key + 1 < p.sk ? last_key + 1 : p.sk);
  }
  const int steps = static_cast<int>((k_end + kFwdKeys - 1) / kFwdKeys);  // sk < 2^31 (check_cuda_params)

  // The tensors' own head dims (cuda_kernel_head_dim): q and k, and v and out (MLA's may differ).
  const int64_t dqk = p.head_dim, dv = value_dim(p);
  load_rows_async<T, D, kRows>(ctx, qs, qg, p.q.stride_s, q0, p.sq, p.q_labels.seg, dqk);
  if (steps > 0) load_rows_async<T, D, kFwdKeys>(ctx, ks, kg, p.k.stride_s, 0, p.sk, p.k_labels.seg, dqk);
  cp_async_commit();

  // This lane's rows: kWarpRows warp + 16 mi + g + 8 hf. row_max is the running max in log2 units; row_sum is
  // this lane's part of the row's sum (the quad's four parts add up at the end). Rows of an accumulate call resume
  // from out and lse: max lse (in log2 units), sum 1 (held by lane t = 0), O = out.
  float acc[kTiles][kOutTiles][4];
  float row_max[kTiles][2], row_sum[kTiles][2];
  // AttnParams::max_logit: the row's largest visible q . k of this call, unscaled (row_max starts at the earlier
  // lse when accumulating, so it is not this).
  float logit_max[kTiles][2];
  const float* outg = out_rows();
  const float* lseg = lse_rows();
  HCP_UNROLL
  for (int mi = 0; mi < kTiles; ++mi) {
    HCP_UNROLL
    for (int hf = 0; hf < 2; ++hf) {
      const int64_t qi = q0 + warp * kWarpRows + 16 * mi + g + 8 * hf;
      const bool resume = p.accumulate && qi < p.sq && lseg[qi] != -INFINITY;
      row_max[mi][hf] = resume ? lseg[qi] * kLog2e : -INFINITY;
      logit_max[mi][hf] = -INFINITY;
      row_sum[mi][hf] = resume && t == 0 ? 1.0f : 0.0f;
      HCP_UNROLL
      for (int nd = 0; nd < kOutTiles; ++nd) {
        const float* src = outg + qi * p.out.stride_s + nd * 8 + 2 * t;
        const bool read = resume && nd * 8 < dv;
        acc[mi][nd][2 * hf] = read ? src[0] : 0.0f;
        acc[mi][nd][2 * hf + 1] = read ? src[1] : 0.0f;
      }
    }
  }

  for (int step = 0; step < steps; ++step) {
    const int64_t k0 = int64_t{step} * kFwdKeys;
    cp_async_wait<0>();
    ctx.sync();  // K of this step (and Q) landed; every warp is done with the previous V
    load_rows_async<T, D, kFwdKeys>(ctx, vs, vg, p.v.stride_s, k0, p.sk, p.k_labels.seg, dv);
    cp_async_commit();

    // Labelled: which of this lane's elements are visible (element i of S tile (mi, nt) is bit (mi kKeyTiles + nt)
    // 4 + i, with i = 2 hf + ci for row half hf and key k0 + 8 nt + 2 t + ci), and whether any of the warp's are.
    uint64_t visible = 0;
    bool active = true;
    if (labelled) {
      HCP_UNROLL
      for (int nt = 0; nt < kKeyTiles; ++nt)
        HCP_UNROLL
        for (int ci = 0; ci < 2; ++ci) {
          const RowLabel key = key_label(p, k0 + 8 * nt + 2 * t + ci);
          HCP_UNROLL
          for (int mi = 0; mi < kTiles; ++mi)
            HCP_UNROLL
            for (int hf = 0; hf < 2; ++hf)
              if (label_sees(dist, row_label[mi][hf], key))
                visible |= uint64_t{1} << ((mi * kKeyTiles + nt) * 4 + 2 * hf + ci);
        }
      active = warp_any(visible != 0);
    }

    float s[kTiles][kKeyTiles][4];
    HCP_UNROLL
    for (int mi = 0; mi < kTiles; ++mi) zero_tiles(s[mi]);
    if (active) HCP_UNROLL
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t a[kTiles][4];
      HCP_UNROLL
      for (int mi = 0; mi < kTiles; ++mi) ldmatrix_x4(a[mi], q_lane + 2 * (16 * mi * L::ld + 16 * kk));
      HCP_UNROLL
      for (int np = 0; np < kKeyTiles / 2; ++np) {  // keys 16 np .. 16 np + 15: two B tiles per ldmatrix
        uint32_t bk[4];
        ldmatrix_x4(bk, k_lane + 2 * (16 * np * L::ld + 16 * kk));
        HCP_UNROLL
        for (int mi = 0; mi < kTiles; ++mi) mma_16816_x2<E>(s[mi][2 * np], s[mi][2 * np + 1], a[mi], bk);
      }
    }

    if (p.bias.data) add_bias_rows<kTiles, kKeyTiles>(p, b, h, q0 + warp * kWarpRows, k0, g, t, s);

    // Masks only where the step crosses the end of the keys or the diagonal of the block's first row. Element i
    // of S tile (mi, nt) is key k0 + 2 t + c of row q0 + kWarpRows warp + g + r, with c = 8 nt + i % 2 and
    // r = 16 mi + 8 (i >= 2): visible iff c < key_room and c - r <= diag_room, two numbers per lane and step
    // (clamped: c and r are below 128), so the compile-time c and r leave no 64-bit arithmetic in the loop.
    if (labelled) {
      HCP_UNROLL
      for (int mi = 0; mi < kTiles; ++mi)
        HCP_UNROLL
        for (int nt = 0; nt < kKeyTiles; ++nt)
          HCP_UNROLL
          for (int i = 0; i < 4; ++i)
            if (!((visible >> ((mi * kKeyTiles + nt) * 4 + i)) & 1)) s[mi][nt][i] = -INFINITY;
    } else if (k0 + kFwdKeys > p.sk || (Causal && k0 + kFwdKeys - 1 > q0 + p.causal_offset)) {
      const int key_room = clamp_room(p.sk - k0 - 2 * t);
      const int diag_room = clamp_room(q0 + warp * kWarpRows + g + p.causal_offset - k0 - 2 * t);
      HCP_UNROLL
      for (int mi = 0; mi < kTiles; ++mi)
        HCP_UNROLL
        for (int nt = 0; nt < kKeyTiles; ++nt)
          HCP_UNROLL
          for (int i = 0; i < 4; ++i) {
            const int c = 8 * nt + i % 2, r = 16 * mi + (i >= 2 ? 8 : 0);
            if (c >= key_room || (Causal && c - r > diag_room)) s[mi][nt][i] = -INFINITY;
          }
    }

    cp_async_wait<0>();
    ctx.sync();  // V of this step landed; every warp is done with this K
    if (step + 1 < steps) load_rows_async<T, D, kFwdKeys>(ctx, ks, kg, p.k.stride_s, k0 + kFwdKeys, p.sk,
                                                                p.k_labels.seg, dqk);
    cp_async_commit();

    // A warp that sees nothing of this step keeps its state: no softmax, no P V.
    if (!active) continue;
    // Online softmax: S becomes P in place, O and the sums are rescaled to the new max.
    HCP_UNROLL
    for (int mi = 0; mi < kTiles; ++mi) {
      HCP_UNROLL
      for (int hf = 0; hf < 2; ++hf) {
        float mx = -INFINITY;
        HCP_UNROLL
        for (int nt = 0; nt < kKeyTiles; ++nt) mx = fmaxf(mx, fmaxf(s[mi][nt][2 * hf], s[mi][nt][2 * hf + 1]));
        mx = fmaxf(mx, shfl_xor(mx, 1));
        mx = fmaxf(mx, shfl_xor(mx, 2));
        logit_max[mi][hf] = fmaxf(logit_max[mi][hf], mx);
        const float new_max = fmaxf(row_max[mi][hf], mx * scale_log2);  // scale > 0 keeps the argmax
        const float base = new_max == -INFINITY ? 0.0f : new_max;       // a row with nothing visible yet
        const float alpha = fast_exp2(row_max[mi][hf] - base);          // 0 when the old max is -inf
        row_max[mi][hf] = new_max;
        float sum = 0.0f;
        HCP_UNROLL
        for (int nt = 0; nt < kKeyTiles; ++nt)
          HCP_UNROLL
          for (int i = 2 * hf; i < 2 * hf + 2; ++i) {
            s[mi][nt][i] = fast_exp2(fmaf(s[mi][nt][i], scale_log2, -base));
            sum += s[mi][nt][i];
          }
        row_sum[mi][hf] = row_sum[mi][hf] * alpha + sum;
        HCP_UNROLL
        for (int nd = 0; nd < kOutTiles; ++nd) {
          acc[mi][nd][2 * hf] *= alpha;
          acc[mi][nd][2 * hf + 1] *= alpha;
        }
      }
    }

    // O += P V: the C fragments of S tiles 2 kk and 2 kk + 1 are the A fragment of keys 16 kk .. 16 kk + 15.
    HCP_UNROLL
    for (int kk = 0; kk < kFwdKeys / 16; ++kk) {
      uint32_t pa[kTiles][4];
      HCP_UNROLL
      for (int mi = 0; mi < kTiles; ++mi) pack_a<E>(pa[mi], s[mi][2 * kk], s[mi][2 * kk + 1]);
      HCP_UNROLL
      for (int np = 0; np < kOutTiles / 2; ++np) {  // columns 16 np .. 16 np + 15 of V: two B tiles per ldmatrix
        uint32_t bv[4];
        ldmatrix_x4_trans(bv, v_lane + 2 * (16 * kk * L::ld + 16 * np));
        HCP_UNROLL
        for (int mi = 0; mi < kTiles; ++mi) mma_16816_x2<E>(acc[mi][2 * np], acc[mi][2 * np + 1], pa[mi], bv);
      }
    }
  }
  cp_async_wait<0>();  // the Q and K loads of a block without keys

  float* outg_w = out_rows();
  float* lseg_w = lse_rows();
  HCP_UNROLL
  for (int mi = 0; mi < kTiles; ++mi) {
    HCP_UNROLL
    for (int hf = 0; hf < 2; ++hf) {
      float sum = row_sum[mi][hf];
      sum += shfl_xor(sum, 1);
      sum += shfl_xor(sum, 2);
      const int64_t qi = q0 + warp * kWarpRows + 16 * mi + g + 8 * hf;
      if (qi >= p.sq) continue;
      const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
      HCP_UNROLL
      for (int nd = 0; nd < kOutTiles; ++nd) {
        if (nd * 8 >= dv) break;
        float* dst = outg_w + qi * p.out.stride_s + nd * 8 + 2 * t;
        dst[0] = acc[mi][nd][2 * hf] * inv;
        dst[1] = acc[mi][nd][2 * hf + 1] * inv;
      }
      if (t == 0)
        lseg_w[qi] = row_max[mi][hf] == -INFINITY ? -INFINITY : (row_max[mi][hf] + fast_log2(sum)) * kLn2;
      if (t == 0 && p.max_logit.data) {
        float* mg = p.max_logit.data + b * p.max_logit.stride_b + h * p.max_logit.stride_h;
        const float mx = logit_max[mi][hf] == -INFINITY ? -INFINITY : logit_max[mi][hf] * p.scale;
        mg[qi] = p.accumulate ? fmaxf(mg[qi], mx) : mx;
      }
    }
  }
}

}  // namespace hcp::kern
