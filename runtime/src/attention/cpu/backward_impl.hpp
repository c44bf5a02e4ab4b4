// The backward kernel body, FlashAttention-2 style: for one (batch, kv head), each key block keeps its dK/dV tile
// in fp32 while every query head of its GQA group and every visible query block passes by:
//   S = (scale Q) K^T, P = exp(S - lse), dP = dO V^T, dS = P * (dP - delta),
//   dV += P^T dO, dK += dS^T (scale Q), dQ += scale * dS K.
// Tasks are (batch, kv head), so dK/dV and the dQ rows of a task's query heads belong to one worker alone. Under a
// labelled mask (label_mask.hpp) tile pairs with no visible pair are skipped, and straddling ones masked per element.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "bias_rows.hpp"
#include "key_order.hpp"
#include "label_mask.hpp"
#include "tile_gemm.hpp"
#include "tiles.hpp"
#include "transpose_pack.hpp"

namespace hcp::cpu {

template <int W>
struct BackwardScratch {
  // The padded head dims of q, k (dq, dk) and of v, dout (dv).
  int64_t dp, dvp;
  std::vector<float> k, kt, vt, dk, dv, q, dout, s, dpm, st, dq;
  // Keys walked out of their stored order (key_order.hpp, as in the forward): the stored row of each. K and V are
  // packed and dK, dV added through it.
  const int64_t* key_rows = nullptr;
  BackwardScratch(int64_t head_dim, int64_t head_dim_v)
      : dp(round_up(head_dim, 2 * W)), dvp(round_up(head_dim_v, 2 * W)),
        k(kBlockK * dp), kt(dp * kBlockK), vt(dvp * kBlockK), dk(kBlockK * dp), dv(kBlockK * dvp), q(kBlockQ * dp),
        dout(kBlockQ * dvp), s(kBlockQ * kBlockK), dpm(kBlockQ * kBlockK), st(kBlockK * kBlockQ), dq(kBlockQ * dp) {}
};

// P = exp(S - lse) on visible entries, 0 elsewhere; then dS = P * (dP - delta) in place of dP. Only the first
// `width` columns (a multiple of W: the columns the products read) are written.
template <int W>
HCP_INLINE void softmax_grad_row(float* srow, float* dprow, int64_t visible, int64_t width, float lse, float delta) {
  using V = typename Simd<W>::V;
  if (visible == 0 || !(lse > -std::numeric_limits<float>::infinity())) {
    for (int64_t j = 0; j < width; ++j) srow[j] = dprow[j] = 0;
    return;
  }
  const V vl = splat<W>(lse), vd = splat<W>(delta);
  for (int64_t j = 0; j < width; j += W) {
    const V pv = exp<W>(load<W>(srow + j) - vl);
    store<W>(srow + j, pv);
    store<W>(dprow + j, pv * (load<W>(dprow + j) - vd));
  }
  for (int64_t j = visible; j < width; ++j) srow[j] = dprow[j] = 0;
}

// dst[j * ld_dst + i] = src[i * ld_src + j] for i < rows, j < cols: only the part of a tile its products read (a
// short document's tile pair is a fraction of the 64 x 64 scratch, and this scalar loop ran over all of it: 7% of a
// packed p2p CP backward).
template <int W>
HCP_INLINE void transpose_tile(const float* src, int64_t ld_src, int64_t rows, int64_t cols, float* dst,
                               int64_t ld_dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[j * ld_dst + i] = src[i * ld_src + j];
}

// How a query tile meets the current key tile: the plain causal mask, or a labelled cover with its distances.
struct TileMask {
  bool labelled = false;
  Cover cover = Cover::some;
  DistanceRange dist{0, 0};
  bool one_segment = false;  // both tiles hold one segment: positions alone decide
};

// Zeroes P and dS where the labelled mask hides the pair (row `row` against keys [j0, j0 + cols)).
HCP_INLINE void mask_grad_row(const AttnParams& p, const TileMask& mask, int64_t row, int64_t j0, int64_t cols,
                              float* srow, float* dprow) {
  const Label q = q_label(p, row);
  if (!mask.one_segment) {
    for (int64_t j = 0; j < cols; ++j)
      if (!sees(mask.dist, q, k_label(p, j0 + j))) srow[j] = dprow[j] = 0;
    return;
  }
  const int64_t lo = q.pos - mask.dist.hi, hi = q.pos - mask.dist.lo;  // visible key positions
  for (int64_t j = 0; j < cols; ++j) {
    const int64_t kpos = p.k_labels.pos ? p.k_labels.pos[j0 + j] : j0 + j;
    const bool hidden = kpos < lo || kpos > hi;
    srow[j] = hidden ? 0.0f : srow[j];
    dprow[j] = hidden ? 0.0f : dprow[j];
  }
}

// Query rows [i0, i0 + rows) (rows <= kBlockQ) of head h against the packed key tile [j0, j0 + cols). The products
// run over the rows and columns the tiles hold, rounded to the GEMM's steps.
template <int W>
HCP_INLINE void backward_query_block(const AttnParams& p, int64_t b, int64_t h, int64_t i0, int64_t rows, int64_t j0,
                                     int64_t cols, BackwardScratch<W>& t, const TileMask& mask) {
  const int64_t dp = t.dp, dvp = t.dvp, D = p.head_dim, Dv = value_dim(p);
  const int64_t mr = round_up(rows, 4), mc = round_up(cols, 4), n = round_up(cols, 2 * W);
  pack_rows(p.dtype, p.q, b, i0, rows, h, D, p.scale, t.q.data(), dp, mr);  // the GEMMs read mr rows
  pack_rows(p.dtype, p.dout, b, i0, rows, h, Dv, 1.0f, t.dout.data(), dvp, mr);
  if (!mask.labelled && i0 + kBlockQ < p.sq) {
    const int64_t next = std::min(kBlockQ, p.sq - i0 - kBlockQ);
    prefetch_rows(p.dtype, p.q, b, i0 + kBlockQ, next, h, D);
    prefetch_rows(p.dtype, p.dout, b, i0 + kBlockQ, next, h, Dv);
    prefetch_rows(DType::f32, p.dq, b, i0 + kBlockQ, next, h, D);
  }
  // The products read rows [0, mr) and columns [0, n) of S, dP and dS, and rows [0, mr) of dQ: only those are
  // computed and written.
  gemm_set<W>(mr, n, dp, t.q.data(), dp, t.kt.data(), kBlockK, t.s.data(), kBlockK);
  gemm_set<W>(mr, n, dvp, t.dout.data(), dvp, t.vt.data(), kBlockK, t.dpm.data(), kBlockK);
  const float* lse = row_values(p.lse, b, h);
  const float* delta = row_values(p.delta, b, h);
  for (int64_t i = 0; i < mr; ++i) {
    const int64_t visible = i >= rows ? 0 : mask.labelled ? cols : visible_keys(p, i0 + i, j0, cols);
    float* srow = t.s.data() + i * kBlockK;
    float* dprow = t.dpm.data() + i * kBlockK;
    if (visible && p.bias.data) add_bias_row(p, b, h, i0 + i, j0, cols, t.key_rows, srow);
    softmax_grad_row<W>(srow, dprow, visible, n, visible ? lse[i0 + i] : 0.0f, visible ? delta[i0 + i] : 0.0f);
    if (visible && mask.labelled && mask.cover == Cover::some) mask_grad_row(p, mask, i0 + i, j0, cols, srow, dprow);
    if (visible && p.dbias.data) add_dbias_row(p, b, h, i0 + i, j0, cols, t.key_rows, dprow);
  }
  // dV += P^T dO and dK += dS^T (scale Q), both K = query rows.
  transpose_tile<W>(t.s.data(), kBlockK, mr, mc, t.st.data(), kBlockQ);
  gemm_acc<W>(mc, dvp, mr, t.st.data(), kBlockQ, t.dout.data(), dvp, t.dv.data(), dvp);
  transpose_tile<W>(t.dpm.data(), kBlockK, mr, mc, t.st.data(), kBlockQ);
  gemm_acc<W>(mc, dp, mr, t.st.data(), kBlockQ, t.q.data(), dp, t.dk.data(), dp);
  // dQ rows of this block: scale * dS K.
  gemm_set<W>(mr, dp, n, t.dpm.data(), kBlockK, t.k.data(), dp, t.dq.data(), dp);
  add_rows(p.dq, b, i0, rows, h, D, p.scale, t.dq.data(), dp);
}

// The query and key tiles of a labelled call (label_mask.hpp's segment tiles); empty for plain masks.
struct BackwardTiles {
  std::vector<RowTile> q, k;
};
inline BackwardTiles backward_tiles(const AttnParams& p) {
  BackwardTiles t;
  if (!labelled_mask(p)) return t;
  t.q = segment_tiles(p.sq, kBlockQ, [&](int64_t i) { return q_label(p, i); });
  t.k = segment_tiles(p.sk, kBlockK, [&](int64_t j) { return k_label(p, j); });
  return t;
}

// One key tile [j0, j0 + cols): its dK/dV accumulated over the query tiles that see it, then added to dk, dv.
template <int W>
HCP_INLINE void backward_key_tile(const AttnParams& p, int64_t b, int64_t hk, int64_t j0, int64_t cols,
                                  BackwardScratch<W>& t, const BackwardTiles& tiles, const RowTile* k_tile) {
  const int64_t dp = t.dp, dvp = t.dvp, D = p.head_dim, Dv = value_dim(p), group = p.heads / p.kv_heads;
  TileMask mask;
  mask.labelled = k_tile != nullptr;
  mask.dist = allowed_distance(p);
  if (mask.labelled) {
    const bool any = std::any_of(tiles.q.begin(), tiles.q.end(), [&](const RowTile& q) {
      return cover(mask.dist, q.range, k_tile->range) != Cover::none;
    });
    if (!any) return;  // no query sees this key tile: its dK/dV rows get nothing
  }
  const int64_t width = round_up(cols, 2 * W);
  pack_rows(p.dtype, p.k, b, j0, cols, hk, D, 1.0f, t.k.data(), dp, kBlockK, t.key_rows);
  pack_rows_transposed<W>(p.dtype, p.k, b, j0, cols, hk, D, 1.0f, t.kt.data(), dp, kBlockK, width, t.key_rows);
  pack_rows_transposed<W>(p.dtype, p.v, b, j0, cols, hk, Dv, 1.0f, t.vt.data(), dvp, kBlockK, width, t.key_rows);
  std::fill(t.dk.begin(), t.dk.end(), 0.0f);
  std::fill(t.dv.begin(), t.dv.end(), 0.0f);
  for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
    if (mask.labelled) {
      for (const RowTile& q : tiles.q) {
        mask.cover = cover(mask.dist, q.range, k_tile->range);
        if (mask.cover == Cover::none) continue;
        mask.one_segment = q.single() && k_tile->single();
        backward_query_block<W>(p, b, h, q.start, q.rows, j0, cols, t, mask);
      }
      continue;
    }
    // Query rows before the first one that sees key j0 contribute nothing.
    const int64_t first_row = p.causal ? std::max<int64_t>(0, j0 - p.causal_offset) : 0;
    for (int64_t i0 = first_row / kBlockQ * kBlockQ; i0 < p.sq; i0 += kBlockQ)
      backward_query_block<W>(p, b, h, i0, std::min(kBlockQ, p.sq - i0), j0, cols, t, mask);
  }
  add_rows(p.dk, b, j0, cols, hk, D, 1.0f, t.dk.data(), dp, t.key_rows);
  add_rows(p.dv, b, j0, cols, hk, Dv, 1.0f, t.dv.data(), dvp, t.key_rows);
}

template <int W>
HCP_INLINE void backward_kv_head(const AttnParams& p, int64_t b, int64_t hk, BackwardScratch<W>& t,
                                 const BackwardTiles& tiles) {
  if (labelled_mask(p)) {
    for (const RowTile& k : tiles.k) backward_key_tile<W>(p, b, hk, k.start, k.rows, t, tiles, &k);
    return;
  }
  for (int64_t j0 = 0; j0 < p.sk; j0 += kBlockK)
    backward_key_tile<W>(p, b, hk, j0, std::min(kBlockK, p.sk - j0), t, tiles, nullptr);
}

template <int W>
HCP_INLINE void backward_tasks(const AttnParams& stored, int64_t first, int64_t step) {
  const KeyOrder order = key_order(stored);
  AttnParams p = stored;
  if (order.reordered()) p.k_labels = {order.seg.data(), order.pos.data()};
  BackwardScratch<W> scratch(p.head_dim, value_dim(p));
  scratch.key_rows = order.reordered() ? order.rows.data() : nullptr;
  const BackwardTiles tiles = backward_tiles(p);
  for (int64_t task = first; task < p.batch * p.kv_heads; task += step)
    backward_kv_head<W>(p, task / p.kv_heads, task % p.kv_heads, scratch, tiles);
}

}  // namespace hcp::cpu
