#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.hcp_sizes.known() || f.uses_comm(kA2aP2p)) return;
  std::string types;
  for (const std::string& t : f.comm_types()) types += (types.empty() ? "" : ", ") + t;
  r.report(f.hcp_sizes.loc(),
           "hierarchical_context_parallel_sizes " + list_text(*f.hcp_sizes.value) +
               " is set but no layer uses a2a+p2p (cp_comm_type: " + types +
               "): the hierarchical groups are built for nothing",
           "remove hierarchical_context_parallel_sizes, or set cp_comm_type = \"a2a+p2p\"");
}

}  // namespace

const Rule& rule_hcp015() {
  static const Rule rule{
      {"HCP015", "sizes-unused", Severity::warning, "hierarchical sizes set but no layer uses a2a+p2p",
       {"hierarchical_context_parallel_sizes is set while cp_comm_type (every layer) is something other than "
        "a2a+p2p (the default is p2p).",
        "Megatron builds the hierarchical sub-groups anyway: extra NCCL communicators and memory that nothing uses. "
        "Usually a forgotten cp_comm_type.",
        "[model]\ncontext_parallel_size = 4\nhierarchical_context_parallel_sizes = [2, 2]",
        "Set cp_comm_type = \"a2a+p2p\" or remove the sizes.",
        "Megatron-LM megatron/core/parallel_state.py initialize_model_parallel"}},
      &check, "cp_comm_type,hcp_sizes"};
  return rule;
}

}  // namespace hcp::lint
