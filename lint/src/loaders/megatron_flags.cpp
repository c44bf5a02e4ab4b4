#include "megatron_flags.hpp"

namespace hcp::lint {
namespace {

using A = FlagSpec::Arity;

// --cp-comm-type with one value is a plain string in Megatron (it broadcasts it to every layer); with several it is
// the per-layer list. The hierarchical sizes are always a list.
constexpr FlagSpec kFlags[] = {
    {"--context-parallel-size", "model.context_parallel_size", A::one, false},
    {"--cp-comm-type", "model.cp_comm_type", A::many, false},
    {"--hierarchical-context-parallel-sizes", "model.hierarchical_context_parallel_sizes", A::many, true},
    {"--tensor-model-parallel-size", "model.tensor_model_parallel_size", A::one, false},
    {"--pipeline-model-parallel-size", "model.pipeline_model_parallel_size", A::one, false},
    {"--num-attention-heads", "model.num_attention_heads", A::one, false},
    {"--num-query-groups", "model.num_query_groups", A::one, false},
    {"--group-query-attention", "model.group_query_attention", A::store_true, false},
    {"--num-layers", "model.num_layers", A::one, false},
    {"--seq-length", "model.seq_length", A::one, false},
    {"--use-tp-pp-dp-mapping", "dist.use_tp_pp_dp_mapping", A::store_true, false},
    {"--sequence-parallel", "model.sequence_parallel", A::store_true, false},
    // Megatron's type=tuple_type: one word "127,0" (or "(127, 0)"); two words also parse with nargs.
    {"--window-size", "model.window_size", A::many, true, true},
    {"--expert-model-parallel-size", "model.expert_model_parallel_size", A::one, false},
    {"--expert-tensor-parallel-size", "model.expert_tensor_parallel_size", A::one, false},
    {"--use-torch-fsdp2", "dist.use_torch_fsdp2", A::store_true, false},
    {"--use-megatron-fsdp", "dist.use_megatron_fsdp", A::store_true, false},
    {"--overlap-moe-expert-parallel-comm", "model.overlap_moe_expert_parallel_comm", A::store_true, false},
    // torchrun / python -m torch.distributed.run: the cluster size
    {"--nproc_per_node", "cluster.gpus_per_node", A::one, false},
    {"--nproc-per-node", "cluster.gpus_per_node", A::one, false},
    {"--nnodes", "cluster.nodes", A::one, false},
};

}  // namespace

std::span<const FlagSpec> megatron_flags() { return kFlags; }

const FlagSpec* find_flag(std::string_view flag) {
  for (const FlagSpec& f : kFlags) {
    if (f.flag == flag) return &f;
  }
  return nullptr;
}

}  // namespace hcp::lint
