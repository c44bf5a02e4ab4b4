#include "hcp/checked_math.hpp"
#include "hcp/error.hpp"
#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (f.hetero_meshes) return;  // FlagScale's meshes: each has its own sizes, and Megatron's check is skipped
  const Location model_loc = ctx.anchor({f.cp.loc(), f.tp.loc(), f.pp.loc()});
  if (!f.world_size.known()) {
    if (f.cp_size() > 1) {
      r.unknown(model_loc, "world size unknown: cannot check that it is divisible by tp * pp * cp",
                "pass --world-size (or --nodes and --gpus-per-node), or set [cluster] world_size");
    }
    return;
  }
  int64_t model = 0;
  try {
    model = checked_mul(checked_mul(f.tp_size(), f.pp_size(), "tp * pp"), f.cp_size(), "tp * pp * cp");
  } catch (const Error& e) {
    r.report(model_loc, e.what(), "use the real parallel sizes");
    return;
  }
  if (model <= 0 || *f.world_size.value % model == 0) return;
  r.report(ctx.anchor({f.world_size.loc(), model_loc}),
           "world size (" + std::to_string(*f.world_size.value) + ") is not divisible by tp * pp * cp (" +
               std::to_string(f.tp_size()) + " * " + std::to_string(f.pp_size()) + " * " + std::to_string(f.cp_size()) +
               " = " + std::to_string(model) + ")",
           "make the world size a multiple of " + std::to_string(model) + ", or change the parallel sizes",
           {{model_loc, "the parallel sizes are set here"}});
}

}  // namespace

const Rule& rule_hcp010() {
  static const Rule rule{
      {"HCP010", "world-not-divisible", Severity::error, "world size is not divisible by tp * pp * cp",
       {"The world size (from [cluster], torchrun's --nnodes * --nproc_per_node, or --world-size) is not a "
        "multiple of tensor_model_parallel_size * pipeline_model_parallel_size * context_parallel_size. When the "
        "world size is unknown the rule says so at info level.",
        "Megatron refuses to start (\"world size (64) is not divisible by total_model_size (128)\"), after the job "
        "has been scheduled and the GPUs allocated.",
        "[cluster]\nworld_size = 64\n[model]\ntensor_model_parallel_size = 8\npipeline_model_parallel_size = 4\n"
        "context_parallel_size = 4",
        "Change the parallel sizes or the number of nodes.",
        "Megatron-LM megatron/core/parallel_state.py initialize_model_parallel"}},
      &check, "world_size,tp,pp,cp"};
  return rule;
}

}  // namespace hcp::lint
