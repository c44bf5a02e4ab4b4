// The plan's cost model, one layer and one micro-batch, forward and backward, per GPU. Every formula is in
// docs/plan.md with its source; the communication volumes and attention FLOPs are the runtime's own
// (cp_cost.hpp), checked against live runs by tests/runtime/cp_cost_test.cpp.
#include <algorithm>

#include "hcp/cp_cost.hpp"
#include "hcp/plan/plan.hpp"
#include "hcp/topology.hpp"

namespace hcp::plan {
namespace {

constexpr double kGiB = 1073741824.0;

// Whether every group of a kind (level) stays inside one NVLink domain, from the exact Megatron layout.
struct Placement {
  bool a2a_in_node = true, ring_in_node = true, tp_in_node = true;
};

Placement place(const PlanInput& in, const Layout& l) {
  ParallelConfig c;
  c.world_size = in.cluster.nodes * in.cluster.gpus_per_node;
  c.tp = l.tp, c.pp = l.pp, c.cp = l.cp, c.order = parse_order(in.fixed.order);
  c.gpus_per_node = in.cluster.gpus_per_node;
  if (l.comm == CpComm::a2a_p2p) c.hcp_sizes = std::vector<int64_t>{l.a2a, l.ring};
  const Topology topo(c);
  Placement p;
  p.tp_in_node = topo.locality(GroupKind::tp).intra_node();
  if (l.comm == CpComm::a2a_p2p) {
    p.a2a_in_node = topo.locality(GroupKind::hcp, 0).intra_node();
    p.ring_in_node = topo.locality(GroupKind::hcp, 1).intra_node();
  } else {
    const bool cp_in_node = topo.locality(GroupKind::cp).intra_node();
    p.a2a_in_node = p.ring_in_node = cp_in_node;
  }
  return p;
}

// Query-key pairs of one causal sequence of s tokens with a left window w (-1: none), in closed form: the plan
// asks for sequences of up to 2^40 tokens, where counting row by row (visible_pairs) would take hours. Equal to
// visible_pairs for these masks (plan_test checks it).
double causal_pairs(double s, int64_t window) {
  if (window < 0 || static_cast<double>(window) + 1 >= s) return s * (s + 1) / 2;
  const double w = static_cast<double>(window);
  return (w + 1) * (w + 2) / 2 + (s - w - 1) * (w + 1);
}

double gbs(const GpuSpec& g, bool in_node) { return (in_node ? g.nvlink_gbs : g.network_gbs) * 1e9; }

// Weights of one transformer layer: q, k, v and output projections, and a gated MLP (three matrices).
double layer_params(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden), qd = static_cast<double>(m.heads * m.head_dim);
  const double kvd = static_cast<double>(m.kv_heads * m.head_dim);
  return h * (qd + 2 * kvd) + qd * h + 3.0 * h * static_cast<double>(m.ffn_hidden);
}

}  // namespace

int64_t global_batch(const ModelSpec& m) {
  if (m.global_batch > 0) return m.global_batch;
  return std::max<int64_t>(1, (int64_t{16} << 20) / m.seq);
}

Estimate estimate(const PlanInput& in, const Layout& l) {
  const ModelSpec& m = in.model;
  const GpuSpec& g = in.cluster.gpu;
  const Efficiency& eff = in.efficiency;
  Estimate e;
  const double peak = g.peak_tflops * 1e12;
  const double t = static_cast<double>(l.tp), cp = static_cast<double>(l.cp);
  const double sequence_tokens = static_cast<double>(m.micro_batch) * static_cast<double>(m.seq);
  const double tokens = sequence_tokens / cp;  // the CP rank's tokens
  const Placement where = place(in, l);
  e.a2a_in_node = where.a2a_in_node, e.ring_in_node = where.ring_in_node;

  // Compute: GEMMs 2 FLOPs a weight a token forward, twice that backward; attention from the visible pairs.
  e.gemm_flops = 3.0 * 2.0 * tokens * layer_params(m) / t;
  CpProblem prob;
  prob.batch = m.micro_batch, prob.seq = m.seq, prob.heads = m.heads / l.tp, prob.kv_heads = m.kv_heads / l.tp;
  prob.head_dim = m.head_dim, prob.dtype_bytes = m.dtype_bytes;
  prob.window_left = m.window, prob.window_right = m.window >= 0 ? 0 : -1;
  // Forward 4 H D a visible pair (QK^T and PV), backward 2.5 times that: attention_flops in cp_cost.hpp.
  const double pairs = static_cast<double>(m.micro_batch) * causal_pairs(static_cast<double>(m.seq), m.window);
  const double attn_fwd = 4.0 * static_cast<double>(prob.heads * m.head_dim) * pairs / cp, attn_bwd = 2.5 * attn_fwd;
  e.attention_flops = attn_fwd + attn_bwd;
  // Full recompute runs each layer's forward again before its backward: time, not useful work.
  const double redo = in.fixed.full_recompute ? 1.0 : 0.0;
  e.gemm_s = e.gemm_flops * (1.0 + redo / 3.0) / (peak * eff.gemm);
  const double fwd_s = attn_fwd / (peak * eff.attention), bwd_s = attn_bwd / (peak * eff.attention);
  e.attention_s = fwd_s * (1.0 + redo) + bwd_s;

  // Tensor parallel with sequence parallelism: per layer two all-gathers and two reduce-scatters of the layer's
  // [tokens, hidden] activation forward and as many backward, each sending (t-1)/t of it; not overlapped.
  // Full recompute runs the forward's exchanges again too.
  if (l.tp > 1) {
    e.tp_bytes = 4.0 * (2.0 + redo) * (t - 1) / t * tokens * static_cast<double>(m.hidden * m.dtype_bytes);
    e.tp_s = e.tp_bytes / gbs(g, where.tp_in_node);
  }

  if (l.cp > 1) {
    const CpTraffic f = cp_traffic(prob, l.comm, l.a2a, l.ring, false);
    const CpTraffic b = cp_traffic(prob, l.comm, l.a2a, l.ring, true);
    e.kv_replication = f.kv_replication;
    e.a2a_bytes = (1.0 + redo) * static_cast<double>(f.a2a) + static_cast<double>(b.a2a);
    e.a2a_s = e.a2a_bytes / gbs(g, e.a2a_in_node);
    e.gather_bytes = (1.0 + redo) * static_cast<double>(f.gather) + static_cast<double>(b.gather);
    e.gather_s = e.gather_bytes / gbs(g, e.ring_in_node);
    e.ring_bytes = (1.0 + redo) * static_cast<double>(f.ring) + static_cast<double>(b.ring);
    if (f.ring_steps > 1) {
      // Step i's K/V transfer runs under step i-1's compute; a step takes the longer of the two. Backward, the
      // K/V and the dK/dV of the step before travel together under the step's compute (Transformer Engine's
      // schedule), and the last dK/dV message to its owner is exposed.
      const double bw = gbs(g, e.ring_in_node), steps = static_cast<double>(f.ring_steps);
      const double kv_s = static_cast<double>(f.kv_message) / bw, dkv_s = static_cast<double>(b.dkv_message) / bw;
      const double cf = fwd_s / steps, cb = bwd_s / steps;
      e.ring_step_compute_s = cf, e.ring_step_transfer_s = kv_s;
      e.ring_step_bytes = static_cast<double>(f.kv_message);
      e.ring_exposed_s = (steps - 1) * ((1.0 + redo) * std::max(0.0, kv_s - cf) + std::max(0.0, kv_s + dkv_s - cb)) +
                         dkv_s;
      const double transfer = e.ring_bytes / bw;
      e.ring_hidden = transfer > 0 ? 1.0 - e.ring_exposed_s / transfer : 1.0;
    }
  }
  e.layer_s = e.gemm_s + e.attention_s + e.tp_s + e.a2a_s + e.ring_exposed_s + e.gather_s;

  // Memory per GPU. Activations: 34 bytes per token and hidden unit per layer over the TP group (Korthikanti et
  // al. 2022, sequence parallel, attention recomputed by the flash kernel), for all layers (1F1B keeps pp
  // micro-batches of L/pp layers on the first stage). Model states: 6 + 12/d bytes a parameter (bf16 weights, fp32
  // gradients, Adam states sharded over the d = dp * cp ranks of the distributed optimizer).
  // Full recompute keeps each layer's input (2 bytes per token and hidden unit over the TP group) plus one layer's
  // working set.
  const double layers = static_cast<double>(m.layers), per_layer = tokens * static_cast<double>(m.hidden) / t;
  e.activation_gib = (in.fixed.full_recompute ? 2.0 * per_layer * layers + 34.0 * per_layer : 34.0 * per_layer * layers) / kGiB;
  const double params = layers * layer_params(m) + 2.0 * static_cast<double>(m.vocab * m.hidden);
  const double d = static_cast<double>(l.dp * l.cp);
  e.model_state_gib = params / (t * static_cast<double>(l.pp)) * (6.0 + 12.0 / d) / kGiB;
  if (l.cp > 1) {
    const CpTraffic b = cp_traffic(prob, l.comm, l.a2a, l.ring, true);
    const double kv_local = 2.0 * tokens * static_cast<double>(prob.kv_heads * m.head_dim * m.dtype_bytes);
    double buf = 2.0 * static_cast<double>(b.kv_message + b.dkv_message);  // ring: this step's and the next
    if (l.comm == CpComm::all_gather) buf = kv_local * cp * (1.0 + 4.0 / static_cast<double>(m.dtype_bytes));
    if (l.a2a > 1) buf += 2.0 * (kv_local * static_cast<double>(b.kv_replication) +
                                 2.0 * tokens * static_cast<double>(prob.heads * m.head_dim * m.dtype_bytes));
    e.cp_buffer_gib = buf / kGiB;
  }
  e.memory_gib = e.activation_gib + e.model_state_gib + e.cp_buffer_gib;
  e.fits = e.memory_gib <= g.memory_gib * eff.memory;
  // 1F1B: m micro-batches per data-parallel replica and step, each stage idle for pp-1 slots (Narayanan et al.
  // 2021). The data-parallel gradient reduction is taken as overlapped with the backward.
  const int64_t replicas = l.dp * m.micro_batch;
  e.microbatches = std::max<int64_t>(1, (global_batch(m) + replicas - 1) / replicas);
  const double stage_layers = layers / static_cast<double>(l.pp), mb = static_cast<double>(e.microbatches);
  e.bubble = static_cast<double>(l.pp - 1) / mb;
  e.step_s = (mb + static_cast<double>(l.pp - 1)) * stage_layers * e.layer_s;
  e.mfu = mb * stage_layers * (e.gemm_flops + e.attention_flops) / (e.step_s * peak);
  e.tokens_per_s = mb * sequence_tokens / (cp * t * static_cast<double>(l.pp)) / e.step_s;
  return e;
}

}  // namespace hcp::plan
