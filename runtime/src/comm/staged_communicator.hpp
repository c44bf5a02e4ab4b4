// A communicator over an engine's memory (device memory) built on a host-memory communicator (the in-process
// world): every operation downloads what it sends into host staging buffers, runs the host operation, and uploads
// what it received. Faithful, not fast: it lets the CP schemes run on device memory with several ranks in one
// process. Split results are staged too.
#pragma once

#include <memory>
#include <vector>

#include "hcp/communicator.hpp"
#include "hcp/cp_engine.hpp"

namespace hcp {

class StagedCommunicator final : public Communicator {
 public:
  // `inner` and `engine` must outlive this object, unless `owned` holds `inner`.
  StagedCommunicator(Communicator* inner, CpEngine* engine, std::unique_ptr<Communicator> owned = nullptr)
      : inner_(inner), engine_(engine), owned_(std::move(owned)) {}

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  bool device_memory() const override { return true; }

  Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) override;
  Status wait_send_recv() override;
  Status all_to_all(const void* send, void* recv, size_t chunk_bytes) override;
  Status all_gather(const void* send, void* recv, size_t chunk_bytes) override;
  Status reduce_scatter_sum(const float* send, float* recv, size_t count) override;
  Status barrier() override { return inner_->barrier(); }
  Status split(int color, int key, std::unique_ptr<Communicator>* out) override;
  using Communicator::abort;
  void abort(Errc cause, std::string_view reason) override { inner_->abort(cause, reason); }

 private:
  // A failed copy aborts the world, so that the peers stop waiting for this rank.
  Status copied(Status s);

  Communicator* inner_;
  CpEngine* engine_;
  std::unique_ptr<Communicator> owned_;
  std::vector<unsigned char> send_host_, recv_host_;
  void* pending_recv_ = nullptr;
  size_t pending_bytes_ = 0;
};

}  // namespace hcp
