// NeMo-1 / NeMo-Framework-Launcher training YAML (launcher_scripts/conf/training/**): the model's parallel sizes
// under model.*, the cluster under trainer.num_nodes / trainer.devices. Only the keys that mean the same as
// Bridge's are taken; the rest of NeMo's schema is not ours to judge (no unknown-key findings). Hydra
// interpolations are resolved inside the file (the launcher mounts the file under its config group, so
// ${training.trainer.num_nodes} in conf/training/x.yaml is this file's trainer.num_nodes); any other is unknown.
#include "hcp/lint/loaders.hpp"
#include "mapped_yaml.hpp"

namespace hcp::lint {
namespace {

// NeMo-1 key -> Bridge key.
constexpr std::pair<std::string_view, std::string_view> kKeys[] = {
    {"model.tensor_model_parallel_size", "model.tensor_model_parallel_size"},
    {"model.pipeline_model_parallel_size", "model.pipeline_model_parallel_size"},
    {"model.context_parallel_size", "model.context_parallel_size"},
    {"model.cp_comm_type", "model.cp_comm_type"},
    {"model.hierarchical_context_parallel_sizes", "model.hierarchical_context_parallel_sizes"},
    {"model.expert_model_parallel_size", "model.expert_model_parallel_size"},
    {"model.expert_tensor_parallel_size", "model.expert_tensor_parallel_size"},
    {"model.num_layers", "model.num_layers"},
    {"model.num_attention_heads", "model.num_attention_heads"},
    {"model.num_query_groups", "model.num_query_groups"},
    {"model.encoder_seq_length", "model.seq_length"},
    {"trainer.num_nodes", "cluster.nodes"},
    {"trainer.devices", "cluster.gpus_per_node"},
};

}  // namespace

LoadedInput load_nemo_launcher(const SourceText& source) {
  ConfigTree yaml;
  load_yaml(source, yaml);
  LoadedInput out;
  ConfigVariant v;
  v.tree = map_yaml_keys(yaml, kKeys);
  // NeMo-Framework-Launcher exports CUDA_DEVICE_MAX_CONNECTIONS=1 itself for tp or cp > 1 without FSDP
  // (launcher_scripts/nemo_launcher/core/stages.py, _cuda_device_max_connections).
  Setting env;
  env.key = "env.CUDA_DEVICE_MAX_CONNECTIONS";
  env.spelled = "CUDA_DEVICE_MAX_CONNECTIONS (set by NeMo-Framework-Launcher)";
  env.key_loc = {source.name, 0, 0};
  env.value = Value::make_string("1", env.key_loc);
  v.tree.set(std::move(env));
  // Fine-tuning and PEFT configs start from a checkpoint's model config (model.restore_from_path): what they do not
  // set is the checkpoint's.
  if (yaml.find("model.restore_from_path")) v.base = "the checkpoint model.restore_from_path names";
  out.variants.push_back(std::move(v));
  return out;
}

}  // namespace hcp::lint
