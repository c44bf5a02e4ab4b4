// `hcp cli-json` (hidden): every command's definitions - options, their value types and fixed values, defaults,
// descriptions, groups, positionals, subcommands - as JSON. scripts/gen_cli_docs.py writes the man pages and the
// bash, zsh and fish completions from it, so that they are the CLI's own definitions, never a copy to keep in step.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace hcp::cli {

std::function<int()> add_cli_json_command(CLI::App& app);

}  // namespace hcp::cli
