// Dynamic context parallelism (Megatron-LM dev: --dynamic-context-parallel) and its predecessor, main's
// --hybrid-context-parallel: CP groups of varying size formed from the DP x CP ranks for packed sequences. Both are
// refused at start-up without what validate_args asks of them.
#include <string>

#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const ConfigTree& t = ctx.tree;
  const Setting* dynamic = t.find("model.dynamic_context_parallel");
  const Setting* hybrid = t.find("model.hybrid_context_parallel");
  if (!is_true(dynamic) && !is_true(hybrid)) return;
  const Setting* feature = is_true(dynamic) ? dynamic : hybrid;
  const std::string name = feature->spelled;
  if (is_true(dynamic) && is_true(hybrid)) {
    r.report(hybrid->key_loc, "hybrid_context_parallel and dynamic_context_parallel are both set: Megatron-LM refuses "
                              "it (\"Cannot set both ...\"); hybrid is the deprecated name of dynamic",
             "keep dynamic_context_parallel only");
  }
  if (false_or_unset(t.find("model.calculate_per_token_loss"))) {
    r.report(feature->key_loc, name + " needs --calculate-per-token-loss: Megatron-LM asserts it (the loss is "
                                      "averaged over CP groups of different sizes)",
             "add --calculate-per-token-loss (model.calculate_per_token_loss = true)");
  }
  if (is_true(t.find("dist.use_megatron_fsdp"))) {
    r.report(t.find("dist.use_megatron_fsdp")->key_loc, name + " is not supported with Megatron FSDP (validate_args)",
             "use the distributed optimizer instead of Megatron FSDP, or leave dynamic CP off");
  }
  if (is_true(t.find("model.enable_cuda_graph"))) {
    r.report(t.find("model.enable_cuda_graph")->key_loc, name + " is not supported with --enable-cuda-graph (validate_args)",
             "drop --enable-cuda-graph (dev: --cuda-graph-impl with --pad-packed-seq-alignment)");
  }
  if (const Setting* loader = t.find("dataset.dataloader_type");
      loader && loader->provenance != Provenance::unknown && loader->value.kind == Value::Kind::string &&
      loader->value.text != "single") {
    r.report(loader->key_loc, name + " supports only --dataloader-type single (validate_args), got " + loader->value.display(),
             "use --dataloader-type single");
  }
  if (const Setting* scheduler = t.find("model.sequence_packing_scheduler");
      is_true(dynamic) && scheduler && scheduler->provenance != Provenance::unknown &&
      scheduler->value.kind == Value::Kind::string && scheduler->value.text != "default_dynamic_cp") {
    r.report(scheduler->key_loc, "dynamic context parallelism requires sequence_packing_scheduler=default_dynamic_cp, got " +
                                     scheduler->value.display() + " (ModelParallelConfig.__post_init__)",
             "drop --sequence-packing-scheduler (it defaults to default_dynamic_cp) or set default_dynamic_cp");
  }
  if (is_true(hybrid) && !is_true(dynamic) && ctx.facts.pp.known() && *ctx.facts.pp.value > 1) {
    r.report(ctx.facts.pp.loc(), "hybrid context parallelism is not supported with pipeline parallelism (Megatron-LM main's "
                                 "validate_args)",
             "use pipeline_model_parallel_size 1 with hybrid CP");
  }
  // The largest dynamic CP group is dp x cp; the smallest asked for must fit.
  const Setting* min = t.find("model.min_dynamic_context_parallel_size");
  const Facts& f = ctx.facts;
  if (min && min->value.kind == Value::Kind::integer && min->provenance != Provenance::unknown && f.world_size.known()) {
    const int64_t model = f.tp_size() * f.pp_size();
    if (model > 0 && *f.world_size.value % model == 0 && min->value.integer > *f.world_size.value / model) {
      r.report(min->key_loc, "min_dynamic_context_parallel_size (" + std::to_string(min->value.integer) +
                                 ") exceeds dp * cp (" + std::to_string(*f.world_size.value / model) +
                                 "): Megatron-LM asserts it is at most the DP x CP ranks",
               "lower min_dynamic_context_parallel_size");
    }
  }
}

}  // namespace

const Rule& rule_hcp028() {
  static const Rule rule{
      {"HCP028", "dynamic-cp-requirements", Severity::error,
       "dynamic (or hybrid) context parallelism without what Megatron-LM requires of it",
       {"--dynamic-context-parallel (Megatron-LM dev) or --hybrid-context-parallel (main; deprecated on dev, where it "
        "turns dynamic CP on) is set together with something validate_args refuses: no --calculate-per-token-loss, "
        "Megatron FSDP, --enable-cuda-graph, a dataloader type other than single, a packing scheduler other than "
        "default_dynamic_cp, both flags at once, hybrid CP with pipeline parallelism, or a minimum dynamic CP size "
        "above dp x cp.",
        "Dynamic CP forms CP groups of varying size out of the DP x CP ranks for each packed batch; Megatron-LM "
        "asserts these requirements when the job starts.",
        "[model]\ncontext_parallel_size = 4\ndynamic_context_parallel = true",
        "Add calculate_per_token_loss and keep to the supported combinations.",
        "Megatron-LM megatron/training/arguments.py validate_args (dev, the dynamic_context_parallel block; main, "
        "hybrid_context_parallel), megatron/core/model_parallel_config.py __post_init__ (dev)"}},
      &check, ""};
  return rule;
}

}  // namespace hcp::lint
