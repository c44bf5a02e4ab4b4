#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.own_attention.empty()) return;  // Transformer Engine's behaviour; MindSpeed, torchtitan run their own kernels
  if (!f.attention_bias.known() || f.cp_size() <= 1) return;
  for (const char* type : {kA2aP2p, "a2a", "all_gather"}) {
    if (!f.uses_comm(type)) continue;
    r.report(f.attention_bias.loc(),
             "attention bias '" + *f.attention_bias.value + "' is not supported with cp_comm_type='" + type + "'",
             "use cp_comm_type = \"p2p\" (post_scale_bias with FusedAttention only) or no attention bias",
             {{ctx.anchor({f.cp_comm_type.loc()}), "the CP communication type is set here"}});
    return;
  }
}

}  // namespace

const Rule& rule_hcp017() {
  static const Rule rule{
      {"HCP017", "attention-bias-with-a2a", Severity::error, "attention bias with a2a+p2p, a2a or all_gather",
       {"model.core_attention_bias_type is not no_bias while context_parallel_size > 1 and a layer uses a2a+p2p, "
        "a2a or all_gather.",
        "Transformer Engine refuses it (\"{bias} bias type is not supported with hierarchical CP implementation "
        "yet!\"); p2p supports post_scale_bias with FusedAttention only.",
        "[model]\ncontext_parallel_size = 2\ncp_comm_type = \"a2a\"\ncore_attention_bias_type = \"post_scale_bias\"",
        "Use p2p, or drop the attention bias.",
        "Transformer Engine context_parallel.py"}},
      &check, "cp,cp_comm_type,attention_bias"};
  return rule;
}

}  // namespace hcp::lint
