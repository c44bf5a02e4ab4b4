// The rank-group kinds of a Megatron-Core layout (layout.md), with their short names and Megatron's group_desc.
#pragma once

#include <array>
#include <string_view>

namespace hcp {

enum class GroupKind : int {
  tp = 0,        // TENSOR_MODEL_PARALLEL_GROUP            mask tp
  cp = 1,        // CONTEXT_PARALLEL_GROUP                 mask cp
  dp = 2,        // DATA_PARALLEL_GROUP                    mask dp
  pp = 3,        // PIPELINE_MODEL_PARALLEL_GROUP          mask pp
  dp_cp = 4,     // DATA_PARALLEL_GROUP_WITH_CP            mask dp-cp
  tp_cp = 5,     // TENSOR_AND_CONTEXT_PARALLEL_GROUP      mask tp-cp
  mp = 6,        // MODEL_PARALLEL_GROUP                   mask tp-pp
  tp_dp_cp = 7,  // TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP mask tp-dp-cp
  hcp = 8,       // HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L{level}
};

inline constexpr int kNumGroupKinds = 9;

// The flat kinds in the order the fixture file and `hcp groups --format json` list them.
inline constexpr std::array<GroupKind, 8> kFlatKindsListed = {GroupKind::cp,    GroupKind::tp,    GroupKind::dp,
                                                              GroupKind::pp,    GroupKind::dp_cp, GroupKind::tp_cp,
                                                              GroupKind::mp,    GroupKind::tp_dp_cp};

std::string_view group_kind_name(GroupKind kind);  // "tp", "cp", ..., "hcp"
// Accepts the short names; throws Error{not_found} listing them.
GroupKind parse_group_kind(std::string_view name);
// Megatron's group_desc for the kind, without the level suffix for hcp.
std::string_view megatron_group_desc(GroupKind kind);

}  // namespace hcp
