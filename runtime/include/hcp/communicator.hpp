// The communicator interface every CP algorithm runs on: the in-process backend (inprocess_world.hpp) and, with
// CUDA, NCCL implement it. Operations return a Status instead of throwing or hanging: a peer's failure gives
// Errc::comm, an operation that does not complete within the communicator's timeout gives Errc::timeout, and
// either one poisons the communicator's world so that every other rank's pending and later operations fail too.
//
// Matching rule (as in NCCL and MPI): all members call the collective operations in the same order, and the
// messages between two ranks are matched in the order they were posted.
//
// Thread use: one communicator object is driven by one thread at a time; different ranks' objects are driven
// concurrently (that is the point). abort() may be called from any thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "hcp/status.hpp"

namespace hcp {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Whether the buffers may be device memory (NCCL); host communicators take host memory only.
  virtual bool device_memory() const { return false; }
  // Whether every member is a thread of this process, so that a pointer means the same memory on every rank (the
  // in-process backend); device-memory engines then exchange by reading each other's buffers (peer copies).
  virtual bool in_process() const { return false; }
  // Whether host buffers may be shared by the members in place, unseen by this communicator (shared_host_buffer):
  // the in-process backend itself. Wrappers that observe or move the data (traffic counting, device staging) say
  // no, so what they observe is all the data.
  virtual bool shares_host_memory() const { return false; }

  // One ring step: sends `send_bytes` from `send` to rank `dst` and receives `recv_bytes` into `recv` from rank
  // `src`. post_ starts it and returns at once; the buffers must stay untouched until wait_send_recv() returns, so
  // the caller can compute while the transfer is in flight. At most one exchange is posted at a time, and no other
  // operation on this communicator may be called between post and wait. The byte counts must match the peer's.
  virtual Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                                int src) = 0;
  virtual Status wait_send_recv() = 0;
  Status send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes, int src) {
    HCP_TRY(post_send_recv(send, send_bytes, dst, recv, recv_bytes, src));
    return wait_send_recv();
  }

  // `send` holds size() chunks of chunk_bytes, chunk j for rank j; `recv` receives chunk j from rank j.
  virtual Status all_to_all(const void* send, void* recv, size_t chunk_bytes) = 0;
  // Every rank's chunk, in rank order: `recv` holds size() * chunk_bytes.
  virtual Status all_gather(const void* send, void* recv, size_t chunk_bytes) = 0;
  // `send` holds size() blocks of `count` floats; `recv` gets the sum over ranks of block rank(), added in rank
  // order so that every run gives the same bits.
  virtual Status reduce_scatter_sum(const float* send, float* recv, size_t count) = 0;
  virtual Status barrier() = 0;

  // Collective over this communicator: the ranks that pass the same color >= 0 form a new communicator, ordered
  // by (key, rank here); a negative color yields no communicator (*out = nullptr).
  virtual Status split(int color, int key, std::unique_ptr<Communicator>* out) = 0;

  // Marks this rank as failed: every other rank's pending and later operations fail with Errc::comm naming this
  // rank and `reason`; `cause` is recorded as the world's root cause (the error that made this rank give up).
  virtual void abort(Errc cause, std::string_view reason) = 0;
  void abort(std::string_view reason) { abort(Errc::comm, reason); }
};

}  // namespace hcp
