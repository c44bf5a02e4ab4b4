#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.cp_comm_type_is_list || !f.num_layers.known()) return;
  const auto n = static_cast<int64_t>(f.cp_comm_type.value->size());
  if (n == *f.num_layers.value) return;
  r.report(f.cp_comm_type.loc(),
           "per-layer cp_comm_type has " + std::to_string(n) + " entries but num_layers is " +
               std::to_string(*f.num_layers.value),
           "give one entry per transformer layer, or a single string for all layers",
           {{f.num_layers.loc(), "num_layers is " + std::to_string(*f.num_layers.value) + " here"}});
}

}  // namespace

const Rule& rule_hcp013() {
  static const Rule rule{
      {"HCP013", "comm-type-list-length", Severity::error, "per-layer cp_comm_type list length differs from num_layers",
       {"cp_comm_type is a list (one entry per layer) whose length is not num_layers. Megatron-LM flags with a "
        "single value are a string, not a list.",
        "TransformerConfig refuses it (\"Length of cp_comm_type (2) should equal to the total number of transformer "
        "layers (4)!\").",
        "[model]\nnum_layers = 4\ncp_comm_type = [\"p2p\", \"a2a\"]",
        "One entry per layer, or a single string.",
        "Megatron-LM megatron/core/transformer/transformer_config.py"}},
      &check, "cp_comm_type,num_layers"};
  return rule;
}

}  // namespace hcp::lint
