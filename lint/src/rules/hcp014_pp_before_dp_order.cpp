#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

// parallel_state.initialize_model_parallel: an order that does not end in pp (tp-cp-ep-pp-dp, from
// --use-tp-pp-dp-mapping) with pp > 1 needs the attention and the expert layers to have the same data-parallel
// size: world / (tp * cp * pp) == world / (etp * ep * pp), i.e. tp * cp == etp * ep (etp defaults to tp, ep to 1).
void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.use_tp_pp_dp_mapping.value.value_or(false) || f.pp_size() <= 1) return;
  const int64_t tp = f.tp_size(), cp = f.cp_size();
  const int64_t ep = f.ep.value.value_or(1), etp = f.etp.value.value_or(tp);
  if (tp * cp == etp * ep) return;
  r.report(f.use_tp_pp_dp_mapping.loc(),
           "order tp-cp-ep-pp-dp (use_tp_pp_dp_mapping) with pipeline_model_parallel_size " + std::to_string(f.pp_size()) +
               " > 1 needs tp * cp (" + std::to_string(tp) + " * " + std::to_string(cp) + ") == etp * ep (" +
               std::to_string(etp) + " * " + std::to_string(ep) + "): initialize_model_parallel refuses it",
           "drop use_tp_pp_dp_mapping (use the default tp-cp-ep-dp-pp order), or choose ep and etp with etp * ep == "
           "tp * cp");
}

}  // namespace

const Rule& rule_hcp014() {
  static const Rule rule{
      {"HCP014", "pp-before-dp-order", Severity::error,
       "order tp-cp-ep-pp-dp with pp > 1 and different attention and expert data-parallel sizes",
       {"dist.use_tp_pp_dp_mapping (Megatron-LM --use-tp-pp-dp-mapping) is true, pipeline_model_parallel_size > 1, "
        "and tensor_model_parallel_size * context_parallel_size differs from expert_tensor_parallel_size (default: "
        "tp) * expert_model_parallel_size (default 1).",
        "initialize_model_parallel refuses it (\"When not using pp-last rank ordering, the data parallel size of the "
        "attention and moe layers must be the same\"): with pp not last, the attention grid (dp = world / (tp * cp "
        "* pp)) and the expert grid (world / (etp * ep * pp)) must agree. With cp > 1 and no experts they never do.",
        "[dist]\nuse_tp_pp_dp_mapping = true\n[model]\npipeline_model_parallel_size = 2\ncontext_parallel_size = 2",
        "Use the default order, or make etp * ep equal tp * cp.",
        "Megatron-LM megatron/core/parallel_state.py initialize_model_parallel"}},
      &check, "tp,cp,pp,ep,etp,use_tp_pp_dp_mapping"};
  return rule;
}

}  // namespace hcp::lint
