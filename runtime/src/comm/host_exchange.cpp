#include "host_exchange.hpp"

#include <string>

namespace hcp {
namespace {

Status need_staging(const Communicator& comm, CpEngine* staging, const char* what) {
  if (staging != nullptr && staging->device_memory()) return {};
  return Status(Errc::internal, std::string(what) + " of host bytes on rank " + std::to_string(comm.rank()) +
                                    ": the communicator moves device memory and no device engine stages them");
}

// A device buffer of `bytes` (at least 1, so that an empty exchange still has an address) holding `host`'s bytes.
Status staged(CpEngine& engine, const void* host, size_t bytes, size_t capacity, EngineBuffer* out) {
  HCP_TRY(engine.alloc(capacity > 0 ? capacity : 1, out));
  if (host != nullptr && bytes > 0) HCP_TRY(engine.upload(out->as(), host, bytes));
  return {};
}

}  // namespace

Status host_all_gather(Communicator& comm, CpEngine* staging, const void* send, void* recv, size_t chunk_bytes) {
  if (!comm.device_memory()) return comm.all_gather(send, recv, chunk_bytes);
  HCP_TRY(need_staging(comm, staging, "an all-gather"));
  const size_t total = chunk_bytes * static_cast<size_t>(comm.size());
  EngineBuffer mine, all;
  HCP_TRY(staged(*staging, send, chunk_bytes, chunk_bytes, &mine));
  HCP_TRY(staged(*staging, nullptr, 0, total, &all));
  HCP_TRY(comm.all_gather(mine.as(), all.as(), chunk_bytes));
  return total > 0 ? staging->download(recv, all.as(), total) : Status{};
}

Status host_send_recv(Communicator& comm, CpEngine* staging, const void* send, size_t send_bytes, int dst, void* recv,
                      size_t recv_bytes, int src) {
  if (!comm.device_memory()) return comm.send_recv(send, send_bytes, dst, recv, recv_bytes, src);
  HCP_TRY(need_staging(comm, staging, "a send/receive"));
  EngineBuffer out, in;
  HCP_TRY(staged(*staging, send, send_bytes, send_bytes, &out));
  HCP_TRY(staged(*staging, nullptr, 0, recv_bytes, &in));
  HCP_TRY(comm.send_recv(out.as(), send_bytes, dst, in.as(), recv_bytes, src));
  return recv_bytes > 0 ? staging->download(recv, in.as(), recv_bytes) : Status{};
}

}  // namespace hcp
