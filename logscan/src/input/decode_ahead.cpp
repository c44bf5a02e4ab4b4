#include "decode_ahead.hpp"

#include <algorithm>

namespace hcp::logscan {
namespace {

constexpr size_t kRawPiece = 1u << 20;  // raw bytes are copied in pieces of at most this
constexpr size_t kRawQueued = 4u << 20;
constexpr size_t kTextBlocks = 8;      // decoded blocks (256 KiB each) waiting for the scan, at most
// A waiting caller is woken when this many blocks are ready, not at each: a wake-up costs tens of microseconds in
// a virtual machine, and one a block made the two threads no faster than one.
constexpr size_t kWakeAt = 4;

}  // namespace

StreamDecoder::Ahead::Ahead(StreamDecoder& decoder) : d_(decoder), thread_([this] { run(); }) {}

StreamDecoder::Ahead::~Ahead() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  thread_cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

bool StreamDecoder::Ahead::hand_one(std::unique_lock<std::mutex>& lock) {
  if (text_.empty()) return false;
  Block block = std::move(text_.front());
  text_.pop_front();
  if (thread_waiting_) thread_cv_.notify_one();  // room for its next block
  lock.unlock();
  d_.sink_(block.buf.data(), block.n);
  lock.lock();
  spare_.push_back(std::move(block.buf));
  return true;
}

void StreamDecoder::Ahead::push(const char* data, size_t size, uint64_t base) {
  std::unique_lock lock(mu_);
  while (size > 0) {
    const size_t n = std::min(size, kRawPiece);
    // While the queue is full the caller scans instead of waiting idle (and the thread, if its text queue is
    // full too, gets room).
    while (raw_queued_ >= kRawQueued && !done_) {
      if (!hand_one(lock)) wait_caller(lock, [&] { return done_ || raw_queued_ < kRawQueued || text_.size() >= kWakeAt; });
    }
    if (done_) break;  // the thread failed: finish() says why
    // Raw buffers are reused: a fresh megabyte a piece was mapped and faulted in anew each time.
    Raw raw{{}, base};
    if (!spare_raw_.empty()) {
      raw.bytes = std::move(spare_raw_.back());
      spare_raw_.pop_back();
    }
    raw.bytes.assign(data, data + n);
    raw_.push_back(std::move(raw));
    raw_queued_ += n;
    if (thread_waiting_) thread_cv_.notify_one();
    data += n, size -= n, base += n;
  }
  while (hand_one(lock)) {
  }
}

void StreamDecoder::Ahead::finish() {
  std::unique_lock lock(mu_);
  ended_ = true;
  thread_cv_.notify_one();
  while (!done_ || !text_.empty()) {
    if (!hand_one(lock)) wait_caller(lock, [&] { return done_ || text_.size() >= kWakeAt; });
  }
  lock.unlock();
  thread_.join();
  if (error_) std::rethrow_exception(error_);
}

void StreamDecoder::Ahead::emit(const char* p, size_t n) {
  std::unique_lock lock(mu_);
  wait_thread(lock, [&] { return stop_ || text_.size() < kTextBlocks; });
  if (stop_) throw Stop{};
  std::vector<char> spare;
  if (!spare_.empty()) {
    spare = std::move(spare_.back());
    spare_.pop_back();
  }
  Block block;
  // The codec's own output buffer is queued as it is, and the codec decodes on into the spare one (a copy of
  // every block was a tenth of the time); other text is copied.
  if (d_.trade_output(p, spare)) {
    block.buf = std::move(spare);
  } else {
    block.buf = std::move(spare);
    block.buf.assign(p, p + n);
  }
  block.n = n;
  text_.push_back(std::move(block));
  if (caller_waiting_ && text_.size() >= kWakeAt) caller_cv_.notify_one();
}

void StreamDecoder::Ahead::run() {
  const Sink into_queue = [this](const char* p, size_t n) { emit(p, n); };
  try {
    for (;;) {
      Raw raw;
      {
        std::unique_lock lock(mu_);
        // Out of raw bytes, the caller (if it waits) gets what is decoded: it may be waiting for a full batch.
        if (raw_.empty() && caller_waiting_ && !text_.empty()) caller_cv_.notify_one();
        wait_thread(lock, [&] { return stop_ || !raw_.empty() || ended_; });
        if (stop_) return;
        if (raw_.empty()) break;  // ended, and everything decoded
        raw = std::move(raw_.front());
        raw_.pop_front();
      }
      // The codec and the damage are this thread's until finish() has joined it.
      d_.decode_at(raw.bytes.data(), raw.bytes.size(), raw.base, into_queue);
      std::lock_guard lock(mu_);
      raw_queued_ -= raw.bytes.size();
      spare_raw_.push_back(std::move(raw.bytes));
      if (caller_waiting_) caller_cv_.notify_one();  // room for more raw bytes
    }
  } catch (const Stop&) {
    return;
  } catch (...) {
    std::lock_guard lock(mu_);
    error_ = std::current_exception();
  }
  std::lock_guard lock(mu_);
  done_ = true;
  caller_cv_.notify_one();
}

}  // namespace hcp::logscan
