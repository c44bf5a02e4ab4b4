#include "hcp/plan/plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "explain.hpp"
#include "hcp/error.hpp"
#include "lint_layout.hpp"

namespace hcp::plan {
namespace {

[[noreturn]] void refuse(const std::string& why) { throw Error(Errc::invalid_argument, why); }

// Bounds that keep a plan within seconds: every layout is linted (17,725 layouts took 0.9 s here).
constexpr int64_t kMaxGpus = int64_t{1} << 20;
constexpr size_t kMaxLayouts = 20000;

void validate(const PlanInput& in) {
  const ModelSpec& m = in.model;
  std::string not_positive;
  for (auto [name, value] : {std::pair{"layers", m.layers}, {"hidden", m.hidden}, {"ffn_hidden", m.ffn_hidden},
                             {"heads", m.heads}, {"kv_heads", m.kv_heads}, {"head_dim", m.head_dim}})
    if (value < 1) not_positive += std::string(not_positive.empty() ? "" : ", ") + name + " " + std::to_string(value);
  if (!not_positive.empty())
    refuse("the model needs positive layers, hidden, ffn_hidden, heads, kv_heads and head_dim (got " + not_positive +
           ")");
  // Beyond any model built, and small enough that every product the estimate forms stays exact in 64 bits: an
  // INT64_MAX layer count otherwise printed "-1 layers" and a ranked plan.
  if (m.layers > (int64_t{1} << 16) || m.hidden > (int64_t{1} << 20) || m.ffn_hidden > (int64_t{1} << 22) ||
      m.heads > (int64_t{1} << 14) || m.kv_heads > (int64_t{1} << 14) || m.head_dim > (int64_t{1} << 14) ||
      m.vocab > (int64_t{1} << 32) || m.dtype_bytes < 1 || m.dtype_bytes > 8)
    refuse("the model is beyond what the plan models: at most 2^16 layers, hidden 2^20, ffn_hidden 2^22, 2^14 heads "
           "and KV heads, head_dim 2^14, vocab 2^32, and 1 to 8 bytes a value (got layers " +
           std::to_string(m.layers) + ", hidden " + std::to_string(m.hidden) + ", ffn_hidden " +
           std::to_string(m.ffn_hidden) + ", heads " + std::to_string(m.heads) + ", kv_heads " +
           std::to_string(m.kv_heads) + ", head_dim " + std::to_string(m.head_dim) + ", vocab " +
           std::to_string(m.vocab) + ")");
  if (m.seq < 2 || m.micro_batch < 1) refuse("the sequence length must be at least 2 and the micro-batch positive");
  if (m.seq > (int64_t{1} << 40) || m.micro_batch > (int64_t{1} << 20) || m.global_batch > (int64_t{1} << 40))
    refuse("a sequence longer than 2^40 tokens, a micro-batch above 2^20 or a global batch above 2^40 sequences "
           "is beyond what the plan models");
  if (m.vocab < 0) refuse("the vocabulary size must not be negative");
  if (m.heads % m.kv_heads) refuse("heads (" + std::to_string(m.heads) + ") must be a multiple of kv_heads (" +
                                   std::to_string(m.kv_heads) + ")");
  if (m.window < -1) refuse("the window must be -1 (none) or a number of tokens");
  if (in.cluster.nodes < 1 || in.cluster.gpus_per_node < 1) refuse("the cluster needs positive nodes and GPUs per node");
  if (in.cluster.gpus_per_node > 4096 || in.cluster.nodes > kMaxGpus / in.cluster.gpus_per_node)
    refuse("the cluster has more than " + std::to_string(kMaxGpus) + " GPUs: beyond any the plan is meant for");
  const GpuSpec& g = in.cluster.gpu;
  std::string bad_figures;
  for (auto [name, value] : {std::pair{"peak TFLOP/s", g.peak_tflops}, {"memory GiB", g.memory_gib},
                             {"NVLink GB/s", g.nvlink_gbs}, {"network GB/s", g.network_gbs}})
    if (!(value > 0 && std::isfinite(value)))
      bad_figures += std::string(bad_figures.empty() ? "" : ", ") + name + " " + std::to_string(value);
  if (!bad_figures.empty())
    refuse("the GPU needs positive, finite peak TFLOP/s, memory and NVLink and network bandwidths (got " +
           bad_figures + ")");
  const Efficiency& e = in.efficiency;
  for (double f : {e.gemm, e.attention, e.memory})
    if (!(f > 0 && f <= 1)) refuse("efficiencies must be in (0, 1]");
  if (in.fixed.tp && *in.fixed.tp < 1) refuse("tp must be positive");
  if (in.fixed.pp && (*in.fixed.pp < 1 || *in.fixed.pp > m.layers))
    refuse("pp must be 1 to the number of layers (" + std::to_string(m.layers) + ")");
  if (in.fixed.tp && (m.heads % *in.fixed.tp || m.kv_heads % *in.fixed.tp))
    refuse("tp " + std::to_string(*in.fixed.tp) + " must divide the heads and KV heads (Megatron's condition)");
}

// In increasing order, in O(sqrt(n)).
std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> low, high;
  for (int64_t i = 1; i * i <= n; ++i) {
    if (n % i) continue;
    low.push_back(i);
    if (i != n / i) high.push_back(n / i);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

// Every layout: tp (fixed, or each divisor of the node that divides the heads and KV heads, as Megatron requires),
// the fixed pp, each cp dividing what is left, each scheme and, for a2a+p2p, each split into two levels above 1.
std::vector<Layout> layouts(const PlanInput& in) {
  const int64_t world = in.cluster.nodes * in.cluster.gpus_per_node;
  std::vector<int64_t> tps;
  if (in.fixed.tp) {
    tps.push_back(*in.fixed.tp);
  } else {
    for (int64_t t : divisors(in.cluster.gpus_per_node))
      if (in.model.heads % t == 0 && in.model.kv_heads % t == 0) tps.push_back(t);
  }
  std::vector<int64_t> pps;
  if (in.fixed.pp) {
    pps.push_back(*in.fixed.pp);
  } else {
    for (int64_t p = 1; p <= std::min<int64_t>(in.model.layers, 16); ++p)
      if (in.model.layers % p == 0) pps.push_back(p);
  }
  std::vector<Layout> out;
  for (int64_t tp : tps)
    for (int64_t pp : pps) {
    if (world % (tp * pp)) continue;
    for (int64_t cp : divisors(world / (tp * pp))) {
      Layout l;
      l.tp = tp, l.pp = pp, l.cp = cp, l.dp = world / (tp * pp * cp);
      if (cp == 1) {
        out.push_back(l);
        continue;
      }
      for (CpComm c : {CpComm::p2p, CpComm::a2a, CpComm::all_gather}) {
        l.comm = c, l.a2a = c == CpComm::a2a ? cp : 1, l.ring = c == CpComm::a2a ? 1 : cp;
        out.push_back(l);
      }
      for (int64_t a : divisors(cp)) {
        if (a == 1 || a == cp) continue;
        l.comm = CpComm::a2a_p2p, l.a2a = a, l.ring = cp / a;
        out.push_back(l);
      }
    }
  }
  return out;
}

}  // namespace

std::string Layout::describe() const {
  std::string s = "tp " + std::to_string(tp);
  if (pp > 1) s += ", pp " + std::to_string(pp);
  if (cp == 1) return s + ", no CP";
  s += ", cp " + std::to_string(cp) + " " + std::string(cp_comm_name(comm));
  if (comm == CpComm::a2a_p2p) s += " [" + std::to_string(a2a) + ", " + std::to_string(ring) + "]";
  return s;
}

PlanResult plan(const PlanInput& input) {
  validate(input);
  PlanResult r;
  r.input = input;
  const int64_t world = input.cluster.nodes * input.cluster.gpus_per_node;
  const int64_t fixed = input.fixed.tp.value_or(1) * input.fixed.pp.value_or(1);
  if (world % fixed)
    refuse("tp * pp (" + std::to_string(fixed) + ") does not divide the " + std::to_string(world) + " GPUs");
  const std::vector<Layout> all = layouts(input);
  if (all.size() > kMaxLayouts)
    refuse(std::to_string(all.size()) + " layouts to check (more than " + std::to_string(kMaxLayouts) +
           "): fix tp or pp to narrow the search");
  for (const Layout& l : all) {
    const LintVerdict v = lint_layout(input, l);
    if (!v.errors.empty()) {
      r.rejected.push_back({l, v.errors});
      continue;
    }
    // Megatron: the global batch must be a multiple of micro-batch * dp (each replica runs whole micro-batches).
    const int64_t replicas = l.dp * input.model.micro_batch;
    if (global_batch(input.model) % replicas) {
      r.rejected.push_back({l, {{"global-batch", "the global batch (" + std::to_string(global_batch(input.model)) +
                                                     " sequences) is not a multiple of micro-batch * dp (" +
                                                     std::to_string(replicas) + "); set --global-batch"}}});
      continue;
    }
    Candidate c;
    c.layout = l;
    try {
      c.estimate = estimate(input, l);
    } catch (const Error& e) {  // a condition of the runtime's that no lint rule states
      r.rejected.push_back({l, {{"runtime", e.what()}}});
      continue;
    }
    c.warnings = v.warnings;
    r.ranked.push_back(std::move(c));
  }
  std::stable_sort(r.ranked.begin(), r.ranked.end(), [](const Candidate& a, const Candidate& b) {
    if (a.estimate.fits != b.estimate.fits) return a.estimate.fits;
    // Those that fit by speed; the others by how close they come to fitting.
    return a.estimate.fits ? a.estimate.mfu > b.estimate.mfu : a.estimate.memory_gib < b.estimate.memory_gib;
  });
  for (Candidate& c : r.ranked) c.why = explain_candidate(input, c);
  r.verdict = explain_verdict(r);
  return r;
}

}  // namespace hcp::plan
