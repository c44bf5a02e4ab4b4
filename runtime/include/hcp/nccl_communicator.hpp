// The Communicator over NCCL (CUDA builds). Buffers are device memory; every operation is ordered on `stream`, the
// stream the CP engine computes on (CpDevice::stream), so data produced by a kernel is sent without a host
// round trip. The ring's paired send/recv runs on a second stream: post_send_recv enqueues it after the work
// already on `stream` and returns, the caller enqueues the step's kernels, and wait_send_recv makes `stream` wait
// for the transfer - the transfer and the step overlap on the GPU.
//
// Never a hang: communicators are non-blocking (ncclConfig_t::blocking = 0); every operation waits on the host
// for its completion while polling ncclCommGetAsyncError, and aborts the communicator (ncclCommAbort) when NCCL
// reports an error (Errc::comm) or the timeout passes (Errc::timeout). An aborted communicator fails every later
// operation. Reduce-scatter sums in NCCL's order (deterministic for a fixed NCCL configuration, not rank order).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "hcp/communicator.hpp"

namespace hcp {

struct NcclOptions {
  void* stream = nullptr;  // cudaStream_t; nullptr: the legacy default stream
  std::chrono::milliseconds timeout{60000};
};

// Wraps a caller's ncclComm_t (not owned: never destroyed here, but aborted on error or timeout, since NCCL
// leaves a communicator unusable then). The caller's communicator should be non-blocking for the timeout to
// hold during NCCL's own calls.
Status make_nccl_communicator(void* nccl_comm, const NcclOptions& options, std::unique_ptr<Communicator>* out);

// The bytes of a fresh ncclUniqueId (rank 0 creates it and sends it to the others out of band).
constexpr size_t kNcclUniqueIdBytes = 128;
Status nccl_unique_id(unsigned char (&id)[kNcclUniqueIdBytes]);
// Creates (and owns) a non-blocking communicator of `size` ranks from the unique id; collective over the ranks.
Status make_nccl_communicator(const unsigned char (&id)[kNcclUniqueIdBytes], int rank, int size,
                              const NcclOptions& options, std::unique_ptr<Communicator>* out);

}  // namespace hcp
