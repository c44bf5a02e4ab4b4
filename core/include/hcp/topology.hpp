// The exact Megatron-Core rank layout of a ParallelConfig, with the hierarchical CP level groups.
//
// Every group kind is described by two lists of mixed-radix digits (size, stride) over the global rank: the digits
// that vary inside a group (members) and the digits that tell groups apart (groups), each listed fastest first.
// A digit's value for rank g is (g / stride) % size. That one description gives the full enumeration in
// Megatron's order and O(digits) per-rank queries from coordinates, without enumerating anything.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hcp/group_kind.hpp"
#include "hcp/parallel_config.hpp"

namespace hcp {

// All groups of one kind, equal sized, stored flat: group i is ranks[i*group_size, (i+1)*group_size).
struct GroupList {
  int64_t group_size = 0;
  std::vector<int64_t> ranks;

  size_t count() const { return group_size ? ranks.size() / static_cast<size_t>(group_size) : 0; }
  std::span<const int64_t> group(size_t i) const {
    return {ranks.data() + i * static_cast<size_t>(group_size), static_cast<size_t>(group_size)};
  }
};

// Where a rank sits in one group kind: the group's index in enumeration order and the rank's position inside it.
struct Membership {
  int64_t group_index = 0;
  int64_t rank_in_group = 0;
  int64_t group_size = 0;
};

// A rank's coordinate along each parallel dimension.
struct RankCoords {
  int64_t tp = 0, cp = 0, dp = 0, pp = 0;
};

// Whether the groups of one kind stay inside one node of gpus_per_node consecutive ranks.
struct Locality {
  int64_t group_size = 0;
  int64_t span = 0;                   // global-rank distance from first to last member, plus one
  int64_t groups = 0;                 // number of groups of this kind
  int64_t groups_crossing_nodes = 0;  // groups whose members are not all in one node
  bool intra_node() const { return groups_crossing_nodes == 0; }
};

class Topology {
 public:
  // Validates the config (throws Error{invalid_config}).
  explicit Topology(ParallelConfig config);

  const ParallelConfig& config() const { return config_; }
  int64_t dp() const { return dp_; }
  int num_levels() const { return config_.hcp_sizes ? static_cast<int>(config_.hcp_sizes->size()) : 0; }

  // Rank and level arguments are checked: an out-of-range rank or level, or kind hcp without hierarchical sizes,
  // throws Error{invalid_argument} / Error{not_found}. `level` is ignored for the flat kinds.
  RankCoords coords(int64_t rank) const;
  Membership membership(int64_t rank, GroupKind kind, int level = 0) const;
  int64_t group_size(GroupKind kind, int level = 0) const;
  int64_t group_count(GroupKind kind, int level = 0) const;

  // The members of `rank`'s group, in Megatron's order. `out` must hold group_size(kind, level) values.
  void group_of(int64_t rank, GroupKind kind, int level, std::span<int64_t> out) const;
  std::vector<int64_t> group_of(int64_t rank, GroupKind kind, int level = 0) const;

  // Group number `index` (in Megatron's order) of a kind, computed from the index alone. `out` as for group_of.
  void group_at(GroupKind kind, int level, int64_t index, std::span<int64_t> out) const;
  // Member `j` of group number `index`, as group_at writes it at out[j], in O(levels) time and no memory: what
  // summaries and streamed JSON of worlds too large to hold a group in memory use.
  int64_t member_at(GroupKind kind, int level, int64_t index, int64_t j) const;

  // Every group of a kind, in Megatron's order. `out` must hold world_size values (every kind partitions the world).
  void groups(GroupKind kind, int level, std::span<int64_t> out) const;
  GroupList groups(GroupKind kind, int level = 0) const;

  Locality locality(GroupKind kind, int level = 0) const;

 private:
  struct Digit {
    int64_t size;
    int64_t stride;
  };
  struct Shape {
    Digit members[8];
    int num_members = 0;
    Digit groups[8];
    int num_groups = 0;
    int64_t group_size = 1;
  };

  const Shape& shape(GroupKind kind, int level) const;
  void check_rank(int64_t rank) const;
  Shape flat_shape(unsigned mask) const;
  Shape level_shape(int level) const;

  ParallelConfig config_;
  int64_t dp_ = 1;
  int64_t stride_[5] = {};  // per Dim, in global rank units
  int64_t size_[5] = {};
  Shape flat_[8];
  std::vector<Shape> levels_;
};

}  // namespace hcp
