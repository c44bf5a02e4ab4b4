// What `hcp attn` masks beyond causal: packed documents (--seqlens, each padded to a multiple of 2 x cp as
// Transformer Engine requires) and a sliding window (--window LEFT,RIGHT); the labels the single-rank check uses,
// and the number of visible query-key pairs that the FLOP figures count.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hcp/attention_params.hpp"
#include "hcp/packed_sequences.hpp"

namespace hcp::cli {

struct AttnMask {
  PackedBatch packed;  // empty: one sequence per batch row
  int64_t window_left = -1, window_right = -1;
  bool causal = false;
  int64_t seq = 0;                 // rows per batch (packed: padded tokens)
  std::vector<int32_t> seg, pos;   // the full sequence's labels, built by apply() (after the size checks)

  bool labelled() const { return !packed.empty() || window_left >= 0 || window_right >= 0; }
  // Puts the labels and window on a single-rank call over the full sequence, building the labels on first use.
  void apply(AttnParams* p);
  // Query-key pairs one head of one batch row computes: the useful work whatever the tiles skip.
  double visible_pairs() const;
};

// Throws Error{invalid_config} naming the option for malformed lists, non-positive lengths or bad window sides.
AttnMask make_attn_mask(const std::optional<std::string>& seqlens, const std::optional<std::string>& window, int cp,
                        bool causal, int64_t seq);

}  // namespace hcp::cli
