// In-process host ranks share K and V in place (the ring forward's blocks, all_gather's gathered K and V and its
// backward's sums, the a2a's scatter and gather read straight out of peers' tensors) instead of exchanging copies.
// The docs promise the same bits either way: every scheme, packed and plain, forward and backward, run once over the
// in-process communicators (sharing) and once over traffic-counting wrappers (which opt out of sharing, so the
// ranks exchange as they would in separate memory), compared byte for byte.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "attention_reference.hpp"
#include "forwarding_engine.hpp"
#include "hcp/counting_communicator.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/inprocess_world.hpp"
#include "hcp/packed_sequences.hpp"

namespace hcp {
namespace {

constexpr int kRanks = 4;
constexpr int64_t kHeads = 4, kKvHeads = 2, kHeadDim = 32;

struct Outputs {
  std::vector<std::vector<float>> out, lse, dq, dk, dv;  // per rank
};

// Every rank's forward and backward of the batch (`packed` empty: one sequence of `seq` rows).
Outputs run(CpComm scheme, const PackedBatch& packed, int64_t seq, bool exchanged) {
  ParallelConfig config;
  config.world_size = kRanks, config.cp = kRanks;
  if (scheme == CpComm::a2a_p2p) config.hcp_sizes = std::vector<int64_t>{2, 2};
  const int64_t local = seq / kRanks, qrow = kHeads * kHeadDim, kvrow = kKvHeads * kHeadDim;
  const auto q = testing::random_floats(static_cast<size_t>(seq * qrow), 1, -2, 2);
  const auto k = testing::random_floats(static_cast<size_t>(seq * kvrow), 2, -2, 2);
  const auto v = testing::random_floats(static_cast<size_t>(seq * kvrow), 3);
  const auto dout = testing::random_floats(static_cast<size_t>(seq * qrow), 4);
  Outputs o;
  for (auto* t : {&o.out, &o.lse, &o.dq, &o.dk, &o.dv}) t->resize(kRanks);
  InProcessWorld world(kRanks, std::chrono::seconds(60));
  const Status st = world.run([&](Communicator& base) -> Status {
    CountingCommunicator counted(base, std::make_shared<TrafficTally>());
    Communicator& comm = exchanged ? static_cast<Communicator&>(counted) : base;
    std::unique_ptr<CpContext> ctx;
    HCP_TRY(CpContext::create(comm, config, scheme, &ctx, LogLevel::debug));
    const int r = ctx->cp_rank();
    auto shard = [&](const std::vector<float>& full, int64_t row) {
      std::vector<float> mine(static_cast<size_t>(local * row));
      const Status s = packed.empty() ? shard_sequence(full.data(), mine.data(), 1, seq, row, 4, kRanks, r)
                                      : shard_packed(full.data(), mine.data(), packed, row, 4, kRanks, r);
      EXPECT_TRUE(s.ok()) << s.message();
      return mine;
    };
    const auto lq = shard(q, qrow), lk = shard(k, kvrow), lv = shard(v, kvrow), ldo = shard(dout, qrow);
    CpShape shape;
    shape.seq_local = local, shape.heads = kHeads, shape.kv_heads = kKvHeads, shape.head_dim = kHeadDim;
    shape.packed = packed;
    const auto rank = static_cast<size_t>(r);
    o.out[rank].resize(lq.size()), o.lse[rank].resize(static_cast<size_t>(local * kHeads));
    o.dq[rank].resize(lq.size()), o.dk[rank].resize(lk.size()), o.dv[rank].resize(lk.size());
    HCP_TRY(ctx->forward(shape, lq.data(), lk.data(), lv.data(), o.out[rank].data(), o.lse[rank].data()));
    return ctx->backward(shape, lq.data(), lk.data(), lv.data(), o.out[rank].data(), o.lse[rank].data(),
                         ldo.data(), o.dq[rank].data(), o.dk[rank].data(), o.dv[rank].data());
  });
  EXPECT_TRUE(st.ok()) << st.message();
  return o;
}

void expect_same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b,
                      const char* what) {
  for (size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].size(), b[r].size()) << what << " rank " << r;
    EXPECT_EQ(std::memcmp(a[r].data(), b[r].data(), a[r].size() * sizeof(float)), 0) << what << " rank " << r;
  }
}

// One sequence, a few documents, or many short ones (more rows a rank than one document group of the host ring's
// forward takes, so that the groups split them).
enum class Batch { one_sequence, packed, many_documents };

class SharedTransport : public ::testing::TestWithParam<std::tuple<CpComm, Batch>> {};

TEST_P(SharedTransport, GivesTheBitsOfTheExchange) {
  const auto [scheme, batch] = GetParam();
  PackedBatch packed;
  int64_t seq = 2 * kRanks * 24;
  if (batch == Batch::packed) packed.cu_seqlens = {0, 37, 40, 150, 151, 290};
  if (batch == Batch::many_documents) {
    packed.cu_seqlens = {0};
    for (int d = 0; d < 40; ++d) packed.cu_seqlens.push_back(packed.cu_seqlens.back() + 1 + (d * 37) % 90);
  }
  if (batch != Batch::one_sequence) {
    packed.cu_seqlens_padded = pad_for_cp(packed.cu_seqlens, kRanks);
    seq = packed.total_padded();
  }
  const Outputs shared = run(scheme, packed, seq, false), exchanged = run(scheme, packed, seq, true);
  expect_same_bits(shared.out, exchanged.out, "out");
  expect_same_bits(shared.lse, exchanged.lse, "lse");
  expect_same_bits(shared.dq, exchanged.dq, "dq");
  expect_same_bits(shared.dk, exchanged.dk, "dk");
  expect_same_bits(shared.dv, exchanged.dv, "dv");
}

INSTANTIATE_TEST_SUITE_P(Schemes, SharedTransport,
                         ::testing::Combine(::testing::Values(CpComm::p2p, CpComm::a2a, CpComm::a2a_p2p,
                                                              CpComm::all_gather),
                                            ::testing::Values(Batch::one_sequence, Batch::packed,
                                                              Batch::many_documents)),
                         [](const ::testing::TestParamInfo<std::tuple<CpComm, Batch>>& i) {
                           std::string name(cp_comm_name(std::get<0>(i.param)));
                           for (char& c : name)
                             if (c == '+') c = '_';
                           const Batch b = std::get<1>(i.param);
                           return name + (b == Batch::one_sequence ? "_one_sequence"
                                          : b == Batch::packed     ? "_packed"
                                                                   : "_many_documents");
                         });

// A CPU engine whose `fail_at`-th backward call (1-based) fails.
class FailingBackward final : public testing::ForwardingEngine {
 public:
  explicit FailingBackward(int fail_at) : ForwardingEngine(make_cpu_engine()), fail_at_(fail_at) {}
  Status backward(const AttnParams& p) override {
    if (++calls_ == fail_at_) return {Errc::out_of_memory, "injected kernel failure"};
    return ForwardingEngine::backward(p);
  }

 private:
  int fail_at_, calls_ = 0;
};

// The shared ring backward holds every rank at a barrier after each step, and a2a+p2p's a2a gathers out of the
// ring's shared sums: a rank whose kernel fails in the middle of the ring fails every rank with its error (none
// waits at a barrier for it), and no rank reads a shared buffer after it is gone (the sanitizer runs check that).
class SharedTransportFailure : public ::testing::TestWithParam<CpComm> {};

TEST_P(SharedTransportFailure, AKernelFailureMidBackwardFailsEveryRank) {
  ParallelConfig config;
  config.world_size = kRanks, config.cp = kRanks;
  if (GetParam() == CpComm::a2a_p2p) config.hcp_sizes = std::vector<int64_t>{2, 2};
  const int64_t local = 2 * 24, qrow = kHeads * kHeadDim, kvrow = kKvHeads * kHeadDim;
  InProcessWorld world(kRanks, std::chrono::seconds(20));
  const auto start = std::chrono::steady_clock::now();
  const Status st = world.run([&](Communicator& comm) -> Status {
    std::unique_ptr<CpContext> ctx;
    HCP_TRY(CpContext::create(comm, config, GetParam(), std::make_unique<FailingBackward>(comm.rank() == 2 ? 2 : 0),
                              &ctx, LogLevel::debug));
    const auto q = testing::random_floats(static_cast<size_t>(local * qrow), 10 + static_cast<uint32_t>(comm.rank()));
    const auto kv = testing::random_floats(static_cast<size_t>(local * kvrow), 20 + static_cast<uint32_t>(comm.rank()));
    CpShape shape;
    shape.seq_local = local, shape.heads = kHeads, shape.kv_heads = kKvHeads, shape.head_dim = kHeadDim;
    std::vector<float> out(q.size()), lse(static_cast<size_t>(local * kHeads)), dq(q.size()), dk(kv.size()),
        dv(kv.size());
    HCP_TRY(ctx->forward(shape, q.data(), kv.data(), kv.data(), out.data(), lse.data()));
    return ctx->backward(shape, q.data(), kv.data(), kv.data(), out.data(), lse.data(), q.data(), dq.data(),
                         dk.data(), dv.data());
  });
  EXPECT_EQ(st.code(), Errc::out_of_memory) << st.message();
  EXPECT_NE(st.message().find("injected kernel failure"), std::string::npos) << st.message();
  // Not a speed check: a rank that waited at a barrier for the failed one would end only at the world's 20 s
  // timeout, with the failed rank's error still the world's.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << "a rank waited out the timeout";
}

// A CPU engine whose second allocation of exactly `bytes` fails (0: none does), after a pause that lets the other
// members take their leases on the first buffer and reach the second create (without it, member 0 usually
// withdraws the first buffer before they take a lease, and the wait this test is about never happens).
class FailingAlloc final : public testing::ForwardingEngine {
 public:
  explicit FailingAlloc(size_t bytes) : ForwardingEngine(make_cpu_engine()), bytes_(bytes) {}
  Status alloc(size_t bytes, EngineBuffer* out) override {
    if (bytes_ != 0 && bytes == bytes_ && ++seen_ == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      return {Errc::out_of_memory, "injected allocation failure"};
    }
    return ForwardingEngine::alloc(bytes, out);
  }

 private:
  size_t bytes_;
  int seen_ = 0;
};

// The p2p ring backward's member 0 allocates two shared buffers of the same size (fp32 blocks and their sums);
// when the second allocation fails, the other members, already holding leases on the first, are aborted rather
// than left waiting for member 0 inside the second create while it waits for their leases.
TEST(SharedTransportFailure, AFailedSharedAllocationFailsEveryRank) {
  ParallelConfig config;
  config.world_size = kRanks, config.cp = kRanks;
  const int64_t local = 2 * 24, qrow = kHeads * kHeadDim, kvrow = kKvHeads * kHeadDim;
  const size_t shared_bytes = kRanks * 2 * static_cast<size_t>(local * kvrow) * sizeof(float);
  InProcessWorld world(kRanks, std::chrono::seconds(20));
  const auto start = std::chrono::steady_clock::now();
  const Status st = world.run([&](Communicator& comm) -> Status {
    std::unique_ptr<CpContext> ctx;
    HCP_TRY(CpContext::create(comm, config, CpComm::p2p,
                              std::make_unique<FailingAlloc>(comm.rank() == 0 ? shared_bytes : 0), &ctx,
                              LogLevel::debug));
    const auto q = testing::random_floats(static_cast<size_t>(local * qrow), 30 + static_cast<uint32_t>(comm.rank()));
    const auto kv = testing::random_floats(static_cast<size_t>(local * kvrow), 40 + static_cast<uint32_t>(comm.rank()));
    const std::vector<float> lse(static_cast<size_t>(local * kHeads), 0.0f);
    std::vector<float> dq(q.size()), dk(kv.size()), dv(kv.size());
    CpShape shape;
    shape.seq_local = local, shape.heads = kHeads, shape.kv_heads = kKvHeads, shape.head_dim = kHeadDim;
    return ctx->backward(shape, q.data(), kv.data(), kv.data(), q.data(), lse.data(), q.data(), dq.data(), dk.data(),
                         dv.data());
  });
  EXPECT_EQ(st.code(), Errc::out_of_memory) << st.message();
  EXPECT_NE(st.message().find("injected allocation failure"), std::string::npos) << st.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << "a rank waited out the timeout";
}

INSTANTIATE_TEST_SUITE_P(Schemes, SharedTransportFailure, ::testing::Values(CpComm::p2p, CpComm::a2a_p2p),
                         [](const ::testing::TestParamInfo<CpComm>& i) {
                           return i.param == CpComm::p2p ? std::string("p2p") : std::string("a2a_p2p");
                         });

}  // namespace
}  // namespace hcp
