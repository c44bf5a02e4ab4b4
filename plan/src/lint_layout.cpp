#include "lint_layout.hpp"

#include <string>

#include "hcp/lint/linter.hpp"

// GCC 12 warns wrongly about overlapping copies in `"literal" + std::string` chains (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace hcp::plan {

LintVerdict lint_layout(const PlanInput& in, const Layout& l) {
  const ModelSpec& m = in.model;
  lint::LintOptions o;
  auto set = [&](const std::string& key, const std::string& value) { o.overrides.push_back(key + "=" + value); };
  set("model.tensor_model_parallel_size", std::to_string(l.tp));
  set("model.pipeline_model_parallel_size", std::to_string(l.pp));
  set("model.context_parallel_size", std::to_string(l.cp));
  if (l.cp > 1) set("model.cp_comm_type", std::string(cp_comm_name(l.comm)));
  if (l.comm == CpComm::a2a_p2p)
    set("model.hierarchical_context_parallel_sizes", "[" + std::to_string(l.a2a) + "," + std::to_string(l.ring) + "]");
  set("model.num_attention_heads", std::to_string(m.heads));
  set("model.num_query_groups", std::to_string(m.kv_heads));
  set("model.num_layers", std::to_string(m.layers));
  set("model.seq_length", std::to_string(m.seq));
  if (m.window >= 0) set("model.window_size", "[" + std::to_string(m.window) + ",0]");
  if (m.packed) set("model.qkv_format", "thd");
  if (in.fixed.full_recompute) set("model.recompute_granularity", "full");
  set("dist.use_tp_pp_dp_mapping", in.fixed.order == "tp-cp-ep-pp-dp" ? "true" : "false");
  o.cluster.world_size = in.cluster.nodes * in.cluster.gpus_per_node;
  o.cluster.nodes = in.cluster.nodes;
  o.cluster.gpus_per_node = in.cluster.gpus_per_node;
  o.cluster.gpu = in.cluster.gpu.name;
  o.cluster.te_version = in.fixed.te_version;
  const lint::LintReport report = lint::lint({}, o);
  LintVerdict v;
  for (const lint::UnitReport& u : report.units)
    for (const lint::Diagnostic& d : u.diagnostics) {
      if (d.severity == lint::Severity::error) v.errors.push_back({d.code, d.message});
      if (d.severity == lint::Severity::warning) v.warnings.push_back({d.code, d.message});
    }
  return v;
}

}  // namespace hcp::plan
