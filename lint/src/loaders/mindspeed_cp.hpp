// MindSpeed's --context-parallel-algo and --ulysses-degree-in-cp, read as mindspeed.* keys by the Megatron flag
// reader, become Megatron's model.cp_comm_type and model.hierarchical_context_parallel_sizes.
#pragma once

#include "hcp/lint/config_tree.hpp"

namespace hcp::lint {

void apply_mindspeed_cp(ConfigTree& tree);

}  // namespace hcp::lint
