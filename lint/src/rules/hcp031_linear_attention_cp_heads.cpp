// Gated DeltaNet (linear attention, Qwen3-Next) under CP (Megatron-LM dev): its layers do not use cp_comm_type but
// linear_cp_mode. "headwise" splits the linear-attention heads over the CP group, so each TP rank's key and value
// heads must divide by cp; "chunkwise" (the default) keeps them and splits the sequence.
#include <string>

#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const ConfigTree& t = ctx.tree;
  const Facts& f = ctx.facts;
  const Setting* variant = written(t, "model.experimental_attention_variant");
  if (!variant) variant = written(t, "model.linear_attention_type");  // the deprecated name, folded into it
  if (string_value(variant) != "gated_delta_net" || !f.cp.known() || f.cp_size() <= 1) return;
  const Setting* mode_setting = written(t, "model.linear_cp_mode");
  const std::string mode = mode_setting ? string_value(mode_setting) : "chunkwise";
  if (mode != "headwise" && mode != "chunkwise") {
    r.report(mode_setting->key_loc, "linear_cp_mode must be headwise or chunkwise with context parallelism, got " +
                                        mode_setting->value.display() + " (TransformerConfig.__post_init__)",
             "use chunkwise (the default) or headwise");
    return;
  }
  if (const Setting* pad = written(t, "model.gdn_conv_pad_alignment"); pad && mode == "chunkwise") {
    r.report(pad->key_loc, "gdn_conv_pad_alignment is refused with linear_cp_mode chunkwise and context_parallel_size " +
                               std::to_string(f.cp_size()) + ": padding chunk-local causal-conv inputs changes later "
                               "chunks",
             "drop gdn_conv_pad_alignment, or use linear_cp_mode headwise");
  }
  if (mode != "headwise") return;
  const int64_t parallel = f.tp_size() * f.cp_size();
  for (const char* key : {"model.linear_num_key_heads", "model.linear_num_value_heads"}) {
    const Setting* heads = written(t, key);
    if (!heads || heads->value.kind != Value::Kind::integer || heads->value.integer % parallel == 0) continue;
    r.report(heads->key_loc, heads->spelled + " (" + std::to_string(heads->value.integer) +
                                 ") is not divisible by tensor_model_parallel_size * context_parallel_size (" +
                                 std::to_string(f.tp_size()) + " * " + std::to_string(f.cp_size()) + " = " +
                                 std::to_string(parallel) + "): headwise CP splits each TP rank's heads over the CP "
                                 "group",
             "use linear_cp_mode chunkwise, or a CP size that divides the heads per TP rank");
  }
}

}  // namespace

const Rule& rule_hcp031() {
  static const Rule rule{
      {"HCP031", "linear-attention-cp-heads", Severity::error,
       "Gated DeltaNet layers cannot split their heads, or their mode, over the CP group",
       {"A model with Gated DeltaNet linear attention (experimental_attention_variant or the deprecated "
        "linear_attention_type gated_delta_net) and context_parallel_size > 1: linear_cp_mode is neither headwise "
        "nor chunkwise; with headwise, linear_num_key_heads or linear_num_value_heads is not divisible by tp * cp; "
        "with chunkwise, gdn_conv_pad_alignment is set.",
        "Linear-attention layers ignore cp_comm_type: headwise CP gives each CP rank a share of each TP rank's heads, "
        "so the heads must divide; Megatron-Core asserts it in TransformerConfig and GatedDeltaNet at start-up.",
        "[model]\ncontext_parallel_size = 4\nexperimental_attention_variant = \"gated_delta_net\"\n"
        "linear_cp_mode = \"headwise\"\nlinear_num_key_heads = 6",
        "Use linear_cp_mode chunkwise (the default), or sizes where tp * cp divides both head counts.",
        "Megatron-LM megatron/core/transformer/transformer_config.py __post_init__ (dev: linear_cp_mode, the linear "
        "head parallel size), megatron/core/ssm/gated_delta_net/common.py (headwise CP)"}},
      &check, ""};
  return rule;
}

}  // namespace hcp::lint
