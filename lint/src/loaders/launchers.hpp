// What the launcher in front of a training script gives: nodes, processes per node and the world size, from
// torchrun / python -m torch.distributed.run, srun (with the script's #SBATCH header), mpirun and the deepspeed
// launcher; and environment that the launcher sets (ray job submit --runtime-env-json env_vars).
#pragma once

#include <vector>

#include "hcp/lint/config_tree.hpp"
#include "../shell/shell_model.hpp"

namespace hcp::lint {

// The index of the training program's first argument in `words` (after the launcher chain and the script), or
// words.size() when the command runs no Python training program.
size_t training_arguments_start(const std::vector<ShellWord>& words);

// Whether the program starting at args_start is ms-swift's `megatron sft|pt|rlhf` (underscore flags).
bool is_ms_swift_megatron(const std::vector<ShellWord>& words, size_t args_start);

// Sets cluster.nodes, cluster.gpus_per_node, cluster.world_size (each known, defaulted or unknown) and launcher
// environment (env.NAME) from the launcher words of `command` (its words before `args_start`, and the command
// that ran it through `bash -c`), with `run.directives` for srun's defaults.
void read_launcher(const ShellCommand& command, size_t args_start, const ShellRun& run, ConfigTree& tree);

}  // namespace hcp::lint
