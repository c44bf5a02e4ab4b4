// The live configuration at launch (hcp.check, hcp-lint --facts-json): a JSON object of what the job built. Its
// names are Megatron-LM's argument names - an argparse namespace's attributes are the flags' dests
// (megatron/training/arguments.py), TransformerConfig and ModelParallelConfig use the same names, verl's and
// NeMo-RL's megatron dicts too - or Bridge's dotted keys (a ConfigContainer flattened). A namespace has hundreds of
// attributes: names no rule reads are ignored, and a null is an unset value.
#include <string>

#include "framework_launches.hpp"
#include "hcp/lint/loaders.hpp"
#include "megatron_flags.hpp"
#include "yaml_forms.hpp"

namespace hcp::lint {

std::string megatron_arg_key(const std::string& name) {
  const size_t dot = name.find('.');
  if (dot != std::string::npos) return is_bridge_section(name.substr(0, dot)) ? name : std::string();
  static constexpr std::pair<std::string_view, std::string_view> kCluster[] = {
      {"world_size", "cluster.world_size"},
      {"nodes", "cluster.nodes"},
      {"num_nodes", "cluster.nodes"},
      {"gpus_per_node", "cluster.gpus_per_node"},
      {"transformer_engine_version", "env.transformer_engine"},
      {"te_version", "env.transformer_engine"},
      {"CUDA_DEVICE_MAX_CONNECTIONS", "env.CUDA_DEVICE_MAX_CONNECTIONS"},
  };
  for (const auto& [from, to] : kCluster) {
    if (name == from) return std::string(to);
  }
  std::string flag = "--" + name;
  for (char& c : flag) c = c == '_' ? '-' : c;
  if (const FlagSpec* spec = find_flag(flag); spec && std::string_view(spec->key).rfind("cluster.", 0) != 0) {
    return std::string(spec->key);
  }
  for (std::string_view field : kTransformerFields) {
    if (name == field) return "model." + name;
  }
  for (std::string_view size : kMegatronSizes) {
    if (name == size) return "model." + name;
  }
  return {};
}

LoadedInput load_facts_json(const SourceText& source) {
  ConfigTree raw;
  load_yaml(source, raw);  // JSON is YAML's flow style; the YAML reader's size and depth bounds hold
  ConfigVariant v;
  for (const std::string& name : raw.keys_in_order()) {
    const Setting* s = raw.find(name);
    const std::string key = megatron_arg_key(name);
    if (key.empty() || s->value.kind == Value::Kind::null || s->value.kind == Value::Kind::table) continue;
    Setting copy = *s;
    copy.key = key;
    copy.spelled = name;
    v.tree.set(std::move(copy));
  }
  LoadedInput out;
  out.variants.push_back(std::move(v));
  return out;
}

}  // namespace hcp::lint
