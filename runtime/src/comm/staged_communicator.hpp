// Device memory over a host-memory communicator through host buffers: every operation downloads what it sends,
// runs the host operation, and uploads what it received. The fallback for in-process ranks whose engines are on
// different devices (PeerCopyCommunicator serves ranks that share one).
#pragma once

#include <memory>
#include <vector>

#include "engine_exchange.hpp"

namespace hcp {

class StagedCommunicator final : public EngineExchange {
 public:
  using EngineExchange::EngineExchange;
  ~StagedCommunicator() override { settle_posted(); }

  Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) override;
  Status wait_send_recv() override;
  Status all_to_all(const void* send, void* recv, size_t chunk_bytes) override;
  Status all_gather(const void* send, void* recv, size_t chunk_bytes) override;
  Status reduce_scatter_sum(const float* send, float* recv, size_t count) override;

 private:
  std::unique_ptr<Communicator> rewrap(std::unique_ptr<Communicator> inner) override {
    Communicator* raw = inner.get();
    return std::make_unique<StagedCommunicator>(raw, engine_, std::move(inner));
  }

  std::vector<unsigned char> send_host_, recv_host_;
  void* pending_recv_ = nullptr;
  size_t pending_bytes_ = 0;
};

}  // namespace hcp
