// The log sink: callbacks run without a lock held (they may log and replace themselves), never two at once, and
// set_log_callback returning means the old callback is done - from many threads at once (also under TSan).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "hcp/log.hpp"

namespace hcp {
namespace {

struct Counts {
  std::atomic<int> lines{0};
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
};

void counting(int, const char* line, void* user) {
  auto* c = static_cast<Counts*>(user);
  if (c->inside.fetch_add(1) != 0) c->overlaps.fetch_add(1);
  // A callback that logs itself: queued, delivered after this call returns, not a deadlock.
  if (std::string(line).rfind("echo ", 0) != 0) log_line(LogLevel::error, std::string("echo ") + line);
  c->lines.fetch_add(1);
  c->inside.fetch_sub(1);
}

TEST(LogSink, CallbackMayLogAndCallsNeverOverlap) {
  Counts counts;
  set_log_callback(counting, &counts);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) log_line(LogLevel::error, "t" + std::to_string(t) + " line " + std::to_string(i));
    });
  }
  for (auto& th : threads) th.join();
  set_log_callback(nullptr, nullptr);
  EXPECT_EQ(counts.lines.load(), 2 * 8 * 200);  // every line and its echo, nothing lost once the loggers returned
  EXPECT_EQ(counts.overlaps.load(), 0);
}

struct Swapper {
  std::atomic<int> calls{0};
};

void swapping(int, const char*, void* user) {
  auto* s = static_cast<Swapper*>(user);
  s->calls.fetch_add(1);
  // Replacing the callback from inside it, then putting it back: neither call may block.
  set_log_callback(nullptr, nullptr);
  set_log_callback(swapping, user);
}

TEST(LogSink, CallbackMayReplaceItselfWhileOtherThreadsLogAndSwap) {
  Swapper swapper;
  set_log_callback(swapping, &swapper);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&swapper] {
      for (int i = 0; i < 100; ++i) log_line(LogLevel::error, "swap");
      for (int i = 0; i < 20; ++i) set_log_callback(swapping, &swapper);  // concurrent replacement from outside
    });
  }
  for (auto& th : threads) th.join();
  set_log_callback(nullptr, nullptr);
  EXPECT_GT(swapper.calls.load(), 0);
}

TEST(LogSink, OldCallbackIsDoneWhenReplacementReturns) {
  static std::atomic<bool> release{false};
  static std::atomic<bool> running{false};
  static std::atomic<bool> finished{false};
  release = false, running = false, finished = false;
  set_log_callback([](int, const char*, void*) {
    running = true;
    while (!release) std::this_thread::yield();
    finished = true;
  }, nullptr);
  std::thread logger([] { log_line(LogLevel::error, "slow"); });
  while (!running) std::this_thread::yield();
  std::thread releaser([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    release = true;
  });
  set_log_callback(nullptr, nullptr);  // must wait for the running call
  EXPECT_TRUE(finished.load());
  logger.join();
  releaser.join();
}

}  // namespace
}  // namespace hcp
