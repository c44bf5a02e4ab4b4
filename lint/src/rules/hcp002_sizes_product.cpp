#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.hcp_sizes.known()) return;
  int64_t product = 1;
  for (int64_t s : *f.hcp_sizes.value) {
    if (__builtin_mul_overflow(product, s, &product)) {
      r.report(f.hcp_sizes.loc(), "product of hierarchical_context_parallel_sizes " + list_text(*f.hcp_sizes.value) +
                                      " overflows 64 bits", "use the real group sizes");
      return;
    }
  }
  if (product == f.cp_size()) return;
  std::vector<Related> related;
  if (f.cp.setting) related.push_back({f.cp.loc(), "context_parallel_size is " + std::to_string(f.cp_size()) + " here"});
  r.report(f.hcp_sizes.loc(),
           "product of hierarchical_context_parallel_sizes " + list_text(*f.hcp_sizes.value) + " (=" +
               std::to_string(product) + ") must equal context_parallel_size (=" + std::to_string(f.cp_size()) + ")",
           "make the levels multiply to context_parallel_size", related);
}

}  // namespace

const Rule& rule_hcp002() {
  static const Rule rule{
      {"HCP002", "sizes-product-mismatch", Severity::error,
       "the product of hierarchical_context_parallel_sizes differs from context_parallel_size",
       {"hierarchical_context_parallel_sizes is set and the product of its entries is not context_parallel_size.",
        "Megatron asserts it without a message (Bridge: \"Product of hierarchical_context_parallel_sizes ... must "
        "equal context_parallel_size\"); Megatron-Core 0.10-0.12 silently built wrong sub-grids instead.",
        "[model]\ncontext_parallel_size = 8\nhierarchical_context_parallel_sizes = [2, 2]",
        "Choose sizes whose product is context_parallel_size, level 0 (a2a) first: [2, 4] for cp 8.",
        "Megatron-LM megatron/core/parallel_state.py create_hierarchical_groups; Megatron-Bridge "
        "src/megatron/bridge/training/config.py"}},
      &check, "cp,hcp_sizes"};
  return rule;
}

}  // namespace hcp::lint
