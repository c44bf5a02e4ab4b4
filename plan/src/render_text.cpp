// The plan as text: the inputs and assumptions, the ranked table, each candidate's reason, the verdict, and the
// rejected layouts grouped by the rule that rejects them.
#include <cstdarg>
#include <cstdio>
#include <map>

#include "explain.hpp"
#include "hcp/plan/plan.hpp"

namespace hcp::plan {
namespace {

std::string line(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string line(const char* f, ...) {
  va_list ap, again;
  va_start(ap, f);
  va_copy(again, ap);
  const int n = std::vsnprintf(nullptr, 0, f, ap);
  va_end(ap);
  std::string s(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, f, again);
  va_end(again);
  return s + "\n";
}

const char* where(bool in_node) { return in_node ? "NVLink" : "network"; }

}  // namespace

std::string render_text(const PlanResult& r, size_t top) {
  const PlanInput& in = r.input;
  const ModelSpec& m = in.model;
  const GpuSpec& g = in.cluster.gpu;
  std::string s;
  s += line("model: %s%s%d layers, hidden %lld, ffn %lld, %lld heads, %lld KV heads, head dim %lld; sequence %lld, "
            "micro-batch %lld%s%s",
            m.name.c_str(), m.name.empty() ? "" : ": ", static_cast<int>(m.layers), static_cast<long long>(m.hidden),
            static_cast<long long>(m.ffn_hidden), static_cast<long long>(m.heads),
            static_cast<long long>(m.kv_heads), static_cast<long long>(m.head_dim), static_cast<long long>(m.seq),
            static_cast<long long>(m.micro_batch), m.packed ? ", packed" : "",
            m.window >= 0 ? (", window " + std::to_string(m.window)).c_str() : "");
  s += line("cluster: %lld nodes x %lld %s (%.0f TFLOP/s bf16, %.0f GiB, NVLink %.0f GB/s, network %.0f GB/s a GPU)",
            static_cast<long long>(in.cluster.nodes), static_cast<long long>(in.cluster.gpus_per_node),
            g.name.c_str(), g.peak_tflops, g.memory_gib, g.nvlink_gbs, g.network_gbs);
  const std::string fixed_tp = in.fixed.tp ? "tp " + std::to_string(*in.fixed.tp) : "tp free";
  const std::string fixed_pp = in.fixed.pp ? "pp " + std::to_string(*in.fixed.pp) : "pp free";
  s += line("assumed: GEMMs at %.0f%% and attention at %.0f%% of peak, %.0f%% of memory usable, %s recompute; %s, "
            "%s, order %s%s",
            100 * in.efficiency.gemm, 100 * in.efficiency.attention, 100 * in.efficiency.memory,
            in.fixed.full_recompute ? "full" : "selective", fixed_tp.c_str(), fixed_pp.c_str(), in.fixed.order.c_str(),
            in.fixed.te_version ? (", Transformer Engine " + *in.fixed.te_version).c_str() : "");
  s += line("global batch %lld sequences; %zu layouts pass the rules, %zu rejected. Step and layer times: one layer "
            "and micro-batch, forward and backward, a GPU:",
            static_cast<long long>(global_batch(m)), r.ranked.size(), r.rejected.size());
  s += "\n";
  s += line("%-4s %-34s %-7s %-7s %10s %10s %6s %9s %6s %12s %6s %9s", "rank", "layout", "a2a", "ring", "step comp",
            "step xfer", "hidden", "layer", "bubble", "memory GiB", "MFU", "tok/s/GPU");
  const size_t n = std::min(top, r.ranked.size());
  for (size_t i = 0; i < n; ++i) {
    const Candidate& c = r.ranked[i];
    const Estimate& e = c.estimate;
    const bool ring = c.layout.ring > 1 && c.layout.comm != CpComm::all_gather;
    s += line("%-4zu %-34s %-7s %-7s %10s %10s %6s %9s %6s %7.1f %-4s %5.1f%% %9.0f", i + 1,
              c.layout.describe().c_str(), c.layout.a2a > 1 ? where(e.a2a_in_node) : "-",
              c.layout.cp > 1 && c.layout.comm != CpComm::a2a ? where(e.ring_in_node) : "-",
              ring ? ms(e.ring_step_compute_s).c_str() : "-", ring ? ms(e.ring_step_transfer_s).c_str() : "-",
              ring ? pct(e.ring_hidden).c_str() : "-", ms(e.layer_s).c_str(), pct(e.bubble).c_str(), e.memory_gib,
              e.fits ? "fits" : "OOM", 100 * e.mfu, e.tokens_per_s);
  }
  if (n < r.ranked.size()) s += line("... %zu more (--top)", r.ranked.size() - n);
  s += "\n";
  for (size_t i = 0; i < n; ++i) {
    const Candidate& c = r.ranked[i];
    s += line("%zu. %s: %s", i + 1, c.layout.describe().c_str(), c.why.c_str());
    for (const Finding& w : c.warnings) s += "   warning[" + w.code + "]: " + w.message + "\n";
  }
  s += "\nverdict: " + r.verdict + "\n";
  if (!r.rejected.empty()) {
    std::map<std::string, std::vector<const Rejected*>> by_rule;
    for (const Rejected& x : r.rejected) by_rule[x.errors.front().code].push_back(&x);
    s += "\nrejected:\n";
    for (const auto& [code, list] : by_rule) {
      s += line("  %s: %zu layouts, e.g. %s: %s", code.c_str(), list.size(), list.front()->layout.describe().c_str(),
                list.front()->errors.front().message.c_str());
    }
  }
  return s;
}

}  // namespace hcp::plan
