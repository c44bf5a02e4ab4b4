#include "verdict.hpp"

#include <optional>
#include <sstream>
#include <utility>

namespace hcp::logscan {
namespace {

std::string number(double v) {
  std::ostringstream o;
  o.precision(1);
  o << std::fixed << v;
  return o.str();
}

std::string sizes_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

const GroupEvidence* first_evidence(const Evidence& e, bool hierarchical) {
  const GroupEvidence* best = nullptr;
  for (const auto& [key, g] : e.groups) {
    if (g.source == "mention") continue;
    const bool is_hier = g.group.rfind("HIERARCHICAL_CONTEXT_PARALLEL_GROUP", 0) == 0;
    if (is_hier != hierarchical) continue;
    if (!best || g.first.line < best->first.line) best = &g;
  }
  return best;
}

std::string join(const std::set<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::string lines_text(uint64_t n) { return std::to_string(n) + (n == 1 ? " record" : " records"); }

// Megatron's dynamic CP, from its arguments, its warning or group descriptions, or attention run at several CP
// sizes; null when nothing shows it.
std::optional<std::pair<std::string, SourceRef>> dynamic_cp(const Intent& in, const Evidence& ev) {
  if (ev.dynamic_cp.first) return std::pair(ev.dynamic_cp.how + " seen", *ev.dynamic_cp.first);
  if (in.dynamic_cp.value.value_or(false)) {
    return std::pair(std::string("dynamic (hybrid) context parallelism is configured"), in.dynamic_cp.where);
  }
  const AttentionEvidence& a = ev.attention;
  if (a.cp_sizes.size() > 1) {
    std::string sizes;
    for (int64_t n : a.cp_sizes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(n);
    return std::pair("Transformer Engine ran attention at CP sizes " + sizes, *a.cp_on);
  }
  return std::nullopt;
}

constexpr const char* kVerifiable =
    "to make the next run verifiable, set TORCH_CPP_LOG_LEVEL=INFO (PyTorch then names every process group, "
    "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0/L1 included, at its first collective) or build the groups with the hcp "
    "runtime, which logs \"created CONTEXT_PARALLEL_GROUP\" and \"created HIERARCHICAL_CONTEXT_PARALLEL_GROUPS\"";

}  // namespace

void decide(ScanReport& r) {
  const Intent& in = r.intent;
  const Evidence& ev = r.evidence;
  r.step_completed = r.progress.any();
  r.failed = r.failure_count > 0;
  auto reason = [&](std::string text, SourceRef where) { r.reasons.emplace_back(std::move(text), std::move(where)); };

  const int64_t cp = in.cp.value.value_or(0);
  const auto throughput = r.progress.reported_tflops();
  if (cp > 1 && r.gpu_peak_tflops && throughput && *throughput > *r.gpu_peak_tflops) {
    r.verdict = Verdict::cp_silently_off;
    reason("median reported throughput " + number(*throughput) + " TFLOP/s/GPU is above the " + *r.gpu +
               "'s dense bf16 peak of " + number(*r.gpu_peak_tflops) +
               " while context_parallel_size is " + std::to_string(cp) + ": the counted work was not done",
           r.progress.first_iteration.value_or(in.cp.where));
    reason("the GPU model comes from here", r.gpu_where.value_or(SourceRef{"--gpu", 0, -1}));
    return;
  }
  if (in.a2a_p2p_without_sizes()) {
    r.verdict = Verdict::cp_silently_off;
    reason("cp_comm_type is a2a+p2p but hierarchical_context_parallel_sizes is None: Transformer Engine gets no CP "
           "group and runs without context parallelism (Megatron-Bridge issue 2667; hcp-lint HCP001)",
           in.cp_comm_type.where);
    reason("hierarchical_context_parallel_sizes is None here", in.hcp_sizes.where);
    return;
  }
  const AttentionEvidence& att = ev.attention;
  const auto dynamic = dynamic_cp(in, ev);
  // Transformer Engine reports 'context_parallel' from the group the attention was given: False on every record
  // of a run meant to use CP is CP off, whatever the configuration says (dynamic CP runs short micro-batches
  // without CP, so its records say False too).
  if (!dynamic && att.cp_off && !att.cp_on && (cp > 1 || in.hierarchical())) {
    r.verdict = Verdict::cp_silently_off;
    reason("Transformer Engine's attention ran without a CP group ('context_parallel': False in all " +
               lines_text(att.cp_off_lines) + " of its configuration)",
           *att.cp_off);
    reason(cp > 1 ? "context_parallel_size " + std::to_string(cp) + " is configured here"
                  : std::string("hierarchical CP is configured here"),
           cp > 1 ? in.cp.where : (in.hcp_sizes.value ? in.hcp_sizes.where : in.cp_comm_type.where));
    return;
  }
  if (ev.hierarchical_groups()) {
    r.verdict = Verdict::hcp_active;
    const GroupEvidence* g = first_evidence(ev, true);
    reason(g->group + " seen (" + g->source + ", " + std::to_string(g->lines) + " lines)", g->first);
    return;
  }
  // Megatron hands Transformer Engine the pair of level groups only for a2a+p2p, and TE says CP is on only when
  // it has them.
  if (att.cp_on && att.comm_types.count("a2a+p2p")) {
    r.verdict = Verdict::hcp_active;
    reason("Transformer Engine ran attention with cp_comm_type a2a+p2p and CP on ('context_parallel': True)",
           *att.cp_on);
    return;
  }
  if (dynamic) {
    r.verdict = Verdict::dynamic_cp;
    reason(dynamic->first + ": the CP group, and its size, is chosen per micro-batch", dynamic->second);
    return;
  }
  const bool decentralized = in.use_decentralized_pg.value.value_or(false) || ev.hypercommgrid.has_value();
  if (in.hierarchical()) {
    const std::string intent =
        in.hcp_sizes.value && in.hcp_sizes.value->has_value() ? "hierarchical sizes " + sizes_text(**in.hcp_sizes.value)
                                                              : "cp_comm_type a2a+p2p";
    const SourceRef intent_where = in.hcp_sizes.value ? in.hcp_sizes.where : in.cp_comm_type.where;
    if (decentralized) {
      r.verdict = Verdict::hcp_not_active;
      reason(intent + " configured, but decentralized process groups (use_decentralized_pg) build flat CP groups "
                      "only (hcp-lint HCP006)",
             ev.hypercommgrid.value_or(in.use_decentralized_pg.where));
      reason("hierarchical CP is configured here", intent_where);
      return;
    }
    if (ev.flat_cp_groups()) {
      r.verdict = Verdict::hcp_not_active;
      const GroupEvidence* g = first_evidence(ev, false);
      reason(intent + " configured, but only the flat CONTEXT_PARALLEL_GROUP is evidenced: no hierarchical group was "
                      "created or used",
             g->first);
      reason("hierarchical CP is configured here", intent_where);
      return;
    }
    if (att.cp_on && !att.comm_types.empty()) {
      r.verdict = Verdict::hcp_not_active;
      reason(intent + " configured, but Transformer Engine ran CP attention with cp_comm_type " +
                 join(att.comm_types) + " only",
             *att.cp_on);
      reason("hierarchical CP is configured here", intent_where);
      return;
    }
    r.verdict = Verdict::unknown;
    reason(intent + " configured, but nothing in the log shows whether the hierarchical groups exist", intent_where);
    r.advice = kVerifiable;
    return;
  }
  if (cp > 1 || ev.flat_cp_groups() || att.cp_on) {
    r.verdict = Verdict::flat_cp;
    if (const GroupEvidence* g = first_evidence(ev, false)) {
      reason("flat CONTEXT_PARALLEL_GROUP seen (" + g->source + ")", g->first);
    }
    if (att.cp_on) {
      reason("Transformer Engine ran attention with CP on" +
                 (att.comm_types.empty() ? std::string() : " (cp_comm_type " + join(att.comm_types) + ")"),
             *att.cp_on);
    }
    if (cp > 1) reason("context_parallel_size " + std::to_string(cp) + " without hierarchical sizes", in.cp.where);
    return;
  }
  if (in.cp.value && cp == 1) {
    r.verdict = Verdict::no_cp;
    reason("context_parallel_size is 1", in.cp.where);
    return;
  }
  if (att.cp_off) {
    r.verdict = Verdict::no_cp;
    reason("Transformer Engine's attention ran without a CP group ('context_parallel': False in " +
               lines_text(att.cp_off_lines) + " of its configuration)",
           *att.cp_off);
    return;
  }
  r.verdict = Verdict::unknown;
  reason("no context-parallel configuration and no process-group evidence found", SourceRef{});
  r.advice = std::string("log the configuration (Megatron prints it on rank 0) and ") + kVerifiable;
}

}  // namespace hcp::logscan
