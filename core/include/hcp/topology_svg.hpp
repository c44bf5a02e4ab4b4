// The layout as a picture (`hcp groups --svg`, `hcp plan --html`): nodes as boxes of GPUs, each GPU with its rank
// and coordinates, and the CP groups drawn over them - the a2a groups (hierarchical level 0) as lines, the rings
// (the other levels, or the flat CP group) as closed paths - green when a group stays in its node, red when it
// crosses to another. Self-contained SVG: no scripts, no external fonts or images.
#pragma once

#include <cstdint>
#include <string>

#include "hcp/topology.hpp"

namespace hcp {

struct SvgOptions {
  int64_t max_nodes = 16;  // nodes drawn (and at most 4096 GPUs); beyond them the picture says how many are left out
  bool standalone = true;  // with the XML declaration (a file); false: an <svg> element to inline in HTML
};

// What the picture holds, for the caption and the tests.
struct SvgSummary {
  int64_t nodes_shown = 0, nodes_total = 0;
  int64_t a2a_groups = 0, rings = 0;  // groups drawn (those with a member among the nodes shown)
};

// Throws Error{invalid_argument} for nodes of more than 1024 GPUs.
std::string render_layout_svg(const Topology& topology, const SvgOptions& options = {}, SvgSummary* summary = nullptr);

}  // namespace hcp
