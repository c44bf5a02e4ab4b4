// Reads straight out of the other members' buffers, for ranks that share host memory (the in-process world): the
// a2a's head scatter and gather copy each member's rows from where that member holds them into where the reader
// needs them, one copy instead of pack, exchange and reorder (three). Every member publishes its buffer; a read
// holds the owner's lease (buffer_leases) while it copies, and the owner withdraws the buffer before it returns,
// waiting for the reads in progress: a member that fails never returns to a caller who may free the buffer while a
// peer still reads it, and a read that comes after the withdrawal gets Errc::comm.
#pragma once

#include <cstdint>
#include <vector>

#include "buffer_leases.hpp"
#include "hcp/communicator.hpp"

namespace hcp {

class PeerReads {
 public:
  // Collective over `comm` (comm.shares_host_memory()): publishes `mine` and learns every member's buffer.
  Status open(Communicator& comm, const void* mine);
  // Member m's buffer under its lease for the duration of `read(const unsigned char*) -> Status`.
  template <class Read>
  Status read(int m, Read read_fn) {
    const Ref& ref = refs_[static_cast<size_t>(m)];
    HCP_TRY(BufferLeases::instance().acquire(ref.token));
    Status status = read_fn(reinterpret_cast<const unsigned char*>(static_cast<uintptr_t>(ref.address)));
    BufferLeases::instance().release(ref.token);
    return status;
  }
  // Collective: every member has read what it needed (a barrier); the buffers may change after this.
  Status close();

 private:
  struct Ref {
    uint64_t address = 0, token = 0;
  };
  Communicator* comm_ = nullptr;
  Publication publication_;  // withdrawn, and its reads waited for, when this object dies
  std::vector<Ref> refs_;
};

}  // namespace hcp
