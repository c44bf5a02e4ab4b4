// The forward kernel body: for one (batch, head, query block), stream key blocks with an online softmax
// (running max m and denominator l per row, output rescaled when the max grows), FlashAttention-2 style.
// Blocks above the causal diagonal are skipped; only blocks that cross it or the sequence end are masked. Under a
// labelled mask (label_mask.hpp) tiles with no visible pair are skipped and those that straddle a boundary are
// masked element by element.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "bias_rows.hpp"
#include "key_order.hpp"
#include "label_mask.hpp"
#include "tile_gemm.hpp"
#include "tiles.hpp"
#include "transpose_pack.hpp"

namespace hcp::cpu {

// Query rows per forward tile. Larger than the key tile so that each packed key/value tile (read from rows a page
// apart, so mostly from beyond the caches) serves 256 query rows; near the causal diagonal the rows that see
// nothing of a key tile are skipped four at a time, so the larger tile costs almost no masked work.
inline constexpr int64_t kForwardBlockQ = 256;

// The packed key tiles of a labelled call are cached when they fit in this many bytes per worker.
inline constexpr int64_t kKeyCacheBytes = int64_t{64} << 20;

template <int W>
struct ForwardScratch {
  // The padded head dims of the score products (q, k) and of the value products (v, the output accumulator).
  int64_t dp, dvp;
  std::vector<float> q, kt, v, s, o, m, l;
  // Each row's largest visible logit over this call's keys (AttnParams::max_logit): m alone is not it, since an
  // accumulating call starts m at the earlier lse.
  std::vector<float> logit_max;
  // Accumulating calls: the weight the earlier output (read once, at the end) has in the running sum, relative to
  // the running max; 0 where there is none.
  std::vector<float> keep;
  // Whether the output accumulator rows of each 4-row block hold a sum yet: a block's first value product sets
  // them instead of adding to zeros, so the accumulator is never cleared (a CP rank's ring step starts about 14k
  // query blocks a forward, and clearing theirs was 1.8% of the packed p2p forward's samples).
  std::vector<char> o_set;
  // Labelled calls: every key tile of one (batch, kv head) packed once and kept while the query blocks of that head
  // pass by (short documents make small query blocks, each of which would otherwise pack its key tiles again).
  std::vector<float> kt_cache, v_cache;
  std::vector<char> cached;
  int64_t cache_b = -1, cache_hk = -1;
  // Query and value rows read where they are (reads_in_place); the softmax scale then goes into the packed keys.
  bool in_place = false;
  const float* q_tile = nullptr;  // the block's query rows: t.q or the tensor's own rows
  int64_t q_ld = 0;
  // Keys walked out of their stored order (key_order.hpp): the stored row of each. Keys are packed through it;
  // value rows read in place are read run by run of stored rows.
  const int64_t* key_rows = nullptr;
  ForwardScratch(int64_t head_dim, int64_t head_dim_v)
      : dp(round_up(head_dim, 2 * W)), dvp(round_up(head_dim_v, 2 * W)),
        q(kForwardBlockQ * dp), kt(dp * kBlockK), v(kBlockK * dvp), s(kForwardBlockQ * kBlockK),
        o(kForwardBlockQ * dvp), m(kForwardBlockQ), l(kForwardBlockQ), logit_max(kForwardBlockQ), keep(kForwardBlockQ),
        o_set(kForwardBlockQ / 4) {}
};

// fp32 query and value rows stored as contiguous runs of their head dims (the CP ring's head-major tensors) with
// head dims a multiple of 2W are already in the GEMMs' operand form: reading them in place saves packing them again
// for every key block a ring step brings (a CP rank meets each of its query rows once per step).
template <int W>
bool reads_in_place(const AttnParams& p) {
  const int64_t dv = value_dim(p);
  return p.dtype == DType::f32 && p.head_dim % (2 * W) == 0 && dv % (2 * W) == 0 && p.q.stride_s == p.head_dim &&
         p.v.stride_s == dv;
}

// Whether a labelled call's packed K and V tiles (`tiles` of each) fit the per-worker cache.
template <int W>
bool key_tiles_cached(const AttnParams& p, size_t tiles) {
  const int64_t floats = (round_up(p.head_dim, 2 * W) + round_up(value_dim(p), 2 * W)) * kBlockK;
  return static_cast<int64_t>(tiles) * floats * static_cast<int64_t>(sizeof(float)) <= kKeyCacheBytes;
}

// Turns score row `srow` into probabilities against the running max/denominator, rescaling the output row (orow;
// nullptr while the row's accumulator holds nothing yet, ForwardScratch::o_set); `logit_max` (optional) gets the
// larger of it and the row's largest visible score, which the max is computed for anyway. Only
// the first `width` columns (a multiple of W, at least `visible`) are read; the rest of the tile row is unused.
// Columns from `visible` on count as -inf and become 0: masked in the registers of the vectors they share with
// visible ones (writing -inf into them first, one float at a time, made the loads that followed wait for the stores:
// a short document's CP chunk of 34 keys leaves 14 such columns in every row of its 48-wide tiles).
template <int W>
HCP_INLINE void softmax_row(float* srow, int64_t visible, int64_t width, float& m, float& l, float& keep, float* orow,
                            int64_t dp, float* logit_max = nullptr) {
  using V = typename Simd<W>::V;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int64_t whole = std::min(visible, width) / W * W;  // vectors of visible columns only
  V vmax = splat<W>(kNegInf);
  for (int64_t j = 0; j < whole; j += W) {
    const V x = load<W>(srow + j);
    vmax = x > vmax ? x : vmax;
  }
  for (int64_t j = whole; j < width; j += W) {
    const V x = lanes_below<W>(visible - j) ? load<W>(srow + j) : splat<W>(kNegInf);
    vmax = x > vmax ? x : vmax;
  }
  const float block_max = reduce_max<W>(vmax);
  if (logit_max && block_max > *logit_max) *logit_max = block_max;
  const float m_new = block_max > m ? block_max : m;
  if (m_new == kNegInf) {  // nothing visible yet: this block contributes nothing
    for (int64_t j = 0; j < width; ++j) srow[j] = 0;
    return;
  }
  const V shift = splat<W>(m_new);
  V vsum = splat<W>(0.0f);
  for (int64_t j = 0; j < whole; j += W) {
    const V e = exp<W>(load<W>(srow + j) - shift);
    store<W>(srow + j, e);
    vsum += e;
  }
  for (int64_t j = whole; j < width; j += W) {
    const V e = lanes_below<W>(visible - j) ? exp<W>(load<W>(srow + j) - shift) : V{};
    store<W>(srow + j, e);
    vsum += e;
  }
  if (m_new != m) {
    const float alpha = m == kNegInf ? 0.0f : std::exp(m - m_new);
    const V a = splat<W>(alpha);
    if (orow)
      for (int64_t d = 0; d < dp; d += W) store<W>(orow + d, load<W>(orow + d) * a);
    l *= alpha;
    keep *= alpha;
    m = m_new;
  }
  l += reduce_sum<W>(vsum);
}

// Sets the scores of the pairs the labelled mask hides to -inf (then softmax_row sees all `cols` keys). Tiles of one
// segment on both sides compare positions only, in a loop the compiler vectorises.
HCP_INLINE void mask_scores(const AttnParams& p, const DistanceRange& d, int64_t row, int64_t j0, int64_t cols,
                            bool one_segment, float* srow) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const Label q = q_label(p, row);
  if (!one_segment) {
    for (int64_t j = 0; j < cols; ++j)
      if (!sees(d, q, k_label(p, j0 + j))) srow[j] = kNegInf;
    return;
  }
  const int64_t lo = q.pos - d.hi, hi = q.pos - d.lo;  // visible key positions
  if (p.k_labels.pos) {
    const int32_t* kpos = p.k_labels.pos + j0;
    for (int64_t j = 0; j < cols; ++j) srow[j] = (kpos[j] < lo || kpos[j] > hi) ? kNegInf : srow[j];
  } else {
    for (int64_t j = 0; j < cols; ++j) srow[j] = (j0 + j < lo || j0 + j > hi) ? kNegInf : srow[j];
  }
}

// The query blocks and key tiles of a call: fixed steps for plain masks; under labels, runs that end where a
// segment does (label_mask.hpp), so that a tile pair mostly holds one document on each side.
struct ForwardTiles {
  std::vector<RowTile> q, k;
  // The key tiles a query can see (some segment >= 0), in order. When their lowest and highest segments both never
  // fall along it (documents in order: single ranks, ring blocks, all_gather's walked keys), the tiles a query tile
  // can see are one run of it, found by a binary search: a ring step's call has about as many key tiles as query
  // tiles (two per document), and looking at every pair cost about 2% of a packed p2p forward.
  std::vector<size_t> live;
  bool live_sorted = false;
};
inline std::vector<RowTile> forward_query_tiles(const AttnParams& p) {
  return segment_tiles(p.sq, kForwardBlockQ, [&](int64_t i) { return q_label(p, i); });
}
inline ForwardTiles forward_tiles(const AttnParams& p) {
  ForwardTiles t;
  if (!labelled_mask(p)) return t;
  t.q = forward_query_tiles(p);
  t.k = segment_tiles(p.sk, kBlockK, [&](int64_t j) { return k_label(p, j); });
  t.live_sorted = true;
  for (size_t i = 0; i < t.k.size(); ++i) {
    const LabelRange& r = t.k[i].range;
    if (r.seg_hi < 0) continue;
    if (r.seg_lo < 0) t.live_sorted = false;  // a tile that mixes padding and a document
    if (!t.live.empty()) {
      const LabelRange& prev = t.k[t.live.back()].range;
      if (r.seg_lo < prev.seg_lo || r.seg_hi < prev.seg_hi) t.live_sorted = false;
    }
    t.live.push_back(i);
  }
  return t;
}
// The positions in tiles.live of the key tiles whose segments can meet query tile q's: [*first, *end).
inline void live_key_tiles(const ForwardTiles& tiles, const RowTile& q, size_t* first, size_t* end) {
  *first = 0, *end = tiles.live.size();
  if (!tiles.live_sorted) return;
  const auto at = std::partition_point(tiles.live.begin(), tiles.live.end(),
                                       [&](size_t ki) { return tiles.k[ki].range.seg_hi < q.range.seg_lo; });
  *first = static_cast<size_t>(at - tiles.live.begin());
  *end = *first;
  while (*end < tiles.live.size() && tiles.k[tiles.live[*end]].range.seg_lo <= q.range.seg_hi) ++*end;
}
// The query blocks of a call (the dispatcher's task count needs no key tiles).
inline int64_t forward_blocks(const AttnParams& p) {
  return labelled_mask(p) ? static_cast<int64_t>(forward_query_tiles(p).size())
                          : (p.sq + kForwardBlockQ - 1) / kForwardBlockQ;
}

// How a key tile is masked: the plain causal/no mask, a labelled tile whose pairs are all visible, or a labelled
// tile masked element by element with `dist`.
struct TileMasking {
  bool labelled = false;
  const DistanceRange* dist = nullptr;  // labelled tiles with some hidden pairs
  bool one_segment = false;
  // Where a row's keys end: row i of the query block sees none of the tile's keys from column visible_end + i on
  // (a tile across the causal diagonal, whose later rows see more of it); kNoEnd: no such limit.
  static constexpr int64_t kNoEnd = std::numeric_limits<int64_t>::max() / 4;
  int64_t visible_end = kNoEnd;
};

// The columns the 4 rows from row i of a key tile with `cols` keys compute: up to the last one its last row may
// see, rounded to the GEMM's width. A diagonal tile's scores right of that are hidden (the softmax counts them as
// -inf and their value rows would add 0), so the score and value products skip them: the ring's diagonal
// step meets one CP chunk against itself, half of whose pairs lie above the diagonal, and a short document's
// last query tile has a diagonal tile for every key tile of its own.
template <int W>
HCP_INLINE int64_t block_columns(const TileMasking& masking, int64_t i, int64_t cols) {
  if (masking.visible_end == TileMasking::kNoEnd) return round_up(cols, W);
  return round_up(std::clamp<int64_t>(masking.visible_end + i + 3, 0, cols), W);
}

// Whether any key tile has a pair visible to the query tile.
inline bool sees_any_key(const AttnParams& p, const RowTile& q, const ForwardTiles& tiles) {
  const DistanceRange dist = allowed_distance(p);
  size_t first = 0, end = 0;
  live_key_tiles(tiles, q, &first, &end);
  for (size_t i = first; i < end; ++i)
    if (cover(dist, q.range, tiles.k[tiles.live[i]].range) != Cover::none) return true;
  return false;
}

// The transposed key tile [j0, j0 + cols) of (batch row b, KV head hk), as the score products read it: keys scaled by
// the softmax scale where the queries are read in place (reads_in_place), unscaled where their packing scales them.
template <int W>
HCP_INLINE void pack_key_tile(const AttnParams& p, bool in_place, int64_t b, int64_t hk, int64_t j0, int64_t cols,
                              int64_t dp, const int64_t* key_rows, float* dst) {
  pack_rows_transposed<W>(p.dtype, p.k, b, j0, cols, hk, p.head_dim, in_place ? p.scale : 1.0f, dst, dp, kBlockK,
                          round_up(cols, W), key_rows);
}

// One key tile [j0, j0 + cols) against the query block's rows [first, end) (the others see none of its keys).
// given_kt: the tile packed already (AttnParams::packed_keys).
template <int W>
HCP_INLINE void forward_key_tile(const AttnParams& p, int64_t b, int64_t h, int64_t hk, int64_t i0, int64_t rows,
                                 int64_t j0,
                                 int64_t cols, int64_t first, int64_t end, const TileMasking& masking,
                                 ForwardScratch<W>& t, int64_t cache_index = -1, const float* given_kt = nullptr) {
  const int64_t dp = t.dp, dvp = t.dvp, Dv = value_dim(p);
  if (first >= end) return;
  const float* kt = t.kt.data();
  const float* v = t.v.data();
  int64_t v_ld = dvp;
  if (t.in_place) v = f32_row(p.v, b, j0, hk), v_ld = p.v.stride_s;
  if (cache_index >= 0) {  // packed once per (batch, kv head)
    const size_t at = static_cast<size_t>(cache_index * dp * kBlockK);
    const size_t v_at = static_cast<size_t>(cache_index * dvp * kBlockK);
    if (!t.cached[static_cast<size_t>(cache_index)]) {
      if (!given_kt) pack_key_tile<W>(p, t.in_place, b, hk, j0, cols, dp, t.key_rows, t.kt_cache.data() + at);
      if (!t.in_place)
        pack_rows(p.dtype, p.v, b, j0, cols, hk, Dv, 1.0f, t.v_cache.data() + v_at, dvp, round_up(cols, W),
                  t.key_rows);
      t.cached[static_cast<size_t>(cache_index)] = 1;
    }
    kt = given_kt ? given_kt : t.kt_cache.data() + at;
    if (!t.in_place) v = t.v_cache.data() + v_at;
  } else {
    if (given_kt)
      kt = given_kt;
    else
      pack_key_tile<W>(p, t.in_place, b, hk, j0, cols, dp, t.key_rows, t.kt.data());
    if (!t.in_place)
      pack_rows(p.dtype, p.v, b, j0, cols, hk, Dv, 1.0f, t.v.data(), dvp, round_up(cols, W), t.key_rows);
  }
  // Only the tile's columns, rounded to the GEMM's width (a narrow tile, a short document's run, costs its
  // width), and on a diagonal tile only those of each 4-row block's rows (block_columns).
  for (int64_t i = first; i < end; i += 4) {
    const int64_t n = block_columns<W>(masking, i, cols);
    if (n > 0) gemm_set<W>(4, n, dp, t.q_tile + i * t.q_ld, t.q_ld, kt, kBlockK, t.s.data() + i * kBlockK, kBlockK);
  }
  for (int64_t i = first; i < end; ++i) {
    float* srow = t.s.data() + i * kBlockK;
    const int64_t n = block_columns<W>(masking, i / 4 * 4, cols);
    if (i >= rows) {  // padding rows: keep them out of the output product
      std::fill(srow, srow + n, 0.0f);
      continue;
    }
    if (p.bias.data) add_bias_row(p, b, h, i0 + i, j0, std::min(cols, n), t.key_rows, srow);
    if (masking.dist) mask_scores(p, *masking.dist, i0 + i, j0, std::min(cols, n), masking.one_segment, srow);
    const int64_t visible = masking.labelled ? std::min(cols, n) : visible_keys(p, i0 + i, j0, cols);
    softmax_row<W>(srow, visible, n, t.m[i], t.l[i], t.keep[i], t.o_set[i / 4] ? t.o.data() + i * dvp : nullptr, dvp,
                   p.max_logit.data ? &t.logit_max[i] : nullptr);
  }
  // The scores past `cols` are 0, so the product stops there: in-place value rows past the tile are not read.
  // Under a key order, in-place value rows are one product per run of stored rows (at most a few per tile), over
  // k in the same order as one product would take it. A diagonal tile's 4-row blocks stop at their own columns:
  // the scores they leave out are 0, so the sums are those of the whole product, bit for bit. A block's first
  // product sets its accumulator rows (from 0, as adding to cleared rows would).
  for (int64_t i = first; i < end; i += 4) {
    const int64_t k_end = std::min(cols, block_columns<W>(masking, i, cols));
    if (k_end <= 0) continue;
    const float* s_i = t.s.data() + i * kBlockK;
    float* o_i = t.o.data() + i * dvp;
    const bool add = t.o_set[i / 4];
    t.o_set[i / 4] = 1;
    if (t.in_place && t.key_rows) {
      for (int64_t off = 0, run = 0; off < k_end; off += run) {
        run = stored_run(t.key_rows, j0 + off, k_end - off);
        const float* v_run = f32_row(p.v, b, t.key_rows[j0 + off], hk);
        if (add || off > 0)
          gemm_acc<W>(4, dvp, run, s_i + off, kBlockK, v_run, v_ld, o_i, dvp);
        else
          gemm_set<W>(4, dvp, run, s_i + off, kBlockK, v_run, v_ld, o_i, dvp);
      }
    } else if (add) {
      gemm_acc<W>(4, dvp, k_end, s_i, kBlockK, v, v_ld, o_i, dvp);
    } else {
      gemm_set<W>(4, dvp, k_end, s_i, kBlockK, v, v_ld, o_i, dvp);
    }
  }
}

template <int W>
HCP_INLINE void forward_block(const AttnParams& p, int64_t b, int64_t h, int64_t block, ForwardScratch<W>& t,
                              const ForwardTiles& tiles) {
  const int64_t dp = t.dp, dvp = t.dvp, D = p.head_dim, Dv = value_dim(p);
  const bool labelled = labelled_mask(p);
  const int64_t i0 = labelled ? tiles.q[static_cast<size_t>(block)].start : block * kForwardBlockQ;
  const int64_t rows = labelled ? tiles.q[static_cast<size_t>(block)].rows : std::min(kForwardBlockQ, p.sq - i0);
  const int64_t m_rows = round_up(rows, 4);
  const int64_t hk = h / (p.heads / p.kv_heads);
  if (labelled && !sees_any_key(p, tiles.q[static_cast<size_t>(block)], tiles)) {
    // A block that sees no key: an accumulating call leaves its rows as they are, a first call writes "nothing
    // visible" (out 0, lse -inf) without packing or computing anything.
    if (p.accumulate) return;
    float* lse = row_values(p.lse, b, h);
    for (int64_t i = 0; i < rows; ++i) {
      std::fill_n(f32_row(p.out, b, i0 + i, h), Dv, 0.0f);
      lse[i0 + i] = -std::numeric_limits<float>::infinity();
    }
    if (p.max_logit.data) std::fill_n(row_values(p.max_logit, b, h) + i0, rows, -std::numeric_limits<float>::infinity());
    return;
  }
  // The GEMMs read m_rows rows; in place only where those are all rows of the tensor.
  if (t.in_place && i0 + m_rows <= p.sq) {
    t.q_tile = f32_row(p.q, b, i0, h), t.q_ld = p.q.stride_s;
  } else {
    pack_rows(p.dtype, p.q, b, i0, rows, h, D, t.in_place ? 1.0f : p.scale, t.q.data(), dp, m_rows);
    t.q_tile = t.q.data(), t.q_ld = dp;
  }
  std::fill_n(t.o_set.begin(), m_rows / 4, 0);
  std::fill_n(t.m.begin(), m_rows, -std::numeric_limits<float>::infinity());
  std::fill_n(t.l.begin(), m_rows, 0.0f);
  std::fill_n(t.keep.begin(), m_rows, 0.0f);
  if (p.max_logit.data) std::fill_n(t.logit_max.begin(), m_rows, -std::numeric_limits<float>::infinity());
  if (p.accumulate) {
    // Resume from the earlier result: running max lse, denominator 1, and the earlier output with weight 1. That
    // output joins the sum only at the end (weight `keep`, rescaled with the running max), where its rows are
    // written anyway: reading them into the tile first cost a pass over out per call (about 4% of a packed ring
    // forward).
    const float* prev_lse = row_values(p.lse, b, h) + i0;
    for (int64_t i = 0; i < rows; ++i) {
      if (prev_lse[i] == -std::numeric_limits<float>::infinity()) continue;
      t.m[i] = prev_lse[i];
      t.l[i] = 1.0f;
      t.keep[i] = 1.0f;
    }
  }

  if (labelled) {
    const DistanceRange dist = allowed_distance(p);
    const RowTile& q = tiles.q[static_cast<size_t>(block)];
    const size_t tile_floats = static_cast<size_t>(dp * kBlockK);
    const bool cache = key_tiles_cached<W>(p, tiles.k.size());
    if (cache && (t.cache_b != b || t.cache_hk != hk)) {
      if (!p.packed_keys) t.kt_cache.resize(tiles.k.size() * tile_floats);
      if (!t.in_place) t.v_cache.resize(tiles.k.size() * static_cast<size_t>(dvp * kBlockK));
      t.cached.assign(tiles.k.size(), 0);
      t.cache_b = b, t.cache_hk = hk;
    }
    size_t live_first = 0, live_end = 0;
    live_key_tiles(tiles, q, &live_first, &live_end);
    for (size_t li = live_first; li < live_end; ++li) {
      const size_t ki = tiles.live[li];
      const RowTile& k = tiles.k[ki];
      const Cover tile = cover(dist, q.range, k.range);
      if (tile == Cover::none) continue;
      int64_t first = 0, end = m_rows;
      reaching_rows(q, k.range, dist, m_rows, [&](int64_t i) { return q_label(p, i); }, &first, &end);
      TileMasking masking{true, tile == Cover::some ? &dist : nullptr, q.single() && k.single()};
      if (masking.dist && consecutive(q) && consecutive(k) && dist.lo > -TileMasking::kNoEnd)
        masking.visible_end = q.range.pos_lo - dist.lo - k.range.pos_lo + 1;
      const float* given = p.packed_keys ? p.packed_keys + ((b * p.kv_heads + hk) * static_cast<int64_t>(tiles.k.size()) +
                                                             static_cast<int64_t>(ki)) * static_cast<int64_t>(tile_floats)
                                         : nullptr;
      forward_key_tile<W>(p, b, h, hk, i0, rows, k.start, k.rows, first, end, masking, t,
                          cache ? static_cast<int64_t>(ki) : -1, given);
    }
  } else {
    int64_t key_end = p.sk;  // keys past the last row's causal limit are never visible
    if (p.causal) key_end = std::max<int64_t>(0, std::min(p.sk, i0 + rows + p.causal_offset));
    for (int64_t j0 = 0; j0 < key_end; j0 += kBlockK) {
      const int64_t cols = std::min(kBlockK, p.sk - j0);
      if (j0 + kBlockK < key_end) {
        const int64_t next = std::min(kBlockK, p.sk - j0 - kBlockK);
        prefetch_rows(p.dtype, p.k, b, j0 + kBlockK, next, hk, D);
        prefetch_rows(p.dtype, p.v, b, j0 + kBlockK, next, hk, Dv);
      }
      // Rows above `first` see no key of this tile (causal); they keep their state untouched.
      int64_t first = 0;
      if (p.causal) first = std::clamp<int64_t>((j0 - p.causal_offset - i0) / 4 * 4, 0, m_rows);
      TileMasking masking;
      if (p.causal) masking.visible_end = i0 + p.causal_offset - j0 + 1;
      forward_key_tile<W>(p, b, h, hk, i0, rows, j0, cols, first, m_rows, masking, t);
    }
  }

  // Blocks no key tile reached: their rows' sums are 0.
  for (int64_t i = 0; i < rows; i += 4)
    if (!t.o_set[i / 4]) std::fill_n(t.o.begin() + i * dvp, 4 * dvp, 0.0f);
  float* lse = row_values(p.lse, b, h);
  for (int64_t i = 0; i < rows; ++i) {
    float* out = f32_row(p.out, b, i0 + i, h);
    const float l = t.l[i];
    const float inv = l > 0 ? 1.0f / l : 0.0f, keep = t.keep[i];
    const float* o = t.o.data() + i * dvp;
    if (keep != 0.0f) {  // out is only read where it holds an earlier result (it may be uninitialised otherwise)
      for (int64_t d = 0; d < Dv; ++d) out[d] = (o[d] + keep * out[d]) * inv;
    } else {
      for (int64_t d = 0; d < Dv; ++d) out[d] = o[d] * inv;
    }
    lse[i0 + i] = l > 0 ? t.m[i] + std::log(l) : -std::numeric_limits<float>::infinity();
  }
  if (p.max_logit.data) {
    float* mx = row_values(p.max_logit, b, h) + i0;
    for (int64_t i = 0; i < rows; ++i) mx[i] = p.accumulate ? std::max(mx[i], t.logit_max[i]) : t.logit_max[i];
  }
}

// A thread keeps its scratch between calls (up to kKeptScratchBytes): a CP rank calls the kernel once per ring step,
// and fresh scratch each time cost page faults and zeroing (with memset, about 6% of a packed ring forward).
inline constexpr size_t kKeptScratchBytes = size_t{16} << 20;
template <int W>
ForwardScratch<W>& thread_scratch(int64_t head_dim, int64_t head_dim_v) {
  thread_local std::unique_ptr<ForwardScratch<W>> kept;
  if (!kept || kept->dp != round_up(head_dim, 2 * W) || kept->dvp != round_up(head_dim_v, 2 * W))
    kept = std::make_unique<ForwardScratch<W>>(head_dim, head_dim_v);
  kept->cache_b = kept->cache_hk = -1;  // the cached tiles were another call's
  return *kept;
}
template <int W>
void release_scratch(ForwardScratch<W>& t) {
  if ((t.kt_cache.capacity() + t.v_cache.capacity()) * sizeof(float) <= kKeptScratchBytes) return;
  t.kt_cache = {}, t.v_cache = {};
}

// A call as the forward walks it: its keys in key_order's order (the labels reordered; key data read through
// order.rows).
inline AttnParams walked_params(const AttnParams& stored, const KeyOrder& order) {
  AttnParams p = stored;
  if (order.reordered()) p.k_labels = {order.seg.data(), order.pos.data()};
  return p;
}

// attention_packed_keys_floats_cpu and attention_pack_keys_cpu: every key tile of a labelled call for each (batch row,
// KV head), tiles.k.size() tiles of dp x kBlockK floats, in the layout forward_block reads through
// AttnParams::packed_keys. Offered only where the kernel would cache the tiles itself (kKeyCacheBytes). Forced inline,
// as the kernel bodies, so that the dispatcher's entry points compile them for their instruction sets.
template <int W>
HCP_INLINE int64_t forward_packed_keys_floats(const AttnParams& stored) {
  if (!labelled_mask(stored)) return 0;
  const KeyOrder order = key_order(stored);
  const ForwardTiles tiles = forward_tiles(walked_params(stored, order));
  const int64_t tile_floats = round_up(stored.head_dim, 2 * W) * kBlockK;
  const auto per_head = static_cast<int64_t>(tiles.k.size()) * tile_floats;
  if (!key_tiles_cached<W>(stored, tiles.k.size())) return 0;
  return stored.batch * stored.kv_heads * per_head;
}
template <int W>
HCP_INLINE void pack_forward_keys(const AttnParams& stored, int64_t part, int64_t parts, float* dst) {
  const KeyOrder order = key_order(stored);
  const AttnParams p = walked_params(stored, order);
  const ForwardTiles tiles = forward_tiles(p);
  const int64_t dp = round_up(p.head_dim, 2 * W), tile_floats = dp * kBlockK;
  const auto ntiles = static_cast<int64_t>(tiles.k.size());
  const int64_t* key_rows = order.reordered() ? order.rows.data() : nullptr;
  const bool in_place = reads_in_place<W>(p);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t hk = 0; hk < p.kv_heads; ++hk)
      for (const size_t ki : tiles.live) {
        if (static_cast<int64_t>(ki) % parts != part) continue;
        const RowTile& k = tiles.k[ki];
        pack_key_tile<W>(p, in_place, b, hk, k.start, k.rows, dp, key_rows,
                         dst + ((b * p.kv_heads + hk) * ntiles + static_cast<int64_t>(ki)) * tile_floats);
      }
}

// Tasks are (batch, head, query block), numbered so that consecutive tasks of one worker interleave over the
// causal triangle; a worker takes tasks first, first + step, ...
template <int W>
HCP_INLINE void forward_tasks(const AttnParams& stored, int64_t first, int64_t step) {
  // Under a key order, the call's key labels in that order; key data is read through scratch.key_rows.
  const KeyOrder order = key_order(stored);
  const AttnParams p = walked_params(stored, order);
  ForwardScratch<W>& scratch = thread_scratch<W>(p.head_dim, value_dim(p));
  scratch.in_place = reads_in_place<W>(p);
  scratch.key_rows = order.reordered() ? order.rows.data() : nullptr;
  const ForwardTiles tiles = forward_tiles(p);
  const int64_t qblocks = labelled_mask(p) ? static_cast<int64_t>(tiles.q.size()) : forward_blocks(p);
  const int64_t tasks = p.batch * p.heads * qblocks;
  for (int64_t task = first; task < tasks; task += step) {
    const int64_t qb = task % qblocks, bh = task / qblocks;
    forward_block<W>(p, bh / p.heads, bh % p.heads, qb, scratch, tiles);
  }
  release_scratch(scratch);
}

}  // namespace hcp::cpu
