// Validation gives each upstream condition as an error with the values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hcp/error.hpp"
#include "hcp/parallel_config.hpp"

namespace hcp {
namespace {

using ::testing::HasSubstr;

ParallelConfig make(int64_t world, int64_t tp, int64_t pp, int64_t cp) {
  ParallelConfig c;
  c.world_size = world;
  c.tp = tp;
  c.pp = pp;
  c.cp = cp;
  return c;
}

std::string validation_error(const ParallelConfig& c) {
  try {
    c.validate();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_config);
    return e.what();
  }
  ADD_FAILURE() << "config was accepted";
  return "";
}

TEST(ParallelConfig, AcceptsValidConfigsAndComputesDp) {
  ParallelConfig c = make(64, 4, 2, 4);
  c.hcp_sizes = std::vector<int64_t>{2, 2};
  EXPECT_NO_THROW(c.validate());
  EXPECT_EQ(c.dp(), 2);
}

TEST(ParallelConfig, WorldNotDivisible) {
  EXPECT_THAT(validation_error(make(8, 1, 2, 3)),
              HasSubstr("world_size (8) is not divisible by tp * pp * cp (1 * 2 * 3 = 6)"));
}

TEST(ParallelConfig, HierarchicalProductMismatch) {
  ParallelConfig c = make(8, 1, 1, 8);
  c.hcp_sizes = std::vector<int64_t>{2, 2};
  EXPECT_THAT(validation_error(c), HasSubstr("[2, 2] (=4) must equal context-parallel size (=8)"));
}

TEST(ParallelConfig, EmptyOrNonPositiveLevels) {
  ParallelConfig c = make(4, 1, 1, 4);
  c.hcp_sizes = std::vector<int64_t>{};
  EXPECT_THAT(validation_error(c), HasSubstr("at least one level"));
  c.hcp_sizes = std::vector<int64_t>{-2, -2};
  EXPECT_THAT(validation_error(c), HasSubstr("level 0 must be positive"));
}

TEST(ParallelConfig, ExpertParallelWithContextParallel) {
  ParallelConfig c = make(8, 1, 1, 2);
  c.ep = 2;
  EXPECT_THAT(validation_error(c), HasSubstr("expert-model-parallel size (2) > 1 together with context-parallel"));
  c.cp = 1;
  EXPECT_NO_THROW(c.validate());
}

TEST(ParallelConfig, PpBeforeDpOrderWithPipelineAndContext) {
  ParallelConfig c = make(16, 1, 2, 2);
  c.order = Order::tp_cp_ep_pp_dp;
  EXPECT_THAT(validation_error(c), HasSubstr("order tp-cp-ep-pp-dp (use_tp_pp_dp_mapping) with pp (2) > 1 and cp (2)"));
  c.pp = 1;
  EXPECT_NO_THROW(c.validate());
}

TEST(ParallelConfig, NonPositiveSizes) {
  EXPECT_THAT(validation_error(make(0, 1, 1, 1)), HasSubstr("world_size must be positive (got 0)"));
  EXPECT_THAT(validation_error(make(8, -1, 1, 1)), HasSubstr("(tp) must be positive (got -1)"));
  EXPECT_THAT(validation_error(make(8, 1, 0, 1)), HasSubstr("(pp) must be positive (got 0)"));
  EXPECT_THAT(validation_error(make(8, 1, 1, 0)), HasSubstr("(cp) must be positive (got 0)"));
  ParallelConfig c = make(8, 1, 1, 1);
  c.gpus_per_node = 0;
  EXPECT_THAT(validation_error(c), HasSubstr("gpus_per_node must be positive"));
}

TEST(ParallelConfig, OverflowingSizes) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_THAT(validation_error(make(1024, big, big, 1)), HasSubstr("tp * pp overflows"));
  EXPECT_THAT(validation_error(make(1024, 1, big, big)), HasSubstr("tp * pp * cp overflows"));
  ParallelConfig c = make(4, 1, 1, 4);
  c.hcp_sizes = std::vector<int64_t>{big, big, 4};
  EXPECT_THAT(validation_error(c), HasSubstr("product of hierarchical context-parallel sizes overflows"));
  EXPECT_THAT(validation_error(make(int64_t{1} << 32, 1, 1, 1)), HasSubstr("exceeds the largest NCCL world"));
}

TEST(ParallelConfig, OrderNames) {
  EXPECT_EQ(parse_order("tp-cp-ep-pp-dp"), Order::tp_cp_ep_pp_dp);
  EXPECT_EQ(order_name(Order::tp_cp_ep_dp_pp), "tp-cp-ep-dp-pp");
  EXPECT_THROW(parse_order("tp-dp-cp"), Error);
}

}  // namespace
}  // namespace hcp
