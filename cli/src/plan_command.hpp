#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace hcp::cli {

// `hcp plan`: ranks the CP layouts of a model on a cluster (plan/include/hcp/plan/plan.hpp).
std::function<int()> add_plan_command(CLI::App& app);

}  // namespace hcp::cli
