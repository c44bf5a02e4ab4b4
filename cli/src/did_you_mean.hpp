// Suggestions for what a user mistyped on the command line: an unknown option or subcommand gets the nearest known
// one, as ruff and git do ("--fromat": did you mean --format?).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace hcp::cli {

// CLI11's message `error` for `args` (argv without the program), with "(did you mean X?)" for the first word that
// names no option of the subcommand it belongs to, when one is close enough; a word where a subcommand belongs that
// names none is said so.
// The subcommand `args` names ("" for none), for "see hcp lint --help".
std::string subcommand_named(CLI::App& app, const std::vector<std::string>& args);

std::string parse_error_message(CLI::App& app, const std::vector<std::string>& args, const std::string& error);

}  // namespace hcp::cli
