// Device memory over the in-process world when every rank's engine is on the same device: ranks exchange buffer
// addresses over the inner communicator and each copies what it receives straight out of the sender's buffer on
// its own stream (cudaMemcpyAsync device to device on a GPU), as the in-process world does with host memory.
//
// The protocol keeps the sender's buffer valid while it is read: a sender first waits for its stream (the data is
// written), and an operation returns only after every reader has finished its copies - for send/recv an
// acknowledgement to the rank read from, for the collectives a barrier. On the failure paths, where those never
// come, the buffer leases (buffer_leases.hpp) hold a failing rank back until the copies already started out of its
// buffers are done. Byte counts travel with the addresses and are checked (Errc::shape, which aborts the world, as
// the in-process world does).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "buffer_leases.hpp"
#include "engine_exchange.hpp"

namespace hcp {

class PeerCopyCommunicator final : public EngineExchange {
 public:
  using EngineExchange::EngineExchange;
  ~PeerCopyCommunicator() override {
    settle_posted();
    out_publication_.reset();  // then the copies already leased out of the posted buffer
  }

  Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) override;
  Status wait_send_recv() override;
  Status all_to_all(const void* send, void* recv, size_t chunk_bytes) override;
  Status all_gather(const void* send, void* recv, size_t chunk_bytes) override;
  // Block rank() of every rank's send, summed in rank order on this rank's stream: the same bits on every run.
  Status reduce_scatter_sum(const float* send, float* recv, size_t count) override;

 private:
  struct Ref {
    uint64_t address;
    uint64_t bytes;
    uint64_t token;  // the publisher's lease token
  };
  class Reads;

  std::unique_ptr<Communicator> rewrap(std::unique_ptr<Communicator> inner) override {
    Communicator* raw = inner.get();
    return std::make_unique<PeerCopyCommunicator>(raw, engine_, std::move(inner));
  }
  // Waits for this rank's stream, then gathers every rank's Ref of `send`; Errc::shape unless all send `bytes`.
  Status publish(const void* send, size_t bytes, const Publication& publication, const char* op);
  Status shape_mismatch(const char* op, int peer, uint64_t sent, uint64_t expected);

  std::vector<Ref> refs_;  // every rank's Ref of the current collective
  Ref out_{}, in_{};       // the posted send/recv exchange
  std::unique_ptr<Publication> out_publication_;  // open from post to the end of wait (or destruction)
  void* pending_recv_ = nullptr;
  size_t pending_bytes_ = 0;
  int pending_dst_ = 0, pending_src_ = 0;
};

}  // namespace hcp
