// verl (github.com/volcengine/verl, read at b178a3c): its trainers take Hydra overrides over
// verl/trainer/config/ppo_megatron_trainer.yaml (flattened in _generated_ppo_megatron_trainer.yaml). Each Megatron
// worker is a launch of its own: verl/workers/megatron_workers.py:284 (actor and ref), :1020 (critic) and :1322
// (reward model) call mpu.initialize_model_parallel with that worker's `megatron.*` sizes - and never with
// hierarchical_context_parallel_sizes, so a2a+p2p set through override_transformer_config has no groups (HCP001).
// Model shape (layers, heads, query groups) comes from the Hugging Face config verl converts
// (verl/models/mcore/config_converter.py) and stays unknown here; `override_transformer_config` entries update it
// (config_converter.py:94).
#include <algorithm>
#include <string_view>

#include "framework_launches.hpp"
#include "megatron_flag_reader.hpp"

namespace hcp::lint {
namespace {

// The megatron.* keys verl passes on (ppo_megatron_trainer's actor/megatron_actor.yaml and engine/megatron.yaml),
// under their Megatron names.
constexpr std::string_view kSizes[] = {
    "tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
    "context_parallel_size",      "expert_model_parallel_size",   "expert_tensor_parallel_size",
    "sequence_parallel",
};
// TransformerConfig fields hcp's rules read that verl's override_transformer_config may set.
constexpr std::string_view kTransformer[] = {"cp_comm_type", "window_size", "softmax_type", "num_layers",
                                             "num_attention_heads", "num_query_groups", "qkv_format",
                                             "core_attention_bias_type"};

bool is_verl_program(std::string_view program) {
  return program.find("verl.trainer.main_") != std::string_view::npos ||
         program.find("verl/trainer/main_") != std::string_view::npos;
}

// The value of the last `key=value` / `+key=value` among the words, as written.
std::optional<std::string> override_value(const std::vector<ShellWord>& words, size_t from, std::string_view key) {
  std::optional<std::string> found;
  for (size_t i = from; i < words.size(); ++i) {
    std::string_view t = words[i].text;
    while (!t.empty() && t.front() == '+') t.remove_prefix(1);
    if (t.size() > key.size() && t.substr(0, key.size()) == key && t[key.size()] == '=') {
      found = std::string(words[i].known() ? t.substr(key.size() + 1) : std::string_view("?"));
    }
  }
  return found;
}

bool any_override_under(const std::vector<ShellWord>& words, size_t from, std::string_view prefix) {
  for (size_t i = from; i < words.size(); ++i) {
    std::string_view t = words[i].text;
    while (!t.empty() && t.front() == '+') t.remove_prefix(1);
    if (t.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

// `--config-name X`, `--config-name=X`, `-cn X`.
std::string config_name(const std::vector<ShellWord>& words, size_t from) {
  for (size_t i = from; i < words.size(); ++i) {
    const std::string& t = words[i].text;
    if ((t == "--config-name" || t == "-cn") && i + 1 < words.size()) return words[i + 1].text;
    if (t.rfind("--config-name=", 0) == 0) return t.substr(14);
  }
  return {};
}

// `--config-path X` / `=X` / `-cp X`; "" when absent. Hydra takes a relative one relative to the file that
// declares @hydra.main (verl/trainer/main_ppo.py), so verl's examples' `--config-path=config` is the shipped folder.
std::string config_path(const std::vector<ShellWord>& words, size_t from) {
  for (size_t i = from; i < words.size(); ++i) {
    const std::string& t = words[i].text;
    if ((t == "--config-path" || t == "-cp") && i + 1 < words.size()) return words[i + 1].text;
    if (t.rfind("--config-path=", 0) == 0) return t.substr(14);
  }
  return {};
}

// Whether the config is one verl ships (verl/trainer/config/ppo_megatron_trainer.yaml, ppo_trainer.yaml).
bool shipped_config(const std::string& name, const std::string& path) {
  std::string_view n = name;
  if (n.size() > 5 && n.substr(n.size() - 5) == ".yaml") n.remove_suffix(5);
  return (path.empty() || path == "config" || path == "./config") &&
         (n.empty() || n == "ppo_megatron_trainer" || n == "ppo_trainer");
}

bool truthy(const std::optional<std::string>& v) {
  return v && (*v == "True" || *v == "true" || *v == "1");
}

// A setting verl's own YAML gives when the script does not (trainer.nnodes 1, trainer.n_gpus_per_node 8).
void verl_default(ConfigTree& tree, const char* key, const char* spelled, int64_t value, const Location& at) {
  if (tree.find(key)) return;
  Setting s;
  s.key = key;
  s.spelled = std::string(spelled) + " (verl's default)";
  s.key_loc = at;
  s.value = Value::make_int(value, std::to_string(value), at);
  tree.set(std::move(s));
}

ConfigVariant worker(const std::vector<ShellWord>& words, size_t from, const std::string& role,
                     const std::vector<std::string>& prefixes, const std::string& pool) {
  ConfigVariant v;
  v.role = "verl " + role;
  // Earlier prefixes first: the ref's own keys win over the actor's it inherits (${oc.select:actor...}).
  for (const std::string& prefix : prefixes) {
    read_override_words(words, from, v.tree, [&](const std::string& written) -> std::optional<std::string> {
      if (written.rfind(prefix, 0) != 0) return std::nullopt;
      std::string_view rest = std::string_view(written).substr(prefix.size());
      if (std::find(std::begin(kSizes), std::end(kSizes), rest) != std::end(kSizes)) return "model." + std::string(rest);
      constexpr std::string_view kOverride = "override_transformer_config.";
      if (rest.substr(0, kOverride.size()) == kOverride) {
        rest.remove_prefix(kOverride.size());
        if (std::find(std::begin(kTransformer), std::end(kTransformer), rest) != std::end(kTransformer)) {
          return "model." + std::string(rest);
        }
      }
      return std::nullopt;
    });
  }
  read_override_words(words, from, v.tree, [&](const std::string& written) -> std::optional<std::string> {
    if (written == pool + ".nnodes") return std::string("cluster.nodes");
    if (written == pool + ".n_gpus_per_node") return std::string("cluster.gpus_per_node");
    return std::nullopt;
  });
  return v;
}

}  // namespace

std::optional<FrameworkLaunches> read_verl_launch(const std::vector<ShellWord>& words, size_t from) {
  if (from == 0 || from > words.size()) return std::nullopt;
  const std::string& program = words[from - 1].text;
  // Positive evidence: verl's trainer module, or a program (a recipe's main) given verl's actor_rollout_ref keys.
  if (!is_verl_program(program) && !any_override_under(words, from, "actor_rollout_ref.")) return std::nullopt;
  FrameworkLaunches out;
  const std::string name = config_name(words, from);
  const std::optional<std::string> strategy = override_value(words, from, "actor_rollout_ref.actor.strategy");
  const bool megatron = (strategy ? *strategy == "megatron" : name.find("megatron") != std::string::npos) ||
                        any_override_under(words, from, "actor_rollout_ref.actor.megatron.");
  if (!megatron) {
    out.skipped = "verl with the FSDP strategy (no Megatron worker: --config-name " +
                  (name.empty() ? std::string("ppo_trainer") : name) + ")";
    return out;
  }
  // verl's shipped trainer configs give the defaults below; a config of the user's own (--config-path) may not.
  const bool shipped = shipped_config(name, config_path(words, from));
  const Location at = words[from - 1].loc;
  const auto add = [&](ConfigVariant v, bool own_pool) {
    if (shipped && !own_pool) {
      verl_default(v.tree, "cluster.nodes", "trainer.nnodes", 1, at);
      verl_default(v.tree, "cluster.gpus_per_node", "trainer.n_gpus_per_node", 8, at);
    } else if (shipped) {
      verl_default(v.tree, "cluster.gpus_per_node", "reward_model.n_gpus_per_node", 8, at);
    }
    if (!shipped) v.base = "the config --config-path/--config-name name";
    out.variants.push_back(std::move(v));
  };
  const std::string actor = "actor_rollout_ref.actor.megatron.";
  add(worker(words, from, "actor", {actor}, "trainer"), false);
  // verl/trainer/ppo/utils.py need_reference_policy: KL in the reward or as a loss.
  if (truthy(override_value(words, from, "algorithm.use_kl_in_reward")) ||
      truthy(override_value(words, from, "actor_rollout_ref.actor.use_kl_loss"))) {
    add(worker(words, from, "ref", {actor, "actor_rollout_ref.ref.megatron."}, "trainer"), false);
  }
  // need_critic: critic.enable when set, else the GAE estimator (ppo_megatron_trainer.yaml's default).
  const std::optional<std::string> critic = override_value(words, from, "critic.enable");
  const std::string estimator = override_value(words, from, "algorithm.adv_estimator").value_or("gae");
  if ((critic && truthy(critic)) || (!critic && estimator == "gae")) {
    add(worker(words, from, "critic", {"critic.megatron."}, "trainer"), false);
  }
  // The reward model runs in the trainer's pool unless it has nodes of its own (reward_model.nnodes > 0).
  if (truthy(override_value(words, from, "reward_model.enable")) &&
      override_value(words, from, "reward_model.strategy").value_or("megatron") == "megatron") {
    const std::optional<std::string> nodes = override_value(words, from, "reward_model.nnodes");
    const bool own = nodes && *nodes != "0";
    add(worker(words, from, "reward model", {"reward_model.megatron."}, own ? "reward_model" : "trainer"), own);
  }
  return out;
}

std::optional<FrameworkLaunches> read_framework_launch(const std::vector<ShellWord>& words, size_t from) {
  return read_verl_launch(words, from);
}

}  // namespace hcp::lint
