#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.use_decentralized_pg.value.value_or(false) || !f.hcp_sizes.known()) return;
  r.report(f.use_decentralized_pg.loc(),
           "dist.use_decentralized_pg is true with hierarchical_context_parallel_sizes set: decentralized process "
           "groups do not build hierarchical CP groups",
           "set dist.use_decentralized_pg = false to use hierarchical CP",
           {{f.hcp_sizes.loc(), "hierarchical sizes are set here"}});
}

}  // namespace

const Rule& rule_hcp006() {
  static const Rule rule{
      {"HCP006", "decentralized-pg-with-hcp", Severity::error,
       "decentralized process groups cannot build hierarchical CP groups",
       {"dist.use_decentralized_pg is true while hierarchical_context_parallel_sizes is set.",
        "Bridge's decentralized process groups (HyperCommGrid) build flat CP groups only. Older Bridge left the "
        "hierarchical groups empty and trained flat without a word; current Bridge raises NotImplementedError "
        "(\"Decentralized process groups (use_decentralized_pg=True) do not support "
        "hierarchical_context_parallel_sizes\").",
        "[dist]\nuse_decentralized_pg = true\n[model]\nhierarchical_context_parallel_sizes = [2, 2]",
        "Set dist.use_decentralized_pg = false, or drop hierarchical CP.",
        "Megatron-Bridge src/megatron/bridge/training/initialize.py"}},
      &check, "hcp_sizes,use_decentralized_pg"};
  return rule;
}

}  // namespace hcp::lint
