// Packed sequences (Transformer Engine's "thd" layout): several documents one after another in a [T, H, D] tensor,
// described by cu_seqlens (offsets of the real lengths) and cu_seqlens_padded (where each document starts; each
// padded length divisible by 2 x cp). Context parallelism splits every document into 2 x cp chunks and gives rank r
// chunks r and 2cp-1-r of each, documents in order (TE's partitioning, thd_get_partitioned_indices), so a data
// pipeline that shards for TE shards the same way. Rows past a document's real length are padding: they see
// nothing and nothing sees them (their out is 0, their lse -inf, their gradients 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hcp/status.hpp"

namespace hcp {

struct PackedBatch {
  std::vector<int64_t> cu_seqlens;         // N + 1 offsets from 0: document i has cu[i+1] - cu[i] real tokens
  std::vector<int64_t> cu_seqlens_padded;  // N + 1 offsets from 0 where the documents start; empty: cu_seqlens
  bool empty() const { return cu_seqlens.empty(); }
  const std::vector<int64_t>& padded() const { return cu_seqlens_padded.empty() ? cu_seqlens : cu_seqlens_padded; }
  int64_t documents() const { return cu_seqlens.empty() ? 0 : static_cast<int64_t>(cu_seqlens.size()) - 1; }
  int64_t total_padded() const { return padded().empty() ? 0 : padded().back(); }
};

// Empty when `batch` is usable with `cp` ranks; otherwise what is wrong, naming the document. Positions and
// document numbers must fit int32 (the kernels' labels).
std::string packed_batch_error(const PackedBatch& batch, int cp);

// cu_seqlens_padded with every document padded up to a multiple of 2 x cp (what TE requires of the data pipeline).
std::vector<int64_t> pad_for_cp(const std::vector<int64_t>& cu_seqlens, int cp);

// The rows of the padded batch that CP rank `rank` holds, in its local order (TE's thd_get_partitioned_indices):
// per document, chunk rank then chunk 2cp-1-rank. total_padded() / cp indices.
std::vector<int64_t> packed_rank_indices(const PackedBatch& batch, int cp, int rank);

// Copies rank `rank`'s rows of a full [T, X] tensor (rows of row_elems elements of elem_bytes) into `local`
// [T / cp, X], and back; `outer` such tensors one after another (per-row values [H, T]: outer H, row_elems 1).
// Errc::shape when the batch does not fit cp.
Status shard_packed(const void* full, void* local, const PackedBatch& batch, int64_t row_elems, size_t elem_bytes,
                    int cp, int rank, int64_t outer = 1);
Status gather_packed(const void* local, void* full, const PackedBatch& batch, int64_t row_elems, size_t elem_bytes,
                     int cp, int rank, int64_t outer = 1);

// The labels of every row of the full padded batch (AttnParams::q_labels / k_labels): document and position,
// segment -1 for padding. An empty batch is one document of `seq` rows.
void packed_row_labels(const PackedBatch& batch, int64_t seq, std::vector<int32_t>* seg, std::vector<int32_t>* pos);

// The query-key pairs one head of the batch computes (each document's, under the causal flag and the window): the
// useful work that FLOP figures count. An empty batch is one document of `seq` rows.
double visible_pairs(const PackedBatch& batch, int64_t seq, bool causal, int64_t window_left, int64_t window_right);

}  // namespace hcp
