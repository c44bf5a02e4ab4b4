// `#SBATCH` header lines: kept for the launcher facts, and turned into the environment Slurm gives the script
// (SLURM_NNODES from --nodes, ...), so that `--nnodes $SLURM_NNODES` is known in a batch script that says it.
#pragma once

#include <map>
#include <string>

#include "shell_interpreter.hpp"

namespace hcp::lint::shell {

void read_directives(const SourceText& script, ShellRun& out, Vars& env);

}  // namespace hcp::lint::shell
