// A compressed stream decoded on a thread of its own, a few blocks ahead of the scan: on two cores the scan of
// one block overlaps the decoding of the next, where one thread did both in turn (the scan added a quarter to
// zstd's own decoding time). The text still reaches the sink on the caller's thread, in order.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "stream_decoder.hpp"

namespace hcp::logscan {

class StreamDecoder::Ahead {
 public:
  explicit Ahead(StreamDecoder& decoder);
  ~Ahead();  // stops the thread when the caller left before finish() (its sink threw)
  Ahead(const Ahead&) = delete;
  Ahead& operator=(const Ahead&) = delete;

  // Caller: queues a copy of raw bytes that start at raw offset `base` (waiting while 4 MiB are queued), and hands
  // the text decoded so far to the sink.
  void push(const char* data, size_t size, uint64_t base);
  // Caller: hands the rest of the text to the sink and ends the thread; rethrows what the thread failed with.
  void finish();

 private:
  struct Raw {
    std::vector<char> bytes;
    uint64_t base = 0;
  };
  struct Block {  // decoded text: the first n bytes of buf
    std::vector<char> buf;
    size_t n = 0;
  };
  struct Stop {};
  void run();                                       // the thread
  void emit(const char* p, size_t n);               // the thread: a decoded block into the queue
  bool hand_one(std::unique_lock<std::mutex>& lock);  // caller: the oldest decoded block to the sink

  // Each side sleeps on its own condition and is notified only while it sleeps (a notify is a system call).
  template <typename Ready>
  void wait_caller(std::unique_lock<std::mutex>& lock, Ready ready) {
    caller_waiting_ = true;
    caller_cv_.wait(lock, ready);
    caller_waiting_ = false;
  }
  template <typename Ready>
  void wait_thread(std::unique_lock<std::mutex>& lock, Ready ready) {
    thread_waiting_ = true;
    thread_cv_.wait(lock, ready);
    thread_waiting_ = false;
  }

  StreamDecoder& d_;
  std::mutex mu_;
  std::condition_variable caller_cv_, thread_cv_;
  bool caller_waiting_ = false, thread_waiting_ = false;
  std::deque<Raw> raw_;
  std::vector<std::vector<char>> spare_raw_;
  size_t raw_queued_ = 0;
  std::deque<Block> text_;
  std::vector<std::vector<char>> spare_;  // buffers handed to the sink, reused
  bool ended_ = false, done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace hcp::logscan
