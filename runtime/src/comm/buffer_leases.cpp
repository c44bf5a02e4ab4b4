#include "buffer_leases.hpp"

namespace hcp {

BufferLeases& BufferLeases::instance() {
  static BufferLeases leases;
  return leases;
}

uint64_t BufferLeases::open() {
  std::lock_guard lock(mu_);
  const uint64_t token = next_++;
  entries_.emplace(token, Entry{});
  return token;
}

Status BufferLeases::acquire(uint64_t token) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(token);
  if (it == entries_.end() || it->second.withdrawn)
    return {Errc::comm, "the peer withdrew its buffer before it could be copied (the peer failed)"};
  ++it->second.readers;
  return {};
}

void BufferLeases::release(uint64_t token) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(token);
  if (it != entries_.end() && --it->second.readers == 0) released_.notify_all();
}

void BufferLeases::close(uint64_t token) {
  std::unique_lock lock(mu_);
  auto it = entries_.find(token);
  if (it == entries_.end()) return;
  it->second.withdrawn = true;
  released_.wait(lock, [&] { return it->second.readers == 0; });
  entries_.erase(it);
}

}  // namespace hcp
