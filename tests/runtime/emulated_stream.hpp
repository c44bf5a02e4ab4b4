// An emulated CUDA stream: operations run in order on one worker thread, asynchronously to the thread that enqueued
// them, and synchronize() waits for them. As on a GPU, the first failing operation makes the stream's error sticky:
// later operations are skipped and every synchronize() returns it. Each operation starts after a random delay of up
// to 2 ms (a GPU's queue is rarely empty), so that code that reads results before waiting, or lets another rank read
// a buffer whose writes are still queued or free one still being read, gets wrong data or an error in the tests.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "hcp/status.hpp"

namespace hcp::testing {

class EmulatedStream {
 public:
  EmulatedStream() : worker_([this] { run(); }) {}
  ~EmulatedStream() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    work_.notify_all();
    worker_.join();  // runs what is queued first (the buffers' frees)
  }
  EmulatedStream(const EmulatedStream&) = delete;
  EmulatedStream& operator=(const EmulatedStream&) = delete;

  void enqueue(std::function<Status()> op) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(op));
    }
    work_.notify_all();
  }
  Status synchronize() {
    std::unique_lock lock(mu_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
    return error_;
  }

 private:
  void run() {
    std::unique_lock lock(mu_);
    for (;;) {
      work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopped with nothing left
      std::function<Status()> op = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      const bool skip = !error_.ok();
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(delay_(random_)));
      Status s = skip ? Status{} : op();
      lock.lock();
      if (!s.ok() && error_.ok()) error_ = std::move(s);
      busy_ = false;
      idle_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable work_, idle_;
  std::deque<std::function<Status()>> queue_;
  bool busy_ = false, stop_ = false;
  Status error_;
  std::minstd_rand random_{std::random_device{}()};
  std::uniform_int_distribution<int> delay_{0, 2000};
  std::thread worker_;  // last: starts after the state above exists
};

}  // namespace hcp::testing
