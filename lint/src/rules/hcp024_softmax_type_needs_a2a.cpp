#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.own_attention.empty()) return;  // Transformer Engine's behaviour; MindSpeed, torchtitan run their own kernels
  if (f.cp_size() <= 1 || !f.softmax_type.known() || *f.softmax_type.value == "vanilla") return;
  std::string other;
  for (const std::string& t : f.comm_types()) {
    if (t != "a2a" && other.empty()) other = t;
  }
  if (other.empty()) return;
  r.report(ctx.anchor({f.softmax_type.loc(), f.cp_comm_type.loc(), f.cp.loc()}),
           "softmax_type '" + *f.softmax_type.value + "' with context_parallel_size " + std::to_string(f.cp_size()) +
               " runs only with cp_comm_type 'a2a', not '" + other +
               "': Transformer Engine stops at the first forward",
           "set cp_comm_type = \"a2a\" (its size must divide the attention heads per TP rank), or softmax_type = "
           "\"vanilla\"",
           {{f.cp_comm_type.setting ? f.cp_comm_type.loc() : f.cp.loc(), "the CP communication is chosen here"}});
}

}  // namespace

const Rule& rule_hcp024() {
  static const Rule rule{
      {"HCP024", "softmax-type-needs-a2a", Severity::error,
       "a non-vanilla softmax_type (attention sinks) with context parallelism other than a2a",
       {"context_parallel_size > 1, softmax_type is 'off-by-one' or 'learnable' (attention sinks, as in gpt-oss), "
        "and cp_comm_type (or a layer of a per-layer list) is not 'a2a' - p2p by default.",
        "Transformer Engine's attention_with_cp asserts it (\"Context parallelism only supports softmax_type=... "
        "with cp_comm_type = 'a2a'!\"), at the first forward step, after the job has started. It also needs the "
        "FusedAttention backend, and before cuDNN 9.18 not the thd format.",
        "[model]\ncontext_parallel_size = 2\nsoftmax_type = \"learnable\"",
        "Use cp_comm_type = \"a2a\" with this softmax, or the vanilla softmax.",
        "Transformer Engine transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py "
        "(attention_with_cp); Megatron-LM megatron/core/transformer/transformer_config.py (softmax_type)"}},
      &check, "cp,cp_comm_type,softmax_type"};
  return rule;
}

}  // namespace hcp::lint
