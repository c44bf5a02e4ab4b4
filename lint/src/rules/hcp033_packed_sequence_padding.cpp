// NeMo-RL's sequence packing under CP: each sequence of a packed batch is padded to a multiple of
// policy.make_sequence_length_divisible_by, and Megatron needs each to split into 2 x cp chunks (and, with
// sequence parallelism, into tp parts of those): NeMo-RL asserts the multiple covers both before the first step.
#include <string>

#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const ConfigTree& t = ctx.tree;
  const Facts& f = ctx.facts;
  const Setting* pad = written(t, "framework.pad_sequences_to_multiple_of");
  if (!pad || pad->value.kind != Value::Kind::integer || !is_true(written(t, "framework.sequence_packing"))) return;
  // Dynamic batching takes the other branch (megatron/data.py: it is tested first); NeMo-RL refuses both at once.
  if (is_true(written(t, "framework.dynamic_batching"))) return;
  if (!f.cp.known() || !f.tp.known()) return;
  const bool sp = is_true(written(t, "model.sequence_parallel"));
  int64_t factor = 1;
  std::string why;
  if (f.cp_size() > 1) {
    factor *= 2 * f.cp_size();
    why = "2 * context_parallel_size";
  }
  if (f.tp_size() > 1 && sp) {
    factor *= f.tp_size();
    why += std::string(why.empty() ? "" : " * ") + "tensor_model_parallel_size (sequence parallel)";
  }
  if (factor <= 1 || pad->value.integer % factor == 0) return;
  r.report(pad->key_loc, pad->spelled + " (" + std::to_string(pad->value.integer) + ") is not a multiple of " + why +
                             " (" + std::to_string(factor) + "): NeMo-RL asserts it when it packs the first batch, "
                             "since each packed sequence must split into the CP chunks and TP parts",
           "set make_sequence_length_divisible_by to a multiple of " + std::to_string(factor) +
               " (${mul:${mul:${policy.megatron_cfg.tensor_model_parallel_size}, "
               "${policy.megatron_cfg.context_parallel_size}}, 2} as NeMo-RL's own recipes write it)");
}

}  // namespace

const Rule& rule_hcp033() {
  static const Rule rule{
      {"HCP033", "packed-sequence-padding", Severity::error,
       "NeMo-RL pads packed sequences to a multiple the CP and TP split does not divide",
       {"NeMo-RL with sequence packing (and not dynamic batching) and a Megatron policy or value model: "
        "make_sequence_length_divisible_by is not a multiple of 2 * context_parallel_size (when cp > 1) times "
        "tensor_model_parallel_size (when tp > 1 with sequence parallelism).",
        "Each sequence of a packed batch is padded to that multiple; under CP Megatron cuts every sequence into "
        "2 x cp load-balanced chunks, and sequence parallelism splits a CP rank's part over TP. NeMo-RL asserts "
        "the multiple in megatron/data.py when it packs the first batch, after the cluster and model are up.",
        "policy:\n  make_sequence_length_divisible_by: ${policy.megatron_cfg.tensor_model_parallel_size}\n"
        "  sequence_packing:\n    enabled: true\n  megatron_cfg:\n    enabled: true\n"
        "    tensor_model_parallel_size: 4\n    context_parallel_size: 2\n    sequence_parallel: true",
        "Use a multiple of 2 * cp * tp (with sequence parallelism), or of 2 * cp.",
        "NeMo-RL nemo_rl/models/megatron/data.py _get_pack_sequence_parameters_for_megatron (minimum_pad_factor); "
        "github.com/NVIDIA-NeMo/RL pull 3563"}},
      &check, ""};
  return rule;
}

}  // namespace hcp::lint
