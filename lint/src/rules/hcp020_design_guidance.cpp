#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

// A larger TP' inside the node that makes pure a2a possible with the same tp * cp.
void pure_a2a_fits(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.uses_comm(kA2aP2p) || !f.hcp_sizes.known() || !f.gpus_per_node.known() || !f.num_attention_heads.known()) return;
  const int64_t tp = f.tp_size(), cp = f.cp_size(), gpn = *f.gpus_per_node.value;
  const int64_t heads = *f.num_attention_heads.value, groups = f.query_groups().value_or(heads);
  int64_t model = 0;
  if (__builtin_mul_overflow(tp, cp, &model) || gpn > 4096) return;  // nothing sensible to suggest
  for (int64_t tp2 = tp + 1; tp2 <= gpn; ++tp2) {
    if (gpn % tp2 != 0 || model % tp2 != 0) continue;
    const int64_t cp2 = model / tp2;
    if (cp2 < 2 || tp2 * cp2 > gpn || heads % tp2 != 0 || groups % tp2 != 0) continue;
    if ((heads / tp2) % cp2 != 0 || (groups / tp2) % cp2 != 0) continue;
    r.report(f.hcp_sizes.loc(),
             "a2a+p2p with tp " + std::to_string(tp) + ", cp " + std::to_string(cp) + ": pure a2a fits inside the "
             "node with tp " + std::to_string(tp2) + ", cp " + std::to_string(cp2) + " (same tp * cp = " +
                 std::to_string(model) + "), which is simpler and was measured at the same throughput",
             "consider tensor_model_parallel_size = " + std::to_string(tp2) + ", context_parallel_size = " +
                 std::to_string(cp2) + ", cp_comm_type = \"a2a\"");
    return;
  }
}

// p2p whose per-rank chunks are too short to hide the ring transfers.
void short_p2p_chunks(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  const auto types = f.comm_types();
  if (f.cp_size() <= 1 || types.size() != 1 || types[0] != "p2p") return;
  const Fact<int64_t>& seq = f.model_seq_length.known() ? f.model_seq_length : f.dataset_seq_length;
  if (!seq.known()) return;
  int64_t twice = 0;
  if (__builtin_mul_overflow(f.cp_size(), 2, &twice)) return;
  const int64_t chunk = *seq.value / twice;
  if (chunk >= 1024) return;
  r.report(ctx.anchor({f.cp_comm_type.loc(), f.cp.loc()}),
           "p2p with per-rank chunks of " + std::to_string(chunk) + " tokens (seq_length " + std::to_string(*seq.value) +
               " / (2 * cp " + std::to_string(f.cp_size()) + ")) is too short to hide the ring transfers",
           "consider cp_comm_type = \"a2a+p2p\" with the a2a level inside the node");
}

void check(const LintContext& ctx, Reporter& r) {
  pure_a2a_fits(ctx, r);
  short_p2p_chunks(ctx, r);
}

}  // namespace

const Rule& rule_hcp020() {
  static const Rule rule{
      {"HCP020", "design-guidance", Severity::info, "a simpler or faster CP scheme fits this model and cluster",
       {"Two cases: (1) a2a+p2p where some TP' (a divisor of the GPUs per node, larger than tp, dividing the heads "
        "and query groups) gives CP' = tp * cp / TP' with pure a2a inside one node; (2) plain p2p whose per-rank "
        "chunk seq_length / (2 * cp) is below 1024 tokens.",
        "Bridge's guidance: use a2a+p2p only when CP must exceed num_kv_heads / TP, TP cannot grow, and the cluster "
        "has a bandwidth hierarchy; pure a2a was measured at the same throughput with more memory headroom. With "
        "large CP the chunks get too short to hide p2p transfers, where a2a+p2p is preferred.",
        "[cluster]\ngpus_per_node = 8\n[model]\ntensor_model_parallel_size = 2\nnum_attention_heads = 32\n"
        "num_query_groups = 8\ncontext_parallel_size = 4\ncp_comm_type = \"a2a+p2p\"\n"
        "hierarchical_context_parallel_sizes = [2, 2]",
        "Follow the suggestion when it fits your memory budget.",
        "Megatron-Bridge docs/training/hierarchical-context-parallel.md and the performance guide"}},
      &check, "tp,cp,cp_comm_type,hcp_sizes,num_attention_heads,num_query_groups,model_seq_length,dataset_seq_length,gpus_per_node"};
  return rule;
}

}  // namespace hcp::lint
