// NeMo-RL (github.com/NVIDIA-NeMo/RL, read at 7ea279a): YAML configs with `defaults:` inheritance
// (nemo_rl/utils/config.py load_config, read by yaml_inheritance.cpp) and Hydra overrides after
// `examples/run_<algo>.py --config FILE`. The Megatron backend is on when `policy.megatron_cfg.enabled` is true
// (nemo_rl/models/policy/lm_policy.py:118-186: DTensor otherwise). NeMo-RL hands megatron_cfg to Megatron-Bridge:
// nemo_rl/models/megatron/setup.py _apply_parallelism_config (:858-886) sets the model's tensor, pipeline and
// context parallel sizes and sequence_parallel, _apply_moe_config (:890, :893) the expert sizes, and
// `model_overrides` are merged into the model provider first (:662-670); Bridge's initialize.py then builds the
// groups with hierarchical_context_parallel_sizes. Layers, heads and the sequence length come from the Hugging Face
// checkpoint (max_total_sequence_length is never Megatron's seq_length, setup.py comment at :1106) and stay
// unknown. A distillation teacher (teacher.megatron_cfg) and a PPO value model (value.megatron_cfg) are Megatron
// launches of their own, in worker groups of their own (distillation.py:487, :608).
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "framework_launches.hpp"
#include "hcp/error.hpp"
#include "hcp/lint/linter.hpp"
#include "megatron_flag_reader.hpp"
#include "yaml_inheritance.hpp"

namespace hcp::lint {
namespace {

namespace fs = std::filesystem;

// A key's value with interpolations inside the config resolved, or null when absent or unknown.
const Value* resolved(const ConfigTree& raw, const std::string& key, ConfigTree& scratch) {
  scratch = map_names(raw, {{key, "x"}});
  const Setting* s = scratch.find("x");
  return s && s->provenance != Provenance::unknown ? &s->value : nullptr;
}

bool enabled(const ConfigTree& raw, const std::string& key) {
  ConfigTree scratch;
  const Value* v = resolved(raw, key, scratch);
  return v && ((v->kind == Value::Kind::boolean && v->boolean) ||
               (v->kind == Value::Kind::string && (v->text == "true" || v->text == "True")));
}

std::optional<int64_t> integer(const ConfigTree& raw, const std::string& key) {
  ConfigTree scratch;
  const Value* v = resolved(raw, key, scratch);
  if (v && v->kind == Value::Kind::integer) return v->integer;
  return std::nullopt;
}

// The policy's GPUs when generation runs on GPUs of its own (grpo.py:855-910): on one node the node's GPUs less
// generation's; on several, the nodes generation does not take.
void non_colocated_world(const ConfigTree& raw, ConfigVariant& v) {
  const Setting* colocated = raw.find("policy.generation.colocated.enabled");
  if (!colocated || colocated->value.kind != Value::Kind::boolean || colocated->value.boolean) return;
  const auto nodes = integer(raw, "cluster.num_nodes"), gpus = integer(raw, "cluster.gpus_per_node");
  const auto gen_nodes = integer(raw, "policy.generation.colocated.resources.num_nodes");
  const auto gen_gpus = integer(raw, "policy.generation.colocated.resources.gpus_per_node");
  Setting world;
  world.key = "cluster.world_size";
  world.spelled = "the policy's GPUs (generation not colocated)";
  world.key_loc = colocated->key_loc;
  // Other workers with nodes of their own (NeMo-Gym's num_gpu_nodes, on-policy distillation's teachers, a reward
  // model) take their share too (grpo.py:759-833): then the policy's share is not known here.
  std::string other;
  for (const std::string& key : raw.keys_in_order()) {
    const size_t dot = key.rfind('.');
    const std::string last = key.substr(dot == std::string::npos ? 0 : dot + 1);
    // A count written as 0 takes no node (NeMo-Gym with num_gpu_nodes: 0 runs on CPUs).
    const std::optional<int64_t> count = integer(raw, key);
    if ((last == "num_nodes" || last == "num_gpu_nodes") && key != "cluster.num_nodes" &&
        key != "policy.generation.colocated.resources.num_nodes" && other.empty() && !(count && *count == 0))
      other = key;
  }
  std::optional<int64_t> n;
  if (nodes && gpus && *nodes == 1 && gen_gpus) n = *gpus - *gen_gpus;
  if (nodes && gpus && *nodes > 1 && gen_nodes && other.empty()) n = (*nodes - *gen_nodes) * *gpus;
  if (n && *n > 0) {
    world.value = Value::make_int(*n, std::to_string(*n), world.key_loc);
    world.provenance = Provenance::computed;
  } else {
    world.provenance = Provenance::unknown;
    world.why = other.empty() ? "generation runs on GPUs of its own and its share is not known here"
                              : "generation and other workers (" + other + ") run on nodes of their own";
  }
  v.tree.set(std::move(world));
}

FrameworkLaunches nemo_rl_launches(const ConfigTree& raw, const std::string& base) {
  FrameworkLaunches out;
  struct Worker {
    const char* role;
    const char* prefix;
  };
  static constexpr Worker kWorkers[] = {
      {"NeMo-RL policy", "policy.megatron_cfg."},
      {"NeMo-RL teacher", "teacher.megatron_cfg."},
      {"NeMo-RL value model", "value.megatron_cfg."},
  };
  for (const Worker& w : kWorkers) {
    const std::string prefix = w.prefix;
    if (!enabled(raw, prefix + "enabled")) continue;
    std::vector<std::pair<std::string, std::string>> names;
    add_megatron_names(names, prefix, prefix + "model_overrides.");
    names.emplace_back(prefix + "model_overrides.hierarchical_context_parallel_sizes",
                       "model.hierarchical_context_parallel_sizes");
    names.emplace_back("cluster.num_nodes", "cluster.nodes");
    names.emplace_back("cluster.gpus_per_node", "cluster.gpus_per_node");
    // How NeMo-RL pads each sequence of a packed batch (megatron/data.py _get_pack_sequence_parameters_for_megatron),
    // for HCP033.
    const std::string root = prefix.substr(0, prefix.size() - std::string("megatron_cfg.").size());
    names.emplace_back(root + "make_sequence_length_divisible_by", "framework.pad_sequences_to_multiple_of");
    names.emplace_back(root + "sequence_packing.enabled", "framework.sequence_packing");
    names.emplace_back(root + "dynamic_batching.enabled", "framework.dynamic_batching");
    ConfigVariant v;
    v.role = w.role;
    v.tree = map_names(raw, names);
    // What the config does not set is the model provider's, built from the Hugging Face checkpoint (setup.py
    // :618-656): GLM-5's sets cp_comm_type "allgather" (Megatron-Bridge glm5_bridge.py).
    v.base = base.empty() ? "the Megatron-Bridge model provider of the Hugging Face checkpoint" : base;
    // PPO's value model is built on the policy's train cluster (ppo.py init_value): the same GPUs.
    if (prefix == "policy.megatron_cfg." || prefix == "value.megatron_cfg.") non_colocated_world(raw, v);
    v.unit = static_cast<int>(&w - kWorkers);
    out.variants.push_back(std::move(v));
  }
  if (out.variants.empty()) out.skipped = "NeMo-RL with the DTensor backend (policy.megatron_cfg.enabled is not true)";
  return out;
}

// `--config FILE` / `--config=FILE`, or "".
std::string config_argument(const std::vector<ShellWord>& words, size_t from, const ShellWord** at) {
  for (size_t i = from; i < words.size(); ++i) {
    if (words[i].text == "--config" && i + 1 < words.size()) {
      *at = &words[i + 1];
      return words[i + 1].known() ? words[i + 1].text : std::string();
    }
    if (words[i].text.rfind("--config=", 0) == 0) {
      *at = &words[i];
      return words[i].known() ? words[i].text.substr(9) : std::string();
    }
  }
  return {};
}

// NeMo-RL's examples run from the repository root: a relative --config is looked up from the working directory,
// then from the script's folder and each folder above it (a script in tests/functional/ names
// examples/configs/...).
}  // namespace

LoadedInput load_nemo_rl_yaml(const SourceText& source) {
  InheritedYaml yaml = load_yaml_with_defaults(source);
  const std::string base = yaml.unread.empty() ? std::string() : "the config it inherits, which is not read";
  FrameworkLaunches launches = nemo_rl_launches(yaml.raw, base);
  launches.read = std::move(yaml.read);
  launches.unread = std::move(yaml.unread);
  return as_input(std::move(launches));
}

std::optional<FrameworkLaunches> read_nemo_rl_launch(const std::vector<ShellWord>& words, size_t from,
                                                     const std::string& script) {
  if (from == 0 || from > words.size()) return std::nullopt;
  const std::string program = fs::path(words[from - 1].text).filename().string();
  if (program.rfind("run_", 0) != 0 || program.size() < 4 || program.substr(program.size() - 3) != ".py") {
    return std::nullopt;
  }
  ConfigTree overrides;
  read_override_words(words, from, overrides, [](const std::string& k) { return std::optional<std::string>(k); });
  const ShellWord* at = nullptr;
  const std::string config = config_argument(words, from, &at);
  const auto& keys = overrides.keys_in_order();
  const bool nemo_rl_keys = std::any_of(keys.begin(), keys.end(), [](const std::string& k) {
    return k.rfind("policy.", 0) == 0 || k.rfind("teacher.", 0) == 0;
  });
  if (!nemo_rl_keys && !at) return std::nullopt;  // positive evidence: NeMo-RL's sections or its --config
  FrameworkLaunches out;
  ConfigTree raw;
  std::string base;
  if (!config.empty()) {
    const std::string path = find_launch_config(config, script);
    // As for inherited files: only inside the working directory, so a pull request's script cannot make a CI job
    // read the runner's files (--config /etc/shadow).
    if (const std::string why = refused_outside_working_directory(path); !why.empty()) {
      out.unread.push_back({at->loc, "--config " + config + " is not read: " + why});
      base = "the config --config names, which is not read";
    } else try {
      SourceText text = read_source(path);
      InheritedYaml yaml = load_yaml_with_defaults(text);
      raw = std::move(yaml.raw);
      for (auto& u : yaml.unread) out.unread.push_back(std::move(u));
      for (SourceText& s : yaml.read) out.read.push_back(std::move(s));
      if (!out.unread.empty()) base = "the config --config names, which is not read whole";
      out.read.push_back(std::move(text));
    } catch (const Error& e) {
      out.unread.push_back({at->loc, "--config " + config + " is not read: " + e.what()});
      base = "the config --config names, which is not read";
    }
  } else {
    base = "the config --config names" + std::string(at ? " (" + at->why + ")" : "");
  }
  for (const std::string& k : keys) raw.set(*overrides.find(k));
  FrameworkLaunches launches = nemo_rl_launches(raw, base);
  out.variants = std::move(launches.variants);
  out.skipped = launches.skipped;
  return out;
}

}  // namespace hcp::lint
