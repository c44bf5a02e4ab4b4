// JSON views of a Topology, shared by `hcp groups --format json`, the C ABI and the Python bindings.
#pragma once

#include <cstdint>
#include <iosfwd>

#include <nlohmann/json.hpp>

#include "hcp/topology.hpp"

namespace hcp {

// The whole layout with the keys of the fixture file, in its order: world_size, tp, pp, cp, dp, order, hcp_sizes
// (null when unset), cp_groups, tp_groups, dp_groups, pp_groups, dp_cp_groups, tp_cp_groups, mp_groups,
// tp_dp_cp_groups, hcp_groups (a list per level; [] when unset), then locality (one entry per level).
nlohmann::ordered_json layout_json(const Topology& topology);
// The same as layout_json(topology).dump(), written as it is made: memory independent of the world size (a world
// of 4M ranks is 10 lists of 4M numbers, gigabytes as a JSON tree).
void write_layout_json(const Topology& topology, std::ostream& os);

// One rank: its coordinates, and for each kind (and each hierarchical level) its group, the group's index and the
// rank's position in it.
nlohmann::ordered_json rank_json(const Topology& topology, int64_t rank);

// The config part shared by both views.
nlohmann::ordered_json config_json(const Topology& topology);
nlohmann::ordered_json locality_json(const Topology& topology, int level);

}  // namespace hcp
