#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.uses_comm(kA2aP2p) || !f.hcp_sizes.known() || f.hcp_sizes.value->size() == 2) return;
  r.report(f.hcp_sizes.loc(),
           "a2a+p2p needs exactly 2 hierarchical levels [a2a, p2p], got " +
               std::to_string(f.hcp_sizes.value->size()) + ": " + list_text(*f.hcp_sizes.value),
           "use two levels: [a2a size inside the node, p2p size across nodes]",
           {{ctx.anchor({f.cp_comm_type.loc()}), "a2a+p2p is selected here"}});
}

}  // namespace

const Rule& rule_hcp007() {
  static const Rule rule{
      {"HCP007", "a2a-p2p-level-count", Severity::error, "a2a+p2p with a number of levels other than 2",
       {"cp_comm_type uses a2a+p2p and hierarchical_context_parallel_sizes does not have exactly two entries.",
        "Megatron builds any number of levels, but Transformer Engine's a2a+p2p takes exactly "
        "cp_group = [a2a_cp_group, p2p_cp_group] and fails at the first forward (\"CP implementation a2a+p2p "
        "requires cp_group = [a2a_cp_group, p2p_cp_group]!\").",
        "[model]\ncontext_parallel_size = 8\ncp_comm_type = \"a2a+p2p\"\nhierarchical_context_parallel_sizes = [2, 2, 2]",
        "Use two levels, e.g. [2, 4].",
        "Transformer Engine transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py"}},
      &check, "cp_comm_type,hcp_sizes"};
  return rule;
}

}  // namespace hcp::lint
