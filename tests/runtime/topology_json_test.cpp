// The JSON views carry the fixture keys in the fixture's order and equal the fixture's group lists.
#include <gtest/gtest.h>

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
