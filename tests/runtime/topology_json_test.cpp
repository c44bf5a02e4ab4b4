// The JSON views carry the fixture keys in the fixture's order and equal the fixture's group lists.
#include <gtest/gtest.h>

#include <sstream>

#include "fixture_cases.hpp"
#include "hcp/topology_json.hpp"

namespace hcp {
namespace {

TEST(TopologyJson, LayoutKeysInOrderAndEqualToFixtures) {
  const std::vector<std::string> keys = {"world_size",   "tp",         "pp",           "cp",          "dp",
                                         "order",        "hcp_sizes",  "cp_groups",    "tp_groups",   "dp_groups",
                                         "pp_groups",    "dp_cp_groups", "tp_cp_groups", "mp_groups",
                                         "tp_dp_cp_groups", "hcp_groups", "locality"};
  const auto cases = test::load_fixture_cases();
  ASSERT_FALSE(cases.empty());
  for (const auto& c : cases) {
    SCOPED_TRACE("fixture line " + std::to_string(c.line));
    const auto json = layout_json(Topology(c.config()));
    std::vector<std::string> got;
    for (const auto& item : json.items()) got.push_back(item.key());
    ASSERT_EQ(got, keys);
    for (const auto& key : keys) {
      if (key == "locality") continue;
      ASSERT_EQ(nlohmann::json::parse(json.at(key).dump()), c.json.at(key)) << key;
    }
    ASSERT_EQ(json.at("locality").size(), c.json.at("hcp_groups").size());
  }
}

// The streamed layout (hcp groups --format json) is the same text as the JSON tree's, and member_at is group_at
// member by member, on every fixture layout and a few more with every order and levels of three.
TEST(TopologyJson, StreamedLayoutEqualsTheTreeAndMembersEqualGroups) {
  std::vector<ParallelConfig> configs;
  for (const auto& c : test::load_fixture_cases()) configs.push_back(c.config());
  for (Order order : {Order::tp_cp_ep_dp_pp, Order::tp_cp_ep_pp_dp}) {
    ParallelConfig c;
    c.world_size = 96, c.tp = 2, c.pp = order == Order::tp_cp_ep_dp_pp ? 2 : 1, c.cp = 12, c.order = order;
    c.hcp_sizes = std::vector<int64_t>{2, 3, 2};
    c.gpus_per_node = 4;
    configs.push_back(c);
  }
  ASSERT_GT(configs.size(), 2u);
  for (const ParallelConfig& c : configs) {
    const Topology t(c);
    std::ostringstream streamed;
    write_layout_json(t, streamed);
    EXPECT_EQ(streamed.str(), layout_json(t).dump());
    std::vector<std::pair<GroupKind, int>> kinds;
    for (GroupKind kind : kFlatKindsListed) kinds.emplace_back(kind, 0);
    for (int k = 0; k < t.num_levels(); ++k) kinds.emplace_back(GroupKind::hcp, k);
    for (const auto& [kind, level] : kinds) {
      std::vector<int64_t> group(static_cast<size_t>(t.group_size(kind, level)));
      for (int64_t g = 0; g < t.group_count(kind, level); ++g) {
        t.group_at(kind, level, g, group);
        for (int64_t j = 0; j < t.group_size(kind, level); ++j) ASSERT_EQ(t.member_at(kind, level, g, j), group[j]);
      }
    }
  }
}

TEST(TopologyJson, RankViewHasCoordinatesAndEveryKind) {
  ParallelConfig c;
  c.world_size = 16;
  c.tp = 2;
  c.pp = 2;
  c.cp = 4;
  c.hcp_sizes = std::vector<int64_t>{2, 2};
  const auto j = rank_json(Topology(c), 5);
  EXPECT_EQ(j.at("rank"), 5);
  EXPECT_EQ(j.at("coords").dump(), R"({"tp":1,"cp":2,"dp":0,"pp":0})");
  EXPECT_EQ(j.at("groups").at("cp").at("ranks").dump(), "[1,3,5,7]");
  EXPECT_EQ(j.at("groups").at("hcp").at(0).at("ranks").dump(), "[5,7]");
  EXPECT_EQ(j.at("groups").at("hcp").at(1).at("ranks").dump(), "[1,5]");
  EXPECT_EQ(j.at("groups").at("hcp").at(1).at("rank_in_group"), 1);
}

}  // namespace
}  // namespace hcp
