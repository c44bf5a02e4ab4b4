// The a2a's head-major mixed tensors (cp::a2a_scatter_heads_head_major and its gather), which a2a+p2p's ring takes
// as its operands over host ranks that share memory: the scatter puts every element where to_head_major would put
// it after the token-major scatter, the gather is the scatter's inverse, and both need members that share host
// memory (elsewhere they refuse instead of reading a peer's address they cannot see).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "../../runtime/src/attention/cp/local_problem.hpp"
#include "../../runtime/src/attention/cp/sequence_layout.hpp"
#include "attention_reference.hpp"
#include "hcp/counting_communicator.hpp"
#include "hcp/inprocess_world.hpp"

namespace hcp::cp {
namespace {

constexpr int kMembers = 3;
constexpr int64_t kBatch = 2, kSeq = 10, kHeads = 6, kX = 5;

// Moves out of stored order, some splitting a member's rows, so that no move's offsets can stand in for another's.
MixedOrder shuffled_order() {
  return {{2, 4, 0, 6}, {0, 0, 6, 3}, {1, 0, 9, 10}, {0, 3, 19, 7}, {2, 0, 26, 4}};
}

std::vector<float> member_rows(int m) {
  return testing::random_floats(static_cast<size_t>(kBatch * kSeq * kHeads * kX), 100 + static_cast<uint32_t>(m));
}

TEST(A2aHeadMajor, ScatterIsTheTokenMajorScatterReLaid) {
  const SeqTensor t{kBatch, kSeq, kHeads, kX, sizeof(float)};
  const MixedOrder order = shuffled_order();
  const int64_t mixed_elems = kBatch * kMembers * kSeq * (kHeads / kMembers) * kX;
  std::vector<std::vector<float>> back(kMembers);
  InProcessWorld world(kMembers, std::chrono::seconds(60));
  const Status st = world.run([&](Communicator& comm) -> Status {
    const std::unique_ptr<CpEngine> eng = make_cpu_engine();
    const std::vector<float> in = member_rows(comm.rank());
    std::vector<float> token_major(static_cast<size_t>(mixed_elems)), want(token_major.size()),
        head_major(token_major.size()), scratch(2 * in.size());
    HCP_TRY(a2a_scatter_heads(*eng, comm, order, t, in.data(), token_major.data(), scratch.data()));
    HCP_TRY(to_head_major(*eng, kBatch, kMembers * kSeq, kHeads / kMembers, kX, sizeof(float), token_major.data(),
                          want.data()));
    HCP_TRY(a2a_scatter_heads_head_major(*eng, comm, order, t, in.data(), head_major.data()));
    EXPECT_EQ(std::memcmp(head_major.data(), want.data(), want.size() * sizeof(float)), 0) << "rank " << comm.rank();
    back[static_cast<size_t>(comm.rank())].resize(in.size());
    HCP_TRY(a2a_gather_heads_head_major(*eng, comm, order, t, head_major.data(),
                                        back[static_cast<size_t>(comm.rank())].data()));
    EXPECT_EQ(back[static_cast<size_t>(comm.rank())], in) << "rank " << comm.rank();
    return {};
  });
  ASSERT_TRUE(st.ok()) << st.message();
}

TEST(A2aHeadMajor, RefusesMembersThatDoNotShareMemory) {
  const SeqTensor t{kBatch, kSeq, kHeads, kX, sizeof(float)};
  InProcessWorld world(kMembers, std::chrono::seconds(60));
  const Status st = world.run([&](Communicator& base) -> Status {
    CountingCommunicator comm(base, std::make_shared<TrafficTally>());  // opts out of sharing host memory
    const std::unique_ptr<CpEngine> eng = make_cpu_engine();
    EXPECT_FALSE(a2a_reads_in_place(*eng, comm));
    std::vector<float> in = member_rows(comm.rank()), mixed(in.size());
    const Status scattered = a2a_scatter_heads_head_major(*eng, comm, shuffled_order(), t, in.data(), mixed.data());
    EXPECT_EQ(scattered.code(), Errc::internal);
    const Status gathered = a2a_gather_heads_head_major(*eng, comm, shuffled_order(), t, mixed.data(), in.data());
    EXPECT_EQ(gathered.code(), Errc::internal);
    return {};
  });
  ASSERT_TRUE(st.ok()) << st.message();
}

}  // namespace
}  // namespace hcp::cp
