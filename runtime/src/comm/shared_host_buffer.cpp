#include "shared_host_buffer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace hcp {

Status SharedHostBuffer::create(CpEngine& eng, Communicator& comm, size_t bytes, SharedHostBuffer* out) {
  out->reset();
  struct Ref {
    uint64_t address = 0, bytes = 0, token = 0;
  } mine;
  mine.bytes = bytes;
  if (comm.rank() == 0) {
    HCP_TRY(eng.alloc(bytes, &out->owned_));
    out->publication_ = std::make_unique<Publication>();
    mine.address = reinterpret_cast<uintptr_t>(out->owned_.as());
    mine.token = out->publication_->token();
  }
  std::vector<Ref> all(static_cast<size_t>(comm.size()));
  HCP_TRY(comm.all_gather(&mine, all.data(), sizeof(Ref)));
  // Every member reads the same sizes, so every member names the same one (the first that differs from member 0),
  // whichever of them aborts the world first.
  for (int m = 1; m < comm.size(); ++m)
    if (all[static_cast<size_t>(m)].bytes != all[0].bytes) {
      Status mismatch(Errc::invalid_argument, "shared buffer: rank " + std::to_string(m) + " asked for " +
                                                  std::to_string(all[static_cast<size_t>(m)].bytes) +
                                                  " bytes, rank 0 for " + std::to_string(all[0].bytes));
      comm.abort(mismatch.code(), mismatch.message());
      return mismatch;
    }
  if (comm.rank() != 0) {
    HCP_TRY(BufferLeases::instance().acquire(all[0].token));
    out->lease_ = all[0].token;
  }
  out->data_ = reinterpret_cast<unsigned char*>(static_cast<uintptr_t>(all[0].address));
  return {};
}

void SharedHostBuffer::reset() {
  if (lease_ != 0) BufferLeases::instance().release(lease_);
  lease_ = 0;
  publication_.reset();  // withdraws and waits for the leases before the memory goes
  owned_.reset();
  data_ = nullptr;
}

}  // namespace hcp
