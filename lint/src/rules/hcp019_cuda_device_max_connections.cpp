#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  // Megatron-LM's validate_args asks for it; torchtitan is not Megatron and has no such check.
  if (f.own_attention == "torchtitan") return;
  if (f.tp_size() <= 1 && f.cp_size() <= 1) return;
  if (f.gpu.known() && is_blackwell_or_newer(*f.gpu.value)) return;
  // Megatron-LM's validate_args: with FSDP it only warns (FSDP wants the variable unset or above 1); with
  // --overlap-moe-expert-parallel-comm 1 and 32 are both allowed; otherwise it asserts the value is "1".
  if (f.fsdp.value.value_or(false) || f.overlap_moe_expert_parallel_comm.value.value_or(false)) return;
  const auto& conn = f.cuda_device_max_connections;
  if (!conn.known()) {
    // Not in the input: the job's environment decides (a launcher such as NeMo-Framework-Launcher sets it).
    r.unknown(ctx.anchor({f.cp.loc(), f.tp.loc()}),
              "not checked: CUDA_DEVICE_MAX_CONNECTIONS is not set in this input; Megatron-LM requires 1 here",
              "export CUDA_DEVICE_MAX_CONNECTIONS=1 in the launch script, or make sure the job environment sets it");
    return;
  }
  if (*conn.value == "1") return;
  const std::string gpu = f.gpu.known() ? "on " + *f.gpu.value : "on an unknown GPU (assumed pre-Blackwell)";
  const std::string state = "is '" + *conn.value + "'";
  r.report(ctx.anchor({conn.loc(), f.cp.loc(), f.tp.loc()}),
           "CUDA_DEVICE_MAX_CONNECTIONS " + state + " " + gpu + " with tensor_model_parallel_size " +
               std::to_string(f.tp_size()) + " and context_parallel_size " + std::to_string(f.cp_size()) +
               ": Megatron-LM's argument check refuses to start (it requires 1 before Blackwell)",
           "export CUDA_DEVICE_MAX_CONNECTIONS=1 (or set [env] CUDA_DEVICE_MAX_CONNECTIONS = \"1\")");
}

}  // namespace

const Rule& rule_hcp019() {
  static const Rule rule{
      {"HCP019", "cuda-device-max-connections", Severity::warning,
       "tp > 1 or cp > 1 before Blackwell without CUDA_DEVICE_MAX_CONNECTIONS=1",
       {"tensor_model_parallel_size > 1 or context_parallel_size > 1 on a pre-Blackwell GPU (or an unknown GPU), "
        "neither FSDP (--use-torch-fsdp2, --use-megatron-fsdp) nor --overlap-moe-expert-parallel-comm, and "
        "CUDA_DEVICE_MAX_CONNECTIONS set to something other than 1 (in [env], an `export` or `NAME=v` prefix in "
        "the launch script, a launcher's environment). When the input does not set it, the job's environment "
        "decides and the rule says so at info level.",
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
