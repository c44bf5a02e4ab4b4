#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.num_attention_heads.known()) return;
  const int64_t tp = f.tp_size();
  const int64_t heads = *f.num_attention_heads.value;
  const int64_t groups = f.query_groups().value_or(heads);
  const Location heads_loc = f.num_attention_heads.loc();
  const Location groups_loc = f.num_query_groups.known() ? f.num_query_groups.loc() : heads_loc;
  if (tp <= 0) return;
  if (heads % tp != 0) {
    r.report(heads_loc, "num_attention_heads (" + std::to_string(heads) + ") is not divisible by "
                            "tensor_model_parallel_size (" + std::to_string(tp) + ")",
             "choose a tensor parallel size that divides the heads");
    return;
  }
  if (groups % tp != 0) {
    r.report(groups_loc, "num_query_groups (" + std::to_string(groups) + ") is not divisible by "
                             "tensor_model_parallel_size (" + std::to_string(tp) + ")",
             "choose a tensor parallel size that divides the query groups");
    return;
  }
  const auto a2a = a2a_level(f);
  if (!a2a || a2a->size <= 1) return;
  for (auto [count, name, loc] : {std::tuple{heads / tp, "num_attention_heads", heads_loc},
                                  std::tuple{groups / tp, "num_query_groups", groups_loc}}) {
    if (count % a2a->size == 0) continue;
    // MindSpeed repeats K/V heads before its Ulysses all-to-all (--kv-head-repeat-before-uly-alltoall, on by
    // default: mindspeed core/context_parallel/ulysses_context_parallel.py:187-189): only the query heads split.
    if (f.own_attention == "MindSpeed" && std::string_view(name) == "num_query_groups") continue;
    r.report(loc,
             std::string(name) + " per tensor-parallel rank (" + std::to_string(count * tp) + " / " +
                 std::to_string(tp) + " = " + std::to_string(count) + ") is not divisible by the a2a size " +
                 std::to_string(a2a->size) + " (" + a2a->what + "): all-to-all scatters heads",
             "make the a2a size divide " + std::string(name) + " / tp, or use p2p for the remaining CP factor",
             {{ctx.anchor({f.hcp_sizes.loc(), f.cp_comm_type.loc(), f.cp.loc()}), "the a2a size comes from here"}});
    return;
  }
}

}  // namespace

const Rule& rule_hcp009() {
  static const Rule rule{
      {"HCP009", "heads-not-divisible", Severity::error,
       "attention heads or query groups per TP rank are not divisible by the a2a size",
       {"num_attention_heads or num_query_groups is not divisible by tensor_model_parallel_size; or, with a2a "
        "(a2a size = context_parallel_size) or a2a+p2p (a2a size = hierarchical level 0), the heads or query groups "
        "per TP rank are not divisible by the a2a size.",
        "All-to-all CP scatters heads over the a2a group. Transformer Engine asserts it for pure a2a (\"cp_comm_type="
        "'a2a' requires num_heads % cp_size == 0 for Q, K, V\"); for a2a+p2p there is no assert and a reshape fails "
        "at the first forward.",
        "[model]\ntensor_model_parallel_size = 2\nnum_attention_heads = 32\nnum_query_groups = 2\n"
        "context_parallel_size = 4\ncp_comm_type = \"a2a+p2p\"\nhierarchical_context_parallel_sizes = [2, 2]",
        "Use an a2a size that divides num_query_groups / tp (CP beyond the KV heads goes to the p2p level). The rule "
        "states Transformer Engine's limit: hcp's own runtime (CpContext, hcp attn) replicates the KV heads when "
        "num_query_groups divides the a2a size, and still needs the a2a size to divide the attention heads.",
        "Transformer Engine context_parallel.py (AttnFuncWithCPAndQKVOA2A); Megatron-Bridge "
        "docs/training/hierarchical-context-parallel.md"}},
      &check, "tp,cp,cp_comm_type,hcp_sizes,num_attention_heads,num_query_groups"};
  return rule;
}

}  // namespace hcp::lint
