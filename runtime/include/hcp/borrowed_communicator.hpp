// A Communicator that passes every operation to one it does not own: how a CP context uses groups the caller made
// (CpContext::create_on_groups) without taking them over. It neither observes nor moves the data, so it says what
// the communicator under it says about memory.
#pragma once

#include <memory>

#include "hcp/communicator.hpp"

namespace hcp {

class BorrowedCommunicator final : public Communicator {
 public:
  explicit BorrowedCommunicator(Communicator& inner) : inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  bool device_memory() const override { return inner_.device_memory(); }
  bool in_process() const override { return inner_.in_process(); }
  bool shares_host_memory() const override { return inner_.shares_host_memory(); }
  Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) override {
    return inner_.post_send_recv(send, send_bytes, dst, recv, recv_bytes, src);
  }
  Status wait_send_recv() override { return inner_.wait_send_recv(); }
  Status all_to_all(const void* send, void* recv, size_t chunk_bytes) override {
    return inner_.all_to_all(send, recv, chunk_bytes);
  }
  Status all_gather(const void* send, void* recv, size_t chunk_bytes) override {
    return inner_.all_gather(send, recv, chunk_bytes);
  }
  Status reduce_scatter_sum(const float* send, float* recv, size_t count) override {
    return inner_.reduce_scatter_sum(send, recv, count);
  }
  Status barrier() override { return inner_.barrier(); }
  Status split(int color, int key, std::unique_ptr<Communicator>* out) override {
    return inner_.split(color, key, out);
  }
  void abort(Errc cause, std::string_view reason) override { inner_.abort(cause, reason); }

 private:
  Communicator& inner_;
};

}  // namespace hcp
