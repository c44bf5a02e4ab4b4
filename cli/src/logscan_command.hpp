#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace hcp::cli {

// `hcp logscan` (also installed as `hcp-logscan`) and `hcp logscan diff BASE NEW`.
std::function<int()> add_logscan_command(CLI::App& app);

}  // namespace hcp::cli
