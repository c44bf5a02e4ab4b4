// Frameworks that drive Megatron-Core through keys of their own (verl, NeMo-RL, ...): one reader per framework
// turns a program's arguments in a launch script into the Megatron launches it makes, under Bridge keys.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hcp/lint/loaders.hpp"
#include "../shell/shell_model.hpp"

namespace hcp::lint {

struct FrameworkLaunches {
  std::vector<ConfigVariant> variants;  // one per Megatron worker the program starts (role set)
  std::string skipped;                  // when there is none: why ("verl with the FSDP strategy")
};

// verl's trainers (python -m verl.trainer.main_ppo and its recipes): Hydra overrides over verl's trainer YAML.
// None when the program is not verl's.
std::optional<FrameworkLaunches> read_verl_launch(const std::vector<ShellWord>& words, size_t args_start);

// The first framework reader that claims the program starting at words[args_start].
std::optional<FrameworkLaunches> read_framework_launch(const std::vector<ShellWord>& words, size_t args_start);

}  // namespace hcp::lint
