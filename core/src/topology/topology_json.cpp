#include "hcp/topology_json.hpp"

#include <ostream>
#include <string>

namespace hcp {
namespace {

using Json = nlohmann::ordered_json;

Json group_list_json(const GroupList& list) {
  Json out = Json::array();
  for (size_t i = 0; i < list.count(); ++i) {
    const auto g = list.group(i);
    out.push_back(Json(std::vector<int64_t>(g.begin(), g.end())));
  }
  return out;
}

Json membership_json(const Topology& t, int64_t rank, GroupKind kind, int level) {
  const Membership m = t.membership(rank, kind, level);
  Json out;
  out["group_index"] = m.group_index;
  out["rank_in_group"] = m.rank_in_group;
  out["size"] = m.group_size;
  out["ranks"] = t.group_of(rank, kind, level);
  return out;
}

}  // namespace

Json config_json(const Topology& t) {
  const ParallelConfig& c = t.config();
  Json out;
  out["world_size"] = c.world_size;
  out["tp"] = c.tp;
  out["pp"] = c.pp;
  out["cp"] = c.cp;
  out["dp"] = t.dp();
  out["order"] = std::string(order_name(c.order));
  out["hcp_sizes"] = c.hcp_sizes ? Json(*c.hcp_sizes) : Json(nullptr);
  return out;
}

Json locality_json(const Topology& t, int level) {
  const Locality loc = t.locality(GroupKind::hcp, level);
  Json out;
  out["level"] = level;
  out["size"] = loc.group_size;
  out["gpus_per_node"] = t.config().gpus_per_node;
  out["span"] = loc.span;
  out["groups"] = loc.groups;
  out["groups_crossing_nodes"] = loc.groups_crossing_nodes;
  out["intra_node"] = loc.intra_node();
  return out;
}

Json layout_json(const Topology& t) {
  Json out = config_json(t);
  for (GroupKind kind : kFlatKindsListed) {
    out[std::string(group_kind_name(kind)) + "_groups"] = group_list_json(t.groups(kind));
  }
  Json levels = Json::array();
  Json locality = Json::array();
  for (int k = 0; k < t.num_levels(); ++k) {
    levels.push_back(group_list_json(t.groups(GroupKind::hcp, k)));
    locality.push_back(locality_json(t, k));
  }
  out["hcp_groups"] = std::move(levels);
  out["locality"] = std::move(locality);
  return out;
}

namespace {

// One kind's groups as JSON text, member by member: the same characters as group_list_json(...).dump().
void write_groups(std::ostream& os, const Topology& t, GroupKind kind, int level) {
  const int64_t count = t.group_count(kind, level), size = t.group_size(kind, level);
  os << '[';
  for (int64_t g = 0; g < count; ++g) {
    os << (g ? ",[" : "[");
    for (int64_t j = 0; j < size; ++j) {
      if (j) os << ',';
      os << t.member_at(kind, level, g, j);
    }
    os << ']';
  }
  os << ']';
}

}  // namespace

void write_layout_json(const Topology& t, std::ostream& os) {
  std::string head = config_json(t).dump();
  head.pop_back();  // the closing brace: the groups follow
  os << head;
  for (GroupKind kind : kFlatKindsListed) {
    os << ",\"" << group_kind_name(kind) << "_groups\":";
    write_groups(os, t, kind, 0);
  }
  os << ",\"hcp_groups\":[";
  for (int k = 0; k < t.num_levels(); ++k) {
    if (k) os << ',';
    write_groups(os, t, GroupKind::hcp, k);
  }
  os << "],\"locality\":[";
  for (int k = 0; k < t.num_levels(); ++k) os << (k ? "," : "") << locality_json(t, k).dump();
  os << "]}";
}

Json rank_json(const Topology& t, int64_t rank) {
  const RankCoords c = t.coords(rank);
  Json out = config_json(t);
  out["rank"] = rank;
  out["coords"] = Json{{"tp", c.tp}, {"cp", c.cp}, {"dp", c.dp}, {"pp", c.pp}};
  Json groups;
  for (GroupKind kind : kFlatKindsListed) groups[std::string(group_kind_name(kind))] = membership_json(t, rank, kind, 0);
  Json levels = Json::array();
  for (int k = 0; k < t.num_levels(); ++k) {
    Json level = membership_json(t, rank, GroupKind::hcp, k);
    level["level"] = k;
    const auto& ranks = level["ranks"];
    const int64_t node = t.config().gpus_per_node;
    level["intra_node"] = ranks.front().get<int64_t>() / node == ranks.back().get<int64_t>() / node;
    levels.push_back(std::move(level));
  }
  groups["hcp"] = std::move(levels);
  out["groups"] = std::move(groups);
  return out;
}

}  // namespace hcp
