// The data movement of the CP schemes as row-block copies: dual-chunk sharding, the a2a head scatter with its
// chunk reorder, and the all_gather reorder. A "row" is one token's H x D (or a head group's) elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hcp/communicator.hpp"
#include "hcp/cp_engine.hpp"

namespace hcp::cp {

// Copies `rows` rows of `row_bytes` for each of `batch` batches: dst + b*dst_b + r*dst_r <- src + b*src_b + r*src_r
// (strides in bytes).
void copy_rows(int64_t batch, int64_t rows, size_t row_bytes, void* dst, size_t dst_b, size_t dst_r,
               const void* src, size_t src_b, size_t src_r);

// A tensor [B, seq, heads, X] of contiguous elements: the geometry the a2a exchanges move.
struct SeqTensor {
  int64_t batch, seq, heads, x;  // x: elements per head (head_dim)
  size_t elem;                   // bytes per element
  size_t head_bytes() const { return static_cast<size_t>(x) * elem; }
  size_t row_bytes() const { return static_cast<size_t>(heads) * head_bytes(); }
  size_t batch_bytes() const { return static_cast<size_t>(seq) * row_bytes(); }
  size_t bytes() const { return static_cast<size_t>(batch) * batch_bytes(); }
};

// Where the A members' rows sit in the mixed sequence after an a2a: `rows` rows from row `from` of member `member`'s
// local sequence go to row `to` of the mixed one (the same in every batch row). group_order (row_labels.hpp) gives
// - sequence order: for a plain sequence the members' first halves in member order, then their second halves in
//   reverse member order, the natural order its causal sections need; for packed documents the same within each
//   document, so that a document's rows are one run and the CPU kernels' tiles are as large as the document allows
//   (member order cuts every document into chunks of S/2W rows: 1.27x a labelled CPU kernel's time, measured);
// - member order, each member's rows whole: with one batch row the exchange's own layout, received into and sent
//   from the mixed tensor without a copy. Labelled problems on device engines take it: sequence order would cost
//   them a copy launch per document chunk.
struct RowMove {
  int64_t member, from, to, rows;
};
using MixedOrder = std::vector<RowMove>;

// a2a step 1-2 over `comm` (size A), copies on `eng` (all pointers are its memory): `local` [B, s, H, X] -> `mixed`
// [B, A*s, H/A, X] holding all A members' rows in `order`. `scratch` holds 2 * bytes(local).
Status a2a_scatter_heads(CpEngine& eng, Communicator& comm, const MixedOrder& order,
                         const SeqTensor& local, const void* in, void* mixed, void* scratch);
// The inverse: `mixed` [B, A*s, H/A, X] -> `local` [B, s, H, X].
Status a2a_gather_heads(CpEngine& eng, Communicator& comm, const MixedOrder& order,
                        const SeqTensor& local, const void* mixed, void* out, void* scratch);

// Whether the a2a copies its rows straight out of the members' tensors (members that share host memory, host
// engines): then the mixed tensor may also be head-major, below.
bool a2a_reads_in_place(const CpEngine& eng, const Communicator& comm);
// a2a_scatter_heads and a2a_gather_heads with a head-major mixed tensor [B, H/A, A*s, X] (to_head_major's layout),
// for members where a2a_reads_in_place: the a2a+p2p ring takes its queries, K and V in that form, so its a2a
// writes them so directly instead of the ring re-laying what the a2a wrote (one copy of each tensor instead of two).
Status a2a_scatter_heads_head_major(CpEngine& eng, Communicator& comm, const MixedOrder& order,
                                    const SeqTensor& local, const void* in, void* mixed);
Status a2a_gather_heads_head_major(CpEngine& eng, Communicator& comm, const MixedOrder& order,
                                   const SeqTensor& local, const void* mixed, void* out);

// The same for per-row fp32 values laid out [B, H, s] (lse, delta).
Status a2a_scatter_rows(CpEngine& eng, Communicator& comm, const MixedOrder& order,
                        int64_t batch, int64_t heads, int64_t s, const float* in, float* mixed, float* scratch);
Status a2a_gather_rows(CpEngine& eng, Communicator& comm, const MixedOrder& order,
                       int64_t batch, int64_t heads, int64_t s, const float* mixed, float* out, float* scratch);

}  // namespace hcp::cp
