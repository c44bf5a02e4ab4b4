// The in-process communicator: every operation's data, split membership and order, CP group building against the
// Topology, and the failure contract - a rank that errors, throws or stops answering makes every other rank fail
// within the timeout instead of hanging; ranks that disagree on sizes or shapes are reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "hcp/cp_attention.hpp"
#include "hcp/cp_groups.hpp"
#include "hcp/inprocess_world.hpp"
#include "hcp/topology.hpp"

namespace hcp {
namespace {

using std::chrono::milliseconds;

TEST(InProcessWorld, CollectivesMoveTheRightData) {
  InProcessWorld world(5);
  const Status s = world.run([](Communicator& c) -> Status {
    const int r = c.rank(), w = c.size();
    int mine = 100 + r, got = -1;
    HCP_TRY(c.send_recv(&mine, sizeof mine, (r + 1) % w, &got, sizeof got, (r + w - 1) % w));
    if (got != 100 + (r + w - 1) % w) return Status(Errc::internal, "ring");
    std::vector<int> send(w), recv(w);
    for (int j = 0; j < w; ++j) send[j] = 10 * r + j;
    HCP_TRY(c.all_to_all(send.data(), recv.data(), sizeof(int)));
    for (int j = 0; j < w; ++j)
      if (recv[j] != 10 * j + r) return Status(Errc::internal, "all_to_all");
    HCP_TRY(c.all_gather(&mine, recv.data(), sizeof(int)));
    for (int j = 0; j < w; ++j)
      if (recv[j] != 100 + j) return Status(Errc::internal, "all_gather");
    std::vector<float> blocks(2 * w);
    for (int j = 0; j < 2 * w; ++j) blocks[j] = static_cast<float>(r * 1000 + j);
    float sum[2];
    HCP_TRY(c.reduce_scatter_sum(blocks.data(), sum, 2));
    float want = 0;
    for (int q = 0; q < w; ++q) want += static_cast<float>(q * 1000 + 2 * r);
    if (sum[0] != want) return Status(Errc::internal, "reduce_scatter");
    return c.barrier();
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

// The sum is taken in rank order (values whose float sum depends on the order), with recv apart from send and with
// recv inside send (each rank's own block: reduced in place).
TEST(InProcessWorld, ReduceScatterSumsInRankOrderApartAndInPlace) {
  InProcessWorld world(4);
  const Status s = world.run([](Communicator& c) -> Status {
    const int r = c.rank(), w = c.size();
    const size_t count = 3;
    auto value = [](int rank, size_t i) {
      const float big[4] = {1e8f, 3.0f, -1e8f, 0.75f};
      return big[static_cast<size_t>(rank)] * static_cast<float>(i + 1) + static_cast<float>(i);
    };
    std::vector<float> blocks(count * static_cast<size_t>(w));
    for (int j = 0; j < w; ++j)
      for (size_t i = 0; i < count; ++i) blocks[static_cast<size_t>(j) * count + i] = value(r, i) + static_cast<float>(j);
    std::vector<float> want(count, 0.0f);
    for (int q = 0; q < w; ++q)
      for (size_t i = 0; i < count; ++i) want[i] += value(q, i) + static_cast<float>(r);
    std::vector<float> apart(count);
    HCP_TRY(c.reduce_scatter_sum(blocks.data(), apart.data(), count));
    if (apart != want) return Status(Errc::internal, "reduce_scatter apart");
    float* own = blocks.data() + static_cast<size_t>(r) * count;
    HCP_TRY(c.reduce_scatter_sum(blocks.data(), own, count));
    if (!std::equal(own, own + count, want.begin())) return Status(Errc::internal, "reduce_scatter in place");
    return {};
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(InProcessWorld, SplitOrdersByKeyThenRankAndSkipsNegativeColors) {
  InProcessWorld world(6);
  std::mutex mu;
  std::vector<std::vector<int>> seen(6);
  const Status s = world.run([&](Communicator& c) -> Status {
    const int r = c.rank();
    std::unique_ptr<Communicator> sub;
    // Color by parity, key descending; rank 5 opts out.
    HCP_TRY(c.split(r == 5 ? -1 : r % 2, -r, &sub));
    if (r == 5) return sub == nullptr ? Status() : Status(Errc::internal, "negative color got a group");
    std::vector<int> members(static_cast<size_t>(sub->size()));
    HCP_TRY(sub->all_gather(&r, members.data(), sizeof(int)));
    std::lock_guard lock(mu);
    seen[r] = members;
    return {};
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(seen[0], (std::vector<int>{4, 2, 0}));
  EXPECT_EQ(seen[1], (std::vector<int>{3, 1}));
}

// Random valid configs: the groups built by split have exactly the Topology's members in its order.
TEST(CpGroups, SplitGroupsMatchTheTopology) {
  std::mt19937 gen(7);
  int checked = 0;
  for (int trial = 0; trial < 60 && checked < 25; ++trial) {
    ParallelConfig c;
    c.tp = 1 << (gen() % 2);
    c.cp = std::vector<int64_t>{2, 3, 4, 6, 8}[gen() % 5];
    c.pp = 1 + gen() % 2;
    c.world_size = c.tp * c.cp * c.pp * (1 + gen() % 2);
    if (c.world_size > 32) continue;
    if (c.cp % 2 == 0 && gen() % 2) c.hcp_sizes = std::vector<int64_t>{2, c.cp / 2};
    if (c.check()) continue;
    ++checked;
    InProcessWorld world(static_cast<int>(c.world_size));
    const Status s = world.run([&](Communicator& comm) -> Status {
      CpGroups g;
      return build_cp_groups(comm, c, &g, LogLevel::debug);  // checks members against the Topology itself
    });
    EXPECT_TRUE(s.ok()) << s.message();
  }
  EXPECT_GE(checked, 20);
}

TEST(CpGroups, LogsTheCreatedGroupsThroughTheCallback) {
  static std::mutex mu;
  static std::vector<std::string> lines;
  lines.clear();
  set_log_callback([](int, const char* line, void*) {
    std::lock_guard lock(mu);
    lines.emplace_back(line);
  }, nullptr);
  ParallelConfig c;
  c.world_size = 8, c.tp = 2, c.cp = 4, c.hcp_sizes = std::vector<int64_t>{2, 2};
  InProcessWorld world(8);
  const Status s = world.run([&](Communicator& comm) -> Status {
    CpGroups g;
    return build_cp_groups(comm, c, &g);
  });
  set_log_callback(nullptr, nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(lines.size(), 16u);
  EXPECT_NE(std::find(lines.begin(), lines.end(), "[hcp] rank 5: created CONTEXT_PARALLEL_GROUP size=4 ranks=[1,3,5,7]"),
            lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "[hcp] rank 5: created HIERARCHICAL_CONTEXT_PARALLEL_GROUPS sizes=[2,2] L0=[5,7] L1=[1,5]"),
            lines.end());
}

TEST(CpGroups, WorldSizeMismatchIsAConfigError) {
  ParallelConfig c;
  c.world_size = 8, c.cp = 4;
  InProcessWorld world(4, milliseconds(2000));
  const Status s = world.run([&](Communicator& comm) -> Status {
    CpGroups g;
    return build_cp_groups(comm, c, &g);
  });
  EXPECT_EQ(s.code(), Errc::invalid_config);
}

// Each rank's own outcome, for the failure tests.
struct Outcomes {
  std::mutex mu;
  std::vector<Status> per_rank;
  explicit Outcomes(int n) : per_rank(static_cast<size_t>(n)) {}
  void set(int r, Status s) {
    std::lock_guard lock(mu);
    per_rank[r] = std::move(s);
  }
};

TEST(InProcessWorldFailure, ARankThatThrowsInARingStepFailsEveryone) {
  InProcessWorld world(4, milliseconds(5000));
  Outcomes outcomes(4);
  const auto start = std::chrono::steady_clock::now();
  const Status s = world.run([&](Communicator& c) -> Status {
    std::vector<char> a(1024), b(1024);
    for (int step = 0; step < 3; ++step) {
      if (c.rank() == 2 && step == 1) throw std::runtime_error("injected failure");
      Status st = c.send_recv(a.data(), a.size(), (c.rank() + 1) % 4, b.data(), b.size(), (c.rank() + 3) % 4);
      if (!st.ok()) {
        outcomes.set(c.rank(), st);
        return st;
      }
    }
    return {};
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(4000));  // well inside the timeout
  EXPECT_EQ(s.code(), Errc::internal);  // the root cause: rank 2's exception
  EXPECT_NE(s.message().find("injected failure"), std::string::npos);
  for (int r : {0, 1, 3}) EXPECT_EQ(outcomes.per_rank[r].code(), Errc::comm) << r;
}

TEST(InProcessWorldFailure, ARankThatErrorsBeforeAnAllToAllFailsEveryone) {
  InProcessWorld world(4, milliseconds(5000));
  Outcomes outcomes(4);
  const Status s = world.run([&](Communicator& c) -> Status {
    if (c.rank() == 0) return Status(Errc::shape, "rank 0 cannot continue");
    std::vector<int> send(4), recv(4);
    Status st = c.all_to_all(send.data(), recv.data(), sizeof(int));
    outcomes.set(c.rank(), st);
    return st;
  });
  EXPECT_EQ(s.code(), Errc::shape);
  for (int r : {1, 2, 3}) EXPECT_EQ(outcomes.per_rank[r].code(), Errc::comm) << r;
}

TEST(InProcessWorldFailure, ARankThatAbortsDuringASplitFailsEveryone) {
  InProcessWorld world(3, milliseconds(5000));
  Outcomes outcomes(3);
  const Status s = world.run([&](Communicator& c) -> Status {
    if (c.rank() == 1) {
      c.abort("giving up");
      return {};
    }
    std::unique_ptr<Communicator> sub;
    Status st = c.split(0, c.rank(), &sub);
    outcomes.set(c.rank(), st);
    return st;
  });
  EXPECT_EQ(s.code(), Errc::comm);
  EXPECT_NE(s.message().find("giving up"), std::string::npos);
  for (int r : {0, 2}) EXPECT_EQ(outcomes.per_rank[r].code(), Errc::comm) << r;
}

TEST(InProcessWorldFailure, ASilentRankTimesOutInsteadOfHanging) {
  InProcessWorld world(2, milliseconds(200));
  Outcomes outcomes(2);
  const auto start = std::chrono::steady_clock::now();
  const Status s = world.run([&](Communicator& c) -> Status {
    if (c.rank() == 1) return {};  // never joins the barrier
    Status st = c.barrier();
    outcomes.set(c.rank(), st);
    return st;
  });
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.code(), Errc::timeout);
  EXPECT_EQ(outcomes.per_rank[0].code(), Errc::timeout);
  EXPECT_GE(took, milliseconds(200));
  EXPECT_LT(took, milliseconds(3000));
}

TEST(InProcessWorldFailure, MismatchedMessageSizesAreAShapeError) {
  InProcessWorld world2(2, milliseconds(5000));
  const Status s2 = world2.run([&](Communicator& c) -> Status {
    std::vector<char> a(16 + 16 * c.rank()), b(16);
    return c.send_recv(a.data(), a.size(), 1 - c.rank(), b.data(), b.size(), 1 - c.rank());
  });
  EXPECT_EQ(s2.code(), Errc::shape) << s2.message();
  EXPECT_NE(s2.message().find("disagree"), std::string::npos);
}

TEST(InProcessWorldFailure, CollectivesThatDisagreeOnSizesAreAShapeErrorOnEveryRank) {
  InProcessWorld world(4, milliseconds(5000));
  Outcomes outcomes(4);
  const Status s = world.run([&](Communicator& c) -> Status {
    std::vector<char> a(8 + (c.rank() == 3 ? 8 : 0)), b(4 * a.size());
    Status st = c.all_gather(a.data(), b.data(), a.size());
    outcomes.set(c.rank(), st);
    return st;
  });
  EXPECT_EQ(s.code(), Errc::shape) << s.message();
  EXPECT_NE(s.message().find("ranks disagree on shapes"), std::string::npos) << s.message();
  for (int r = 0; r < 4; ++r) EXPECT_EQ(outcomes.per_rank[r].code(), Errc::shape) << r;
}

// Many ranks: a whole ring rotation, the collectives and a split, with the values checked. The world's memory is
// the data and the pending messages (an earlier version kept a queue per pair of ranks: W^2 of them, 1.6 GB at
// 1024 ranks) and each rank is woken only for what concerns it.
TEST(InProcessWorld, FiveHundredRanksRotateARingAndRunEveryCollective) {
  constexpr int kRanks = 512;
  InProcessWorld world(kRanks, milliseconds(120000));
  const Status s = world.run([](Communicator& c) -> Status {
    const int r = c.rank(), w = c.size();
    int held = r, got = -1;
    for (int step = 1; step < w; ++step) {
      HCP_TRY(c.send_recv(&held, sizeof held, (r + 1) % w, &got, sizeof got, (r + w - 1) % w));
      if (got != (r + w - step) % w) return Status(Errc::internal, "ring step " + std::to_string(step));
      held = got;
    }
    std::vector<int> send(w), recv(w);
    for (int j = 0; j < w; ++j) send[j] = r * w + j;
    HCP_TRY(c.all_to_all(send.data(), recv.data(), sizeof(int)));
    for (int j = 0; j < w; ++j)
      if (recv[j] != j * w + r) return Status(Errc::internal, "all_to_all");
    std::vector<float> blocks(static_cast<size_t>(w), 1.0f), sum(1);
    HCP_TRY(c.reduce_scatter_sum(blocks.data(), sum.data(), 1));
    if (sum[0] != static_cast<float>(w)) return Status(Errc::internal, "reduce_scatter");
    std::unique_ptr<Communicator> half;
    HCP_TRY(c.split(r % 2, r, &half));
    if (half->size() != w / 2 || half->rank() != r / 2) return Status(Errc::internal, "split");
    HCP_TRY(half->all_gather(&r, recv.data(), sizeof(int)));
    for (int j = 0; j < w / 2; ++j)
      if (recv[j] != 2 * j + r % 2) return Status(Errc::internal, "all_gather in the split group");
    return c.barrier();
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(InProcessWorldFailure, MisuseIsReportedNotUndefined) {
  InProcessWorld world(2, milliseconds(2000));
  const Status s = world.run([&](Communicator& c) -> Status {
    char x = 0;
    return c.post_send_recv(&x, 1, 7, &x, 1, 0);  // peer out of range
  });
  EXPECT_EQ(s.code(), Errc::invalid_argument);
  EXPECT_THROW(InProcessWorld(0), Error);
  EXPECT_THROW(InProcessWorld(2).comm(2), Error);
}

// CP attention: ranks that disagree on shapes are detected before any data moves.
TEST(CpAttentionFailure, RanksThatDisagreeOnShapesAreReported) {
  ParallelConfig c;
  c.world_size = 4, c.cp = 4;
  InProcessWorld world(4, milliseconds(5000));
  const Status s = world.run([&](Communicator& comm) -> Status {
    std::unique_ptr<CpContext> ctx;
    HCP_TRY(CpContext::create(comm, c, CpComm::p2p, &ctx, LogLevel::debug));
    CpShape shape;
    shape.seq_local = comm.rank() == 3 ? 8 : 4;
    shape.heads = shape.kv_heads = 1, shape.head_dim = 64;
    std::vector<float> q(static_cast<size_t>(shape.seq_local * 64)), lse(static_cast<size_t>(shape.seq_local));
    return ctx->forward(shape, q.data(), q.data(), q.data(), q.data(), lse.data());
  });
  EXPECT_EQ(s.code(), Errc::shape);
  EXPECT_NE(s.message().find("disagree on seq_local"), std::string::npos) << s.message();
}

TEST(CpAttentionFailure, ShapesThatDoNotDivideAreReportedOnEveryRank) {
  ParallelConfig c;
  c.world_size = 4, c.cp = 4;
  InProcessWorld world(4, milliseconds(5000));
  Outcomes outcomes(4);
  const Status s = world.run([&](Communicator& comm) -> Status {
    std::unique_ptr<CpContext> ctx;
    HCP_TRY(CpContext::create(comm, c, CpComm::a2a, &ctx, LogLevel::debug));
    CpShape shape;
    shape.seq_local = 4, shape.heads = shape.kv_heads = 6, shape.head_dim = 64;  // 6 heads over a2a of 4
    std::vector<float> q(static_cast<size_t>(4 * 6 * 64)), lse(24);
    Status st = ctx->forward(shape, q.data(), q.data(), q.data(), q.data(), lse.data());
    outcomes.set(comm.rank(), st);
    return st;
  });
  EXPECT_EQ(s.code(), Errc::shape);
  EXPECT_NE(s.message().find("divisible by the a2a size 4"), std::string::npos) << s.message();
  // Every rank sees the problem: in the shape check itself, or as the abort of the rank that reported it first.
  for (int r = 0; r < 4; ++r)
    EXPECT_TRUE(outcomes.per_rank[r].code() == Errc::shape || outcomes.per_rank[r].code() == Errc::comm) << r;
  SimulateOptions o;
  o.cp = 4, o.seq = 12, o.heads = o.kv_heads = 1, o.head_dim = 64;
  float x = 0;
  EXPECT_EQ(attention_simulate(o, {&x, &x, &x, &x, &x}).code(), Errc::shape);  // 12 % 8 != 0
  EXPECT_THROW(parse_cp_comm("ring"), Error);
  EXPECT_EQ(parse_cp_comm("a2a+p2p"), CpComm::a2a_p2p);
}

}  // namespace
}  // namespace hcp
