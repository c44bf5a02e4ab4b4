// The labelled mask of AttnParams (packed sequences, CP chunks in any order, sliding windows): which keys a query
// sees, and for a whole tile pair whether none, some or all of its pairs are visible, so that the kernels skip
// empty tiles and mask element by element only where a tile straddles a boundary.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "hcp/attention_params.hpp"

namespace hcp::cpu {

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

}  // namespace hcp::cpu
