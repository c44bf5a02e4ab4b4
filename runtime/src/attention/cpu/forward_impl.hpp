// The forward kernel body: for one (batch, head, query block), stream key blocks with an online softmax
// (running max m and denominator l per row, output rescaled when the max grows), FlashAttention-2 style.
// Blocks above the causal diagonal are skipped; only blocks that cross it or the sequence end are masked. Under a
// labelled mask (label_mask.hpp) tiles with no visible pair are skipped and those that straddle a boundary are
// masked element by element.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "label_mask.hpp"
#include "tile_gemm.hpp"
#include "tiles.hpp"

namespace hcp::cpu {

// Query rows per forward tile. Larger than the key tile so that each packed key/value tile (read from rows a page
// apart, so mostly from beyond the caches) serves 256 query rows; near the causal diagonal the rows that see
// nothing of a key tile are skipped four at a time, so the larger tile costs almost no masked work.
inline constexpr int64_t kForwardBlockQ = 256;

template <int W>
struct ForwardScratch {
  int64_t dp;
  std::vector<float> q, kt, v, s, o, m, l;
  explicit ForwardScratch(int64_t head_dim)
      : dp(round_up(head_dim, 2 * W)),
        q(kForwardBlockQ * dp), kt(dp * kBlockK), v(kBlockK * dp), s(kForwardBlockQ * kBlockK),
        o(kForwardBlockQ * dp), m(kForwardBlockQ), l(kForwardBlockQ) {}
};

// Turns score row `srow` into probabilities against the running max/denominator, rescaling the output row.
template <int W>
HCP_INLINE void softmax_row(float* srow, int64_t visible, float& m, float& l, float* orow, int64_t dp) {
  using V = typename Simd<W>::V;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t j = visible; j < kBlockK; ++j) srow[j] = kNegInf;
  V vmax = splat<W>(kNegInf);
  for (int64_t j = 0; j < kBlockK; j += W) {
    const V x = load<W>(srow + j);
    vmax = x > vmax ? x : vmax;
  }
  const float block_max = reduce_max<W>(vmax);
  const float m_new = block_max > m ? block_max : m;
  if (m_new == kNegInf) {  // nothing visible yet: this block contributes nothing
    for (int64_t j = 0; j < kBlockK; ++j) srow[j] = 0;
    return;
  }
  const V shift = splat<W>(m_new);
  V vsum = splat<W>(0.0f);
  for (int64_t j = 0; j < kBlockK; j += W) {
    const V e = exp<W>(load<W>(srow + j) - shift);
    store<W>(srow + j, e);
    vsum += e;
  }
  if (m_new != m) {
    const float alpha = m == kNegInf ? 0.0f : std::exp(m - m_new);
    const V a = splat<W>(alpha);
    for (int64_t d = 0; d < dp; d += W) store<W>(orow + d, load<W>(orow + d) * a);
    l *= alpha;
    m = m_new;
  }
  l += reduce_sum<W>(vsum);
}

// Sets the scores of the pairs the labelled mask hides to -inf (then softmax_row sees all `cols` keys).
HCP_INLINE void mask_scores(const AttnParams& p, const DistanceRange& d, int64_t row, int64_t j0, int64_t cols,
                            float* srow) {
  const Label q = q_label(p, row);
  for (int64_t j = 0; j < cols; ++j)
    if (!sees(d, q, k_label(p, j0 + j))) srow[j] = -std::numeric_limits<float>::infinity();
}

// The label extents of every key tile of a call (labelled masks only).
inline std::vector<LabelRange> key_tile_ranges(const AttnParams& p) {
  std::vector<LabelRange> ranges;
  for (int64_t j0 = 0; j0 < p.sk; j0 += kBlockK)
    ranges.push_back(label_range(j0, std::min(kBlockK, p.sk - j0), [&](int64_t j) { return k_label(p, j); }));
  return ranges;
}

template <int W>
HCP_INLINE void forward_block(const AttnParams& p, int64_t b, int64_t h, int64_t i0, ForwardScratch<W>& t,
                              const std::vector<LabelRange>& k_ranges) {
  const int64_t dp = t.dp, D = p.head_dim;
  const int64_t rows = std::min(kForwardBlockQ, p.sq - i0);
  const int64_t m_rows = round_up(rows, 4);
  const int64_t hk = h / (p.heads / p.kv_heads);
  pack_rows(p.dtype, p.q, b, i0, rows, h, D, p.scale, t.q.data(), dp, kForwardBlockQ);
  std::fill(t.o.begin(), t.o.end(), 0.0f);
  std::fill(t.m.begin(), t.m.end(), -std::numeric_limits<float>::infinity());
  std::fill(t.l.begin(), t.l.end(), 0.0f);
  if (p.accumulate) {  // resume from the earlier result: running max lse, denominator 1, output out
    const float* prev_lse = row_values(p.lse, b, h) + i0;
    for (int64_t i = 0; i < rows; ++i) {
      if (prev_lse[i] == -std::numeric_limits<float>::infinity()) continue;
      t.m[i] = prev_lse[i];
      t.l[i] = 1.0f;
      std::copy_n(f32_row(p.out, b, i0 + i, h), D, t.o.data() + i * dp);
    }
  }

  const bool labelled = labelled_mask(p);
  const DistanceRange dist = allowed_distance(p);
  const LabelRange q_range =
      labelled ? label_range(i0, rows, [&](int64_t i) { return q_label(p, i); }) : LabelRange{};
  int64_t key_end = p.sk;  // keys past the last row's causal limit are never visible
  if (p.causal && !labelled) key_end = std::max<int64_t>(0, std::min(p.sk, i0 + rows + p.causal_offset));
  for (int64_t j0 = 0; j0 < key_end; j0 += kBlockK) {
    const int64_t cols = std::min(kBlockK, p.sk - j0);
    const Cover tile = labelled ? cover(dist, q_range, k_ranges[static_cast<size_t>(j0 / kBlockK)]) : Cover::some;
    if (tile == Cover::none) continue;
    pack_rows_transposed(p.dtype, p.k, b, j0, cols, hk, D, t.kt.data(), dp, kBlockK);
    pack_rows(p.dtype, p.v, b, j0, cols, hk, D, 1.0f, t.v.data(), dp, kBlockK);
    if (j0 + kBlockK < key_end) {
      const int64_t next = std::min(kBlockK, p.sk - j0 - kBlockK);
      prefetch_rows(p.dtype, p.k, b, j0 + kBlockK, next, hk, D);
      prefetch_rows(p.dtype, p.v, b, j0 + kBlockK, next, hk, D);
    }
    // Rows above `first` see no key of this tile (causal); they keep their state untouched.
    int64_t first = 0;
    if (p.causal && !labelled) first = std::clamp<int64_t>((j0 - p.causal_offset - i0) / 4 * 4, 0, m_rows);
    float* s_first = t.s.data() + first * kBlockK;
    std::fill(s_first, t.s.data() + m_rows * kBlockK, 0.0f);
    gemm_acc<W>(m_rows - first, kBlockK, dp, t.q.data() + first * dp, dp, t.kt.data(), kBlockK, s_first, kBlockK);
    for (int64_t i = first; i < m_rows; ++i) {
      float* srow = t.s.data() + i * kBlockK;
      if (i >= rows) {  // padding rows: keep them out of the output product
        std::fill(srow, srow + kBlockK, 0.0f);
        continue;
      }
      if (labelled && tile == Cover::some) mask_scores(p, dist, i0 + i, j0, cols, srow);
      softmax_row<W>(srow, labelled ? cols : visible_keys(p, i0 + i, j0, cols), t.m[i], t.l[i], t.o.data() + i * dp,
                     dp);
    }
    gemm_acc<W>(m_rows - first, dp, kBlockK, s_first, kBlockK, t.v.data(), dp, t.o.data() + first * dp, dp);
  }

  float* lse = row_values(p.lse, b, h);
  for (int64_t i = 0; i < rows; ++i) {
    float* out = f32_row(p.out, b, i0 + i, h);
    const float l = t.l[i];
    const float inv = l > 0 ? 1.0f / l : 0.0f;
    for (int64_t d = 0; d < D; ++d) out[d] = t.o[i * dp + d] * inv;
    lse[i0 + i] = l > 0 ? t.m[i] + std::log(l) : -std::numeric_limits<float>::infinity();
  }
}

// Tasks are (batch, head, query block), numbered so that consecutive tasks of one worker interleave over the
// causal triangle; a worker takes tasks first, first + step, ...
template <int W>
HCP_INLINE void forward_tasks(const AttnParams& p, int64_t first, int64_t step) {
  ForwardScratch<W> scratch(p.head_dim);
  const std::vector<LabelRange> k_ranges = labelled_mask(p) ? key_tile_ranges(p) : std::vector<LabelRange>{};
  const int64_t qblocks = (p.sq + kForwardBlockQ - 1) / kForwardBlockQ;
  const int64_t tasks = p.batch * p.heads * qblocks;
  for (int64_t task = first; task < tasks; task += step) {
    const int64_t qb = task % qblocks, bh = task / qblocks;
    forward_block<W>(p, bh / p.heads, bh % p.heads, qb * kForwardBlockQ, scratch, k_ranges);
  }
}

}  // namespace hcp::cpu
