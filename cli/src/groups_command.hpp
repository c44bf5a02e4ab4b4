#pragma once

#include <CLI/CLI.hpp>

namespace hcp::cli {

// `hcp groups`: the Megatron rank layout with hierarchical CP groups, as a table or JSON.
// Registers the subcommand; the returned callback runs it and gives the exit code.
std::function<int()> add_groups_command(CLI::App& app);

}  // namespace hcp::cli
