#pragma once

#include <CLI/CLI.hpp>

namespace hcp::cli {

// `hcp attn`: runs a CP attention scheme on in-process ranks with random inputs; --check compares with
// single-rank attention on the full sequence, --bench reports time and GFLOP/s.
std::function<int()> add_attn_command(CLI::App& app);

}  // namespace hcp::cli
