#include "sequence_layout.hpp"

#include <cstring>

#include "../../comm/peer_reads.hpp"

namespace hcp::cp {

void copy_rows(int64_t batch, int64_t rows, size_t row_bytes, void* dst, size_t dst_b, size_t dst_r,
               const void* src, size_t src_b, size_t src_r) {
  auto* d = static_cast<unsigned char*>(dst);
  auto* s = static_cast<const unsigned char*>(src);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(d + b * dst_b + r * dst_r, s + b * src_b + r * src_r, row_bytes);
}

namespace {

// Whether `order` is the exchange's own layout for one batch row: member j's `seq` rows whole at row j * seq.
bool exchange_layout(const MixedOrder& order, int64_t a, int64_t seq, int64_t batch) {
  if (batch != 1 || static_cast<int64_t>(order.size()) != a) return false;
  for (int64_t j = 0; j < a; ++j) {
    const RowMove& m = order[static_cast<size_t>(j)];
    if (m.member != j || m.from != 0 || m.to != j * seq || m.rows != seq) return false;
  }
  return true;
}

// Ranks that share host memory skip the exchange's staging: each copies its rows straight out of the members'
// tensors (peer_reads.hpp).
bool reads_in_place(const CpEngine& eng, const Communicator& comm) {
  return comm.shares_host_memory() && !eng.device_memory();
}

// Where one token's head group sits in a mixed tensor [B, A*s, H/A, X] (token-major: the group's heads together) or
// [B, H/A, A*s, X] (head-major: each head's rows together). A copy moves `pieces` pieces of `piece_bytes` a row:
// piece i at mixed + i * piece_step + row * row_step, and at member + i * piece_bytes in a member's local rows.
struct MixedRows {
  int64_t pieces;
  size_t piece_bytes, piece_step, row_step;
};
MixedRows mixed_rows(const SeqTensor& t, int64_t a, bool head_major) {
  const int64_t hg = t.heads / a;
  const size_t group_bytes = static_cast<size_t>(hg) * t.head_bytes();
  if (!head_major) return {1, group_bytes, 0, group_bytes};
  return {hg, t.head_bytes(), static_cast<size_t>(a * t.seq) * t.head_bytes(), t.head_bytes()};
}

// The in-place scatter: head group r of member m's rows `from` on, what the exchange would deliver as chunk m, to
// their place in `mixed`.
Status scatter_in_place(CpEngine& eng, Communicator& comm, const MixedOrder& order, const SeqTensor& t,
                        const void* in, void* mixed, bool head_major) {
  const int64_t a = comm.size();
  const MixedRows g = mixed_rows(t, a, head_major);
  const size_t mine = static_cast<size_t>(comm.rank()) * static_cast<size_t>(t.heads / a) * t.head_bytes();
  const size_t out_b = static_cast<size_t>(a * t.seq) * static_cast<size_t>(t.heads / a) * t.head_bytes();
  auto* out = static_cast<unsigned char*>(mixed);
  const RowMove* m = nullptr;
  // Rows outside, pieces inside: a member's rows are read once, in order (relayout_heads says why).
  const auto move_rows = [&](const unsigned char* member_in) -> Status {
    for (int64_t b = 0; b < t.batch; ++b)
      HCP_TRY(eng.copy_rows(m->rows, g.pieces, g.piece_bytes, out + b * out_b + m->to * g.row_step, g.row_step,
                            g.piece_step, member_in + b * t.batch_bytes() + m->from * t.row_bytes() + mine,
                            t.row_bytes(), g.piece_bytes));
    return {};
  };
  PeerReads peers;
  HCP_TRY(peers.open(comm, in));
  for (const RowMove& move : order) {
    m = &move;
    HCP_TRY(peers.read(static_cast<int>(move.member), move_rows));
  }
  return peers.close();
}

// The in-place gather: this member's rows of member j's head group, from j's mixed tensor, what the exchange would
// deliver as chunk j.
Status gather_in_place(CpEngine& eng, Communicator& comm, const MixedOrder& order, const SeqTensor& t,
                       const void* mixed, void* out, bool head_major) {
  const int64_t a = comm.size();
  const MixedRows g = mixed_rows(t, a, head_major);
  const size_t group_bytes = static_cast<size_t>(t.heads / a) * t.head_bytes();
  const size_t in_b = static_cast<size_t>(a * t.seq) * group_bytes;
  auto* dst = static_cast<unsigned char*>(out);
  int64_t j = 0;
  const auto my_rows_of_j = [&](const unsigned char* member_mixed) -> Status {
    for (const RowMove& m : order) {
      if (m.member != comm.rank()) continue;
      for (int64_t b = 0; b < t.batch; ++b)  // rows outside, pieces inside, as the scatter
        HCP_TRY(eng.copy_rows(m.rows, g.pieces, g.piece_bytes,
                              dst + b * t.batch_bytes() + m.from * t.row_bytes() + j * group_bytes, t.row_bytes(),
                              g.piece_bytes, member_mixed + b * in_b + m.to * g.row_step, g.row_step, g.piece_step));
    }
    return {};
  };
  PeerReads peers;
  HCP_TRY(peers.open(comm, mixed));
  for (; j < a; ++j) HCP_TRY(peers.read(static_cast<int>(j), my_rows_of_j));
  return peers.close();
}

}  // namespace

bool a2a_reads_in_place(const CpEngine& eng, const Communicator& comm) { return reads_in_place(eng, comm); }

Status a2a_scatter_heads_head_major(CpEngine& eng, Communicator& comm, const MixedOrder& order, const SeqTensor& local,
                                    const void* in, void* mixed) {
  if (!reads_in_place(eng, comm))
    return Status(Errc::internal, "a2a_scatter_heads_head_major needs members that share host memory");
  return scatter_in_place(eng, comm, order, local, in, mixed, true);
}

Status a2a_gather_heads_head_major(CpEngine& eng, Communicator& comm, const MixedOrder& order, const SeqTensor& local,
                                   const void* mixed, void* out) {
  if (!reads_in_place(eng, comm))
    return Status(Errc::internal, "a2a_gather_heads_head_major needs members that share host memory");
  return gather_in_place(eng, comm, order, local, mixed, out, true);
}

Status a2a_scatter_heads(CpEngine& eng, Communicator& comm, const MixedOrder& order,
                         const SeqTensor& t, const void* in, void* mixed, void* scratch) {
  if (reads_in_place(eng, comm)) return scatter_in_place(eng, comm, order, t, in, mixed, false);
  const int64_t a = comm.size(), hg = t.heads / a;
  const size_t group_bytes = static_cast<size_t>(hg) * t.head_bytes();  // one token's head group
  const size_t chunk = static_cast<size_t>(t.batch * t.seq) * group_bytes;
  auto* send = static_cast<unsigned char*>(scratch);
  auto* recv = send + t.bytes();
  auto* src = static_cast<const unsigned char*>(in);
  for (int64_t j = 0; j < a; ++j)
    HCP_TRY(eng.copy_rows(t.batch, t.seq, group_bytes, send + j * chunk, t.seq * group_bytes, group_bytes,
              src + j * group_bytes, t.batch_bytes(), t.row_bytes()));
  if (exchange_layout(order, a, t.seq, t.batch)) return comm.all_to_all(send, mixed, chunk);  // already in place
  HCP_TRY(comm.all_to_all(send, recv, chunk));
  auto* out = static_cast<unsigned char*>(mixed);
  const size_t out_b = static_cast<size_t>(a * t.seq) * group_bytes;
  for (const RowMove& m : order)
    HCP_TRY(eng.copy_rows(t.batch, m.rows, group_bytes, out + m.to * group_bytes, out_b, group_bytes,
                          recv + m.member * chunk + m.from * group_bytes, t.seq * group_bytes, group_bytes));
  return {};
}

Status a2a_gather_heads(CpEngine& eng, Communicator& comm, const MixedOrder& order,
                        const SeqTensor& t, const void* mixed, void* out, void* scratch) {
  if (reads_in_place(eng, comm)) return gather_in_place(eng, comm, order, t, mixed, out, false);
  const int64_t a = comm.size(), hg = t.heads / a;
  const size_t group_bytes = static_cast<size_t>(hg) * t.head_bytes();
  const size_t chunk = static_cast<size_t>(t.batch * t.seq) * group_bytes;
  auto* send = static_cast<unsigned char*>(scratch);
  auto* recv = send + t.bytes();
  auto* in = static_cast<const unsigned char*>(mixed);
  const size_t in_b = static_cast<size_t>(a * t.seq) * group_bytes;
  const unsigned char* sent = in;  // the exchange's own layout: member m's rows are already its chunk
  if (!exchange_layout(order, a, t.seq, t.batch)) {
    for (const RowMove& m : order)
      HCP_TRY(eng.copy_rows(t.batch, m.rows, group_bytes, send + m.member * chunk + m.from * group_bytes,
                            t.seq * group_bytes, group_bytes, in + m.to * group_bytes, in_b, group_bytes));
    sent = send;
  }
  HCP_TRY(comm.all_to_all(sent, recv, chunk));
  auto* dst = static_cast<unsigned char*>(out);
  for (int64_t j = 0; j < a; ++j)
    HCP_TRY(eng.copy_rows(t.batch, t.seq, group_bytes, dst + j * group_bytes, t.batch_bytes(), t.row_bytes(),
                          recv + j * chunk, t.seq * group_bytes, group_bytes));
  return {};
}

Status a2a_scatter_rows(CpEngine& eng, Communicator& comm, const MixedOrder& order,
                        int64_t batch, int64_t heads, int64_t s, const float* in, float* mixed, float* scratch) {
  const int64_t a = comm.size(), hg = heads / a;
  const size_t chunk = static_cast<size_t>(batch * hg * s);  // floats
  float* send = scratch;
  float* recv = scratch + batch * heads * s;
  for (int64_t j = 0; j < a; ++j)
    HCP_TRY(eng.copy_rows(batch, 1, hg * s * sizeof(float), send + j * chunk, hg * s * sizeof(float), 0, in + j * hg * s,
              heads * s * sizeof(float), 0));
  HCP_TRY(comm.all_to_all(send, recv, chunk * sizeof(float)));
  for (const RowMove& m : order)
    HCP_TRY(eng.copy_rows(batch * hg, 1, static_cast<size_t>(m.rows) * sizeof(float), mixed + m.to,
                          a * s * sizeof(float), 0, recv + m.member * chunk + m.from, s * sizeof(float), 0));
  return {};
}

Status a2a_gather_rows(CpEngine& eng, Communicator& comm, const MixedOrder& order,
                       int64_t batch, int64_t heads, int64_t s, const float* mixed, float* out, float* scratch) {
  const int64_t a = comm.size(), hg = heads / a;
  const size_t chunk = static_cast<size_t>(batch * hg * s);
  float* send = scratch;
  float* recv = scratch + batch * heads * s;
  for (const RowMove& m : order)
    HCP_TRY(eng.copy_rows(batch * hg, 1, static_cast<size_t>(m.rows) * sizeof(float), send + m.member * chunk + m.from,
                          s * sizeof(float), 0, mixed + m.to, a * s * sizeof(float), 0));
  HCP_TRY(comm.all_to_all(send, recv, chunk * sizeof(float)));
  for (int64_t j = 0; j < a; ++j)
    HCP_TRY(eng.copy_rows(batch, 1, hg * s * sizeof(float), out + j * hg * s, heads * s * sizeof(float), 0, recv + j * chunk,
              hg * s * sizeof(float), 0));
  return {};
}

}  // namespace hcp::cp
