// The plan as JSON: the inputs, every candidate with all its estimate's terms (seconds, bytes, GiB), the verdict
// and the rejected layouts with every rule that rejects them.
#include <nlohmann/json.hpp>

#include "hcp/plan/plan.hpp"

namespace hcp::plan {
namespace {

nlohmann::json layout_json(const Layout& l) {
  nlohmann::json j = {{"tp", l.tp}, {"pp", l.pp}, {"cp", l.cp}, {"dp", l.dp}, {"describe", l.describe()}};
  if (l.cp > 1) j["cp_comm_type"] = std::string(cp_comm_name(l.comm));
  if (l.comm == CpComm::a2a_p2p) j["hierarchical_context_parallel_sizes"] = {l.a2a, l.ring};
  return j;
}

nlohmann::json findings_json(const std::vector<Finding>& f) {
  nlohmann::json a = nlohmann::json::array();
  for (const Finding& x : f) a.push_back({{"code", x.code}, {"message", x.message}});
  return a;
}

}  // namespace

std::string render_json(const PlanResult& r) {
  const PlanInput& in = r.input;
  const ModelSpec& m = in.model;
  const GpuSpec& g = in.cluster.gpu;
  nlohmann::json j;
  j["model"] = {{"name", m.name},         {"layers", m.layers},     {"hidden", m.hidden},
                {"ffn_hidden", m.ffn_hidden}, {"heads", m.heads},   {"kv_heads", m.kv_heads},
                {"head_dim", m.head_dim}, {"vocab", m.vocab},       {"seq", m.seq},
                {"micro_batch", m.micro_batch}, {"global_batch", global_batch(m)}, {"dtype_bytes", m.dtype_bytes}, {"packed", m.packed},
                {"window", m.window}};
  j["cluster"] = {{"nodes", in.cluster.nodes}, {"gpus_per_node", in.cluster.gpus_per_node},
                  {"gpu", {{"name", g.name}, {"peak_tflops", g.peak_tflops}, {"memory_gib", g.memory_gib},
                           {"nvlink_gbs", g.nvlink_gbs}, {"network_gbs", g.network_gbs}, {"source", g.source}}}};
  j["fixed"] = {{"order", in.fixed.order}, {"full_recompute", in.fixed.full_recompute}};
  if (in.fixed.tp) j["fixed"]["tp"] = *in.fixed.tp;
  if (in.fixed.pp) j["fixed"]["pp"] = *in.fixed.pp;
  if (in.fixed.te_version) j["fixed"]["te_version"] = *in.fixed.te_version;
  j["efficiency"] = {{"gemm", in.efficiency.gemm}, {"attention", in.efficiency.attention},
                     {"memory", in.efficiency.memory}};
  nlohmann::json ranked = nlohmann::json::array();
  for (const Candidate& c : r.ranked) {
    const Estimate& e = c.estimate;
    ranked.push_back({{"layout", layout_json(c.layout)},
                      {"estimate",
                       {{"attention_flops", e.attention_flops}, {"gemm_flops", e.gemm_flops},
                        {"attention_s", e.attention_s},         {"gemm_s", e.gemm_s},
                        {"tp_bytes", e.tp_bytes},               {"tp_s", e.tp_s},
                        {"a2a_bytes", e.a2a_bytes},             {"a2a_s", e.a2a_s},
                        {"a2a_in_node", e.a2a_in_node},         {"ring_bytes", e.ring_bytes},
                        {"ring_in_node", e.ring_in_node},       {"ring_step_bytes", e.ring_step_bytes},
                        {"ring_step_compute_s", e.ring_step_compute_s},
                        {"ring_step_transfer_s", e.ring_step_transfer_s},
                        {"ring_exposed_s", e.ring_exposed_s},   {"ring_hidden", e.ring_hidden},
                        {"gather_bytes", e.gather_bytes},       {"gather_s", e.gather_s},
                        {"kv_replication", e.kv_replication},   {"layer_s", e.layer_s},
                        {"microbatches", e.microbatches},       {"bubble", e.bubble},
                        {"step_s", e.step_s},
                        {"activation_gib", e.activation_gib},   {"model_state_gib", e.model_state_gib},
                        {"cp_buffer_gib", e.cp_buffer_gib},     {"memory_gib", e.memory_gib},
                        {"fits", e.fits},                       {"mfu", e.mfu},
                        {"tokens_per_s_per_gpu", e.tokens_per_s}}},
                      {"why", c.why},
                      {"warnings", findings_json(c.warnings)}});
  }
  j["ranked"] = std::move(ranked);
  j["verdict"] = r.verdict;
  nlohmann::json rejected = nlohmann::json::array();
  for (const Rejected& x : r.rejected)
    rejected.push_back({{"layout", layout_json(x.layout)}, {"errors", findings_json(x.errors)}});
  j["rejected"] = std::move(rejected);
  // Input text (a TE version, a GPU name) may hold invalid UTF-8: replaced, never an exception.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace hcp::plan
