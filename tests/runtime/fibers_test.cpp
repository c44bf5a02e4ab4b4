// The block emulator's fibers (runtime/src/attention/cuda/emulation/fibers.hpp): barriers hold every fiber until
// all have arrived, the order alternates between sweeps, stacks are separate and deep enough, each host thread
// runs its own fibers, and a barrier that cannot complete aborts with the reason instead of hanging.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <thread>
#include <vector>

#include "../../runtime/src/attention/cuda/emulation/fibers.hpp"

namespace hcp::emu {
namespace {

TEST(Fibers, NoFiberPassesABarrierBeforeAllHaveArrived) {
  constexpr int kFibers = 37, kRounds = 20;
  FiberBarrier barrier(kFibers);
  std::vector<int> arrived(kRounds, 0);
  int violations = 0;
  auto body = [&](int) {
    for (int r = 0; r < kRounds; ++r) {
      ++arrived[r];
      barrier.arrive_and_wait();
      if (arrived[r] != kFibers) ++violations;
    }
  };
  run_fibers(kFibers, body);
  EXPECT_EQ(violations, 0);
  for (int r = 0; r < kRounds; ++r) EXPECT_EQ(arrived[r], kFibers);
}

TEST(Fibers, EachSweepRunsTheWaitingFibersInTheOtherOrder) {
  constexpr int kFibers = 6;
  FiberBarrier barrier(kFibers);
  std::vector<int> order;
  auto body = [&](int i) {
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(current_fiber(), i);
      order.push_back(i);
      barrier.arrive_and_wait();
    }
  };
  run_fibers(kFibers, body);
  // Sweep 1 runs 0..5 up to the barrier; the last arrival (5) goes on into round 2 at once, then sweep 2 (down)
  // resumes 4..0; 0 arrives last and runs on into round 3, sweep 3 (up) resumes 1..5.
  const std::vector<int> want = {0, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1, 0, 0, 1, 2, 3, 4, 5};
  EXPECT_EQ(order, want);
}

// Each fiber has its own stack: locals survive the other fibers' runs, and 200 KB of them fit.
int deep(int depth, int seed, FiberBarrier& barrier) {
  volatile char frame[2048];
  for (size_t i = 0; i < sizeof frame; ++i) frame[i] = static_cast<char>(seed + depth + static_cast<int>(i));
  if (depth == 0) {
    barrier.arrive_and_wait();
    return seed;
  }
  const int below = deep(depth - 1, seed, barrier);
  int sum = 0;
  for (size_t i = 0; i < sizeof frame; ++i)
    sum += frame[i] == static_cast<char>(seed + depth + static_cast<int>(i)) ? 0 : 1;
  return below + sum;
}

TEST(Fibers, StacksAreSeparateAndDeep) {
  constexpr int kFibers = 8;
  FiberBarrier barrier(kFibers);
  std::vector<int> got(kFibers, -1);
  auto body = [&](int i) { got[static_cast<size_t>(i)] = deep(100, 1000 * i, barrier); };
  run_fibers(kFibers, body);
  for (int i = 0; i < kFibers; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], 1000 * i) << i;
}

// What a fiber keeps across its switches - in the callee-saved registers the switch saves (the loop counter,
// pointers) or spilled to its stack (the double) - is its own when it resumes.
TEST(Fibers, ValuesKeptAcrossSwitchesSurvive) {
  constexpr int kFibers = 4;
  FiberBarrier barrier(kFibers);
  std::vector<double> got(kFibers);
  auto body = [&](int i) {
    double acc = i;
    for (int r = 0; r < 50; ++r) {
      acc = acc * 1.5 + std::sqrt(static_cast<double>(r + i));
      barrier.arrive_and_wait();
    }
    got[static_cast<size_t>(i)] = acc;
  };
  run_fibers(kFibers, body);
  for (int i = 0; i < kFibers; ++i) {
    double want = i;
    for (int r = 0; r < 50; ++r) want = want * 1.5 + std::sqrt(static_cast<double>(r + i));
    EXPECT_EQ(got[static_cast<size_t>(i)], want) << i;
  }
}

TEST(Fibers, HostThreadsRunTheirOwnFibersAtOnce) {
  constexpr int kThreads = 4, kFibers = 64;
  std::vector<long> sums(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int launch = 0; launch < 10; ++launch) {
        FiberBarrier barrier(kFibers);
        std::vector<int> values(kFibers, 0);
        auto body = [&](int i) {
          values[static_cast<size_t>(i)] = i + t;
          barrier.arrive_and_wait();
          // After the barrier every fiber of this host thread's launch has written its value.
          sums[static_cast<size_t>(t)] += std::accumulate(values.begin(), values.end(), 0L);
        };
        run_fibers(kFibers, body);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    const long per_launch = static_cast<long>(kFibers) * (kFibers - 1) / 2 + static_cast<long>(kFibers) * t;
    EXPECT_EQ(sums[static_cast<size_t>(t)], 10L * kFibers * per_launch) << t;
  }
}

// A barrier some fibers never reach: on a GPU a hang, here an abort that says why.
TEST(FibersDeathTest, ABarrierThatCannotCompleteAbortsWithTheReason) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto divergent = [] {
    FiberBarrier barrier(4);
    auto body = [&](int i) {
      if (i != 2) barrier.arrive_and_wait();
    };
    run_fibers(4, body);
  };
  EXPECT_DEATH(divergent(), "deadlock");
}

}  // namespace
}  // namespace hcp::emu
