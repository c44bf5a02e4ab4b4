#include "hcp/counting_communicator.hpp"

#include <utility>

namespace hcp {
namespace {
// The CP layer's control exchanges (the shape check: 14 integers to the ring neighbour, one verdict byte
// gathered; the engines' devices) are messages of a few bytes; data messages carry K and V blocks of kilobytes at
// least.
constexpr size_t kControlMessage = 256;
}

CountingCommunicator::CountingCommunicator(Communicator& inner, std::shared_ptr<TrafficTally> tally)
    : inner_(&inner), tally_(std::move(tally)) {}

CountingCommunicator::CountingCommunicator(std::unique_ptr<Communicator> owned, std::shared_ptr<TrafficTally> tally)
    : owned_(std::move(owned)), inner_(owned_.get()), tally_(std::move(tally)) {}

void CountingCommunicator::count(int64_t* field, size_t chunk_bytes, int64_t times) {
  *field += static_cast<int64_t>(chunk_bytes) * times;
}

Status CountingCommunicator::post_send_recv(const void* send, size_t send_bytes, int dst, void* recv,
                                            size_t recv_bytes, int src) {
  if (dst != rank()) count(send_bytes < kControlMessage ? &tally_->control : &tally_->send_recv, send_bytes, 1);
  return inner_->post_send_recv(send, send_bytes, dst, recv, recv_bytes, src);
}

Status CountingCommunicator::all_to_all(const void* send, void* recv, size_t chunk_bytes) {
  count(&tally_->all_to_all, chunk_bytes, size() - 1);
  return inner_->all_to_all(send, recv, chunk_bytes);
}

Status CountingCommunicator::all_gather(const void* send, void* recv, size_t chunk_bytes) {
  count(chunk_bytes < kControlMessage ? &tally_->control : &tally_->all_gather, chunk_bytes, size() - 1);
  return inner_->all_gather(send, recv, chunk_bytes);
}

Status CountingCommunicator::reduce_scatter_sum(const float* send, float* recv, size_t count_floats) {
  count(&tally_->reduce_scatter, count_floats * sizeof(float), size() - 1);
  return inner_->reduce_scatter_sum(send, recv, count_floats);
}

Status CountingCommunicator::split(int color, int key, std::unique_ptr<Communicator>* out) {
  std::unique_ptr<Communicator> child;
  HCP_TRY(inner_->split(color, key, &child));
  if (child)
    *out = std::make_unique<CountingCommunicator>(std::move(child), tally_);
  else
    out->reset();
  return {};
}

}  // namespace hcp
