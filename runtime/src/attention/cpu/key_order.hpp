// The order in which a labelled kernel call (forward and backward) walks its keys. CP all_gather gathers the keys
// in rank order, where each document's 2W chunks lie in W places; walked as stored, every chunk is a key tile of its
// own (a median document's chunk is about 40 keys, padded to 48 columns, so a fifth of the score work is padding).
// Walked in sequence order (segment, position), a document's keys are one run again and fill whole tiles. The
// kernels then read the tiles' rows through `rows` (the stored row of each walked key; dK and dV are added through
// it too) and mask with the labels in walked order; query and output rows do not move, so nothing but the keys'
// summation order changes. Calls whose runs already follow each other (single-rank packed batches, a ring step's
// two chunks of a document, which are not adjacent in the sequence) keep the stored order at no cost.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "label_mask.hpp"

namespace hcp::cpu {

struct KeyOrder {
  std::vector<int64_t> rows;      // stored row of each walked key; empty: the stored order
  std::vector<int32_t> seg, pos;  // the keys' labels in walked order
  bool reordered() const { return !rows.empty(); }
};

inline KeyOrder key_order(const AttnParams& p) {
  KeyOrder order;
  if (p.k_labels.seg == nullptr) return order;
  struct Run {
    int32_t seg;
    int64_t pos, start, rows;
  };
  std::vector<Run> runs;
  for (int64_t j = 0; j < p.sk;) {
    const Label first = k_label(p, j);
    int64_t end = j + 1;
    while (end < p.sk) {
      const Label l = k_label(p, end);
      if (l.seg != first.seg || l.pos != first.pos + (end - j)) break;
      ++end;
    }
    runs.push_back({first.seg, first.pos, j, end - j});
    j = end;
  }
  // Sequence order; keys no query sees (negative segments: padding) after all others, as stored.
  std::vector<Run> walked = runs;
  std::stable_sort(walked.begin(), walked.end(), [](const Run& a, const Run& b) {
    if ((a.seg < 0) != (b.seg < 0)) return b.seg < 0;
    if (a.seg < 0) return false;
    return a.seg != b.seg ? a.seg < b.seg : a.pos < b.pos;
  });
  // Reordering pays only where it joins runs that are stored apart.
  bool joins = false;
  for (size_t i = 1; i < walked.size() && !joins; ++i) {
    const Run& a = walked[i - 1];
    const Run& b = walked[i];
    joins = a.seg >= 0 && b.seg == a.seg && b.pos == a.pos + a.rows && b.start != a.start + a.rows;
  }
  if (!joins) return order;
  order.rows.reserve(static_cast<size_t>(p.sk));
  order.seg.reserve(static_cast<size_t>(p.sk));
  order.pos.reserve(static_cast<size_t>(p.sk));
  for (const Run& r : walked)
    for (int64_t i = 0; i < r.rows; ++i) {
      order.rows.push_back(r.start + i);
      order.seg.push_back(p.k_labels.seg[r.start + i]);
      order.pos.push_back(p.k_labels.pos[r.start + i]);
    }
  return order;
}

}  // namespace hcp::cpu
