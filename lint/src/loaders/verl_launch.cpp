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

bool is_verl_program(std::string_view program) {
  return program.find("verl.trainer.main_") != std::string_view::npos ||
         program.find("verl/trainer/main_") != std::string_view::npos;
}

// The raw value of a key as written, or none.
std::optional<std::string> raw_value(const ConfigTree& raw, const std::string& key) {
  const Setting* s = raw.find(key);
  if (!s) return std::nullopt;
  if (s->provenance == Provenance::unknown) return std::string("?");
  return s->value.kind == Value::Kind::string ? s->value.text : s->value.display();
}

bool any_key_under(const ConfigTree& raw, std::string_view prefix) {
  const auto& keys = raw.keys_in_order();
  return std::any_of(keys.begin(), keys.end(), [&](const std::string& k) { return k.rfind(prefix, 0) == 0; });
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
bool shipped_config(std::string_view name) {
  if (name.size() > 5 && name.substr(name.size() - 5) == ".yaml") name.remove_suffix(5);
  return name.empty() || name == "ppo_megatron_trainer" || name == "ppo_trainer";
}

bool truthy(const std::optional<std::string>& v) {
  return v && (*v == "True" || *v == "true" || *v == "1");
}

// A setting verl's own YAML gives when the input does not (trainer.nnodes 1, trainer.n_gpus_per_node 8).
void verl_default(ConfigTree& tree, const char* key, const char* spelled, int64_t value, const Location& at) {
  if (tree.find(key)) return;
  Setting s;
  s.key = key;
  s.spelled = std::string(spelled) + " (verl's default)";
  s.key_loc = at;
  s.value = Value::make_int(value, std::to_string(value), at);
  s.implied = true;
  s.why = std::string("not set: verl's default ") + spelled + " is " + std::to_string(value);
  tree.set(std::move(s));
}

// One worker's launch: the megatron.* sizes under `sizes` and the override_transformer_config entries under
// `transformer` (later prefixes win: the ref's own over the actor's it inherits), and its pool's nodes and GPUs,
// under Bridge keys.
ConfigVariant worker(const ConfigTree& raw, const std::string& role, const std::vector<std::string>& sizes,
                     const std::vector<std::string>& transformer, const std::string& pool) {
  std::vector<std::pair<std::string, std::string>> names;
  for (const std::string& prefix : sizes) add_megatron_names(names, prefix, "");
  for (const std::string& prefix : transformer) {
    add_megatron_names(names, "", prefix + "override_transformer_config.");
    // Never passed to mpu.initialize_model_parallel (megatron_workers.py:284, :1020, :1322): no groups.
    names.emplace_back(prefix + "override_transformer_config.hierarchical_context_parallel_sizes",
                       "ignored.model.hierarchical_context_parallel_sizes");
  }
  names.emplace_back(pool + ".nnodes", "cluster.nodes");
  names.emplace_back(pool + ".n_gpus_per_node", "cluster.gpus_per_node");
  ConfigVariant v;
  v.role = "verl " + role;
  v.tree = map_names(raw, names);
  hierarchical_sizes_not_passed(v.tree, "verl", "verl/workers/megatron_workers.py");
  return v;
}

// A worker colocated with the actor (one process per GPU for the pool's workers, verl/trainer/ppo/ray_trainer.py
// create_colocated_worker_cls) runs on the process groups the first worker built - the actor's
// (megatron_workers.py:273 initialises them only once). Its own sizes that differ are kept as ignored.*.
void colocate(const ConfigVariant& actor, ConfigVariant& w) {
  for (std::string_view size : kMegatronSizes) {
    if (size == "sequence_parallel") continue;  // per model, not a process-group size
    const std::string key = "model." + std::string(size);
    const Setting* mine = w.tree.find(key);
    const Setting* actors = actor.tree.find(key);
    const bool plain = size == "virtual_pipeline_model_parallel_size" || size == "expert_tensor_parallel_size";
    const std::string theirs = actors ? actors->value.display() : plain ? "null" : "1";
    if (mine && mine->provenance != Provenance::unknown && (!actors || actors->provenance != Provenance::unknown) &&
        mine->value.display() != theirs) {
      Setting ignored = *mine;
      ignored.key = "ignored." + key;
      ignored.why = "verl's workers of one resource pool share one process per GPU and the actor's process "
                    "groups (verl/workers/megatron_workers.py:267-284), so this worker runs with the actor's " +
                    std::string(size) + " " + theirs;
      w.tree.set(std::move(ignored));
    }
    if (actors) {
      w.tree.set(*actors);
    } else if (mine) {
      w.tree.remove(key);
    }
  }
}

// verl's launches from its config keys as written (Hydra overrides or a YAML file), `at` for verl's defaults.
FrameworkLaunches verl_launches(const ConfigTree& raw, bool shipped, const std::string& name, const Location& at) {
  FrameworkLaunches out;
  const std::optional<std::string> strategy = raw_value(raw, "actor_rollout_ref.actor.strategy");
  const bool megatron = (strategy ? *strategy == "megatron" : name.find("megatron") != std::string::npos) ||
                        any_key_under(raw, "actor_rollout_ref.actor.megatron.");
  if (!megatron) {
    out.skipped = "verl with the FSDP strategy (no Megatron worker" +
                  (name.empty() ? std::string() : ": config " + name) + ")";
    return out;
  }
  const auto add = [&](ConfigVariant v, bool own_pool) {
    if (shipped && !own_pool) {
      verl_default(v.tree, "cluster.nodes", "trainer.nnodes", 1, at);
      verl_default(v.tree, "cluster.gpus_per_node", "trainer.n_gpus_per_node", 8, at);
    } else if (shipped) {
      verl_default(v.tree, "cluster.gpus_per_node", "reward_model.n_gpus_per_node", 8, at);
    }
    if (!shipped) v.base = "the verl config " + (name.empty() ? std::string("it builds on") : name);
    out.variants.push_back(std::move(v));
  };
  const std::string actor = "actor_rollout_ref.actor.megatron.";
  const ConfigVariant first = worker(raw, "actor", {actor}, {actor}, "trainer");
  add(first, false);
  // verl/trainer/ppo/utils.py need_reference_policy: KL in the reward or as a loss. megatron_ref.yaml takes the
  // actor's values (${oc.select:actor_rollout_ref.actor.megatron...}) unless the ref's own are given.
  if (truthy(raw_value(raw, "algorithm.use_kl_in_reward")) ||
      truthy(raw_value(raw, "actor_rollout_ref.actor.use_kl_loss"))) {
    const std::string ref = "actor_rollout_ref.ref.megatron.";
    ConfigVariant w = worker(raw, "ref", {ref}, {actor, ref}, "trainer");
    colocate(first, w);
    add(std::move(w), false);
  }
  // need_critic: critic.enable when set, else the GAE estimator (ppo_megatron_trainer.yaml's default). The
  // critic's megatron_critic.yaml has sizes and overrides of its own.
  const std::optional<std::string> critic = raw_value(raw, "critic.enable");
  const std::string estimator = raw_value(raw, "algorithm.adv_estimator").value_or("gae");
  if ((critic && critic != "null" && truthy(critic)) || ((!critic || critic == "null") && estimator == "gae")) {
    ConfigVariant w = worker(raw, "critic", {"critic.megatron."}, {"critic.megatron."}, "trainer");
    colocate(first, w);
    add(std::move(w), false);
  }
  // The reward model runs in the trainer's pool unless it has nodes of its own (reward_model.nnodes > 0); it takes
  // the actor's override_transformer_config (megatron_reward_model.yaml).
  if (truthy(raw_value(raw, "reward_model.enable")) &&
      raw_value(raw, "reward_model.strategy").value_or("megatron") == "megatron") {
    const std::optional<std::string> nodes = raw_value(raw, "reward_model.nnodes");
    const bool own = nodes && *nodes != "0";
    const std::string rm = "reward_model.megatron.";
    ConfigVariant w = worker(raw, "reward model", {rm}, {actor, rm}, own ? "reward_model" : "trainer");
    if (!own) colocate(first, w);
    add(std::move(w), own);
  }
  return out;
}

}  // namespace

std::optional<FrameworkLaunches> read_verl_launch(const std::vector<ShellWord>& words, size_t from) {
  if (from == 0 || from > words.size()) return std::nullopt;
  ConfigTree raw;
  read_override_words(words, from, raw, [](const std::string& written) { return std::optional<std::string>(written); });
  // Positive evidence: verl's trainer module, or a program (a recipe's main) given verl's actor_rollout_ref keys.
  if (!is_verl_program(words[from - 1].text) && !any_key_under(raw, "actor_rollout_ref.")) return std::nullopt;
  const std::string name = config_name(words, from), path = config_path(words, from);
  const bool shipped = shipped_config(name) && (path.empty() || path == "config" || path == "./config");
  return verl_launches(raw, shipped, name, words[from - 1].loc);
}

LoadedInput load_verl_yaml(const SourceText& source) {
  ConfigTree raw;
  load_yaml(source, raw);
  // Hydra's defaults list: a config built on one verl ships keeps that config's defaults for what it does not set.
  // Entries `- ppo_megatron_trainer` name a whole config; `- actor@actor_rollout_ref.actor: megatron_actor` a
  // component (verl's own ppo_megatron_trainer.yaml), whose name says the strategy.
  std::string base;
  if (const Setting* d = raw.find("defaults"); d && d->value.kind == Value::Kind::list) {
    for (const Value& item : d->value.items) {
      const bool whole = item.kind == Value::Kind::string && item.text != "_self_" &&
                         item.text.find('@') == std::string::npos && item.text.find('/') == std::string::npos;
      if (whole && base.empty()) base = item.text;
    }
  }
  const bool shipped = (!base.empty() && shipped_config(base)) || raw.find("trainer.nnodes");
  const bool megatron_actor = source.text.find("@actor_rollout_ref.actor: megatron_actor") != std::string::npos;
  const std::string name = !base.empty() ? base : megatron_actor ? "megatron_actor" : "";
  FrameworkLaunches launches = verl_launches(raw, shipped, name, Location{source.name, 1, 1});
  return as_input(std::move(launches));
}

std::optional<FrameworkLaunches> read_framework_launch(const ShellCommand& command, size_t from,
                                                       const std::string& script) {
  const std::vector<ShellWord>& words = command.words;
  if (auto verl = read_verl_launch(words, from)) return verl;
  if (auto primus = read_primus_launch(command, from, script)) return primus;
  if (auto roll = read_roll_launch(words, from, script)) return roll;
  if (auto areal = read_areal_launch(words, from, script)) return areal;
  return read_nemo_rl_launch(words, from, script);
}

}  // namespace hcp::lint
