// Keeps a published device buffer alive while other ranks of the process copy out of it, on the failure paths too.
// A rank publishes a buffer under a fresh token; a reader leases the token around its copy (until its stream has
// finished the copy); the publisher closes the token before it returns, which withdraws it (later leases fail) and
// waits for the current leases to end. So a rank that fails never frees a buffer a peer is still reading, as the
// in-process world keeps a host message alive while it is being copied.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <map>

#include "hcp/status.hpp"

namespace hcp {

class BufferLeases {
 public:
  static BufferLeases& instance();

  uint64_t open();
  // Errc::comm when the publisher has withdrawn the buffer (it failed and returned).
  Status acquire(uint64_t token);
  void release(uint64_t token);
  // Withdraws the token and waits until no lease on it is left.
  void close(uint64_t token);

 private:
  struct Entry {
    int readers = 0;
    bool withdrawn = false;
  };
  std::mutex mu_;
  std::condition_variable released_;
  std::map<uint64_t, Entry> entries_;  // a map: close() holds an iterator while others insert
  uint64_t next_ = 1;
};

// Closes a token when the publishing operation ends, however it ends.
class Publication {
 public:
  Publication() : token_(BufferLeases::instance().open()) {}
  ~Publication() { BufferLeases::instance().close(token_); }
  Publication(const Publication&) = delete;
  Publication& operator=(const Publication&) = delete;
  uint64_t token() const { return token_; }

 private:
  uint64_t token_;
};

}  // namespace hcp
