// Properties over many configurations, and a comparison with a direct transcription of Megatron's algorithm
// (generate_masked_orthogonal_rank_groups + the hierarchical sub-grids, as layout.md states them).
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>
#include <string>

#include "hcp/topology.hpp"

namespace hcp {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

// Megatron's generator, written the slow obvious way: decompose every index and take inner products.
Groups reference_masked_groups(const ParallelConfig& c, int64_t dp, const std::vector<std::string>& masked) {
  const std::vector<std::string> order = c.order == Order::tp_cp_ep_dp_pp
                                             ? std::vector<std::string>{"tp", "cp", "ep", "dp", "pp"}
                                             : std::vector<std::string>{"tp", "cp", "ep", "pp", "dp"};
  const std::map<std::string, int64_t> size = {{"tp", c.tp}, {"cp", c.cp}, {"ep", 1}, {"dp", dp}, {"pp", c.pp}};
  std::vector<int64_t> mshape, mstride, ushape, ustride;
  int64_t stride = 1;
  for (const auto& tok : order) {
    const bool is_masked = std::find(masked.begin(), masked.end(), tok) != masked.end();
    (is_masked ? mshape : ushape).push_back(size.at(tok));
    (is_masked ? mstride : ustride).push_back(stride);
    stride *= size.at(tok);
  }
  auto decompose_dot = [](int64_t index, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
    int64_t r = 0;
    for (size_t i = 0; i < shape.size(); ++i) {
      r += index % shape[i] * strides[i];
      index /= shape[i];
    }
    return r;
  };
  const int64_t group_size = std::accumulate(mshape.begin(), mshape.end(), int64_t{1}, std::multiplies<>());
  Groups out;
  for (int64_t g = 0; g < c.world_size / group_size; ++g) {
    std::vector<int64_t> ranks;
    for (int64_t m = 0; m < group_size; ++m) ranks.push_back(decompose_dot(m, mshape, mstride) + decompose_dot(g, ushape, ustride));
    out.push_back(ranks);
  }
  return out;
}

Groups reference_level_groups(const Groups& cp_groups, const std::vector<int64_t>& sizes, size_t k) {
  int64_t u = 1, l = 1;
  for (size_t j = 0; j < k; ++j) u *= sizes[j];
  for (size_t j = k + 1; j < sizes.size(); ++j) l *= sizes[j];
  Groups out;
  for (const auto& R : cp_groups) {
    for (int64_t a = 0; a < l; ++a) {
      for (int64_t b = 0; b < u; ++b) {
        std::vector<int64_t> g;
        for (int64_t j = 0; j < sizes[k]; ++j) g.push_back(R[static_cast<size_t>(a * sizes[k] * u + j * u + b)]);
        out.push_back(g);
      }
    }
  }
  return out;
}

Groups nested(const GroupList& list) {
  Groups out;
  for (size_t i = 0; i < list.count(); ++i) out.emplace_back(list.group(i).begin(), list.group(i).end());
  return out;
}

std::vector<int64_t> random_factorization(int64_t n, std::mt19937& rng) {
  std::vector<int64_t> out;
  const int levels = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int i = 0; i + 1 < levels; ++i) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= n; ++d) if (n % d == 0) divisors.push_back(d);
    const int64_t d = divisors[std::uniform_int_distribution<size_t>(0, divisors.size() - 1)(rng)];
    out.push_back(d);
    n /= d;
  }
  out.push_back(n);
  return out;
}

std::vector<ParallelConfig> random_configs(int count) {
  std::mt19937 rng(20261129);
  auto pick = [&](std::vector<int64_t> v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  std::vector<ParallelConfig> out;
  while (static_cast<int>(out.size()) < count) {
    ParallelConfig c;
    c.tp = pick({1, 2, 3, 4, 8});
    c.pp = pick({1, 2, 3});
    c.cp = pick({1, 2, 3, 4, 6, 8, 12, 16});
    const int64_t dp = pick({1, 2, 3});
    c.world_size = c.tp * c.pp * c.cp * dp;
    c.order = pick({0, 1}) ? Order::tp_cp_ep_pp_dp : Order::tp_cp_ep_dp_pp;
    if (c.order == Order::tp_cp_ep_pp_dp && c.pp > 1 && c.cp > 1) continue;
    if (pick({0, 1, 1})) c.hcp_sizes = random_factorization(c.cp, rng);
    c.gpus_per_node = pick({4, 8});
    out.push_back(c);
  }
  return out;
}

std::string describe(const ParallelConfig& c) {
  std::string s = "world " + std::to_string(c.world_size) + " tp " + std::to_string(c.tp) + " pp " +
                  std::to_string(c.pp) + " cp " + std::to_string(c.cp) + " order " + std::string(order_name(c.order));
  if (c.hcp_sizes) {
    s += " sizes";
    for (int64_t v : *c.hcp_sizes) {
      s += ' ';
      s += std::to_string(v);
    }
  }
  return s;
}

const std::map<GroupKind, std::vector<std::string>> kMasks = {
    {GroupKind::tp, {"tp"}},       {GroupKind::cp, {"cp"}},       {GroupKind::dp, {"dp"}},
    {GroupKind::pp, {"pp"}},       {GroupKind::dp_cp, {"dp", "cp"}}, {GroupKind::tp_cp, {"tp", "cp"}},
    {GroupKind::mp, {"tp", "pp"}}, {GroupKind::tp_dp_cp, {"tp", "dp", "cp"}}};

TEST(TopologyProperties, MatchesReferenceAlgorithmOnRandomConfigs) {
  for (const ParallelConfig& c : random_configs(300)) {
    SCOPED_TRACE(describe(c));
    const Topology t(c);
    for (const auto& [kind, mask] : kMasks) {
      ASSERT_EQ(nested(t.groups(kind)), reference_masked_groups(c, t.dp(), mask)) << group_kind_name(kind);
    }
    const Groups cp_groups = reference_masked_groups(c, t.dp(), {"cp"});
    for (int k = 0; k < t.num_levels(); ++k) {
      ASSERT_EQ(nested(t.groups(GroupKind::hcp, k)), reference_level_groups(cp_groups, *c.hcp_sizes, size_t(k)))
          << "level " << k;
    }
  }
}

TEST(TopologyProperties, EveryRankInExactlyOneGroupPerKindAndQueriesAgree) {
  for (const ParallelConfig& c : random_configs(150)) {
    SCOPED_TRACE(describe(c));
    const Topology t(c);
    std::vector<std::pair<GroupKind, int>> kinds;
    for (GroupKind kind : kFlatKindsListed) kinds.emplace_back(kind, 0);
    for (int k = 0; k < t.num_levels(); ++k) kinds.emplace_back(GroupKind::hcp, k);
    for (auto [kind, level] : kinds) {
      const GroupList list = t.groups(kind, level);
      std::vector<int> seen(static_cast<size_t>(c.world_size), 0);
      for (size_t g = 0; g < list.count(); ++g) {
        const auto members = list.group(g);
        std::vector<int64_t> at(members.size());
        t.group_at(kind, level, static_cast<int64_t>(g), at);
        ASSERT_TRUE(std::equal(at.begin(), at.end(), members.begin()));
        for (size_t i = 0; i < members.size(); ++i) {
          ++seen[static_cast<size_t>(members[i])];
          const Membership m = t.membership(members[i], kind, level);
          ASSERT_EQ(m.group_index, static_cast<int64_t>(g));
          ASSERT_EQ(m.rank_in_group, static_cast<int64_t>(i));
        }
      }
      for (int s : seen) ASSERT_EQ(s, 1) << group_kind_name(kind) << " level " << level;
    }
  }
}

TEST(TopologyProperties, LevelsPartitionEachCpGroupAndComposeTheCpRank) {
  for (const ParallelConfig& c : random_configs(150)) {
    if (!c.hcp_sizes) continue;
    SCOPED_TRACE(describe(c));
    const Topology t(c);
    const auto& sizes = *c.hcp_sizes;
    for (int64_t rank = 0; rank < c.world_size; ++rank) {
      const std::vector<int64_t> cp_group = t.group_of(rank, GroupKind::cp);
      const int64_t cp_rank = t.membership(rank, GroupKind::cp).rank_in_group;
      ASSERT_EQ(cp_rank, t.coords(rank).cp);
      int64_t composed = 0, radix = 1;
      for (int k = 0; k < t.num_levels(); ++k) {
        for (int64_t member : t.group_of(rank, GroupKind::hcp, k)) {
          ASSERT_NE(std::find(cp_group.begin(), cp_group.end(), member), cp_group.end());
        }
        composed += t.membership(rank, GroupKind::hcp, k).rank_in_group * radix;
        radix *= sizes[static_cast<size_t>(k)];
      }
      ASSERT_EQ(composed, cp_rank);  // two levels: cp_rank == a2a_rank + a2a_size * p2p_rank
    }
  }
}

TEST(TopologyProperties, LocalityAgreesWithEnumeration) {
  for (const ParallelConfig& c : random_configs(100)) {
    if (!c.hcp_sizes) continue;
    SCOPED_TRACE(describe(c));
    const Topology t(c);
    for (int k = 0; k < t.num_levels(); ++k) {
      const GroupList list = t.groups(GroupKind::hcp, k);
      int64_t crossing = 0;
      for (size_t g = 0; g < list.count(); ++g) {
        const auto m = list.group(g);
        const auto [lo, hi] = std::minmax_element(m.begin(), m.end());
        crossing += (*lo / c.gpus_per_node != *hi / c.gpus_per_node);
      }
      EXPECT_EQ(t.locality(GroupKind::hcp, k).groups_crossing_nodes, crossing);
    }
  }
}

}  // namespace
}  // namespace hcp
