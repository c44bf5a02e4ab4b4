// The topology C ABI: results equal the C++ layer, every argument is checked, versioned structs behave.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hcp/hcp.h"

namespace {

struct TopologyHandle {
  hcp_topology* t = nullptr;
  ~TopologyHandle() { hcp_topology_destroy(t); }
};

hcp_parallel_config example_config(const int64_t* sizes) {
  hcp_parallel_config c = HCP_PARALLEL_CONFIG_INIT;
  c.world_size = 16;
  c.tp = 2;
  c.pp = 2;
  c.cp = 4;
  c.hcp_sizes = sizes;
  c.num_hcp_levels = 2;
  return c;
}

std::string last_error() { return hcp_last_error(); }

// An enum value a C caller could pass but no enumerator names (a cast would be unspecified in C++).
template <typename Enum>
Enum raw_enum(int value) {
  Enum e;
  static_assert(sizeof(Enum) == sizeof(int));
  std::memcpy(&e, &value, sizeof e);
  return e;
}

TEST(CapiTopology, CreateQueryDestroy) {
  const int64_t sizes[] = {2, 2};
  const hcp_parallel_config c = example_config(sizes);
  TopologyHandle h;
  ASSERT_EQ(hcp_topology_create(&h.t, &c), HCP_OK) << last_error();
  int64_t dp = 0;
  int32_t levels = 0;
  ASSERT_EQ(hcp_topology_dp(&dp, h.t), HCP_OK);
  ASSERT_EQ(hcp_topology_num_levels(&levels, h.t), HCP_OK);
  EXPECT_EQ(dp, 1);
  EXPECT_EQ(levels, 2);

  int64_t size = 0, count = 0;
  ASSERT_EQ(hcp_topology_group_size(&size, &count, h.t, HCP_GROUP_HCP, 0), HCP_OK);
  EXPECT_EQ(size, 2);
  EXPECT_EQ(count, 8);

  hcp_rank_coords coords = HCP_RANK_COORDS_INIT;
  ASSERT_EQ(hcp_topology_coords(&coords, h.t, 5), HCP_OK);
  EXPECT_EQ(coords.tp, 1);
  EXPECT_EQ(coords.cp, 2);

  int64_t index = -1, pos = -1;
  ASSERT_EQ(hcp_topology_membership(&index, &pos, h.t, 5, HCP_GROUP_HCP, 1), HCP_OK);
  EXPECT_EQ(index, 2);
  EXPECT_EQ(pos, 1);

  int64_t ranks[4] = {};
  size_t needed = 0;
  ASSERT_EQ(hcp_topology_group_of(ranks, 4, &needed, h.t, 5, HCP_GROUP_CP, 0), HCP_OK);
  EXPECT_EQ(needed, 4u);
  EXPECT_EQ(std::vector<int64_t>(ranks, ranks + 4), (std::vector<int64_t>{1, 3, 5, 7}));

  std::vector<int64_t> all(16);
  ASSERT_EQ(hcp_topology_groups(all.data(), all.size(), &needed, h.t, HCP_GROUP_HCP, 0), HCP_OK);
  EXPECT_EQ(all, (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}));

  hcp_locality loc = HCP_LOCALITY_INIT;
  ASSERT_EQ(hcp_topology_locality(&loc, h.t, HCP_GROUP_HCP, 0), HCP_OK);
  EXPECT_EQ(loc.groups, 8);
  EXPECT_EQ(loc.groups_crossing_nodes, 0);

  char* json = nullptr;
  ASSERT_EQ(hcp_topology_to_json(&json, h.t, -1), HCP_OK);
  EXPECT_NE(std::string(json).find("\"hcp_groups\":[[[0,2],[4,6],[1,3],[5,7],[8,10],[12,14],[9,11],[13,15]]"),
            std::string::npos);
  hcp_free(json);
  ASSERT_EQ(hcp_topology_to_json(&json, h.t, 5), HCP_OK);
  EXPECT_NE(std::string(json).find("\"rank\":5"), std::string::npos);
  hcp_free(json);
}

TEST(CapiTopology, InvalidConfigNamesTheCondition) {
  hcp_parallel_config c = HCP_PARALLEL_CONFIG_INIT;
  c.world_size = 8;
  c.pp = 2;
  c.cp = 3;
  hcp_topology* t = reinterpret_cast<hcp_topology*>(0x1);
  EXPECT_EQ(hcp_topology_create(&t, &c), HCP_ERR_INVALID_CONFIG);
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(last_error(), "hcp_topology_create: world_size (8) is not divisible by tp * pp * cp (1 * 2 * 3 = 6)");
  c.order = 7;
  c.cp = 1;
  EXPECT_EQ(hcp_topology_create(&t, &c), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("config->order (7)"), std::string::npos);
  c.order = HCP_ORDER_TP_CP_EP_DP_PP;
  c.num_hcp_levels = 2;  // with hcp_sizes NULL
  EXPECT_EQ(hcp_topology_create(&t, &c), HCP_ERR_INVALID_ARGUMENT);
}

TEST(CapiTopology, NullArgumentsAreRejected) {
  const int64_t sizes[] = {2, 2};
  const hcp_parallel_config c = example_config(sizes);
  TopologyHandle h;
  ASSERT_EQ(hcp_topology_create(&h.t, &c), HCP_OK);
  int64_t v = 0;
  int32_t l = 0;
  size_t n = 0;
  int64_t buf[16];
  hcp_rank_coords coords = HCP_RANK_COORDS_INIT;
  hcp_locality loc = HCP_LOCALITY_INIT;
  char* json = nullptr;
  EXPECT_EQ(hcp_topology_create(nullptr, &c), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_dp(nullptr, h.t), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_dp(&v, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_num_levels(nullptr, h.t), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_num_levels(&l, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_group_size(nullptr, &v, h.t, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_group_size(&v, nullptr, h.t, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_group_size(&v, &v, nullptr, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_coords(nullptr, h.t, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_coords(&coords, nullptr, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_membership(nullptr, &v, h.t, 0, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_membership(&v, nullptr, h.t, 0, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_membership(&v, &v, nullptr, 0, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_group_of(buf, 16, nullptr, h.t, 0, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_group_of(nullptr, 16, &n, h.t, 0, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_group_of(buf, 16, &n, nullptr, 0, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_groups(buf, 16, nullptr, h.t, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_groups(nullptr, 16, &n, h.t, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_groups(buf, 16, &n, nullptr, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_locality(nullptr, h.t, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_locality(&loc, nullptr, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_to_json(nullptr, h.t, -1), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_to_json(&json, nullptr, -1), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(json, nullptr);
  hcp_topology_destroy(nullptr);
}

TEST(CapiTopology, BadKindRankAndLevel) {
  const int64_t sizes[] = {2, 2};
  const hcp_parallel_config c = example_config(sizes);
  TopologyHandle h;
  ASSERT_EQ(hcp_topology_create(&h.t, &c), HCP_OK);
  int64_t v = 0;
  EXPECT_EQ(hcp_topology_group_size(&v, &v, h.t, raw_enum<hcp_group_kind>(9), 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_group_size(&v, &v, h.t, raw_enum<hcp_group_kind>(-1), 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_group_size(&v, &v, h.t, HCP_GROUP_HCP, 2), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_membership(&v, &v, h.t, 16, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("rank 16 out of range [0, 16)"), std::string::npos) << last_error();
  EXPECT_EQ(hcp_topology_membership(&v, &v, h.t, -1, HCP_GROUP_CP, 0), HCP_ERR_INVALID_ARGUMENT);

  hcp_parallel_config flat = HCP_PARALLEL_CONFIG_INIT;
  flat.world_size = 4;
  flat.cp = 4;
  TopologyHandle f;
  ASSERT_EQ(hcp_topology_create(&f.t, &flat), HCP_OK);
  EXPECT_EQ(hcp_topology_group_size(&v, &v, f.t, HCP_GROUP_HCP, 0), HCP_ERR_NOT_FOUND);
}

TEST(CapiTopology, ShortBuffersReportTheNeededSize) {
  const int64_t sizes[] = {2, 2};
  const hcp_parallel_config c = example_config(sizes);
  TopologyHandle h;
  ASSERT_EQ(hcp_topology_create(&h.t, &c), HCP_OK);
  int64_t buf[3] = {-7, -7, -7};
  size_t needed = 0;
  EXPECT_EQ(hcp_topology_group_of(buf, 3, &needed, h.t, 0, HCP_GROUP_CP, 0), HCP_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(needed, 4u);
  EXPECT_EQ(buf[0], -7);  // nothing written
  EXPECT_EQ(hcp_topology_group_of(nullptr, 0, &needed, h.t, 0, HCP_GROUP_TP_CP, 0), HCP_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(needed, 8u);
  EXPECT_EQ(hcp_topology_groups(buf, 3, &needed, h.t, HCP_GROUP_TP, 0), HCP_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(needed, 16u);
}

TEST(CapiTopology, VersionedConfigStruct) {
  hcp_topology* t = nullptr;
  // A caller compiled against a first-version struct (through cp) gets the defaults for the rest.
  hcp_parallel_config c = HCP_PARALLEL_CONFIG_INIT;
  c.world_size = 8;
  c.cp = 8;
  c.ep = 99;  // beyond the caller's struct_size: must be ignored
  c.struct_size = offsetof(hcp_parallel_config, ep);
  ASSERT_EQ(hcp_topology_create(&t, &c), HCP_OK) << last_error();
  hcp_topology_destroy(t);
  // Smaller than the first version.
  c.struct_size = offsetof(hcp_parallel_config, cp);
  EXPECT_EQ(hcp_topology_create(&t, &c), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("struct_size"), std::string::npos);
  c.struct_size = 0;
  EXPECT_EQ(hcp_topology_create(&t, &c), HCP_ERR_INVALID_ARGUMENT);

  // A caller from the future: larger struct, unknown tail zero -> accepted; non-zero -> unsupported.
  struct Future {
    hcp_parallel_config base;
    int64_t unknown_field;
  } future{};
  future.base = HCP_PARALLEL_CONFIG_INIT;
  future.base.struct_size = sizeof(Future);
  future.base.world_size = 4;
  future.base.cp = 4;
  ASSERT_EQ(hcp_topology_create(&t, &future.base), HCP_OK) << last_error();
  hcp_topology_destroy(t);
  future.unknown_field = 1;
  EXPECT_EQ(hcp_topology_create(&t, &future.base), HCP_ERR_UNSUPPORTED);

  // Output structs: too small is refused, larger is filled up to what the library knows.
  c = HCP_PARALLEL_CONFIG_INIT;
  c.world_size = 4;
  c.cp = 4;
  ASSERT_EQ(hcp_topology_create(&t, &c), HCP_OK);
  hcp_rank_coords coords = HCP_RANK_COORDS_INIT;
  coords.struct_size = sizeof(size_t);
  EXPECT_EQ(hcp_topology_coords(&coords, t, 3), HCP_ERR_INVALID_ARGUMENT);
  struct FutureCoords {
    hcp_rank_coords base;
    int64_t extra;
  } fc{};
  fc.base.struct_size = sizeof(FutureCoords);
  fc.extra = 42;
  ASSERT_EQ(hcp_topology_coords(&fc.base, t, 3), HCP_OK);
  EXPECT_EQ(fc.base.cp, 3);
  EXPECT_EQ(fc.extra, 42);
  EXPECT_EQ(fc.base.struct_size, sizeof(FutureCoords));
  hcp_topology_destroy(t);
}

TEST(CapiTopology, ConcurrentQueriesOnOneHandle) {
  hcp_parallel_config c = HCP_PARALLEL_CONFIG_INIT;
  c.world_size = 4096;
  c.tp = 8;
  c.cp = 16;
  const int64_t sizes[] = {2, 8};
  c.hcp_sizes = sizes;
  c.num_hcp_levels = 2;
  TopologyHandle h;
  ASSERT_EQ(hcp_topology_create(&h.t, &c), HCP_OK);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&, w] {
      int64_t group[8];
      size_t n = 0;
      for (int64_t r = w; r < 4096; r += 4) {
        if (hcp_topology_group_of(group, 8, &n, h.t, r, HCP_GROUP_HCP, 1) != HCP_OK) ++failures[w];
        if (std::find(group, group + 8, r) == group + 8) ++failures[w];
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
