#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.uses_comm(kA2aP2p) || f.hcp_sizes.known()) return;
  const std::vector<Related> related =
      f.hcp_sizes.setting ? std::vector<Related>{{f.hcp_sizes.loc(), "hierarchical_context_parallel_sizes is null here"}}
                          : std::vector<Related>{};
  r.report(ctx.anchor({f.cp_comm_type.loc()}),
           std::string("cp_comm_type ") + (f.cp_comm_type_is_list ? "has a layer with " : "is ") +
               "'a2a+p2p' but hierarchical_context_parallel_sizes is not set: Transformer Engine gets no CP group "
               "and trains WITHOUT context parallelism (cp = " + std::to_string(f.cp_size()) + " is silently ignored)",
           "set hierarchical_context_parallel_sizes to [a2a, p2p] with a2a * p2p == context_parallel_size, e.g. [" +
               std::to_string(f.cp_size() > 1 && f.cp_size() % 2 == 0 ? 2 : 1) + ", " +
               std::to_string(f.cp_size() > 1 && f.cp_size() % 2 == 0 ? f.cp_size() / 2 : f.cp_size()) + "]",
           related);
}

}  // namespace

const Rule& rule_hcp001() {
  static const Rule rule{
      {"HCP001", "a2a-p2p-without-sizes", Severity::error,
       "a2a+p2p without hierarchical_context_parallel_sizes silently disables context parallelism",
       {"cp_comm_type is 'a2a+p2p' (as a string, or in any entry of a per-layer list) while "
        "hierarchical_context_parallel_sizes is unset or null.",
        "TEDotProductAttention replaces the CP group with the hierarchical-groups global, which is None without the "
        "sizes. Transformer Engine then computes cp_size = 1 and runs attention without context parallelism. "
        "Training looks healthy and reports impossible throughput (Megatron-Bridge issue 2667: 1937 TFLOP/s/GPU on "
        "an H200 whose dense bf16 peak is about 989). Only Megatron-LM's validate_args and Bridge's config "
        "validation (since PR 2665) check it; code that builds a TransformerConfig directly has no guard.",
        "[model]\ncontext_parallel_size = 4\ncp_comm_type = \"a2a+p2p\"\n# hierarchical_context_parallel_sizes missing",
        "Set hierarchical_context_parallel_sizes = [a2a, p2p] with a2a * p2p == context_parallel_size (a2a inside "
        "the node), or use cp_comm_type = \"p2p\" / \"a2a\".",
        "Megatron-Bridge issue 2667 and PR 2665; Megatron-LM megatron/training/arguments.py validate_args "
        "(\"--hierarchical-context-parallel-sizes must be set when a2a+p2p is used in cp comm\"); "
        "megatron/core/extensions/transformer_engine.py TEDotProductAttention"}},
      &check, "cp_comm_type,hcp_sizes"};
  return rule;
}

}  // namespace hcp::lint
