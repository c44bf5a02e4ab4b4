// How a sequence is cut over the CP ranks (Megatron-LM dev, TransformerConfig.cp_partition_mode): "zigzag", the
// load-balanced 2 x cp chunks every CP scheme uses, or "contiguous", one chunk per rank, which only some attention
// variants support and only on THD batches from a packing scheduler.
#include <string>

#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const ConfigTree& t = ctx.tree;
  const Setting* mode = written(t, "model.cp_partition_mode");
  const bool dynamic = is_true(written(t, "model.dynamic_context_parallel"));
  if (!mode || mode->value.kind != Value::Kind::string) return;
  if (mode->value.text != "zigzag" && mode->value.text != "contiguous") {
    r.report(mode->key_loc, "unsupported cp_partition_mode " + mode->value.display() + ": zigzag or contiguous",
             "use zigzag (the default)");
    return;
  }
  if (!(ctx.facts.cp.known() && ctx.facts.cp_size() > 1) && !dynamic) return;
  const Setting* variant_setting = written(t, "model.experimental_attention_variant");
  if (!variant_setting) variant_setting = written(t, "model.linear_attention_type");
  const std::string variant = string_value(variant_setting);
  if (mode->value.text == "zigzag") {
    if (variant == "dsv4_hybrid")
      r.report(mode->key_loc, "DeepSeek-V4 hybrid attention with context parallelism requires cp_partition_mode "
                              "contiguous (TransformerConfig.__post_init__)",
               "set cp_partition_mode to contiguous");
    return;
  }
  if (!written(t, "model.sequence_packing_scheduler") && !dynamic) {
    r.report(mode->key_loc, "cp_partition_mode contiguous with context parallelism needs THD batches from a "
                            "sequence_packing_scheduler; the BSHD path slices zigzag only",
             "set sequence_packing_scheduler (dp_balanced), or use zigzag");
  }
  if (is_true(written(t, "model.multi_latent_attention")) && variant != "dsv4_hybrid") {
    r.report(mode->key_loc, "cp_partition_mode contiguous is not supported with multi_latent_attention outside "
                            "dsv4_hybrid",
             "use zigzag for MLA models");
  }
  if (variant != "dsv4_hybrid" && variant != "gated_delta_net") {
    r.report(mode->key_loc, "cp_partition_mode contiguous with context parallelism requires "
                            "experimental_attention_variant dsv4_hybrid or gated_delta_net" +
                                std::string(variant.empty() ? "" : ", got " + variant_setting->value.display()),
             "use zigzag (the default) for standard attention");
  } else if (variant == "gated_delta_net" && string_value(written(t, "model.linear_cp_mode")) == "headwise") {
    r.report(mode->key_loc, "cp_partition_mode contiguous is incompatible with gated_delta_net linear_cp_mode headwise",
             "use linear_cp_mode chunkwise, or zigzag");
  }
}

}  // namespace

const Rule& rule_hcp032() {
  static const Rule rule{
      {"HCP032", "cp-partition-mode", Severity::error,
       "a CP partition mode the attention variant or the batch layout does not support",
       {"cp_partition_mode contiguous with context parallelism (or dynamic CP) but no sequence_packing_scheduler, "
        "with multi_latent_attention outside dsv4_hybrid, with an attention variant other than dsv4_hybrid or "
        "gated_delta_net, or with gated_delta_net's headwise linear CP; zigzag with dsv4_hybrid; any other value.",
        "Every CP scheme of standard attention cuts the sequence into 2 x cp zigzag chunks for load balance; "
        "contiguous chunks exist only for the variants built for them, on THD batches. Megatron-Core raises at "
        "start-up.",
        "[model]\ncontext_parallel_size = 4\ncp_partition_mode = \"contiguous\"",
        "Keep zigzag (the default) unless the model is DeepSeek-V4 hybrid or Gated DeltaNet with packed batches.",
        "Megatron-LM megatron/core/transformer/transformer_config.py __post_init__ (dev: cp_partition_mode)"}},
      &check, ""};
  return rule;
}

}  // namespace hcp::lint
