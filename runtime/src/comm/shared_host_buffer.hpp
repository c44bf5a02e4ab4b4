// One host buffer that every member of an in-process communicator reads and writes in place, instead of each rank
// receiving its own copy of what the others wrote. CP all_gather over in-process host ranks uses it for the gathered
// K and V: each rank writes its rows once, and the gather that copied W blocks into W buffers (8 x 7/8 of the full KV
// at cp 8, a fifth of a packed forward's CPU time) is gone. An MPI shared-memory window does the same for ranks of
// one node.
//
// Member 0 allocates the buffer on its engine and shares its address; the others hold a lease on it (buffer_leases)
// from the moment they first touch it until they are done, and member 0 withdraws it before it frees it, waiting for
// the leases still held. So a member that fails and returns never frees memory a peer is still reading or writing,
// and a peer that comes late to a withdrawn buffer gets Errc::comm instead of a dangling pointer.
#pragma once

#include <cstddef>
#include <memory>

#include "buffer_leases.hpp"
#include "hcp/communicator.hpp"
#include "hcp/cp_engine.hpp"

namespace hcp {

class SharedHostBuffer {
 public:
  SharedHostBuffer() = default;
  ~SharedHostBuffer() { reset(); }
  SharedHostBuffer(const SharedHostBuffer&) = delete;
  SharedHostBuffer& operator=(const SharedHostBuffer&) = delete;

  // Collective over `comm` (comm.shares_host_memory(), host engines): `bytes` of member 0's engine memory, contents
  // undefined. Errc::invalid_argument when the members ask for different sizes.
  static Status create(CpEngine& eng, Communicator& comm, size_t bytes, SharedHostBuffer* out);

  unsigned char* data() const { return data_; }
  // Ends this member's use: a reader's lease ends; member 0 withdraws the buffer, waits for every lease, frees it.
  void reset();

 private:
  unsigned char* data_ = nullptr;
  EngineBuffer owned_;                       // member 0's
  std::unique_ptr<Publication> publication_;  // member 0's: withdrawn (and waited for) before owned_ is freed
  uint64_t lease_ = 0;                        // another member's token while it holds a lease
};

}  // namespace hcp
