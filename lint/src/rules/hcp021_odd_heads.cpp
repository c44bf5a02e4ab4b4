#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.own_attention.empty()) return;  // Transformer Engine's behaviour; MindSpeed, torchtitan run their own kernels
  if (!a2a_level(f) || f.cp_size() <= 1 || !f.num_attention_heads.known()) return;
  const int64_t tp = f.tp_size();
  const int64_t heads = *f.num_attention_heads.value, groups = f.query_groups().value_or(heads);
  if (tp <= 0 || heads % tp != 0 || groups % tp != 0) return;  // HCP009's business
  const bool odd_heads = (heads / tp) % 2 != 0, odd_groups = (groups / tp) % 2 != 0;
  if (!odd_heads && !odd_groups) return;
  const Location loc = odd_heads || !f.num_query_groups.known() ? f.num_attention_heads.loc() : f.num_query_groups.loc();
  r.report(loc,
           std::string(odd_heads ? "attention heads" : "query groups") + " per tensor-parallel rank (" +
               std::to_string(odd_heads ? heads / tp : groups / tp) +
               ") are odd: Transformer Engine disables FusedAttention for a2a and a2a+p2p",
           "use an even number of heads and query groups per TP rank to keep FusedAttention");
}

}  // namespace

const Rule& rule_hcp021() {
  static const Rule rule{
      {"HCP021", "odd-heads-with-a2a", Severity::warning, "a2a or a2a+p2p with an odd number of heads per TP rank",
       {"A layer uses a2a or a2a+p2p with context_parallel_size > 1, and num_attention_heads / tp or "
        "num_query_groups / tp is odd.",
        "Transformer Engine disables FusedAttention (cuDNN) for all-to-all CP with odd head counts and falls back "
        "to a slower backend, without an error.",
        "[model]\ntensor_model_parallel_size = 2\nnum_attention_heads = 6\ncontext_parallel_size = 3\n"
        "cp_comm_type = \"a2a\"",
        "Choose tp so that heads and query groups per rank are even.",
        "Transformer Engine dot_product_attention/utils.py get_attention_backend"}},
      &check, "tp,cp,cp_comm_type,hcp_sizes,num_attention_heads,num_query_groups"};
  return rule;
}

}  // namespace hcp::lint
