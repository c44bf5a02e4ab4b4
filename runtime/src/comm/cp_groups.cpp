#include "hcp/cp_groups.hpp"

#include <string>

#include "host_exchange.hpp"
#include "hcp/log.hpp"
#include "hcp/topology.hpp"

namespace hcp {
namespace {

std::string rank_list(const std::vector<int64_t>& ranks) {
  std::string text = "[";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(ranks[i]);
  }
  text += ']';
  return text;
}

// Splits `world` into the groups of one kind and checks the new group against the Topology.
Status split_checked(Communicator& world, const Topology& topology, GroupKind kind, int level,
                     std::unique_ptr<Communicator>* out, std::vector<int64_t>* members, CpEngine* staging) {
  const int64_t rank = world.rank();
  const Membership m = topology.membership(rank, kind, level);
  HCP_TRY(world.split(static_cast<int>(m.group_index), static_cast<int>(m.rank_in_group), out));
  Communicator& group = **out;
  members->assign(static_cast<size_t>(group.size()), 0);
  HCP_TRY(host_all_gather(group, staging, &rank, members->data(), sizeof(int64_t)));
  if (group.size() != m.group_size || group.rank() != m.rank_in_group ||
      *members != topology.group_of(rank, kind, level))
    return Status(Errc::internal, "rank " + std::to_string(rank) + ": split gave group " + rank_list(*members) +
                                      " (position " + std::to_string(group.rank()) + "), the layout says " +
                                      rank_list(topology.group_of(rank, kind, level)));
  return {};
}

Status build(Communicator& world, const ParallelConfig& config, CpGroups* out, LogLevel log_level,
             CpEngine* staging) {
  if (auto problem = config.check()) return Status(Errc::invalid_config, *problem);
  if (config.world_size != world.size())
    return Status(Errc::invalid_config, "config world_size " + std::to_string(config.world_size) +
                                            " != communicator size " + std::to_string(world.size()));
  const Topology topology(config);
  CpGroups groups;
  HCP_TRY(split_checked(world, topology, GroupKind::cp, 0, &groups.cp, &groups.cp_ranks, staging));
  for (int level = 0; level < topology.num_levels(); ++level) {
    auto& comm = groups.levels.emplace_back();
    HCP_TRY(split_checked(world, topology, GroupKind::hcp, level, &comm, &groups.level_ranks.emplace_back(),
                         staging));
  }

  const std::string who = "[hcp] rank " + std::to_string(world.rank()) + ": created ";
  log_line(log_level, who + "CONTEXT_PARALLEL_GROUP size=" + std::to_string(groups.cp_ranks.size()) +
                               " ranks=" + rank_list(groups.cp_ranks));
  if (config.hcp_sizes) {
    std::string line = who + "HIERARCHICAL_CONTEXT_PARALLEL_GROUPS sizes=" + rank_list(*config.hcp_sizes);
    for (size_t level = 0; level < groups.level_ranks.size(); ++level)
      line += " L" + std::to_string(level) + "=" + rank_list(groups.level_ranks[level]);
    log_line(log_level, line);
  }
  *out = std::move(groups);
  return {};
}

}  // namespace

Status build_cp_groups(Communicator& world, const ParallelConfig& config, CpGroups* out, LogLevel log_level,
                       CpEngine* staging) {
  if (out == nullptr) return Status(Errc::invalid_argument, "build_cp_groups: out is NULL");
  Status status;
  try {
    status = build(world, config, out, log_level, staging);
  } catch (const Error& e) {
    status = Status(e.code(), e.what());
  }
  if (!status.ok()) world.abort(status.code(), status.message());
  return status;
}

}  // namespace hcp
