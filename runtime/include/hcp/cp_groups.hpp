// Building a rank's context-parallel groups on a communicator, with exactly the membership and rank order of the
// Topology (Megatron's layout): the CONTEXT_PARALLEL_GROUP and, with hierarchical sizes, one group per level.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "hcp/communicator.hpp"
#include "hcp/log.hpp"
#include "hcp/parallel_config.hpp"

namespace hcp {

class CpEngine;

struct CpGroups {
  std::unique_ptr<Communicator> cp;                   // CONTEXT_PARALLEL_GROUP
  std::vector<std::unique_ptr<Communicator>> levels;  // HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L<k>; empty without sizes
  std::vector<int64_t> cp_ranks;                      // world ranks of the CP group, in group order
  std::vector<std::vector<int64_t>> level_ranks;      // the same per level
};

// Collective over `world` (every world rank calls it with the same config). Splits the CP group and each level
// group, checks the result against the Topology (sizes, positions and members, exchanged over the new groups) and
// logs, at `log_level`:
//   [hcp] rank 5: created CONTEXT_PARALLEL_GROUP size=4 ranks=[4,5,6,7]
//   [hcp] rank 5: created HIERARCHICAL_CONTEXT_PARALLEL_GROUPS sizes=[2,2] L0=[4,5] L1=[5,7]
// Errors: invalid_config (the config, or world size != world.size()), internal (a split that disagrees with the
// Topology), and the communicator's errors. On error this rank aborts the world so that no peer waits forever.
// `staging`: the rank's device engine when the world moves device memory (NCCL, device callbacks): the checks'
// host bytes travel through its buffers.
Status build_cp_groups(Communicator& world, const ParallelConfig& config, CpGroups* out,
                       LogLevel log_level = LogLevel::info, CpEngine* staging = nullptr);

}  // namespace hcp
