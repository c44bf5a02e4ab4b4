#include "hcp/cp_cost.hpp"

#include <string>

#include "hcp/checked_math.hpp"
#include "hcp/error.hpp"

namespace hcp {
namespace {

[[noreturn]] void refuse(const std::string& why) { throw Error(Errc::invalid_argument, "CP cost: " + why); }

int64_t mul(int64_t a, int64_t b) { return checked_mul(a, b, "CP cost"); }
int64_t add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) refuse("byte counts overflow 64 bits");
  return r;
}

// The exchange volumes mirror cp_context.cpp, ring.cpp, all_gather.cpp and sequence_layout.cpp line by line: an
// all-to-all of a tensor sends (A-1)/A of it, an all-gather sends the rank's chunk to W-1 peers, a reduce-scatter
// sends W-1 of its W blocks.
struct Local {
  int64_t rows;      // batch * seq / W: the rank's tokens
  int64_t q, kv, lse;  // bytes of the rank's q (= out = dout), one of k/v, and its lse rows (fp32)
};

}  // namespace

CpTraffic cp_traffic(const CpProblem& p, CpComm comm, int64_t a2a_size, int64_t ring_size, bool backward) {
  if (p.batch < 1 || p.seq < 1 || p.heads < 1 || p.kv_heads < 1 || p.head_dim < 1 || p.dtype_bytes < 1)
    refuse("batch, seq, heads, kv_heads, head_dim and dtype_bytes must be positive");
  if (p.heads % p.kv_heads) refuse("heads must be a multiple of kv_heads");
  int64_t a = 1, r = 1;
  switch (comm) {
    case CpComm::p2p: r = ring_size; break;
    case CpComm::a2a: a = a2a_size; break;
    case CpComm::a2a_p2p: a = a2a_size, r = ring_size; break;
    case CpComm::all_gather: r = ring_size; break;  // the gather group's size
  }
  if (a < 1 || r < 1) refuse("group sizes must be positive");
  const int64_t w = mul(a, r);
  if (p.seq % (2 * w)) refuse("seq must be a multiple of 2 * cp");
  const int64_t n = p.seq / w;
  Local l{};
  l.rows = mul(p.batch, n);
  l.q = mul(mul(l.rows, p.heads), mul(p.head_dim, p.dtype_bytes));
  l.kv = mul(mul(l.rows, p.kv_heads), mul(p.head_dim, p.dtype_bytes));
  l.lse = mul(mul(l.rows, p.heads), 4);
  CpTraffic t;
  if (comm == CpComm::all_gather) {
    // K and V gathered once per call; the backward reduce-scatters dK and dV in fp32.
    t.gather = mul(w - 1, mul(2, l.kv));
    if (backward) t.gather = add(t.gather, mul(w - 1, mul(8, l.kv / p.dtype_bytes)));
    return t;
  }
  int64_t kv = l.kv;  // one of k/v as the ring sees it
  if (a > 1) {
    if (p.heads % a) refuse("heads must be a multiple of the a2a size");
    t.kv_replication = kv_replication(p.kv_heads, a);
    if (t.kv_replication == 0) refuse("the a2a size and kv_heads divide neither way");
    kv = mul(l.kv, t.kv_replication);
    const int64_t out_frac = a - 1;
    // Forward: q, k, v out; out (caller's dtype) and lse back. Backward: q, k, v, dout, lse and delta out; dq back in
    // the dtype, dk and dv in the dtype, or in fp32 when KV heads were replicated (summed per head after the way
    // back).
    int64_t sent = add(add(mul(backward ? 3 : 2, l.q), mul(2, kv)), mul(backward ? 2 : 1, l.lse));
    if (backward) sent = add(sent, t.kv_replication == 1 ? mul(2, kv) : mul(8, kv / p.dtype_bytes));
    t.a2a = mul(sent / a, out_frac);
  }
  t.ring_steps = r;
  if (r > 1) {
    t.kv_message = mul(2, kv);
    t.ring = mul(r - 1, t.kv_message);
    if (backward) {
      t.dkv_message = mul(8, kv / p.dtype_bytes);
      t.ring = add(t.ring, mul(r, t.dkv_message));  // the last step hands each block's dK/dV to its owner
    }
  }
  return t;
}

double cp_visible_pairs(const CpProblem& p) {
  return static_cast<double>(p.batch) *
         visible_pairs(p.packed, p.seq, p.causal, p.window_left, p.window_right);
}

double attention_flops(const CpProblem& p, bool backward) {
  const double forward = 4.0 * static_cast<double>(p.heads) * static_cast<double>(p.head_dim) * cp_visible_pairs(p);
  return backward ? 2.5 * forward : forward;
}

}  // namespace hcp
