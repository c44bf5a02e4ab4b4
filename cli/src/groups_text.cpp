#include "groups_text.hpp"

#include <sstream>
#include <vector>

namespace hcp::cli {
namespace {

constexpr int64_t kMaxGroupsShown = 8;    // per kind; the first ones, then a count of the rest
constexpr int64_t kMaxMembersShown = 10;  // per group; the first ones, then "..." and the last

std::string kind_label(GroupKind kind, int level) {
  if (kind == GroupKind::hcp) return "hcp L" + std::to_string(level);
  return std::string(group_kind_name(kind));
}

// Group `index` of a kind, summarised: read member by member, so a group of 2^26 ranks costs no memory.
std::string members_text(const Topology& t, GroupKind kind, int level, int64_t index) {
  std::string s = "[";
  const int64_t n = t.group_size(kind, level);
  for (int64_t i = 0; i < n; ++i) {
    if (n > kMaxMembersShown && i == kMaxMembersShown - 2) {
      s += ",...," + std::to_string(t.member_at(kind, level, index, n - 1));
      break;
    }
    if (i) s += ',';
    s += std::to_string(t.member_at(kind, level, index, i));
  }
  return s + "]";
}

std::string config_line(const Topology& t) {
  const ParallelConfig& c = t.config();
  std::ostringstream o;
  o << "layout: world_size " << c.world_size << ", tp " << c.tp << ", pp " << c.pp << ", cp " << c.cp << ", dp "
    << t.dp() << ", order " << order_name(c.order) << ", hcp sizes ";
  if (c.hcp_sizes) {
    o << "[";
    for (size_t i = 0; i < c.hcp_sizes->size(); ++i) o << (i ? ", " : "") << (*c.hcp_sizes)[i];
    o << "]";
  } else {
    o << "none";
  }
  o << ", gpus per node " << c.gpus_per_node << "\n";
  return o.str();
}

void kind_row(std::ostringstream& o, const Topology& t, GroupKind kind, int level) {
  const int64_t count = t.group_count(kind, level);
  const int64_t size = t.group_size(kind, level);
  char head[64];
  std::snprintf(head, sizeof head, "  %-9s %9lld x %-7lld", kind_label(kind, level).c_str(),
                static_cast<long long>(count), static_cast<long long>(size));
  o << head;
  for (int64_t g = 0; g < count && g < kMaxGroupsShown; ++g) o << " " << members_text(t, kind, level, g);
  if (count > kMaxGroupsShown) o << " ... (" << count - kMaxGroupsShown << " more)";
  o << "\n";
}

std::string locality_text(const Topology& t, int level) {
  const Locality loc = t.locality(GroupKind::hcp, level);
  std::ostringstream o;
  o << "  L" << level << " (size " << loc.group_size << ", span " << loc.span << " ranks): ";
  if (loc.intra_node()) {
    o << "every group stays inside one node of " << t.config().gpus_per_node << " GPUs";
  } else {
    o << loc.groups_crossing_nodes << " of " << loc.groups << " groups cross node boundaries ("
      << t.config().gpus_per_node << " GPUs per node)";
  }
  return o.str() + "\n";
}

}  // namespace

std::string render_layout_text(const Topology& t) {
  std::ostringstream o;
  o << config_line(t);
  o << "  kind         groups x size    members\n";
  for (GroupKind kind : kFlatKindsListed) kind_row(o, t, kind, 0);
  for (int k = 0; k < t.num_levels(); ++k) kind_row(o, t, GroupKind::hcp, k);
  if (t.num_levels() > 0) {
    o << "locality:\n";
    for (int k = 0; k < t.num_levels(); ++k) o << locality_text(t, k);
  }
  return o.str();
}

std::string render_rank_text(const Topology& t, int64_t rank) {
  std::ostringstream o;
  o << config_line(t);
  const RankCoords c = t.coords(rank);
  o << "rank " << rank << ": tp " << c.tp << ", cp " << c.cp << ", dp " << c.dp << ", pp " << c.pp << "\n";
  auto row = [&](GroupKind kind, int level) {
    const Membership m = t.membership(rank, kind, level);
    char head[96];
    std::snprintf(head, sizeof head, "  %-9s group %lld of %lld, rank %lld of %lld: ", kind_label(kind, level).c_str(),
                  static_cast<long long>(m.group_index), static_cast<long long>(t.group_count(kind, level)),
                  static_cast<long long>(m.rank_in_group), static_cast<long long>(m.group_size));
    o << head << members_text(t, kind, level, m.group_index) << "\n";
  };
  for (GroupKind kind : kFlatKindsListed) row(kind, 0);
  for (int k = 0; k < t.num_levels(); ++k) row(GroupKind::hcp, k);
  return o.str();
}

}  // namespace hcp::cli
