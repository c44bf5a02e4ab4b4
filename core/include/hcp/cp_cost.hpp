// What one CP attention call costs a rank, counted from the runtime's own algorithms (reference/cp-attention.md):
// the bytes each exchange sends and the useful attention FLOPs. The planner's time model (hcp plan) is built on
// these terms, and tests/runtime/cp_cost_test.cpp counts the same bytes on a live communicator and the same pairs
// in the kernels' calls, so the model cannot drift from the code.
#pragma once

#include <cstdint>

#include "hcp/cp_scheme.hpp"
#include "hcp/packed_sequences.hpp"

namespace hcp {

// One attention layer's problem as the CP group sees it: the whole sequence, the heads of one TP rank.
struct CpProblem {
  int64_t batch = 1, seq = 0;  // seq: all CP ranks' tokens (packed: the padded total)
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  int64_t dtype_bytes = 2;  // of q, k, v, out and their gradients; exchanges of fp32 partial sums use 4
  bool causal = true;
  int64_t window_left = -1, window_right = -1;
  PackedBatch packed;
};

// The bytes one rank sends in one call (forward or backward), by the exchange that sends them. Every rank of a
// scheme sends the same amount.
struct CpTraffic {
  int64_t a2a = 0;   // all-to-all over the a2a level: q, k, v (and dout) out, out (or dq, dk, dv) and lse back
  int64_t ring = 0;  // ring messages over the p2p level (or the flat p2p group), all steps
  int64_t gather = 0;  // all_gather scheme: the K/V all-gather, and the dK/dV reduce-scatter in the backward
  int64_t ring_steps = 0;          // steps of the ring (its size); 1 when there is no ring
  int64_t kv_message = 0;          // one step's K/V message (overlapped with the step's compute)
  int64_t dkv_message = 0;         // backward: one step's dK/dV message in fp32 (sent after the step's compute)
  int64_t kv_replication = 1;      // a2a above the KV heads: each KV head copied this many times
  int64_t total() const { return a2a + ring + gather; }
};

// Throws Error{invalid_argument} when the sizes do not split the problem (the same conditions as CpContext).
CpTraffic cp_traffic(const CpProblem& p, CpComm comm, int64_t a2a_size, int64_t ring_size, bool backward);

// Query-key pairs the mask lets through (causal, window, documents), for the whole problem (all batch rows).
double cp_visible_pairs(const CpProblem& p);
// Useful FLOPs of the whole problem: forward 4 H D per visible pair (QK^T and PV), backward 2.5 times that
// (dV, dP, dQ, dK and the recomputed QK^T: five products of the forward's two).
double attention_flops(const CpProblem& p, bool backward);

}  // namespace hcp
