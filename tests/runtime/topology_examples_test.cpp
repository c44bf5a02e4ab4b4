// The worked examples of reference/layout.md, written out by hand.
#include <gtest/gtest.h>

#include "hcp/error.hpp"
#include "hcp/topology.hpp"

namespace hcp {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

Groups nested(const Topology& t, GroupKind kind, int level = 0) {
  const GroupList list = t.groups(kind, level);
  Groups out;
  for (size_t i = 0; i < list.count(); ++i) out.emplace_back(list.group(i).begin(), list.group(i).end());
  return out;
}

Topology make(int64_t world, int64_t tp, int64_t pp, int64_t cp, std::vector<int64_t> sizes) {
  ParallelConfig c;
  c.world_size = world;
  c.tp = tp;
  c.pp = pp;
  c.cp = cp;
  c.hcp_sizes = std::move(sizes);
  return Topology(c);
}

TEST(TopologyExamples, MegatronDocstringThreeLevels) {
  const Topology t = make(16, 1, 1, 16, {2, 2, 4});
  EXPECT_EQ(nested(t, GroupKind::hcp, 0),
            (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
  EXPECT_EQ(nested(t, GroupKind::hcp, 1),
            (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
  EXPECT_EQ(nested(t, GroupKind::hcp, 2), (Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
}

TEST(TopologyExamples, FunctionalTestLayout) {
  const Topology t = make(8, 1, 2, 4, {2, 2});
  EXPECT_EQ(nested(t, GroupKind::cp), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(nested(t, GroupKind::hcp, 0), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(nested(t, GroupKind::hcp, 1), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(nested(t, GroupKind::pp), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

TEST(TopologyExamples, TensorParallelTwo) {
  const Topology t = make(16, 2, 2, 4, {2, 2});
  EXPECT_EQ(nested(t, GroupKind::cp), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}}));
  EXPECT_EQ(nested(t, GroupKind::hcp, 0),
            (Groups{{0, 2}, {4, 6}, {1, 3}, {5, 7}, {8, 10}, {12, 14}, {9, 11}, {13, 15}}));
  EXPECT_EQ(nested(t, GroupKind::hcp, 1),
            (Groups{{0, 4}, {2, 6}, {1, 5}, {3, 7}, {8, 12}, {10, 14}, {9, 13}, {11, 15}}));
}

TEST(TopologyExamples, LocalityOfTheLargeExample) {
  // world 131072, tp 8, cp 16, sizes [2, 8]: CP group 0 is [0, 8, ..., 120]; every a2a pair crosses nodes.
  const Topology t = make(131072, 8, 8, 16, {2, 8});
  EXPECT_EQ(t.group_of(0, GroupKind::cp), (std::vector<int64_t>{0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96,
                                                                 104, 112, 120}));
  EXPECT_EQ(t.group_of(0, GroupKind::hcp, 0), (std::vector<int64_t>{0, 8}));
  const Locality l0 = t.locality(GroupKind::hcp, 0);
  EXPECT_EQ(l0.groups, 65536);
  EXPECT_EQ(l0.groups_crossing_nodes, 65536);
  EXPECT_FALSE(l0.intra_node());
  EXPECT_EQ(l0.span, 9);
}

TEST(TopologyExamples, LocalityInsideANode) {
  // tp 2, a2a 4: each a2a group spans 2*4 = 8 consecutive-node ranks starting at a node boundary.
  const Topology t = make(32, 2, 1, 8, {4, 2});
  const Locality l0 = t.locality(GroupKind::hcp, 0);
  EXPECT_TRUE(l0.intra_node());
  EXPECT_EQ(l0.span, 7);
  const Locality l1 = t.locality(GroupKind::hcp, 1);
  EXPECT_EQ(l1.groups_crossing_nodes, l1.groups);
  // The same layout with 4 GPUs per node: half the a2a groups' span would need 8 ranks.
  ParallelConfig c = t.config();
  c.gpus_per_node = 4;
  EXPECT_EQ(Topology(c).locality(GroupKind::hcp, 0).groups_crossing_nodes, 8);
}

TEST(TopologyExamples, QueriesRejectBadArguments) {
  const Topology t = make(8, 1, 2, 4, {2, 2});
  EXPECT_THROW(t.coords(8), Error);
  EXPECT_THROW(t.coords(-1), Error);
  EXPECT_THROW(t.group_of(0, GroupKind::hcp, 2), Error);
  EXPECT_THROW(t.group_of(0, static_cast<GroupKind>(42), 0), Error);
  std::vector<int64_t> small(1);
  try {
    t.group_of(0, GroupKind::cp, 0, small);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::buffer_too_small);
  }
  ParallelConfig flat;
  flat.world_size = 4;
  flat.cp = 4;
  try {
    Topology(flat).group_of(0, GroupKind::hcp, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
  }
}

}  // namespace
}  // namespace hcp
