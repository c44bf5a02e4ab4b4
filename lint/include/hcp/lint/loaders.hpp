// Input loaders: each reads one format into the flat ConfigTree of Bridge keys, with source positions. A text
// that cannot be parsed throws hcp::Error{parse} whose message starts with "file:line:col:".
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hcp/lint/config_tree.hpp"
#include "hcp/lint/source.hpp"

namespace hcp::lint {

void load_toml(const SourceText& source, ConfigTree& tree);
void load_yaml(const SourceText& source, ConfigTree& tree);
// yaml-cpp for every YAML construct; load_yaml uses it when the fast path declines.
void load_yaml_full(const SourceText& source, ConfigTree& tree);
// One override per entry of `overrides`; `locations[i]` says where entry i was written.
void load_overrides(const std::vector<std::string>& overrides, const std::vector<Location>& locations,
                    ConfigTree& tree);
// An overrides file: one override per non-blank, non-comment line.
void load_overrides_file(const SourceText& source, ConfigTree& tree);
// Megatron-LM flags map to Bridge keys; torchrun's --nproc_per_node / --nnodes become cluster.gpus_per_node /
// cluster.nodes, and `export NAME=value` becomes env.NAME.
void load_megatron_args(const SourceText& source, ConfigTree& tree);

// Dispatches on source.format (detecting it when automatic).
void load_source(const SourceText& source, ConfigTree& tree);

// One configuration an input gives: a launch script gives one per training launch on each path through it.
struct ConfigVariant {
  ConfigTree tree;
  std::vector<std::string> conditions;  // the conditions of the script's path ("not [ -f \"$CKPT\" ]")
  int path_index = 0;                   // which path of the script (launches on one path share it)
  // Which unit of the input: a Python file's functions each build their own config, and a finding is weighed
  // against the other paths of its own unit only.
  int unit = 0;
  // Where the values this configuration does not set come from, when that is not Megatron-LM's defaults (a Bridge
  // recipe under overrides): --show-facts then reports them as unknown rather than as Megatron-LM's default.
  std::string base;
  // Which of a framework's launches this is ("verl actor", "verl critic"): each worker is a Megatron launch of its
  // own. Empty for the one launch of a plain input.
  std::string role;
};

struct LoadedInput {
  std::vector<ConfigVariant> variants;
  std::optional<std::string> skipped;                  // why the input is not linted (none of the known forms)
  std::vector<SourceText> sourced;                     // files a script sourced
  std::vector<std::pair<Location, std::string>> unread;  // parts of a script the model could not follow
};

// Any input: scripts through the shell model, the other forms as one configuration.
LoadedInput load_input(const SourceText& source);
LoadedInput load_megatron_script(const SourceText& source);
LoadedInput load_toml_input(const SourceText& source);  // Bridge ConfigContainer TOML; other TOML is skipped
LoadedInput load_functional_test(const SourceText& source);  // Megatron-LM functional-test model_config.yaml
LoadedInput load_nemo_launcher(const SourceText& source);    // NeMo-1 / NeMo-Framework-Launcher training YAML
LoadedInput load_megatron_yaml_cfg(const SourceText& source);  // Megatron-LM --yaml-cfg YAML
LoadedInput load_python(const SourceText& source);  // Megatron-Bridge and NeMo 2 Python configs
LoadedInput load_verl_yaml(const SourceText& source);  // a verl trainer config (actor_rollout_ref: ...)
LoadedInput load_nemo_rl_yaml(const SourceText& source);  // a NeMo-RL config (policy:, cluster:, defaults:)
LoadedInput load_roll_yaml(const SourceText& source);     // a ROLL pipeline config (workers' strategy_args)
LoadedInput load_areal_yaml(const SourceText& source);    // an AReaL config (actor.backend allocation)
// torchtitan's TOML train config ([job], [training], [parallelism]); is_torchtitan_toml tells it by its tables.
bool is_torchtitan_toml(const std::vector<std::string>& top_level_keys);
LoadedInput load_torchtitan_toml(const SourceText& source);
// A Primus experiment (modules: <x>trainer: framework: megatron, config:, model:, overrides:) with its presets.
LoadedInput load_primus_yaml(const SourceText& source);
LoadedInput load_flagscale_yaml(const SourceText& source);  // a FlagScale top config (experiment:, train group)
// The configuration a job really built, as a JSON object: Megatron-LM argument names (an `args` namespace, a
// TransformerConfig / ModelParallelConfig, a framework's megatron dict) or Bridge dotted keys; other names ignored.
LoadedInput load_facts_json(const SourceText& source);

// Builds a parse error "file:line:col: message".
[[noreturn]] void throw_parse_error(const Location& where, const std::string& message);

}  // namespace hcp::lint
