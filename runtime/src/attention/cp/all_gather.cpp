// The all_gather scheme: gather every rank's K and V, put the chunks in natural order, and attend each of the two
// local query chunks c to keys [0, (c+1) S/2W) with a bottom-right causal mask (all keys without a mask). The
// backward gathers again, computes dK/dV for the full sequence and reduce-scatters them to the chunk owners.
#include <algorithm>
#include <vector>

#include "hcp/attention_cpu.hpp"
#include "local_problem.hpp"
#include "sequence_layout.hpp"

namespace hcp::cp {
namespace {

// Chunk numbers of rank m's two halves.
int64_t chunk_of(int m, int half_index, int w) { return half_index == 0 ? m : 2 * w - 1 - m; }

// All ranks' [K | V] messages, reordered into full K and V [B, S, Hkv, D] in natural order.
Status gather_kv(Communicator& comm, const LocalProblem& lp, const void* k, const void* v,
                 std::vector<unsigned char>* full_k, std::vector<unsigned char>* full_v) {
  const int w = comm.size();
  const size_t kvb = lp.kv_bytes();
  const std::vector<unsigned char> mine = pack_kv(lp, k, v);
  std::vector<unsigned char> all(2 * kvb * static_cast<size_t>(w));
  HCP_TRY(comm.all_gather(mine.data(), all.data(), mine.size()));
  const size_t row = static_cast<size_t>(lp.kv_heads * lp.head_dim) * dtype_size(lp.dtype);
  const int64_t half = lp.n / 2, seq = lp.n * w;
  full_k->resize(kvb * static_cast<size_t>(w));
  full_v->resize(kvb * static_cast<size_t>(w));
  for (int m = 0; m < w; ++m)
    for (int hi = 0; hi < 2; ++hi) {
      const unsigned char* src = all.data() + 2 * kvb * static_cast<size_t>(m) + hi * half * row;
      const size_t dst = static_cast<size_t>(chunk_of(m, hi, w) * half) * row;
      copy_rows(lp.batch, half, row, full_k->data() + dst, seq * row, row, src, lp.n * row, row);
      copy_rows(lp.batch, half, row, full_v->data() + dst, seq * row, row, src + kvb, lp.n * row, row);
    }
  return {};
}

// Local query half `hi` (chunk c) against the keys it may see.
Section gather_section(const LocalProblem& lp, int hi, int w, int r) {
  const int64_t half = lp.n / 2, seq = lp.n * w;
  const int64_t keys = lp.causal ? (chunk_of(r, hi, w) + 1) * half : seq;
  return {hi * half, half, 0, keys, lp.causal, keys - half};
}

}  // namespace

Status all_gather_forward(Communicator& comm, const LocalProblem& lp, const void* q, const void* k, const void* v,
                          float* out, float* lse) {
  std::vector<unsigned char> full_k, full_v;
  HCP_TRY(gather_kv(comm, lp, k, v, &full_k, &full_v));
  Buffers buf;
  buf.q = q, buf.k = full_k.data(), buf.v = full_v.data(), buf.out = out, buf.lse = lse;
  for (int hi = 0; hi < 2; ++hi) {
    Status s = attention_forward_cpu(section_params(lp, gather_section(lp, hi, comm.size(), comm.rank()), lp.n,
                                                    lp.n * comm.size(), buf));
    if (!s.ok()) {
      comm.abort(s.code(), s.message());
      return s;
    }
  }
  return {};
}

Status all_gather_backward(Communicator& comm, const LocalProblem& lp, const void* q, const void* k, const void* v,
                           const float* lse, const float* delta, const void* dout, float* dq, float* dk, float* dv) {
  const int w = comm.size();
  std::vector<unsigned char> full_k, full_v;
  HCP_TRY(gather_kv(comm, lp, k, v, &full_k, &full_v));
  const size_t kv_floats = static_cast<size_t>(lp.kv_elems());
  std::vector<float> full_dk(kv_floats * w, 0.0f), full_dv(kv_floats * w, 0.0f);
  Buffers buf;
  buf.q = q, buf.k = full_k.data(), buf.v = full_v.data(), buf.lse = const_cast<float*>(lse), buf.delta = delta;
  buf.dout = dout, buf.dq = dq, buf.dk = full_dk.data(), buf.dv = full_dv.data();
  for (int hi = 0; hi < 2; ++hi) {
    Status s = attention_backward_cpu(section_params(lp, gather_section(lp, hi, w, comm.rank()), lp.n, lp.n * w, buf));
    if (!s.ok()) {
      comm.abort(s.code(), s.message());
      return s;
    }
  }
  // Block m of the reduce-scatter: [dK of rank m's two chunks | dV of them], in rank m's local layout.
  const size_t row = static_cast<size_t>(lp.kv_heads * lp.head_dim) * sizeof(float);
  const int64_t half = lp.n / 2, seq = lp.n * w;
  std::vector<float> blocks(2 * kv_floats * w), mine(2 * kv_floats);
  for (int m = 0; m < w; ++m) {
    float* block = blocks.data() + 2 * kv_floats * m;
    for (int hi = 0; hi < 2; ++hi) {
      const size_t src = static_cast<size_t>(chunk_of(m, hi, w) * half) * row / sizeof(float);
      const size_t dst = static_cast<size_t>(hi * half) * row / sizeof(float);
      copy_rows(lp.batch, half, row, block + dst, lp.n * row, row, full_dk.data() + src, seq * row, row);
      copy_rows(lp.batch, half, row, block + kv_floats + dst, lp.n * row, row, full_dv.data() + src, seq * row, row);
    }
  }
  HCP_TRY(comm.reduce_scatter_sum(blocks.data(), mine.data(), 2 * kv_floats));
  std::copy_n(mine.data(), kv_floats, dk);
  std::copy_n(mine.data() + kv_floats, kv_floats, dv);
  return {};
}

}  // namespace hcp::cp
