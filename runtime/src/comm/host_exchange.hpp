// Small host-memory exchanges (the group checks after a split, the ranks' agreement on a call's shape) over any
// group: directly when the communicator moves host memory, through device buffers of the rank's engine when it moves
// device memory (NCCL, the caller's callbacks with device CUDA) - whose operations are ordered on the engine's
// stream, so an upload, the exchange and a download run in that order.
#pragma once

#include <cstddef>

#include "hcp/communicator.hpp"
#include "hcp/cp_engine.hpp"

namespace hcp {

// `staging`: the engine whose device buffers carry the bytes when comm.device_memory(); may be nullptr otherwise.
Status host_all_gather(Communicator& comm, CpEngine* staging, const void* send, void* recv, size_t chunk_bytes);
Status host_send_recv(Communicator& comm, CpEngine* staging, const void* send, size_t send_bytes, int dst, void* recv,
                      size_t recv_bytes, int src);

}  // namespace hcp
