#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.hcp_sizes.known() || f.hcp_sizes.value->size() < 2) return;
  const auto& sizes = *f.hcp_sizes.value;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] != 1) continue;
    const std::string fallback = sizes.size() == 2 ? (k == 0 ? "plain p2p" : "plain a2a") : "fewer levels";
    r.report(f.hcp_sizes.loc(),
             "hierarchical level " + std::to_string(k) + " of " + list_text(sizes) +
                 " has size 1: Transformer Engine silently falls back to " + fallback,
             "say what runs: cp_comm_type = \"" + std::string(k == 0 ? "p2p" : "a2a") +
                 "\" without hierarchical sizes");
    return;
  }
}

}  // namespace

const Rule& rule_hcp008() {
  static const Rule rule{
      {"HCP008", "level-of-size-one", Severity::warning, "a hierarchical level of size 1",
       {"hierarchical_context_parallel_sizes has an entry equal to 1.",
        "With [1, N] the a2a level is empty and Transformer Engine runs plain p2p; with [N, 1] it runs plain a2a. "
        "Nothing says so, and the extra groups still cost NCCL communicators.",
        "[model]\ncontext_parallel_size = 4\ncp_comm_type = \"a2a+p2p\"\nhierarchical_context_parallel_sizes = [1, 4]",
        "Configure the scheme that actually runs (p2p or a2a) without hierarchical sizes.",
        "Transformer Engine context_parallel.py (a2a+p2p with a level of size 1)"}},
      &check, "hcp_sizes"};
  return rule;
}

}  // namespace hcp::lint
