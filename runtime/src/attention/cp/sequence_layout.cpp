#include "sequence_layout.hpp"

#include <cstring>

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

// Where member m's two halves sit in the mixed sequence of an a2a group of size A (in rows of length half).
int64_t first_half_slot(MixedOrder order, int64_t m) { return order == MixedOrder::member ? 2 * m : m; }
int64_t second_half_slot(MixedOrder order, int64_t m, int64_t a) {
  return order == MixedOrder::member ? 2 * m + 1 : a + (a - 1 - m);
}

}  // namespace

Status a2a_scatter_heads(CpEngine& eng, Communicator& comm, MixedOrder order, const SeqTensor& t, const void* in,
                         void* mixed, void* scratch) {
  const int64_t a = comm.size(), hg = t.heads / a, half = t.seq / 2;
  const size_t group_bytes = static_cast<size_t>(hg) * t.head_bytes();  // one token's head group
  const size_t chunk = static_cast<size_t>(t.batch * t.seq) * group_bytes;
  auto* send = static_cast<unsigned char*>(scratch);
  auto* recv = send + t.bytes();
  auto* src = static_cast<const unsigned char*>(in);
  for (int64_t j = 0; j < a; ++j)
    HCP_TRY(eng.copy_rows(t.batch, t.seq, group_bytes, send + j * chunk, t.seq * group_bytes, group_bytes,
              src + j * group_bytes, t.batch_bytes(), t.row_bytes()));
  if (order == MixedOrder::member && t.batch == 1) return comm.all_to_all(send, mixed, chunk);  // already in place
  HCP_TRY(comm.all_to_all(send, recv, chunk));
  auto* out = static_cast<unsigned char*>(mixed);
  const size_t out_b = static_cast<size_t>(a * t.seq) * group_bytes;
  for (int64_t m = 0; m < a; ++m) {
    const unsigned char* from = recv + m * chunk;
    HCP_TRY(eng.copy_rows(t.batch, half, group_bytes, out + first_half_slot(order, m) * half * group_bytes, out_b, group_bytes, from,
              t.seq * group_bytes, group_bytes));
    HCP_TRY(eng.copy_rows(t.batch, half, group_bytes, out + second_half_slot(order, m, a) * half * group_bytes, out_b, group_bytes,
              from + half * group_bytes, t.seq * group_bytes, group_bytes));
  }
  return {};
}

Status a2a_gather_heads(CpEngine& eng, Communicator& comm, MixedOrder order, const SeqTensor& t, const void* mixed,
                        void* out, void* scratch) {
  const int64_t a = comm.size(), hg = t.heads / a, half = t.seq / 2;
  const size_t group_bytes = static_cast<size_t>(hg) * t.head_bytes();
  const size_t chunk = static_cast<size_t>(t.batch * t.seq) * group_bytes;
  auto* send = static_cast<unsigned char*>(scratch);
  auto* recv = send + t.bytes();
  auto* in = static_cast<const unsigned char*>(mixed);
  const unsigned char* sent = in;  // member order, one batch row: member m's rows are already its chunk
  if (order != MixedOrder::member || t.batch != 1) {
    const size_t in_b = static_cast<size_t>(a * t.seq) * group_bytes;
    for (int64_t m = 0; m < a; ++m) {
      unsigned char* to = send + m * chunk;
      HCP_TRY(eng.copy_rows(t.batch, half, group_bytes, to, t.seq * group_bytes, group_bytes,
                            in + first_half_slot(order, m) * half * group_bytes, in_b, group_bytes));
      HCP_TRY(eng.copy_rows(t.batch, half, group_bytes, to + half * group_bytes, t.seq * group_bytes, group_bytes,
                            in + second_half_slot(order, m, a) * half * group_bytes, in_b, group_bytes));
    }
    sent = send;
  }
  HCP_TRY(comm.all_to_all(sent, recv, chunk));
  auto* dst = static_cast<unsigned char*>(out);
  for (int64_t j = 0; j < a; ++j)
    HCP_TRY(eng.copy_rows(t.batch, t.seq, group_bytes, dst + j * group_bytes, t.batch_bytes(), t.row_bytes(),
                          recv + j * chunk, t.seq * group_bytes, group_bytes));
  return {};
}

Status a2a_scatter_rows(CpEngine& eng, Communicator& comm, MixedOrder order, int64_t batch, int64_t heads, int64_t s,
                        const float* in, float* mixed, float* scratch) {
  const int64_t a = comm.size(), hg = heads / a, half = s / 2;
  const size_t chunk = static_cast<size_t>(batch * hg * s);  // floats
  float* send = scratch;
  float* recv = scratch + batch * heads * s;
  for (int64_t j = 0; j < a; ++j)
    HCP_TRY(eng.copy_rows(batch, 1, hg * s * sizeof(float), send + j * chunk, hg * s * sizeof(float), 0, in + j * hg * s,
              heads * s * sizeof(float), 0));
  HCP_TRY(comm.all_to_all(send, recv, chunk * sizeof(float)));
  const size_t row = static_cast<size_t>(half) * sizeof(float);
  for (int64_t m = 0; m < a; ++m) {
    const float* from = recv + m * chunk;
    HCP_TRY(eng.copy_rows(batch * hg, 1, row, mixed + first_half_slot(order, m) * half, a * s * sizeof(float), 0, from,
              s * sizeof(float), 0));
    HCP_TRY(eng.copy_rows(batch * hg, 1, row, mixed + second_half_slot(order, m, a) * half, a * s * sizeof(float), 0, from + half,
              s * sizeof(float), 0));
  }
  return {};
}

Status a2a_gather_rows(CpEngine& eng, Communicator& comm, MixedOrder order, int64_t batch, int64_t heads, int64_t s,
                       const float* mixed, float* out, float* scratch) {
  const int64_t a = comm.size(), hg = heads / a, half = s / 2;
  const size_t chunk = static_cast<size_t>(batch * hg * s);
  float* send = scratch;
  float* recv = scratch + batch * heads * s;
  const size_t row = static_cast<size_t>(half) * sizeof(float);
  for (int64_t m = 0; m < a; ++m) {
    float* to = send + m * chunk;
    HCP_TRY(eng.copy_rows(batch * hg, 1, row, to, s * sizeof(float), 0, mixed + first_half_slot(order, m) * half,
              a * s * sizeof(float), 0));
    HCP_TRY(eng.copy_rows(batch * hg, 1, row, to + half, s * sizeof(float), 0, mixed + second_half_slot(order, m, a) * half,
              a * s * sizeof(float), 0));
  }
  HCP_TRY(comm.all_to_all(send, recv, chunk * sizeof(float)));
  for (int64_t j = 0; j < a; ++j)
    HCP_TRY(eng.copy_rows(batch, 1, hg * s * sizeof(float), out + j * hg * s, heads * s * sizeof(float), 0, recv + j * chunk,
              hg * s * sizeof(float), 0));
  return {};
}

}  // namespace hcp::cp
