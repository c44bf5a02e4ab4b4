// Megatron-LM `--yaml-cfg` files (megatron/training/yaml_arguments.py): the model under language_model:, the
// parallel sizes under model_parallel:, the rest at the top level. num_query_groups counts only with
// group_query_attention, as with the flags.
#include "hcp/lint/loaders.hpp"
#include "mapped_yaml.hpp"

namespace hcp::lint {
namespace {

constexpr std::pair<std::string_view, std::string_view> kKeys[] = {
    {"model_parallel.tensor_model_parallel_size", "model.tensor_model_parallel_size"},
    {"model_parallel.pipeline_model_parallel_size", "model.pipeline_model_parallel_size"},
    {"model_parallel.context_parallel_size", "model.context_parallel_size"},
    {"model_parallel.cp_comm_type", "model.cp_comm_type"},
    {"model_parallel.hierarchical_context_parallel_sizes", "model.hierarchical_context_parallel_sizes"},
    {"model_parallel.expert_model_parallel_size", "model.expert_model_parallel_size"},
    {"model_parallel.expert_tensor_parallel_size", "model.expert_tensor_parallel_size"},
    {"language_model.num_layers", "model.num_layers"},
    {"language_model.num_attention_heads", "model.num_attention_heads"},
    {"language_model.window_size", "model.window_size"},
    {"language_model.softmax_type", "model.softmax_type"},
    {"seq_length", "model.seq_length"},
    {"use_tp_pp_dp_mapping", "dist.use_tp_pp_dp_mapping"},
};

}  // namespace

LoadedInput load_megatron_yaml_cfg(const SourceText& source) {
  ConfigTree yaml;
  load_yaml(source, yaml);
  LoadedInput out;
  ConfigVariant v;
  v.tree = map_yaml_keys(yaml, kKeys);
  const Setting* gqa = yaml.find("group_query_attention");
  if (gqa && gqa->value.kind == Value::Kind::boolean && gqa->value.boolean) {
    static constexpr std::pair<std::string_view, std::string_view> kGroups[] = {
        {"language_model.num_query_groups", "model.num_query_groups"}};
    const ConfigTree groups = map_yaml_keys(yaml, kGroups);
    if (const Setting* g = groups.find("model.num_query_groups")) v.tree.set(*g);
  }
  out.variants.push_back(std::move(v));
  return out;
}

}  // namespace hcp::lint
