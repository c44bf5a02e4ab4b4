#include "row_labels.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace hcp::cp {
namespace {

int64_t rows_of(const RowRuns& runs) {
  int64_t n = 0;
  for (const LabelRun& r : runs) n += r.rows;
  return n;
}

void append(RowRuns* to, const RowRuns& from) { to->insert(to->end(), from.begin(), from.end()); }

}  // namespace

RowRuns rank_runs(const PackedBatch& batch, int w, int rank) { return group_order(batch, w, {rank}).runs; }

GroupOrder group_order(const PackedBatch& batch, int w, const std::vector<int>& members, bool in_sequence) {
  struct Chunk {
    int64_t start;  // in the padded batch
    RowMove move;
    LabelRun real, pad;
  };
  std::vector<Chunk> chunks;
  const std::vector<int64_t>& padded = batch.padded();
  const int64_t w2 = 2 * static_cast<int64_t>(w);
  for (size_t j = 0; j < members.size(); ++j) {
    int64_t local = 0;  // a rank's rows: its two chunks of every document, each with its padding at the end
    for (size_t d = 0; d + 1 < padded.size(); ++d) {
      const int64_t chunk = (padded[d + 1] - padded[d]) / w2;
      const int64_t real = batch.cu_seqlens[d + 1] - batch.cu_seqlens[d];
      if (chunk == 0) continue;
      for (int64_t which : {int64_t{members[j]}, w2 - 1 - members[j]}) {
        const int64_t start = which * chunk, real_rows = std::clamp<int64_t>(real - start, 0, chunk);
        chunks.push_back({padded[d] + start, {static_cast<int64_t>(j), local, 0, chunk},
                          {static_cast<int32_t>(d), start, real_rows}, {-1, 0, chunk - real_rows}});
        local += chunk;
      }
    }
  }
  if (in_sequence)
    std::sort(chunks.begin(), chunks.end(), [](const Chunk& x, const Chunk& y) { return x.start < y.start; });
  GroupOrder out;
  int64_t to = 0;
  for (Chunk& c : chunks) {
    c.move.to = to;
    to += c.move.rows;
    RowMove* last = out.moves.empty() ? nullptr : &out.moves.back();
    if (last && last->member == c.move.member && last->from + last->rows == c.move.from &&
        last->to + last->rows == c.move.to)
      last->rows += c.move.rows;  // one member's consecutive rows stay one copy
    else
      out.moves.push_back(c.move);
    if (c.real.rows > 0) out.runs.push_back(c.real);
    if (c.pad.rows > 0) out.runs.push_back(c.pad);
  }
  return out;
}

RowRuns concat_runs(const std::vector<RowRuns>& parts) {
  RowRuns out;
  for (const RowRuns& p : parts) append(&out, p);
  return out;
}

bool any_visible(const RowRuns& q, const RowRuns& k, bool causal, int64_t window_left, int64_t window_right) {
  // Allowed pos(q) - pos(k); runs hold consecutive positions, so a pair of runs spans every distance between its
  // extremes and the test is exact.
  int64_t lo = std::numeric_limits<int64_t>::min() / 4, hi = std::numeric_limits<int64_t>::max() / 4;
  if (causal) lo = 0;
  if (window_right >= 0) lo = std::max(lo, -window_right);
  if (window_left >= 0) hi = std::min(hi, window_left);
  std::unordered_map<int32_t, std::vector<const LabelRun*>> by_doc;
  for (const LabelRun& r : q)
    if (r.seg >= 0) by_doc[r.seg].push_back(&r);
  for (const LabelRun& kr : k) {
    if (kr.seg < 0) continue;
    auto found = by_doc.find(kr.seg);
    if (found == by_doc.end()) continue;
    for (const LabelRun* qr : found->second) {
      const int64_t dist_lo = qr->pos - (kr.pos + kr.rows - 1), dist_hi = qr->pos + qr->rows - 1 - kr.pos;
      if (dist_hi >= lo && dist_lo <= hi) return true;
    }
  }
  return false;
}

Status upload_runs(CpEngine& eng, const RowRuns& runs, BlockLabels* labels, AttnLabels* out) {
  const int64_t n = rows_of(runs);
  std::vector<int32_t> host(static_cast<size_t>(2 * n));
  int32_t* seg = host.data();
  int32_t* pos = host.data() + n;
  for (const LabelRun& r : runs)
    for (int64_t i = 0; i < r.rows; ++i) {
      *seg++ = r.seg;
      *pos++ = static_cast<int32_t>(r.pos + i);
    }
  EngineBuffer buf;
  HCP_TRY(eng.alloc(host.size() * sizeof(int32_t), &buf));
  HCP_TRY(eng.upload(buf.as(), host.data(), host.size() * sizeof(int32_t)));
  *out = {buf.as<int32_t>(), buf.as<int32_t>() + n};
  labels->memory.push_back(std::move(buf));
  return {};
}

}  // namespace hcp::cp
