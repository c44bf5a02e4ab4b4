#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (f.tp_size() <= 1 && f.cp_size() <= 1) return;
  if (f.gpu.known() && is_blackwell_or_newer(*f.gpu.value)) return;
  const auto& conn = f.cuda_device_max_connections;
  if (conn.known() && *conn.value == "1") return;
  const std::string gpu = f.gpu.known() ? "on " + *f.gpu.value : "on an unknown GPU (assumed pre-Blackwell)";
  const std::string state = conn.known() ? "is '" + *conn.value + "'" : "is not set";
  r.report(ctx.anchor({conn.loc(), f.cp.loc(), f.tp.loc()}),
           "CUDA_DEVICE_MAX_CONNECTIONS " + state + " " + gpu + " with tensor_model_parallel_size " +
               std::to_string(f.tp_size()) + " and context_parallel_size " + std::to_string(f.cp_size()) +
               ": communication kernels may not overlap with compute in the intended order",
           "export CUDA_DEVICE_MAX_CONNECTIONS=1 (or set [env] CUDA_DEVICE_MAX_CONNECTIONS = \"1\")");
}

}  // namespace

const Rule& rule_hcp019() {
  static const Rule rule{
      {"HCP019", "cuda-device-max-connections", Severity::warning,
       "tp > 1 or cp > 1 before Blackwell without CUDA_DEVICE_MAX_CONNECTIONS=1",
       {"tensor_model_parallel_size > 1 or context_parallel_size > 1 on a pre-Blackwell GPU (or an unknown GPU) and "
        "CUDA_DEVICE_MAX_CONNECTIONS is not 1 (from [env], an `export` in the launch script, or unset).",
        "Megatron requires it to order communication before compute on one hardware queue (\"Using tensor model "
        "parallelism or context parallelism require setting the environment variable CUDA_DEVICE_MAX_CONNECTIONS "
        "to 1\"); without it overlap and performance suffer, and some paths assert.",
        "[model]\ncontext_parallel_size = 4\n[cluster]\ngpu = \"h100\"",
        "export CUDA_DEVICE_MAX_CONNECTIONS=1 in the launch environment.",
        "Megatron-LM megatron/training/arguments.py; megatron/core/transformer/transformer_config.py"}},
      &check, "tp,cp,cuda_device_max_connections,gpu,fsdp,overlap_moe_expert_parallel_comm"};
  return rule;
}

}  // namespace hcp::lint
