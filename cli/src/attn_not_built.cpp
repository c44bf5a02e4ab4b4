// `hcp attn` in a tools-only build (HCP_TOOLS_ONLY): the subcommand exists so that a script calling it gets a clear
// refusal and the documented usage exit code instead of "unknown subcommand", whatever arguments it passes.
#include <iostream>

#include "attn_command.hpp"
#include "exit_codes.hpp"

namespace hcp::cli {

std::function<int()> add_attn_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("attn", "CP attention (not part of this tools-only build)");
  cmd->allow_extras();
  cmd->prefix_command();  // every later argument belongs to it, options included
  return [] {
    std::cerr << "hcp attn: error: not part of this build (configured with HCP_TOOLS_ONLY=ON: lint, logscan, plan "
                 "and groups only); build without HCP_TOOLS_ONLY for the CP attention runtime\n";
    return kExitInput;
  };
}

}  // namespace hcp::cli
