// The labelled mask of AttnParams (packed sequences, CP chunks in any order, sliding windows): which keys a query
// sees, and for a whole tile pair whether none, some or all of its pairs are visible, so that the kernels skip
// empty tiles and mask element by element only where a tile straddles a boundary.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "hcp/attention_params.hpp"

namespace hcp::cpu {

inline int64_t round_up_rows(int64_t x) { return (x + 3) / 4 * 4; }

// True when the mask is not the plain causal/no-mask of causal_offset (the kernels' fast path).
inline bool labelled_mask(const AttnParams& p) {
  return p.q_labels.seg != nullptr || p.window_left >= 0 || p.window_right >= 0;
}

struct Label {
  int32_t seg;
  int64_t pos;
};

inline Label q_label(const AttnParams& p, int64_t i) {
  if (p.q_labels.seg) return {p.q_labels.seg[i], p.q_labels.pos[i]};
  return {0, i + p.causal_offset};
}
inline Label k_label(const AttnParams& p, int64_t j) {
  if (p.k_labels.seg) return {p.k_labels.seg[j], p.k_labels.pos[j]};
  return {0, j};
}

// The allowed range of pos(query) - pos(key) under the causal flag and the window.
struct DistanceRange {
  int64_t lo, hi;
};
inline DistanceRange allowed_distance(const AttnParams& p) {
  constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
  DistanceRange d{-kInf, kInf};
  if (p.causal) d.lo = 0;
  if (p.window_right >= 0) d.lo = std::max(d.lo, -p.window_right);
  if (p.window_left >= 0) d.hi = std::min(d.hi, p.window_left);
  return d;
}

inline bool sees(const DistanceRange& d, Label q, Label k) {
  const int64_t dist = q.pos - k.pos;
  return q.seg == k.seg && q.seg >= 0 && dist >= d.lo && dist <= d.hi;
}

// The extent of the labels of a tile's rows.
struct LabelRange {
  int32_t seg_lo, seg_hi;
  int64_t pos_lo, pos_hi;
};

template <class LabelOf>
LabelRange label_range(int64_t r0, int64_t rows, LabelOf label_of) {
  const Label first = label_of(r0);
  LabelRange r{first.seg, first.seg, first.pos, first.pos};
  for (int64_t i = r0 + 1; i < r0 + rows; ++i) {
    const Label l = label_of(i);
    r.seg_lo = std::min(r.seg_lo, l.seg), r.seg_hi = std::max(r.seg_hi, l.seg);
    r.pos_lo = std::min(r.pos_lo, l.pos), r.pos_hi = std::max(r.pos_hi, l.pos);
  }
  return r;
}

enum class Cover { none, some, all };

// Whether no pair, some pairs or every pair of a query tile and a key tile is visible. "some" may be returned for
// a tile pair with no visible pair (the element mask then removes everything); "none" and "all" are exact.
inline Cover cover(const DistanceRange& d, const LabelRange& q, const LabelRange& k) {
  if (q.seg_hi < 0 || k.seg_hi < 0 || q.seg_hi < k.seg_lo || k.seg_hi < q.seg_lo) return Cover::none;
  // The distances the tile pair spans, pos(q) - pos(k).
  const int64_t dist_lo = q.pos_lo - k.pos_hi, dist_hi = q.pos_hi - k.pos_lo;
  if (dist_hi < d.lo || dist_lo > d.hi) return Cover::none;
  const bool one_segment = q.seg_lo == q.seg_hi && k.seg_lo == k.seg_hi && q.seg_lo == k.seg_lo && q.seg_lo >= 0;
  if (one_segment && dist_lo >= d.lo && dist_hi <= d.hi) return Cover::all;
  return Cover::some;
}

// Tiles of rows for a labelled call: each run (one segment at consecutive positions: a document's CP chunk) of
// kMinSegmentRows rows or more gets tiles of its own (at most max_rows), so that a tile pair is seen whole, not at all
// or across one diagonal; consecutive shorter runs (tiny documents, padding) share tiles, masked element by element.
// `single` when all rows of a tile have one segment, `increasing` when positions never fall along its rows.
inline constexpr int64_t kMinSegmentRows = 1;
struct RowTile {
  int64_t start, rows;
  LabelRange range;
  bool increasing;
  bool single() const { return range.seg_lo == range.seg_hi; }
};
// Whether a tile's rows hold one segment at consecutive positions (row i at range.pos_lo + i).
inline bool consecutive(const RowTile& t) {
  return t.single() && t.increasing && t.range.pos_hi - t.range.pos_lo + 1 == t.rows;
}

template <class LabelOf>
std::vector<RowTile> segment_tiles(int64_t n, int64_t max_rows, LabelOf label_of) {
  struct Run {
    int64_t start, rows;
  };
  std::vector<Run> runs;
  for (int64_t i = 0; i < n;) {
    // A run: one segment at consecutive positions (a CP chunk of a document; padding is one run).
    Label prev = label_of(i);
    int64_t j = i + 1;
    for (; j < n; ++j) {
      const Label l = label_of(j);
      if (l.seg != prev.seg || (l.seg >= 0 && l.pos != prev.pos + 1)) break;
      prev = l;
    }
    runs.push_back({i, j - i});
    i = j;
  }
  std::vector<RowTile> tiles;
  auto add = [&](int64_t start, int64_t rows) {
    const Label first = label_of(start);
    RowTile t{start, rows, {first.seg, first.seg, first.pos, first.pos}, true};
    int64_t prev = first.pos;
    for (int64_t i = start + 1; i < start + rows; ++i) {
      const Label l = label_of(i);
      if (l.pos < prev || l.seg != first.seg) t.increasing = false;
      prev = l.pos;
      t.range.seg_lo = std::min(t.range.seg_lo, l.seg), t.range.seg_hi = std::max(t.range.seg_hi, l.seg);
      t.range.pos_lo = std::min(t.range.pos_lo, l.pos), t.range.pos_hi = std::max(t.range.pos_hi, l.pos);
    }
    tiles.push_back(t);
  };
  for (size_t r = 0; r < runs.size();) {
    if (runs[r].rows >= kMinSegmentRows) {
      for (int64_t i = 0; i < runs[r].rows; i += max_rows) add(runs[r].start + i, std::min(max_rows, runs[r].rows - i));
      ++r;
      continue;
    }
    const int64_t start = runs[r].start;
    int64_t rows = 0;
    while (r < runs.size() && runs[r].rows < kMinSegmentRows && rows + runs[r].rows <= max_rows) rows += runs[r++].rows;
    add(start, rows);
  }
  return tiles;
}

// The rows [first, end) of a query tile that can see any key of a key tile, both single-segment with the same
// segment and the query positions increasing: those with pos(k_lo) + d.lo <= pos <= pos(k_hi) + d.hi. Rounded
// out to multiples of 4 (the GEMM's row step) within [0, m_rows).
template <class LabelOf>
void reaching_rows(const RowTile& q, const LabelRange& k, const DistanceRange& d, int64_t m_rows, LabelOf q_label_of,
                   int64_t* first, int64_t* end) {
  *first = 0, *end = m_rows;
  if (!q.increasing || !q.single() || k.seg_lo != k.seg_hi) return;
  // Binary searches over the increasing positions: the first row at or past the low bound, the first past the high.
  auto first_row = [&](auto past) {
    int64_t lo = 0, hi = q.rows;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (past(q_label_of(q.start + mid).pos)) hi = mid; else lo = mid + 1;
    }
    return lo;
  };
  const int64_t begin = first_row([&](int64_t pos) { return pos >= k.pos_lo + d.lo; });
  const int64_t stop = first_row([&](int64_t pos) { return pos > k.pos_hi + d.hi; });
  *first = begin / 4 * 4;
  *end = std::max(*first, std::min(m_rows, round_up_rows(stop)));
}

}  // namespace hcp::cpu
