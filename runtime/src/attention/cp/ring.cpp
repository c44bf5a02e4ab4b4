// The p2p ring of cp-attention.md over one communicator of size W, on a participant's dual-chunk local sequence
// (half 0 = chunk r, half 1 = chunk 2W-1-r). Forward: at step i the KV of rank (r - i) mod W is used while the
// KV of step i+1 travels from r-1 to r+1; the causal schedule makes every step cost about the same; partial
// results are merged into fp32 out/lse as they arrive. Backward: the diagonal first, then the KV of rank
// (r + i) mod W arriving from r+1 while a step computes; the dK/dV accumulator of each KV block travels with it
// along the same reverse ring and ends, complete, at its owner.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "hcp/attention_cpu.hpp"
#include "local_problem.hpp"

namespace hcp::cp {
namespace {

// Which queries see which keys when this rank's queries meet the KV block of rank `src`.
Section ring_section(const LocalProblem& lp, int src, int r) {
  const int64_t n = lp.n, half = n / 2;
  if (!lp.causal) return {0, n, 0, n, false, 0};
  if (src == r) return {0, n, 0, n, true, 0};     // own block: local order is global order
  if (src < r) return {0, n, 0, half, false, 0};  // a lower rank's first chunk precedes both query chunks
  return {half, half, 0, n, false, 0};            // a higher rank: only our second chunk comes after it
}

// lse = log(e^lse + e^lse_i), out = out e^(lse_old - lse) + out_i e^(lse_i - lse), on the section's rows, in fp32.
void merge_section(const LocalProblem& lp, const Section& s, float* out, float* lse, const float* part_out,
                   const float* part_lse) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int64_t D = lp.head_dim, row = lp.heads * D;
  for (int64_t b = 0; b < lp.batch; ++b)
    for (int64_t h = 0; h < lp.heads; ++h) {
      float* l = lse + (b * lp.heads + h) * lp.n;
      const float* li = part_lse + (b * lp.heads + h) * lp.n;
      for (int64_t i = s.q0; i < s.q0 + s.nq; ++i) {
        if (li[i] == kNegInf) continue;
        float* o = out + (b * lp.n + i) * row + h * D;
        const float* oi = part_out + (b * lp.n + i) * row + h * D;
        if (l[i] == kNegInf) {
          for (int64_t d = 0; d < D; ++d) o[d] = oi[d];
          l[i] = li[i];
          continue;
        }
        const float hi = std::max(l[i], li[i]), lo = std::min(l[i], li[i]);
        const float merged = hi + std::log1p(std::exp(lo - hi));
        const float w_old = std::exp(l[i] - merged), w_new = std::exp(li[i] - merged);
        for (int64_t d = 0; d < D; ++d) o[d] = o[d] * w_old + oi[d] * w_new;
        l[i] = merged;
      }
    }
}

}  // namespace

Status ring_forward(Communicator* comm, const LocalProblem& lp, const void* q, const void* k, const void* v,
                    float* out, float* lse) {
  const int w = comm ? comm->size() : 1, r = comm ? comm->rank() : 0;
  Buffers buf;
  buf.q = q;
  if (w == 1) {
    buf.k = k, buf.v = v, buf.out = out, buf.lse = lse;
    return attention_forward_cpu(section_params(lp, ring_section(lp, 0, 0), lp.n, lp.n, buf));
  }
  std::vector<unsigned char> cur = pack_kv(lp, k, v), next(cur.size());
  std::vector<float> part_out(static_cast<size_t>(lp.q_elems()));
  std::vector<float> part_lse(static_cast<size_t>(lp.batch * lp.heads * lp.n));
  for (int i = 0; i < w; ++i) {
    if (i + 1 < w) HCP_TRY(comm->post_send_recv(cur.data(), cur.size(), (r + 1) % w, next.data(), next.size(),
                                                (r - 1 + w) % w));
    const int src = (r - i + w) % w;
    const Section s = ring_section(lp, src, r);
    buf.k = cur.data(), buf.v = cur.data() + lp.kv_bytes();
    // The first step covers every row, so it writes the accumulators directly.
    buf.out = i == 0 ? out : part_out.data();
    buf.lse = i == 0 ? lse : part_lse.data();
    Status computed = attention_forward_cpu(section_params(lp, s, lp.n, lp.n, buf));
    if (!computed.ok()) {
      comm->abort(computed.code(), computed.message());
      return computed;
    }
    if (i > 0) merge_section(lp, s, out, lse, part_out.data(), part_lse.data());
    if (i + 1 < w) {
      HCP_TRY(comm->wait_send_recv());
      std::swap(cur, next);
    }
  }
  return {};
}

Status ring_backward(Communicator* comm, const LocalProblem& lp, const void* q, const void* k, const void* v,
                     const float* lse, const float* delta, const void* dout, float* dq, float* dk, float* dv) {
  const int w = comm ? comm->size() : 1, r = comm ? comm->rank() : 0;
  Buffers buf;
  buf.q = q, buf.dout = dout, buf.lse = const_cast<float*>(lse), buf.delta = delta, buf.dq = dq;
  if (w == 1) {
    buf.k = k, buf.v = v, buf.dk = dk, buf.dv = dv;
    return attention_backward_cpu(section_params(lp, ring_section(lp, 0, 0), lp.n, lp.n, buf));
  }
  const size_t kv_floats = static_cast<size_t>(lp.kv_elems());
  std::vector<unsigned char> cur = pack_kv(lp, k, v), next(cur.size());
  std::vector<float> dkv(2 * kv_floats, 0.0f), dkv_next(2 * kv_floats);
  for (int i = 0; i < w; ++i) {
    if (i + 1 < w) HCP_TRY(comm->post_send_recv(cur.data(), cur.size(), (r - 1 + w) % w, next.data(), next.size(),
                                                (r + 1) % w));
    const int src = (r + i) % w;
    buf.k = cur.data(), buf.v = cur.data() + lp.kv_bytes();
    buf.dk = dkv.data(), buf.dv = dkv.data() + kv_floats;
    Status computed = attention_backward_cpu(section_params(lp, ring_section(lp, src, r), lp.n, lp.n, buf));
    if (!computed.ok()) {
      comm->abort(computed.code(), computed.message());
      return computed;
    }
    if (i + 1 < w) {
      HCP_TRY(comm->wait_send_recv());
      std::swap(cur, next);
    }
    // This block's dK/dV goes on to rank r-1, which holds the block next (or owns it, after the last step).
    HCP_TRY(comm->send_recv(dkv.data(), dkv.size() * sizeof(float), (r - 1 + w) % w, dkv_next.data(),
                            dkv_next.size() * sizeof(float), (r + 1) % w));
    std::swap(dkv, dkv_next);
  }
  std::copy_n(dkv.data(), kv_floats, dk);
  std::copy_n(dkv.data() + kv_floats, kv_floats, dv);
  return {};
}

}  // namespace hcp::cp
