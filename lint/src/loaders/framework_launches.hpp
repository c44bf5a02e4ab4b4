// Frameworks that drive Megatron-Core through keys of their own (verl, NeMo-RL, ...): one reader per framework
// turns a program's arguments in a launch script into the Megatron launches it makes, under Bridge keys.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <string>
#include <vector>

#include "hcp/lint/loaders.hpp"
#include "../shell/shell_model.hpp"

namespace hcp::lint {

struct FrameworkLaunches {
  std::vector<ConfigVariant> variants;  // one per Megatron worker the program starts (role set)
  std::string skipped;                  // when there is none: why ("verl with the FSDP strategy")
  std::vector<SourceText> read;          // config files read for it (NeMo-RL's --config and what it inherits)
  std::vector<std::pair<Location, std::string>> unread;  // files it names that are not read, and why
};

// The framework never passes hierarchical_context_parallel_sizes to mpu.initialize_model_parallel (`where` says
// where it calls it): the sizes its config gives, mapped to ignored.model.hierarchical_context_parallel_sizes,
// say so for HCP027.
void hierarchical_sizes_not_passed(ConfigTree& tree, const std::string& framework, const std::string& where);

// A framework file's launches as the input's: each worker its own unit; no launch: skipped with why.
LoadedInput as_input(FrameworkLaunches launches);

// The parallel sizes a framework passes to mpu.initialize_model_parallel under Megatron's names
// (tensor_model_parallel_size, ...), and the TransformerConfig fields hcp's rules read (cp_comm_type, ...).
extern const std::vector<std::string_view> kMegatronSizes;
extern const std::vector<std::string_view> kTransformerFields;

// Pairs (framework key, Bridge key) for the sizes under `sizes_prefix` ("policy.megatron_cfg.") and the
// TransformerConfig fields under `fields_prefix` ("policy.megatron_cfg.model_overrides."); either may be empty.
void add_megatron_names(std::vector<std::pair<std::string, std::string>>& names, const std::string& sizes_prefix,
                        const std::string& fields_prefix);
// The settings of `raw` named in `names`, under their Bridge keys (Hydra interpolations resolved inside `raw`).
ConfigTree map_names(const ConfigTree& raw, const std::vector<std::pair<std::string, std::string>>& names);

// The Bridge key for a Megatron-LM argument's name (its argparse dest: "context_parallel_size", "seq_length"),
// a Bridge dotted key, or hcp's cluster names ("world_size"); "" for names no rule reads.
std::string megatron_arg_key(const std::string& name);

// A config file a launch names (NeMo-RL's --config, Primus's experiment), as launched from the working directory or
// from a folder above the script (the checkout it belongs to); `config` itself when found nowhere.
std::string find_launch_config(const std::string& config, const std::string& script);

// verl's trainers (python -m verl.trainer.main_ppo and its recipes): Hydra overrides over verl's trainer YAML.
// None when the program is not verl's.
std::optional<FrameworkLaunches> read_verl_launch(const std::vector<ShellWord>& words, size_t args_start);

// NeMo-RL's examples/run_<algo>.py [--config FILE] with Hydra overrides; `script` locates a relative FILE.
std::optional<FrameworkLaunches> read_nemo_rl_launch(const std::vector<ShellWord>& words, size_t args_start,
                                                     const std::string& script);

// ROLL's examples/start_<kind>_pipeline.py --config_name NAME: NAME.yaml next to `script`.
std::optional<FrameworkLaunches> read_roll_launch(const std::vector<ShellWord>& words, size_t args_start,
                                                  const std::string& script);

// A program given AReaL's actor.backend=megatron:... override, or a --config FILE that sets it.
std::optional<FrameworkLaunches> read_areal_launch(const std::vector<ShellWord>& words, size_t args_start,
                                                   const std::string& script);

// Primus's primus-cli ... -- train pretrain and examples/run_*pretrain.sh, with the experiment from --config or EXP.
std::optional<FrameworkLaunches> read_primus_launch(const ShellCommand& command, size_t args_start,
                                                    const std::string& script);

// The first framework reader that claims the program starting at command.words[args_start] of `script`.
std::optional<FrameworkLaunches> read_framework_launch(const ShellCommand& command, size_t args_start,
                                                       const std::string& script);

}  // namespace hcp::lint
