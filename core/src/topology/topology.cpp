#include "hcp/topology.hpp"

#include <string>

#include "hcp/error.hpp"

namespace hcp {
namespace {

enum Dim : int { kTp = 0, kCp = 1, kEp = 2, kDp = 3, kPp = 4 };
constexpr unsigned bit(Dim d) { return 1u << d; }

// Order tokens, leftmost (fastest varying) first.
constexpr Dim kDefaultOrder[5] = {kTp, kCp, kEp, kDp, kPp};
constexpr Dim kPpBeforeDpOrder[5] = {kTp, kCp, kEp, kPp, kDp};

const Dim* order_dims(Order order) {
  return order == Order::tp_cp_ep_pp_dp ? kPpBeforeDpOrder : kDefaultOrder;
}

unsigned mask_of(GroupKind kind) {
  switch (kind) {
    case GroupKind::tp: return bit(kTp);
    case GroupKind::cp: return bit(kCp);
    case GroupKind::dp: return bit(kDp);
    case GroupKind::pp: return bit(kPp);
    case GroupKind::dp_cp: return bit(kDp) | bit(kCp);
    case GroupKind::tp_cp: return bit(kTp) | bit(kCp);
    case GroupKind::mp: return bit(kTp) | bit(kPp);
    case GroupKind::tp_dp_cp: return bit(kTp) | bit(kDp) | bit(kCp);
    case GroupKind::hcp: break;
  }
  throw Error(Errc::invalid_argument, "group kind " + std::to_string(static_cast<int>(kind)) + " has no flat mask");
}

}  // namespace

Topology::Topology(ParallelConfig config) : config_(std::move(config)) {
  config_.validate();
  dp_ = config_.dp();
  size_[kTp] = config_.tp;
  size_[kCp] = config_.cp;
  size_[kEp] = 1;  // the dense layout: Megatron's decoder generator always uses ep = 1
  size_[kDp] = dp_;
  size_[kPp] = config_.pp;
  int64_t stride = 1;
  for (int i = 0; i < 5; ++i) {
    const Dim d = order_dims(config_.order)[i];
    stride_[d] = stride;
    stride *= size_[d];
  }
  for (GroupKind kind : kFlatKindsListed) flat_[static_cast<int>(kind)] = flat_shape(mask_of(kind));
  for (int k = 0; k < num_levels(); ++k) levels_.push_back(level_shape(k));
}

Topology::Shape Topology::flat_shape(unsigned mask) const {
  Shape s;
  for (int i = 0; i < 5; ++i) {
    const Dim d = order_dims(config_.order)[i];
    if (mask & bit(d)) s.group_size *= size_[d];
    if (size_[d] == 1) continue;  // a digit that is always 0 changes nothing
    if (mask & bit(d)) {
      s.members[s.num_members++] = {size_[d], stride_[d]};
    } else {
      s.groups[s.num_groups++] = {size_[d], stride_[d]};
    }
  }
  return s;
}

// Level k of CP group R: members R[a*s*u + j*u + b] (j fastest), groups listed b fastest, then a, then the CP
// group. Position x in a CP group is global rank base + x * cp_stride, so each index becomes a global-rank digit.
Topology::Shape Topology::level_shape(int level) const {
  const std::vector<int64_t>& sizes = *config_.hcp_sizes;
  int64_t below = 1, above = 1;
  for (int j = 0; j < level; ++j) below *= sizes[j];
  for (size_t j = static_cast<size_t>(level) + 1; j < sizes.size(); ++j) above *= sizes[j];
  const int64_t s = sizes[level];
  const int64_t cs = stride_[kCp];
  Shape shape;
  shape.group_size = s;
  if (s > 1) shape.members[shape.num_members++] = {s, below * cs};
  if (below > 1) shape.groups[shape.num_groups++] = {below, cs};
  if (above > 1) shape.groups[shape.num_groups++] = {above, s * below * cs};
  const Shape& cp_groups = flat_[static_cast<int>(GroupKind::cp)];
  for (int i = 0; i < cp_groups.num_groups; ++i) shape.groups[shape.num_groups++] = cp_groups.groups[i];
  return shape;
}

const Topology::Shape& Topology::shape(GroupKind kind, int level) const {
  if (kind != GroupKind::hcp) {
    (void)mask_of(kind);  // rejects out-of-range kinds
    return flat_[static_cast<int>(kind)];
  }
  if (num_levels() == 0) {
    throw Error(Errc::not_found, "no hierarchical context-parallel sizes are configured, so there are no hcp groups");
  }
  if (level < 0 || level >= num_levels()) {
    throw Error(Errc::invalid_argument, "hierarchical level " + std::to_string(level) + " out of range [0, " +
                                            std::to_string(num_levels()) + ")");
  }
  return levels_[static_cast<size_t>(level)];
}

void Topology::check_rank(int64_t rank) const {
  if (rank < 0 || rank >= config_.world_size) {
    throw Error(Errc::invalid_argument, "rank " + std::to_string(rank) + " out of range [0, " +
                                            std::to_string(config_.world_size) + ")");
  }
}

RankCoords Topology::coords(int64_t rank) const {
  check_rank(rank);
  auto at = [&](Dim d) { return (rank / stride_[d]) % size_[d]; };
  return {at(kTp), at(kCp), at(kDp), at(kPp)};
}

Membership Topology::membership(int64_t rank, GroupKind kind, int level) const {
  check_rank(rank);
  const Shape& s = shape(kind, level);
  Membership m;
  m.group_size = s.group_size;
  int64_t radix = 1;
  for (int i = 0; i < s.num_members; ++i) {
    m.rank_in_group += (rank / s.members[i].stride) % s.members[i].size * radix;
    radix *= s.members[i].size;
  }
  radix = 1;
  for (int i = 0; i < s.num_groups; ++i) {
    m.group_index += (rank / s.groups[i].stride) % s.groups[i].size * radix;
    radix *= s.groups[i].size;
  }
  return m;
}

int64_t Topology::group_size(GroupKind kind, int level) const { return shape(kind, level).group_size; }

int64_t Topology::group_count(GroupKind kind, int level) const {
  return config_.world_size / shape(kind, level).group_size;
}

namespace {

// Writes base + (every mixed-radix combination of digits), fastest digit first.
template <typename Digit>
void expand(const Digit* digits, int n, int64_t base, int64_t* out, int64_t count) {
  int64_t value[8] = {};
  int64_t rank = base;
  for (int64_t m = 0; m < count; ++m) {
    out[m] = rank;
    for (int i = 0; i < n; ++i) {
      rank += digits[i].stride;
      if (++value[i] < digits[i].size) break;
      rank -= digits[i].size * digits[i].stride;
      value[i] = 0;
    }
  }
}

void check_capacity(std::span<int64_t> out, int64_t needed, GroupKind kind) {
  if (out.size() < static_cast<size_t>(needed)) {
    throw Error(Errc::buffer_too_small, "groups of kind " + std::string(group_kind_name(kind)) + " need " +
                                            std::to_string(needed) + " entries, buffer holds " +
                                            std::to_string(out.size()));
  }
}

}  // namespace

void Topology::group_of(int64_t rank, GroupKind kind, int level, std::span<int64_t> out) const {
  check_rank(rank);
  const Shape& s = shape(kind, level);
  check_capacity(out, s.group_size, kind);
  int64_t base = rank;
  for (int i = 0; i < s.num_members; ++i) base -= (rank / s.members[i].stride) % s.members[i].size * s.members[i].stride;
  expand(s.members, s.num_members, base, out.data(), s.group_size);
}

std::vector<int64_t> Topology::group_of(int64_t rank, GroupKind kind, int level) const {
  std::vector<int64_t> out(static_cast<size_t>(group_size(kind, level)));
  group_of(rank, kind, level, out);
  return out;
}

void Topology::group_at(GroupKind kind, int level, int64_t index, std::span<int64_t> out) const {
  const Shape& s = shape(kind, level);
  const int64_t count = config_.world_size / s.group_size;
  if (index < 0 || index >= count) {
    throw Error(Errc::invalid_argument, "group index " + std::to_string(index) + " out of range [0, " +
                                            std::to_string(count) + ")");
  }
  check_capacity(out, s.group_size, kind);
  int64_t base = 0;
  for (int i = 0; i < s.num_groups; ++i) {
    base += index % s.groups[i].size * s.groups[i].stride;
    index /= s.groups[i].size;
  }
  expand(s.members, s.num_members, base, out.data(), s.group_size);
}

int64_t Topology::member_at(GroupKind kind, int level, int64_t index, int64_t j) const {
  const Shape& s = shape(kind, level);
  const int64_t count = config_.world_size / s.group_size;
  if (index < 0 || index >= count || j < 0 || j >= s.group_size) {
    throw Error(Errc::invalid_argument, "member " + std::to_string(j) + " of group " + std::to_string(index) +
                                            " out of range (" + std::to_string(count) + " groups of " +
                                            std::to_string(s.group_size) + ")");
  }
  // Mixed radix, digit 0 fastest, as expand() counts: the group index over the group digits, j over the members.
  int64_t rank = 0;
  for (int i = 0; i < s.num_groups; ++i) {
    rank += index % s.groups[i].size * s.groups[i].stride;
    index /= s.groups[i].size;
  }
  for (int i = 0; i < s.num_members; ++i) {
    rank += j % s.members[i].size * s.members[i].stride;
    j /= s.members[i].size;
  }
  return rank;
}

void Topology::groups(GroupKind kind, int level, std::span<int64_t> out) const {
  const Shape& s = shape(kind, level);
  check_capacity(out, config_.world_size, kind);
  const int64_t count = config_.world_size / s.group_size;
  std::vector<int64_t> bases(static_cast<size_t>(count));
  expand(s.groups, s.num_groups, 0, bases.data(), count);
  std::vector<int64_t> offsets(static_cast<size_t>(s.group_size));
  expand(s.members, s.num_members, 0, offsets.data(), s.group_size);
  int64_t* dst = out.data();
  for (int64_t base : bases) {
    for (int64_t off : offsets) *dst++ = base + off;
  }
}

GroupList Topology::groups(GroupKind kind, int level) const {
  GroupList list;
  list.group_size = group_size(kind, level);
  list.ranks.resize(static_cast<size_t>(config_.world_size));
  groups(kind, level, list.ranks);
  return list;
}

Locality Topology::locality(GroupKind kind, int level) const {
  const Shape& s = shape(kind, level);
  Locality loc;
  loc.group_size = s.group_size;
  loc.groups = config_.world_size / s.group_size;
  int64_t last_offset = 0;  // member offsets start at 0 and the largest is the sum of (size-1)*stride
  for (int i = 0; i < s.num_members; ++i) last_offset += (s.members[i].size - 1) * s.members[i].stride;
  loc.span = last_offset + 1;
  std::vector<int64_t> bases(static_cast<size_t>(loc.groups));
  expand(s.groups, s.num_groups, 0, bases.data(), loc.groups);
  const int64_t node = config_.gpus_per_node;
  for (int64_t base : bases) loc.groups_crossing_nodes += (base / node != (base + last_offset) / node);
  return loc;
}

}  // namespace hcp
