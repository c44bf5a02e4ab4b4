#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

// Megatron's MambaContextParallel splits each TP rank's Mamba heads over the CP ranks, and its groups either over
// the CP ranks or (fewer groups than CP ranks) replicated across them.
void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  const int64_t tp = f.tp_size(), cp = f.cp_size();
  if (cp <= 1 || !f.mamba_num_heads.known()) return;
  const int64_t heads = *f.mamba_num_heads.value;
  const Location at = ctx.anchor({f.mamba_num_heads.loc(), f.cp.loc()});
  if (heads % tp != 0 || (heads / tp) % cp != 0) {
    r.report(at,
             "mamba_num_heads " + std::to_string(heads) + " is not divisible by tp * cp (" + std::to_string(tp) +
                 " * " + std::to_string(cp) + "): Megatron's Mamba context parallelism asserts \"nheads must be "
                 "evenly divisible by tp_size * cp_size\"",
             "choose tp * cp dividing the Mamba heads");
    return;
  }
  const int64_t groups = f.mamba_num_groups.value.value_or(8);  // TransformerConfig.mamba_num_groups default
  if (groups % tp != 0) return;  // the mixer itself refuses that, before CP is involved
  const int64_t local = groups / tp;
  const bool ok = local < cp ? cp % local == 0 : local % cp == 0;
  if (ok) return;
  r.report(ctx.anchor({f.mamba_num_groups.loc(), f.cp.loc()}),
           "mamba_num_groups " + std::to_string(groups) + " per TP rank (" + std::to_string(local) +
               ") and context_parallel_size " + std::to_string(cp) + " do not divide one another: Megatron's Mamba "
               "context parallelism asserts it at model construction",
           "choose cp dividing the groups per TP rank, or a multiple of them");
}

}  // namespace

const Rule& rule_hcp025() {
  static const Rule rule{
      {"HCP025", "mamba-heads-not-divisible", Severity::error,
       "Mamba heads or groups per TP rank do not divide over the CP ranks",
       {"context_parallel_size > 1 with mamba_num_heads set, and mamba_num_heads is not divisible by "
        "tensor_model_parallel_size * context_parallel_size; or the Mamba groups per TP rank (mamba_num_groups, "
        "default 8, divided by tp) and cp do not divide one another.",
        "Megatron's MambaContextParallel hands each CP rank whole heads and whole groups (or replicates a group "
        "over CP ranks); it asserts both when the model is built (\"nheads must be evenly divisible by tp_size * "
        "cp_size\", \"cp_size must be evenly divisible by ngroups/tp_size\").",
        "[model]\ncontext_parallel_size = 4\nmamba_num_heads = 6",
        "Choose tp and cp so that tp * cp divides the Mamba heads and cp divides (or is a multiple of) the groups "
        "per TP rank.",
        "Megatron-LM megatron/core/ssm/mamba_context_parallel.py (MambaContextParallel.__init__)"}},
      &check, "tp,cp,mamba_num_heads,mamba_num_groups"};
  return rule;
}

}  // namespace hcp::lint
