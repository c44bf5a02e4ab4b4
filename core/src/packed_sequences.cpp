#include "hcp/packed_sequences.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace hcp {
namespace {

std::string offsets_error(const std::vector<int64_t>& cu, const char* name) {
  if (cu.size() < 2) return std::string(name) + " needs at least two offsets (one document)";
  if (cu[0] != 0) return std::string(name) + " must start at 0, got " + std::to_string(cu[0]);
  for (size_t i = 1; i < cu.size(); ++i)
    if (cu[i] < cu[i - 1])
      return std::string(name) + " must not decrease: document " + std::to_string(i - 1) + " ends at " +
             std::to_string(cu[i]) + " before it starts at " + std::to_string(cu[i - 1]);
  return {};
}

// Chunk `which` (of 2 cp) of every document, `rank`'s two in its order, as runs of rows of the padded batch.
template <class Fn>
void for_rank_rows(const PackedBatch& batch, int cp, int rank, Fn fn) {
  const std::vector<int64_t>& padded = batch.padded();
  const int64_t w2 = 2 * static_cast<int64_t>(cp);
  int64_t local = 0;
  for (size_t d = 0; d + 1 < padded.size(); ++d) {
    const int64_t chunk = (padded[d + 1] - padded[d]) / w2;
    for (int64_t which : {int64_t{rank}, w2 - 1 - rank}) {
      fn(padded[d] + which * chunk, local, chunk);
      local += chunk;
    }
  }
}

Status move_rows(const void* src, void* dst, const PackedBatch& batch, int64_t row_elems, size_t elem_bytes, int cp,
                 int rank, int64_t outer, bool to_local) {
  if (cp < 1 || rank < 0 || rank >= cp)
    return Status(Errc::invalid_argument, "rank " + std::to_string(rank) + " outside a CP group of " + std::to_string(cp));
  if (std::string problem = packed_batch_error(batch, cp); !problem.empty()) return Status(Errc::shape, problem);
  const size_t row = static_cast<size_t>(row_elems) * elem_bytes;
  const int64_t total = batch.total_padded(), local_total = total / cp;
  for (int64_t o = 0; o < outer; ++o) {
    auto* full = static_cast<unsigned char*>(to_local ? const_cast<void*>(src) : dst) + o * total * row;
    auto* local = static_cast<unsigned char*>(to_local ? dst : const_cast<void*>(src)) + o * local_total * row;
    for_rank_rows(batch, cp, rank, [&](int64_t full_row, int64_t local_row, int64_t rows) {
      if (rows == 0) return;
      if (to_local)
        std::memcpy(local + local_row * row, full + full_row * row, static_cast<size_t>(rows) * row);
      else
        std::memcpy(full + full_row * row, local + local_row * row, static_cast<size_t>(rows) * row);
    });
  }
  return {};
}

}  // namespace

std::string packed_batch_error(const PackedBatch& batch, int cp) {
  if (std::string e = offsets_error(batch.cu_seqlens, "cu_seqlens"); !e.empty()) return e;
  if (!batch.cu_seqlens_padded.empty()) {
    if (std::string e = offsets_error(batch.cu_seqlens_padded, "cu_seqlens_padded"); !e.empty()) return e;
    if (batch.cu_seqlens_padded.size() != batch.cu_seqlens.size())
      return "cu_seqlens has " + std::to_string(batch.cu_seqlens.size()) + " offsets but cu_seqlens_padded " +
             std::to_string(batch.cu_seqlens_padded.size());
  }
  const std::vector<int64_t>& padded = batch.padded();
  if (batch.documents() > std::numeric_limits<int32_t>::max() || padded.back() > std::numeric_limits<int32_t>::max())
    return "a packed batch is limited to 2^31 - 1 documents and tokens, got " + std::to_string(padded.back()) +
           " tokens";
  const int64_t w2 = 2 * static_cast<int64_t>(cp);
  for (size_t d = 0; d + 1 < padded.size(); ++d) {
    const int64_t real = batch.cu_seqlens[d + 1] - batch.cu_seqlens[d], room = padded[d + 1] - padded[d];
    if (real > room)
      return "document " + std::to_string(d) + " has " + std::to_string(real) + " tokens but only " +
             std::to_string(room) + " padded rows";
    if (room % w2 != 0)
      return "document " + std::to_string(d) + " has " + std::to_string(room) +
             " padded rows, not divisible by 2 x cp = " + std::to_string(w2) +
             " (pad each document to a multiple of 2 x cp, as Transformer Engine requires)";
  }
  return {};
}

std::vector<int64_t> pad_for_cp(const std::vector<int64_t>& cu_seqlens, int cp) {
  const int64_t w2 = 2 * static_cast<int64_t>(cp);
  std::vector<int64_t> padded{0};
  for (size_t d = 0; d + 1 < cu_seqlens.size(); ++d) {
    const int64_t real = cu_seqlens[d + 1] - cu_seqlens[d];
    padded.push_back(padded.back() + (real + w2 - 1) / w2 * w2);
  }
  return padded;
}

std::vector<int64_t> packed_rank_indices(const PackedBatch& batch, int cp, int rank) {
  std::vector<int64_t> indices;
  if (!packed_batch_error(batch, cp).empty() || rank < 0 || rank >= cp) return indices;
  for_rank_rows(batch, cp, rank, [&](int64_t full_row, int64_t, int64_t rows) {
    for (int64_t i = 0; i < rows; ++i) indices.push_back(full_row + i);
  });
  return indices;
}

Status shard_packed(const void* full, void* local, const PackedBatch& batch, int64_t row_elems, size_t elem_bytes,
                    int cp, int rank, int64_t outer) {
  return move_rows(full, local, batch, row_elems, elem_bytes, cp, rank, outer, true);
}

Status gather_packed(const void* local, void* full, const PackedBatch& batch, int64_t row_elems, size_t elem_bytes,
                     int cp, int rank, int64_t outer) {
  return move_rows(local, full, batch, row_elems, elem_bytes, cp, rank, outer, false);
}

void packed_row_labels(const PackedBatch& batch, int64_t seq, std::vector<int32_t>* seg, std::vector<int32_t>* pos) {
  const PackedBatch whole{{0, seq}, {}};
  const PackedBatch& b = batch.empty() ? whole : batch;
  seg->assign(static_cast<size_t>(b.total_padded()), -1);
  pos->assign(seg->size(), 0);
  for (size_t d = 0; d + 1 < b.padded().size(); ++d)
    for (int64_t i = b.padded()[d]; i < b.padded()[d + 1]; ++i) {
      const int64_t at = i - b.padded()[d];
      (*seg)[static_cast<size_t>(i)] = at < b.cu_seqlens[d + 1] - b.cu_seqlens[d] ? static_cast<int32_t>(d) : -1;
      (*pos)[static_cast<size_t>(i)] = static_cast<int32_t>(at);
    }
}

double visible_pairs(const PackedBatch& batch, int64_t seq, bool causal, int64_t window_left, int64_t window_right) {
  const std::vector<int64_t> whole{0, seq};
  const std::vector<int64_t>& cu = batch.empty() ? whole : batch.cu_seqlens;
  double pairs = 0;
  for (size_t d = 0; d + 1 < cu.size(); ++d) {
    const int64_t len = cu[d + 1] - cu[d];
    for (int64_t i = 0; i < len; ++i) {  // query i sees keys lo .. hi of its document
      int64_t lo = 0, hi = causal ? i : len - 1;
      if (window_left >= 0) lo = std::max(lo, i - window_left);
      if (window_right >= 0) hi = std::min(hi, i + window_right);
      if (hi >= lo) pairs += static_cast<double>(hi - lo + 1);
    }
  }
  return pairs;
}

}  // namespace hcp
