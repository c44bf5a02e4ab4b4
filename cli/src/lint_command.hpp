#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace hcp::cli {

// `hcp lint` (also installed as `hcp-lint`): lints training configs for context-parallel pitfalls.
std::function<int()> add_lint_command(CLI::App& app);

}  // namespace hcp::cli
