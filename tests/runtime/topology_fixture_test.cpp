// Every group list of every fixture case (computed with Megatron's own code) must match exactly, both from the
// full enumeration and from the per-rank queries.
#include <gtest/gtest.h>

#include "fixture_cases.hpp"

namespace hcp {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

Groups to_nested(const GroupList& list) {
  Groups out;
  for (size_t i = 0; i < list.count(); ++i) out.emplace_back(list.group(i).begin(), list.group(i).end());
  return out;
}

// For every rank: its group, group index and position must agree with the enumerated list.
void expect_queries_match(const Topology& t, GroupKind kind, int level, const Groups& expected) {
  for (size_t g = 0; g < expected.size(); ++g) {
    for (size_t i = 0; i < expected[g].size(); ++i) {
      const int64_t rank = expected[g][i];
      const Membership m = t.membership(rank, kind, level);
      ASSERT_EQ(m.group_index, static_cast<int64_t>(g)) << "rank " << rank;
      ASSERT_EQ(m.rank_in_group, static_cast<int64_t>(i)) << "rank " << rank;
      ASSERT_EQ(t.group_of(rank, kind, level), expected[g]) << "rank " << rank;
    }
  }
}

TEST(TopologyFixtures, MatchMegatronExactly) {
  const auto cases = test::load_fixture_cases();
  ASSERT_GE(cases.size(), 10u) << "fixture file missing or short: " << test::fixture_path();
  int compared = 0;
  for (const test::FixtureCase& c : cases) {
    SCOPED_TRACE("fixture line " + std::to_string(c.line));
    const Topology t(c.config());
    EXPECT_EQ(t.dp(), c.json.at("dp").get<int64_t>());
    for (GroupKind kind : kFlatKindsListed) {
      const std::string key = std::string(group_kind_name(kind)) + "_groups";
      SCOPED_TRACE(key);
      const Groups expected = c.json.at(key).get<Groups>();
      ASSERT_EQ(to_nested(t.groups(kind)), expected);
      expect_queries_match(t, kind, 0, expected);
      ++compared;
    }
    const auto levels = c.json.at("hcp_groups").get<std::vector<Groups>>();
    ASSERT_EQ(static_cast<size_t>(t.num_levels()), levels.size());
    for (int k = 0; k < t.num_levels(); ++k) {
      SCOPED_TRACE("hcp level " + std::to_string(k));
      ASSERT_EQ(to_nested(t.groups(GroupKind::hcp, k)), levels[static_cast<size_t>(k)]);
      expect_queries_match(t, GroupKind::hcp, k, levels[static_cast<size_t>(k)]);
      ++compared;
    }
  }
  EXPECT_GT(compared, 100);
}

}  // namespace
}  // namespace hcp
