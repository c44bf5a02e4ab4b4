#include "staged_communicator.hpp"

#include <string>

namespace hcp {

Status StagedCommunicator::post_send_recv(const void* send, size_t send_bytes, int dst, void* recv,
                                          size_t recv_bytes, int src) {
  HCP_TRY(refuse_if_posted());  // send_host_ may still be read
  send_host_.resize(send_bytes);
  recv_host_.resize(recv_bytes);
  HCP_TRY(copied(engine_->download(send_host_.data(), send, send_bytes)));
  pending_recv_ = recv, pending_bytes_ = recv_bytes;
  HCP_TRY(inner_->post_send_recv(send_host_.data(), send_bytes, dst, recv_host_.data(), recv_bytes, src));
  posted_ = true;
  return {};
}

Status StagedCommunicator::wait_send_recv() {
  posted_ = false;
  HCP_TRY(inner_->wait_send_recv());
  return copied(engine_->upload(pending_recv_, recv_host_.data(), pending_bytes_));
}

Status StagedCommunicator::all_to_all(const void* send, void* recv, size_t chunk_bytes) {
  const size_t bytes = chunk_bytes * static_cast<size_t>(size());
  send_host_.resize(bytes);
  recv_host_.resize(bytes);
  HCP_TRY(copied(engine_->download(send_host_.data(), send, bytes)));
  HCP_TRY(inner_->all_to_all(send_host_.data(), recv_host_.data(), chunk_bytes));
  return copied(engine_->upload(recv, recv_host_.data(), bytes));
}

Status StagedCommunicator::all_gather(const void* send, void* recv, size_t chunk_bytes) {
  const size_t bytes = chunk_bytes * static_cast<size_t>(size());
  send_host_.resize(chunk_bytes);
  recv_host_.resize(bytes);
  HCP_TRY(copied(engine_->download(send_host_.data(), send, chunk_bytes)));
  HCP_TRY(inner_->all_gather(send_host_.data(), recv_host_.data(), chunk_bytes));
  return copied(engine_->upload(recv, recv_host_.data(), bytes));
}

Status StagedCommunicator::reduce_scatter_sum(const float* send, float* recv, size_t count) {
  const size_t bytes = count * sizeof(float);
  send_host_.resize(bytes * static_cast<size_t>(size()));
  recv_host_.resize(bytes);
  HCP_TRY(copied(engine_->download(send_host_.data(), send, send_host_.size())));
  HCP_TRY(inner_->reduce_scatter_sum(reinterpret_cast<const float*>(send_host_.data()),
                                     reinterpret_cast<float*>(recv_host_.data()), count));
  return copied(engine_->upload(recv, recv_host_.data(), bytes));
}

}  // namespace hcp
