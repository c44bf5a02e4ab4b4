// The kernels' row labels (AttnParams::q_labels / k_labels) for every block a CP participant computes on: its own
// rows, the rows after an a2a exchange (the members' chunks in sequence order), every ring member's KV block
// and, for all_gather, all ranks' rows. Labels are built as runs of consecutive positions (two per document and
// rank), so that whether a query block sees a key block at all is decided exactly, without touching rows.
#pragma once

#include <cstdint>
#include <vector>

#include "hcp/attention_params.hpp"
#include "hcp/cp_engine.hpp"
#include "hcp/packed_sequences.hpp"
#include "sequence_layout.hpp"

namespace hcp::cp {

struct LabelRun {
  int32_t seg;  // document; -1: padding
  int64_t pos;  // position of the first row in its document
  int64_t rows;
};
using RowRuns = std::vector<LabelRun>;

// The rows of CP rank `rank` of `w` (chunks rank and 2w-1-rank of every document). A bshd sequence of length S is
// the batch of one document {0, S}.
RowRuns rank_runs(const PackedBatch& batch, int w, int rank);
// Rows one after another (an all_gather's rows in rank order).
RowRuns concat_runs(const std::vector<RowRuns>& parts);

// The rows of an a2a group (CP ranks `members`, in member order) in sequence order: every chunk the members hold,
// sorted by its place in the padded batch; `moves` take member j's local rows there (sequence_layout.hpp). With
// in_sequence false, member order: each member's rows whole, one member after another (the exchange's own layout).
struct GroupOrder {
  RowRuns runs;
  MixedOrder moves;
};
GroupOrder group_order(const PackedBatch& batch, int w, const std::vector<int>& members, bool in_sequence = true);

// Whether any query row of `q` sees any key row of `k` under the causal flag and the window (exact).
bool any_visible(const RowRuns& q, const RowRuns& k, bool causal, int64_t window_left, int64_t window_right);

// The labels of the blocks of one CP computation, in the engine's memory.
struct BlockLabels {
  int64_t window_left = -1, window_right = -1;
  int me = 0;                       // this participant's block
  std::vector<AttnLabels> blocks;   // per ring member (ring schemes) or per rank (all_gather)
  std::vector<char> seen;           // seen[i]: block me's queries see some key of block i
  AttnLabels all_keys;              // all_gather: every rank's rows in rank order
  // all_gather on host engines (filled only there): every rank's rows in sequence order, and where each rank's rows go
  // there (all_gather.cpp: share_kv).
  AttnLabels all_keys_in_sequence;
  MixedOrder all_moves;
  std::vector<EngineBuffer> memory;
};

// Uploads `runs` (expanded to per-row seg and pos) into engine memory owned by `labels`.
Status upload_runs(CpEngine& eng, const RowRuns& runs, BlockLabels* labels, AttnLabels* out);

}  // namespace hcp::cp
