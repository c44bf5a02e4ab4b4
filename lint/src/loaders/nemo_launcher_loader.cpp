// NeMo-1 / NeMo-Framework-Launcher training YAML (launcher_scripts/conf/training/**): the model's parallel sizes
// under model.*, the cluster under trainer.num_nodes / trainer.devices. Only the keys that mean the same as
// Bridge's are taken; the rest of NeMo's schema is not ours to judge (no unknown-key findings). Hydra
// interpolations are resolved inside the file (the launcher mounts the file under its config group, so
// ${training.trainer.num_nodes} in conf/training/x.yaml is this file's trainer.num_nodes); any other is unknown.
#include "hcp/lint/loaders.hpp"

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

// "${a.b.c}" alone -> "a.b.c"; anything else (text around it, several) -> empty.
std::string interpolation(const Value& v) {
  if (v.kind != Value::Kind::string || v.text.size() < 4 || v.text.rfind("${", 0) != 0 || v.text.back() != '}' ||
      v.text.find("${", 2) != std::string::npos) {
    return {};
  }
  return v.text.substr(2, v.text.size() - 3);
}

const Setting* resolve(const ConfigTree& yaml, const Setting* s, int depth, std::string* why) {
  while (s && depth++ < 8) {
    const std::string ref = interpolation(s->value);
    if (ref.empty()) {
      if (s->value.kind == Value::Kind::string && s->value.text.find("${") != std::string::npos) {
        *why = "Hydra interpolation " + s->value.text;
        return nullptr;
      }
      return s;
    }
    const Setting* next = yaml.find(ref);
    const size_t dot = ref.find('.');
    if (!next && dot != std::string::npos) next = yaml.find(ref.substr(dot + 1));  // ${training.x} -> x
    if (!next) {
      *why = "Hydra interpolation ${" + ref + "} from outside the file";
      return nullptr;
    }
    s = next;
  }
  *why = "Hydra interpolation nested too deep";
  return nullptr;
}

}  // namespace

LoadedInput load_nemo_launcher(const SourceText& source) {
  ConfigTree yaml;
  load_yaml(source, yaml);
  LoadedInput out;
  ConfigVariant v;
  for (const auto& [nemo, bridge] : kKeys) {
    const Setting* s = yaml.find(std::string(nemo));
    if (!s) continue;
    std::string why;
    const Setting* value = resolve(yaml, s, 0, &why);
    Setting t;
    t.key = std::string(bridge);
    t.spelled = std::string(nemo);
    t.key_loc = s->key_loc;
    if (value) {
      t.value = value->value;
      t.value.loc = s->value.loc;
    } else {
      t.provenance = Provenance::unknown;
      t.why = why;
    }
    // `devices: -1` / `auto` and null sizes are decided at run time.
    if (value && t.key.rfind("cluster.", 0) == 0 && t.value.kind != Value::Kind::integer) {
      t.value = Value::make_null(t.key_loc);
      t.provenance = Provenance::unknown;
      t.why = std::string(nemo) + " is " + value->value.display() + ", decided at run time";
    }
    if (value && t.value.kind == Value::Kind::null && t.provenance != Provenance::unknown) continue;
    v.tree.set(std::move(t));
  }
  // NeMo-Framework-Launcher exports CUDA_DEVICE_MAX_CONNECTIONS=1 itself for tp or cp > 1 without FSDP
  // (launcher_scripts/nemo_launcher/core/stages.py, _cuda_device_max_connections).
  Setting env;
  env.key = "env.CUDA_DEVICE_MAX_CONNECTIONS";
  env.spelled = "CUDA_DEVICE_MAX_CONNECTIONS (set by NeMo-Framework-Launcher)";
  env.key_loc = {source.name, 0, 0};
  env.value = Value::make_string("1", env.key_loc);
  v.tree.set(std::move(env));
  out.variants.push_back(std::move(v));
  return out;
}

}  // namespace hcp::lint
