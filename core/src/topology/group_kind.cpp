#include "hcp/group_kind.hpp"

#include <string>

#include "hcp/error.hpp"

namespace hcp {
namespace {

struct KindInfo {
  GroupKind kind;
  std::string_view name;
  std::string_view desc;
};

constexpr KindInfo kKinds[kNumGroupKinds] = {
    {GroupKind::tp, "tp", "TENSOR_MODEL_PARALLEL_GROUP"},
    {GroupKind::cp, "cp", "CONTEXT_PARALLEL_GROUP"},
    {GroupKind::dp, "dp", "DATA_PARALLEL_GROUP"},
    {GroupKind::pp, "pp", "PIPELINE_MODEL_PARALLEL_GROUP"},
    {GroupKind::dp_cp, "dp_cp", "DATA_PARALLEL_GROUP_WITH_CP"},
    {GroupKind::tp_cp, "tp_cp", "TENSOR_AND_CONTEXT_PARALLEL_GROUP"},
    {GroupKind::mp, "mp", "MODEL_PARALLEL_GROUP"},
    {GroupKind::tp_dp_cp, "tp_dp_cp", "TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP"},
    {GroupKind::hcp, "hcp", "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L"},
};

const KindInfo& info(GroupKind kind) {
  const int i = static_cast<int>(kind);
  if (i < 0 || i >= kNumGroupKinds) {
    throw Error(Errc::invalid_argument, "unknown group kind value " + std::to_string(i));
  }
  return kKinds[i];
}

}  // namespace

std::string_view group_kind_name(GroupKind kind) { return info(kind).name; }
std::string_view megatron_group_desc(GroupKind kind) { return info(kind).desc; }

GroupKind parse_group_kind(std::string_view name) {
  std::string known;
  for (const KindInfo& k : kKinds) {
    if (k.name == name) return k.kind;
    known += (known.empty() ? "" : ", ") + std::string(k.name);
  }
  throw Error(Errc::not_found, "unknown group kind '" + std::string(name) + "' (expected one of " + known + ")");
}

}  // namespace hcp
