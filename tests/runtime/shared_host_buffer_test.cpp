// SharedHostBuffer and PeerReads over the in-process world: every rank's writes are every rank's reads, sizes that
// differ fail on every rank, and an owner never frees (or returns to a caller who may free) a buffer while a peer
// still holds its lease - even when the owner fails and returns first.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "../../runtime/src/comm/peer_reads.hpp"
#include "../../runtime/src/comm/shared_host_buffer.hpp"
#include "hcp/counting_communicator.hpp"
#include "hcp/inprocess_world.hpp"

namespace hcp {
namespace {

constexpr int kRanks = 4;
constexpr size_t kSlot = 1000;  // ints a rank writes

TEST(SharedHostBuffer, EveryRankReadsWhatEveryRankWrote) {
  InProcessWorld world(kRanks, std::chrono::seconds(30));
  std::vector<std::unique_ptr<CpEngine>> engines;
  for (int r = 0; r < kRanks; ++r) engines.push_back(make_cpu_engine());
  const Status st = world.run([&](Communicator& comm) -> Status {
    const int r = comm.rank();
    EXPECT_TRUE(comm.shares_host_memory());
    for (int round = 0; round < 3; ++round) {  // the buffer comes back out of member 0's pool
      SharedHostBuffer shared;
      HCP_TRY(SharedHostBuffer::create(*engines[static_cast<size_t>(r)], comm, kRanks * kSlot * sizeof(int),
                                       &shared));
      int* all = reinterpret_cast<int*>(shared.data());
      for (size_t i = 0; i < kSlot; ++i) all[r * kSlot + i] = 1000000 * round + r * 10000 + static_cast<int>(i);
      HCP_TRY(comm.barrier());
      for (int m = 0; m < kRanks; ++m)
        for (size_t i = 0; i < kSlot; i += 97)
          EXPECT_EQ(all[m * kSlot + i], 1000000 * round + m * 10000 + static_cast<int>(i)) << "rank " << r;
      HCP_TRY(comm.barrier());  // nobody writes the next round's values into a buffer still being read
    }
    return {};
  });
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(SharedHostBuffer, SizesThatDifferFailOnEveryRank) {
  InProcessWorld world(kRanks, std::chrono::seconds(30));
  std::vector<Status> seen(kRanks);
  const Status root = world.run([&](Communicator& comm) -> Status {
    auto eng = make_cpu_engine();
    SharedHostBuffer shared;
    const size_t bytes = comm.rank() == 2 ? 64 : 128;
    Status s = SharedHostBuffer::create(*eng, comm, bytes, &shared);
    seen[static_cast<size_t>(comm.rank())] = s;
    return s;
  });
  // Each rank finds the mismatch itself, or meets the abort of one that found it first (Errc::comm).
  for (int r = 0; r < kRanks; ++r) EXPECT_FALSE(seen[static_cast<size_t>(r)].ok()) << "rank " << r;
  EXPECT_EQ(root.code(), Errc::invalid_argument);
  EXPECT_NE(root.message().find("rank 2 asked for 64 bytes, rank 0 for 128"), std::string::npos) << root.message();
}

TEST(SharedHostBuffer, MemberZeroWaitsForLeasesWhenItFails) {
  InProcessWorld world(kRanks, std::chrono::seconds(30));
  std::atomic<int> leased{0}, writers_done{0};
  std::atomic<bool> freed_early{false};
  (void)world.run([&](Communicator& comm) -> Status {
    auto eng = make_cpu_engine();
    {
      SharedHostBuffer shared;
      HCP_TRY(SharedHostBuffer::create(*eng, comm, kRanks * kSlot * sizeof(int), &shared));
      if (comm.rank() == 0) {
        // Once every peer holds its lease (one that came after the withdrawal would get Errc::comm instead); not a
        // barrier, which a peer might still be leaving when the abort below fails it.
        while (leased.load() != kRanks - 1) std::this_thread::yield();
        comm.abort("member 0 gives up");  // and leaves at once: its buffer goes when this block ends
      } else {
        ++leased;
        // A peer still writing (a kernel still reading, in CP) when member 0 fails.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        int* mine = reinterpret_cast<int*>(shared.data()) + comm.rank() * kSlot;
        for (size_t i = 0; i < kSlot; ++i) mine[i] = static_cast<int>(i);
        ++writers_done;
        return {};
      }
    }
    if (writers_done.load() != kRanks - 1) freed_early = true;
    return {Errc::comm, "member 0 failed"};
  });
  EXPECT_FALSE(freed_early.load()) << "member 0 freed the buffer while peers held leases";
}

TEST(PeerReads, EveryMemberReadsEveryMembersBuffer) {
  InProcessWorld world(kRanks, std::chrono::seconds(30));
  const Status st = world.run([&](Communicator& comm) -> Status {
    std::vector<int> mine(kSlot);
    for (size_t i = 0; i < kSlot; ++i) mine[i] = comm.rank() * 10000 + static_cast<int>(i);
    PeerReads peers;
    HCP_TRY(peers.open(comm, mine.data()));
    for (int m = 0; m < kRanks; ++m)
      HCP_TRY(peers.read(m, [&](const unsigned char* theirs) -> Status {
        const int* values = reinterpret_cast<const int*>(theirs);
        for (size_t i = 0; i < kSlot; i += 31) EXPECT_EQ(values[i], m * 10000 + static_cast<int>(i));
        return {};
      }));
    return peers.close();  // nobody's vector goes before every read is done
  });
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(PeerReads, AFailingOwnerWaitsForTheReadsInProgress) {
  InProcessWorld world(2, std::chrono::seconds(30));
  std::atomic<bool> reading{false}, read_done{false}, returned_early{false};
  (void)world.run([&](Communicator& comm) -> Status {
    std::vector<int> mine(kSlot, 7);
    {
      PeerReads peers;
      HCP_TRY(peers.open(comm, mine.data()));
      if (comm.rank() == 1) {
        return peers.read(0, [&](const unsigned char*) -> Status {
          reading = true;
          std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a long copy out of rank 0's tensor
          read_done = true;
          return {};
        });
      }
      while (!reading.load()) std::this_thread::yield();
      comm.abort("rank 0 gives up");
    }  // rank 0's buffer is withdrawn here: the read in progress must end first
    if (!read_done.load()) returned_early = true;
    return {Errc::comm, "rank 0 failed"};
  });
  EXPECT_FALSE(returned_early.load()) << "the owner returned while a peer was still reading its buffer";
}

TEST(SharedHostBuffer, WrappersThatObserveTrafficDoNotShare) {
  InProcessWorld world(1, std::chrono::seconds(30));
  CountingCommunicator counting(world.comm(0), std::make_shared<TrafficTally>());
  EXPECT_TRUE(world.comm(0).shares_host_memory());
  EXPECT_TRUE(counting.in_process());
  EXPECT_FALSE(counting.shares_host_memory());
}

}  // namespace
}  // namespace hcp
