// Which training-config form a YAML file is, by its top-level keys: each form has its own loader, and a YAML file
// of no known form (another tool's config, a cluster file, a list) is skipped with what it was taken for, never
// linted as a Megatron-Bridge tree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hcp::lint {

enum class YamlForm {
  bridge,                    // Megatron-Bridge ConfigContainer overrides: model:, dataset:, dist:, train:, ...
  megatron_functional_test,  // Megatron-LM tests/functional_tests model_config.yaml: MODEL_ARGS:, ENV_VARS:
  nemo_launcher,             // NeMo-1 / NeMo-Framework-Launcher training YAML: trainer:, model:, exp_manager:
  megatron_yaml_cfg,         // Megatron-LM --yaml-cfg: language_model:, model_parallel:
  verl,                      // a verl trainer config: actor_rollout_ref:
  nemo_rl,                   // a NeMo-RL config: policy: with megatron_cfg / dtensor_cfg, cluster:
  roll,                      // a ROLL pipeline config: workers (actor_train:, ...) with strategy_args:
  areal,                     // an AReaL config: actor: and rollout: with backend allocation strings
  primus,                    // a Primus experiment: modules: with a trainer module and its framework
  flagscale,                 // a FlagScale top config: experiment: with its task, and a train group
  other,
};

struct YamlClass {
  YamlForm form = YamlForm::other;
  std::string taken_for;  // for `other`: what the file looks like, for the skip message
};

YamlClass classify_yaml(std::string_view text);

// A section of Bridge's ConfigContainer ("model", "dataset", "dist", ...) or hcp's own "cluster" / "env".
bool is_bridge_section(std::string_view key);

// Why a file of `kind` ("YAML", "TOML", "JSON") with these top-level keys is skipped: none of the forms read.
std::string unknown_form_reason(std::string_view kind, const std::vector<std::string>& keys);

}  // namespace hcp::lint
