// The communicators that move device memory over the in-process world - PeerCopyCommunicator (ranks on one device
// read each other's buffers) and StagedCommunicator (through host memory) - on emulated device engines, whose
// copies fail on memory that is not a live buffer of their device and whose operations run asynchronously on
// emulated streams: every operation's data (sent while the sender's writes are still queued, buffers reused and
// freed right after), splits, and shape mismatches and misuse reported as errors on every rank instead of a hang
// or a wrong copy.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "forwarding_engine.hpp"
#include "../../runtime/src/comm/peer_copy_communicator.hpp"
#include "../../runtime/src/comm/staged_communicator.hpp"
#include "emulated_engine.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/inprocess_world.hpp"

namespace hcp {
namespace {

enum class Mode { peer_copy, staged };

std::string mode_name(const ::testing::TestParamInfo<Mode>& info) {
  return info.param == Mode::peer_copy ? "PeerCopy" : "Staged";
}

// One rank's view: its engine (device 0 for peer copies, its own device when staged) and the wrapped communicator.
struct Rank {
  std::unique_ptr<testing::EmulatedGpuEngine> engine;
  std::unique_ptr<Communicator> comm;

  // The values land by a copy still queued on the rank's stream when this returns, as a kernel's output would.
  template <class T>
  Status device(const std::vector<T>& host, EngineBuffer* out) {
    const size_t bytes = host.size() * sizeof(T);
    EngineBuffer staging;
    HCP_TRY(engine->alloc(bytes, &staging));
    HCP_TRY(engine->upload(staging.as(), host.data(), bytes));
    HCP_TRY(engine->alloc(bytes, out));
    return engine->copy_rows(1, 1, bytes, out->as(), 0, 0, staging.as(), 0, 0);
  }
  template <class T>
  Status host(const EngineBuffer& buf, size_t n, std::vector<T>* out) {
    out->resize(n);
    return engine->download(out->data(), buf.as(), n * sizeof(T));
  }
};

class EngineExchange : public ::testing::TestWithParam<Mode> {
 protected:
  // Runs fn on every rank of an in-process world of `ranks`; peer_reads_ counts reads of other ranks' buffers.
  Status run(int ranks, const std::function<Status(Rank&)>& fn,
             std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    InProcessWorld world(ranks, timeout);
    return world.run([&](Communicator& c) -> Status {
      Rank r;
      const bool peer = GetParam() == Mode::peer_copy;
      r.engine = std::make_unique<testing::EmulatedGpuEngine>(peer ? 0 : c.rank(), &peer_reads_);
      if (peer)
        r.comm = std::make_unique<PeerCopyCommunicator>(&c, r.engine.get(), nullptr);
      else
        r.comm = std::make_unique<StagedCommunicator>(&c, r.engine.get(), nullptr);
      Status s = fn(r);
      r.comm.reset();  // before the engine its copies go through
      return s;
    });
  }
  void expect_peer_reads() const {
    if (GetParam() == Mode::peer_copy) {
      EXPECT_GT(peer_reads_.load(), 0);
    } else {
      EXPECT_EQ(peer_reads_.load(), 0);
    }
  }
  std::atomic<int64_t> peer_reads_{0};
};

Status expect(bool ok, const std::string& what) { return ok ? Status{} : Status(Errc::internal, what); }

TEST_P(EngineExchange, CollectivesMoveTheRightData) {
  const Status s = run(5, [](Rank& rk) -> Status {
    Communicator& c = *rk.comm;
    const int r = c.rank(), w = c.size();
    EngineBuffer send, recv;
    std::vector<int> got;
    // Ring steps with the buffers reused, as the CP ring does: a sender may reuse its buffer once wait returns.
    for (int step = 0; step < 3; ++step) {
      HCP_TRY(rk.device(std::vector<int>{0, 0}, &recv));
      HCP_TRY(rk.device(std::vector<int>{100 * step + r, -r}, &send));  // last: its copy is still queued
      HCP_TRY(c.post_send_recv(send.as(), 2 * sizeof(int), (r + 1) % w, recv.as(), 2 * sizeof(int), (r + w - 1) % w));
      HCP_TRY(c.wait_send_recv());
      HCP_TRY(rk.host(recv, 2, &got));
      const int from = (r + w - 1) % w;
      HCP_TRY(expect(got[0] == 100 * step + from && got[1] == -from, "ring step " + std::to_string(step)));
    }
    std::vector<int> chunks(static_cast<size_t>(w));
    for (int j = 0; j < w; ++j) chunks[j] = 10 * r + j;
    HCP_TRY(rk.device(std::vector<int>(static_cast<size_t>(w), -1), &recv));
    HCP_TRY(rk.device(chunks, &send));
    HCP_TRY(c.all_to_all(send.as(), recv.as(), sizeof(int)));
    HCP_TRY(rk.host(recv, static_cast<size_t>(w), &got));
    for (int j = 0; j < w; ++j) HCP_TRY(expect(got[j] == 10 * j + r, "all_to_all"));
    HCP_TRY(rk.device(std::vector<int>{100 + r}, &send));
    HCP_TRY(c.all_gather(send.as(), recv.as(), sizeof(int)));
    HCP_TRY(rk.host(recv, static_cast<size_t>(w), &got));
    for (int j = 0; j < w; ++j) HCP_TRY(expect(got[j] == 100 + j, "all_gather"));
    // Values whose float sum depends on the order: rank order is the contract.
    std::vector<float> blocks(2 * static_cast<size_t>(w));
    for (int j = 0; j < 2 * w; ++j) blocks[j] = (r % 2 ? 1e8f : 1.0f) + static_cast<float>(r * 1000 + j);
    EngineBuffer fsend, frecv;
    HCP_TRY(rk.device(std::vector<float>(2, 0.0f), &frecv));
    HCP_TRY(rk.device(blocks, &fsend));
    HCP_TRY(c.reduce_scatter_sum(fsend.as<float>(), frecv.as<float>(), 2));
    std::vector<float> sum;
    HCP_TRY(rk.host(frecv, 2, &sum));
    for (int i = 0; i < 2; ++i) {
      float want = 0;
      for (int q = 0; q < w; ++q) want += (q % 2 ? 1e8f : 1.0f) + static_cast<float>(q * 1000 + 2 * r + i);
      HCP_TRY(expect(sum[i] == want, "reduce_scatter"));
    }
    return c.barrier();
  });
  EXPECT_TRUE(s.ok()) << s.message();
  expect_peer_reads();
}

TEST_P(EngineExchange, SplitGroupsMoveDataTheSameWay) {
  const Status s = run(6, [](Rank& rk) -> Status {
    std::unique_ptr<Communicator> sub;
    const int r = rk.comm->rank();
    HCP_TRY(rk.comm->split(r == 5 ? -1 : r % 2, r, &sub));
    if (r == 5) return expect(sub == nullptr, "a negative color gives no communicator");
    HCP_TRY(expect(sub && sub->device_memory() && sub->in_process(), "the split group is wrapped too"));
    EngineBuffer send, recv;
    HCP_TRY(rk.device(std::vector<int>{r}, &send));
    HCP_TRY(rk.device(std::vector<int>(static_cast<size_t>(sub->size()), -1), &recv));
    HCP_TRY(sub->all_gather(send.as(), recv.as(), sizeof(int)));
    std::vector<int> got;
    HCP_TRY(rk.host(recv, static_cast<size_t>(sub->size()), &got));
    for (int j = 0; j < sub->size(); ++j) HCP_TRY(expect(got[j] == r % 2 + 2 * j, "split all_gather"));
    return {};
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_P(EngineExchange, RanksThatDisagreeOnSizesGetAShapeError) {
  std::atomic<int> shape_errors{0};
  const Status s = run(3, [&](Rank& rk) -> Status {
    Communicator& c = *rk.comm;
    const int r = c.rank(), w = c.size();
    EngineBuffer send, recv;
    HCP_TRY(rk.device(std::vector<int>(4, r), &send));
    HCP_TRY(rk.device(std::vector<int>(4, 0), &recv));
    // Rank 1 expects 3 ints where its sender sends 2.
    Status st = c.send_recv(send.as(), 2 * sizeof(int), (r + 1) % w, recv.as(), (r == 1 ? 3 : 2) * sizeof(int),
                            (r + w - 1) % w);
    if (st.code() == Errc::shape) ++shape_errors;
    return st;
  });
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Errc::shape) << s.message();
  EXPECT_GE(shape_errors.load(), 1);
  const Status g = run(3, [](Rank& rk) -> Status {
    EngineBuffer send, recv;
    HCP_TRY(rk.device(std::vector<int>(4, 0), &send));
    HCP_TRY(rk.device(std::vector<int>(12, 0), &recv));
    const size_t chunk = (rk.comm->rank() == 2 ? 2 : 1) * sizeof(int);
    return rk.comm->all_gather(send.as(), recv.as(), chunk);
  });
  EXPECT_EQ(g.code(), Errc::shape) << g.message();
}

TEST_P(EngineExchange, ASecondPostIsMisuseNotACorruptExchange) {
  const Status s = run(2, [](Rank& rk) -> Status {
    Communicator& c = *rk.comm;
    EngineBuffer send, recv;
    HCP_TRY(rk.device(std::vector<int>(2, 0), &send));
    HCP_TRY(rk.device(std::vector<int>(2, 0), &recv));
    const int peer = 1 - c.rank();
    HCP_TRY(c.post_send_recv(send.as(), 4, peer, recv.as(), 4, peer));
    if (c.rank() == 0) return c.post_send_recv(send.as(), 4, peer, recv.as(), 4, peer);
    return c.wait_send_recv();
  }, std::chrono::milliseconds(2000));
  EXPECT_EQ(s.code(), Errc::invalid_argument) << s.message();
}

// An engine that fails its `fail_at`-th forward call (1-based) and otherwise does what `inner` does.
class FailingEngine final : public testing::ForwardingEngine {
 public:
  FailingEngine(std::unique_ptr<CpEngine> inner, int fail_at) : ForwardingEngine(std::move(inner)), fail_at_(fail_at) {}
  Status forward(const AttnParams& p) override {
    if (++calls_ == fail_at_) return {Errc::out_of_memory, "injected kernel failure"};
    return ForwardingEngine::forward(p);
  }

 private:
  int fail_at_, calls_ = 0;
};

// A rank whose kernel fails in the middle of the ring (after posting the next exchange) fails every rank with its
// error as the root cause, and no rank touches a buffer a peer freed: the ring waits for its posted exchange before
// its buffers go, on emulated devices (peer copies and staging; the emulated engine counts the accesses it refused).
TEST_P(EngineExchange, AKernelFailureMidRingFreesNothingInUse) {
  ParallelConfig config;
  config.world_size = 4, config.cp = 4;
  auto& memory = testing::EmulatedDeviceMemory::instance();
  auto faults = [&] {
    std::lock_guard lock(memory.mu);
    return memory.faults;
  };
  const int64_t faults_before = faults();
  for (int rep = 0; rep < 6; ++rep) {  // a freed buffer is read in some of the runs when the ring does not wait
    InProcessWorld world(4, std::chrono::seconds(20));
    const Status s = world.run([&](Communicator& comm) -> Status {
      const bool peer = GetParam() == Mode::peer_copy;
      auto device = std::make_unique<testing::EmulatedGpuEngine>(peer ? 0 : comm.rank());
      std::unique_ptr<CpContext> ctx;
      HCP_TRY(CpContext::create(comm, config, CpComm::p2p,
                                std::make_unique<FailingEngine>(std::move(device), comm.rank() == 2 ? 2 : 0), &ctx,
                                LogLevel::debug));
      CpShape shape;
      shape.seq_local = 32, shape.heads = shape.kv_heads = 1, shape.head_dim = 64, shape.dtype = DType::bf16;
      CpEngine& eng = ctx->engine();
      const std::vector<uint16_t> ones(32 * 64, 0x3f80);  // bf16 1.0
      EngineBuffer q, out, lse;
      HCP_TRY(eng.alloc(ones.size() * 2, &q));
      HCP_TRY(eng.upload(q.as(), ones.data(), ones.size() * 2));
      HCP_TRY(eng.alloc(ones.size() * 2, &out));
      HCP_TRY(eng.alloc(32 * 4, &lse));
      return ctx->forward(shape, q.as(), q.as(), q.as(), out.as(), lse.as<float>());
    });
    EXPECT_EQ(s.code(), Errc::out_of_memory) << s.message();
    EXPECT_NE(s.message().find("injected kernel failure"), std::string::npos) << s.message();
  }
  EXPECT_EQ(faults(), faults_before) << "a rank copied out of (or into) a buffer that was no longer alive";
}

// A publisher that closes its buffer waits for the copies that hold a lease; later copies are refused.
TEST(BufferLeases, CloseWaitsForHoldersAndRefusesLaterReaders) {
  BufferLeases& leases = BufferLeases::instance();
  const uint64_t token = leases.open();
  ASSERT_TRUE(leases.acquire(token).ok());
  std::atomic<bool> closed{false};
  std::thread publisher([&] {
    leases.close(token);
    closed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(closed.load()) << "close returned while a reader held a lease";
  EXPECT_EQ(leases.acquire(token).code(), Errc::comm) << "a withdrawn buffer must not be leased again";
  leases.release(token);
  publisher.join();
  EXPECT_TRUE(closed.load());
  EXPECT_EQ(leases.acquire(token).code(), Errc::comm);
  leases.close(leases.open());  // nothing held: returns at once
}

INSTANTIATE_TEST_SUITE_P(Modes, EngineExchange, ::testing::Values(Mode::peer_copy, Mode::staged), mode_name);

}  // namespace
}  // namespace hcp
