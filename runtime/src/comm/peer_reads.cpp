#include "peer_reads.hpp"

namespace hcp {

Status PeerReads::open(Communicator& comm, const void* mine) {
  comm_ = &comm;
  const Ref ref{reinterpret_cast<uintptr_t>(mine), publication_.token()};
  refs_.assign(static_cast<size_t>(comm.size()), Ref{});
  return comm.all_gather(&ref, refs_.data(), sizeof(Ref));
}

Status PeerReads::close() { return comm_->barrier(); }

}  // namespace hcp
