// A Communicator that passes every operation to another one and counts the bytes this rank sends, by kind of
// exchange. Communicators split from it count into the same tally, so wrapping the world before CpContext::create
// counts every group's traffic. It is how the cost model's volumes (cp_cost.hpp) are checked against what the
// algorithms really send, over threads or MPI processes.
#pragma once

#include <cstdint>
#include <memory>

#include "hcp/communicator.hpp"

namespace hcp {

struct TrafficTally {
  int64_t send_recv = 0;       // ring messages of 256 bytes or more (send bytes)
  int64_t all_to_all = 0;      // chunks sent to the other members
  int64_t all_gather = 0;      // this rank's chunk, to each other member (chunks of 256 bytes or more)
  int64_t reduce_scatter = 0;  // the blocks of the other members
  int64_t control = 0;         // messages and all-gathers of under 256 bytes: the CP layer's shape and device checks
};

class CountingCommunicator final : public Communicator {
 public:
  // `inner` must outlive this object; `tally` is shared with the communicators split from it.
  CountingCommunicator(Communicator& inner, std::shared_ptr<TrafficTally> tally);
  CountingCommunicator(std::unique_ptr<Communicator> owned, std::shared_ptr<TrafficTally> tally);

  const TrafficTally& tally() const { return *tally_; }

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  bool device_memory() const override { return inner_->device_memory(); }
  bool in_process() const override { return inner_->in_process(); }
  Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) override;
  Status wait_send_recv() override { return inner_->wait_send_recv(); }
  Status all_to_all(const void* send, void* recv, size_t chunk_bytes) override;
  Status all_gather(const void* send, void* recv, size_t chunk_bytes) override;
  Status reduce_scatter_sum(const float* send, float* recv, size_t count) override;
  Status barrier() override { return inner_->barrier(); }
  Status split(int color, int key, std::unique_ptr<Communicator>* out) override;
  void abort(Errc cause, std::string_view reason) override { inner_->abort(cause, reason); }

 private:
  void count(int64_t* field, size_t chunk_bytes, int64_t times);

  std::unique_ptr<Communicator> owned_;
  Communicator* inner_;
  std::shared_ptr<TrafficTally> tally_;
};

}  // namespace hcp
