// C ABI over hcp::Topology.
#include <cstddef>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "guard.hpp"
#include "hcp/topology.hpp"
#include "hcp/topology_json.hpp"
#include "hcp/topology_svg.hpp"
#include "parallel_config_c.hpp"
#include "strings.hpp"
#include "struct_versions.hpp"

struct hcp_topology {
  hcp::Topology topology;
};

namespace hcp::capi {
namespace {

const Topology& topo(const hcp_topology* t, const char* fn) {
  require(t, fn, "topology");
  return t->topology;
}

GroupKind to_kind(hcp_group_kind k, const char* fn) {
  if (k < 0 || k >= kNumGroupKinds) {
    throw Error(Errc::invalid_argument, std::string(fn) + ": kind (" + std::to_string(k) +
                                            ") is not an hcp_group_kind value");
  }
  return static_cast<GroupKind>(k);
}

// The buffer protocol shared by group_of and groups: report the need, refuse a short buffer, then fill.
template <typename Fill>
void fill_buffer(int64_t* ranks, size_t capacity, size_t* out_needed, size_t needed, const char* fn, Fill&& fill) {
  require(out_needed, fn, "out_needed");
  *out_needed = needed;
  if (capacity < needed) {
    throw Error(Errc::buffer_too_small, std::string(fn) + ": buffer holds " + std::to_string(capacity) +
                                            " ranks, " + std::to_string(needed) + " needed");
  }
  require(ranks, fn, "ranks");
  fill(std::span<int64_t>(ranks, capacity));
}

}  // namespace
}  // namespace hcp::capi

using namespace hcp::capi;

extern "C" {

HCP_API hcp_status hcp_topology_create(hcp_topology** out, const hcp_parallel_config* config) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    *out = new hcp_topology{hcp::Topology(to_config(config, fn))};
  });
}

HCP_API void hcp_topology_destroy(hcp_topology* topology) {
  forget_handle(topology);
  delete topology;
}

HCP_API hcp_status hcp_topology_last_error(char** out_message, const hcp_topology* topology) {
  return copy_handle_error(out_message, topology, __func__);
}

HCP_API hcp_status hcp_topology_dp(int64_t* out_dp, const hcp_topology* topology) {
  const char* fn = __func__;
  return guarded_on(topology, fn, [&] {
    require(out_dp, fn, "out_dp");
    *out_dp = topo(topology, fn).dp();
  });
}

HCP_API hcp_status hcp_topology_num_levels(int32_t* out_levels, const hcp_topology* topology) {
  const char* fn = __func__;
  return guarded_on(topology, fn, [&] {
    require(out_levels, fn, "out_levels");
    *out_levels = topo(topology, fn).num_levels();
  });
}

HCP_API hcp_status hcp_topology_group_size(int64_t* out_group_size, int64_t* out_group_count,
                                           const hcp_topology* topology, hcp_group_kind kind, int32_t level) {
  const char* fn = __func__;
  return guarded_on(topology, fn, [&] {
    require(out_group_size, fn, "out_group_size");
    require(out_group_count, fn, "out_group_count");
    const hcp::Topology& t = topo(topology, fn);
    const hcp::GroupKind k = to_kind(kind, fn);
    *out_group_size = t.group_size(k, level);
    *out_group_count = t.group_count(k, level);
  });
}

HCP_API hcp_status hcp_topology_coords(hcp_rank_coords* out, const hcp_topology* topology, int64_t rank) {
  const char* fn = __func__;
  return guarded_on(topology, fn, [&] {
    require(out, fn, "out");
    const hcp::RankCoords c = topo(topology, fn).coords(rank);
    const hcp_rank_coords value{sizeof(hcp_rank_coords), c.tp, c.cp, c.dp, c.pp};
    write_versioned(out, value, fn, "out");
  });
}

HCP_API hcp_status hcp_topology_membership(int64_t* out_group_index, int64_t* out_rank_in_group,
                                           const hcp_topology* topology, int64_t rank, hcp_group_kind kind,
                                           int32_t level) {
  const char* fn = __func__;
  return guarded_on(topology, fn, [&] {
    require(out_group_index, fn, "out_group_index");
    require(out_rank_in_group, fn, "out_rank_in_group");
    const hcp::Membership m = topo(topology, fn).membership(rank, to_kind(kind, fn), level);
    *out_group_index = m.group_index;
    *out_rank_in_group = m.rank_in_group;
  });
}

HCP_API hcp_status hcp_topology_group_of(int64_t* ranks, size_t capacity, size_t* out_needed,
                                         const hcp_topology* topology, int64_t rank, hcp_group_kind kind,
                                         int32_t level) {
  const char* fn = __func__;
  return guarded_on(topology, fn, [&] {
    const hcp::Topology& t = topo(topology, fn);
    const hcp::GroupKind k = to_kind(kind, fn);
    const auto needed = static_cast<size_t>(t.group_size(k, level));
    fill_buffer(ranks, capacity, out_needed, needed, fn,
                [&](std::span<int64_t> out) { t.group_of(rank, k, level, out); });
  });
}

HCP_API hcp_status hcp_topology_groups(int64_t* ranks, size_t capacity, size_t* out_needed,
                                       const hcp_topology* topology, hcp_group_kind kind, int32_t level) {
  const char* fn = __func__;
  return guarded_on(topology, fn, [&] {
    const hcp::Topology& t = topo(topology, fn);
    const hcp::GroupKind k = to_kind(kind, fn);
    (void)t.group_size(k, level);  // reports a bad level or missing sizes before the size
    const auto needed = static_cast<size_t>(t.config().world_size);
    fill_buffer(ranks, capacity, out_needed, needed, fn,
                [&](std::span<int64_t> out) { t.groups(k, level, out); });
  });
}

HCP_API hcp_status hcp_topology_locality(hcp_locality* out, const hcp_topology* topology, hcp_group_kind kind,
                                         int32_t level) {
  const char* fn = __func__;
  return guarded_on(topology, fn, [&] {
    require(out, fn, "out");
    const hcp::Locality l = topo(topology, fn).locality(to_kind(kind, fn), level);
    const hcp_locality value{sizeof(hcp_locality), l.group_size, l.span, l.groups, l.groups_crossing_nodes};
    write_versioned(out, value, fn, "out");
  });
}

HCP_API hcp_status hcp_topology_to_json(char** out_json, const hcp_topology* topology, int64_t rank) {
  const char* fn = __func__;
  return guarded_on(topology, fn, [&] {
    require(out_json, fn, "out_json");
    *out_json = nullptr;
    const hcp::Topology& t = topo(topology, fn);
    if (rank >= 0) {
      *out_json = dup_for_caller(hcp::rank_json(t, rank).dump());
      return;
    }
    // Written as it is made: the text alone (293 MB for 4M ranks), not a JSON tree of gigabytes first.
    std::ostringstream text;
    hcp::write_layout_json(t, text);
    *out_json = dup_for_caller(text.str());
  });
}

HCP_API hcp_status hcp_topology_to_svg(char** out_svg, const hcp_topology* topology, int64_t max_nodes) {
  const char* fn = __func__;
  return guarded_on(topology, fn, [&] {
    require(out_svg, fn, "out_svg");
    *out_svg = nullptr;
    hcp::SvgOptions o;
    if (max_nodes > 0) o.max_nodes = max_nodes;
    *out_svg = dup_for_caller(hcp::render_layout_svg(topo(topology, fn), o));
  });
}

}  // extern "C"
