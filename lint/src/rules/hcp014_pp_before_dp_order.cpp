#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.use_tp_pp_dp_mapping.value.value_or(false) || f.pp_size() <= 1 || f.cp_size() <= 1) return;
  r.report(f.use_tp_pp_dp_mapping.loc(),
           "order tp-cp-ep-pp-dp (use_tp_pp_dp_mapping) with pipeline_model_parallel_size (" +
               std::to_string(f.pp_size()) + ") > 1 and context_parallel_size (" + std::to_string(f.cp_size()) +
               ") > 1 fails in initialize_model_parallel",
           "drop use_tp_pp_dp_mapping (use the default tp-cp-ep-dp-pp order)");
}

}  // namespace

const Rule& rule_hcp014() {
  static const Rule rule{
      {"HCP014", "pp-before-dp-order", Severity::error, "order tp-cp-ep-pp-dp with pp > 1 and cp > 1",
       {"dist.use_tp_pp_dp_mapping (Megatron-LM --use-tp-pp-dp-mapping) is true with pipeline_model_parallel_size > "
        "1 and context_parallel_size > 1.",
        "initialize_model_parallel refuses it (\"When not using pp-last rank ordering, the data parallel size of the "
        "attention and moe layers must be the same\").",
        "[dist]\nuse_tp_pp_dp_mapping = true\n[model]\npipeline_model_parallel_size = 2\ncontext_parallel_size = 2",
        "Use the default order.",
        "Megatron-LM megatron/core/parallel_state.py initialize_model_parallel"}},
      &check, "tp,cp,pp,ep,etp,use_tp_pp_dp_mapping"};
  return rule;
}

}  // namespace hcp::lint
