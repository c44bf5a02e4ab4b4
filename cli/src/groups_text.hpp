#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hcp/topology.hpp"

namespace hcp::cli {

// The human-readable view of `hcp groups`. Large layouts are summarised: at most a few groups per kind and a few
// members per group are printed, so a world of a million ranks still fits on a screen.
std::string render_layout_text(const Topology& topology);
std::string render_rank_text(const Topology& topology, int64_t rank);

}  // namespace hcp::cli
