// What the framework loaders share: Megatron's size and TransformerConfig names under a framework's prefix.
#include <filesystem>

#include "framework_launches.hpp"
#include "mapped_yaml.hpp"

namespace hcp::lint {

// The arguments of megatron/core/parallel_state.py initialize_model_parallel that frameworks pass from their keys,
// and sequence_parallel (TransformerConfig) that they keep beside them.
const std::vector<std::string_view> kMegatronSizes = {
    "tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
    "context_parallel_size",      "expert_model_parallel_size",   "expert_tensor_parallel_size",
    "sequence_parallel",
};
// TransformerConfig fields hcp's rules read, as frameworks' override dicts may set them.
const std::vector<std::string_view> kTransformerFields = {
    "cp_comm_type", "window_size", "softmax_type", "num_layers", "num_attention_heads", "num_query_groups",
    "qkv_format", "core_attention_bias_type",
};

void add_megatron_names(std::vector<std::pair<std::string, std::string>>& names, const std::string& sizes_prefix,
                        const std::string& fields_prefix) {
  if (!sizes_prefix.empty()) {
    for (std::string_view size : kMegatronSizes) {
      names.emplace_back(sizes_prefix + std::string(size), "model." + std::string(size));
    }
  }
  if (!fields_prefix.empty()) {
    for (std::string_view field : kTransformerFields) {
      names.emplace_back(fields_prefix + std::string(field), "model." + std::string(field));
    }
  }
}

void hierarchical_sizes_not_passed(ConfigTree& tree, const std::string& framework, const std::string& where) {
  const Setting* s = tree.find("ignored.model.hierarchical_context_parallel_sizes");
  if (!s) return;
  Setting copy = *s;
  copy.why = framework + " never passes hierarchical_context_parallel_sizes to mpu.initialize_model_parallel (" +
             where + "), so no hierarchical groups exist";
  tree.set(std::move(copy));
}

LoadedInput as_input(FrameworkLaunches launches) {
  LoadedInput out;
  if (launches.variants.empty()) out.skipped = launches.skipped;
  out.variants = std::move(launches.variants);
  for (size_t i = 0; i < out.variants.size(); ++i) out.variants[i].unit = static_cast<int>(i);
  out.unread = std::move(launches.unread);
  out.sourced = std::move(launches.read);
  return out;
}

ConfigTree map_names(const ConfigTree& raw, const std::vector<std::pair<std::string, std::string>>& names) {
  std::vector<std::pair<std::string_view, std::string_view>> map(names.begin(), names.end());
  return map_yaml_keys(raw, map);
}

std::string find_launch_config(const std::string& config, const std::string& script) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::path(config).is_absolute() || fs::is_regular_file(config, ec)) return config;
  for (fs::path dir = fs::path(script).parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / config, ec)) return (dir / config).lexically_normal().string();
    if (dir == dir.parent_path()) break;
  }
  return config;
}

}  // namespace hcp::lint
