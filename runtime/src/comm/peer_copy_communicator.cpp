#include "peer_copy_communicator.hpp"

#include <string>

namespace hcp {

Status PeerCopyCommunicator::shape_mismatch(const char* op, int peer, uint64_t sent, uint64_t expected) {
  const Status status(Errc::shape, std::string(op) + ": rank " + std::to_string(peer) + " of the group sent " +
                                       std::to_string(sent) + " bytes, " + std::to_string(expected) +
                                       " expected (ranks disagree on shapes)");
  inner_->abort(status.code(), status.message());
  return status;
}

Status PeerCopyCommunicator::post_send_recv(const void* send, size_t send_bytes, int dst, void* recv,
                                            size_t recv_bytes, int src) {
  if (posted_) {  // out_ is still being read: refuse before touching it, as the inner communicator would
    const Status status(Errc::invalid_argument, "send/recv: an exchange is already posted");
    inner_->abort(status.code(), status.message());
    return status;
  }
  HCP_TRY(copied(engine_->synchronize()));
  out_ = {reinterpret_cast<uint64_t>(send), send_bytes};
  pending_recv_ = recv, pending_bytes_ = recv_bytes, pending_dst_ = dst, pending_src_ = src;
  HCP_TRY(inner_->post_send_recv(&out_, sizeof(Ref), dst, &in_, sizeof(Ref), src));
  posted_ = true;
  return {};
}

Status PeerCopyCommunicator::wait_send_recv() {
  posted_ = false;
  HCP_TRY(inner_->wait_send_recv());
  if (in_.bytes != pending_bytes_) return shape_mismatch("send/recv", pending_src_, in_.bytes, pending_bytes_);
  HCP_TRY(copy(pending_recv_, in_.address, pending_bytes_));
  HCP_TRY(copied(engine_->synchronize()));
  // The acknowledgement: to the rank read from (its buffer is free again), from the rank that read this one's.
  unsigned char done = 1, peer_done = 0;
  return inner_->send_recv(&done, 1, pending_src_, &peer_done, 1, pending_dst_);
}

Status PeerCopyCommunicator::publish(const void* send, size_t bytes, const char* op) {
  HCP_TRY(copied(engine_->synchronize()));
  const Ref mine{reinterpret_cast<uint64_t>(send), bytes};
  refs_.resize(static_cast<size_t>(size()));
  HCP_TRY(inner_->all_gather(&mine, refs_.data(), sizeof(Ref)));
  for (int j = 0; j < size(); ++j)
    if (refs_[j].bytes != bytes) return shape_mismatch(op, j, refs_[j].bytes, bytes);
  return {};
}

Status PeerCopyCommunicator::finish() {
  HCP_TRY(copied(engine_->synchronize()));
  return inner_->barrier();
}

Status PeerCopyCommunicator::all_to_all(const void* send, void* recv, size_t chunk_bytes) {
  const size_t total = chunk_bytes * static_cast<size_t>(size());
  HCP_TRY(publish(send, total, "all_to_all"));
  const uint64_t mine = static_cast<uint64_t>(rank()) * chunk_bytes;
  for (int j = 0; j < size(); ++j)
    HCP_TRY(copy(static_cast<unsigned char*>(recv) + j * chunk_bytes, refs_[j].address + mine, chunk_bytes));
  return finish();
}

Status PeerCopyCommunicator::all_gather(const void* send, void* recv, size_t chunk_bytes) {
  HCP_TRY(publish(send, chunk_bytes, "all_gather"));
  for (int j = 0; j < size(); ++j)
    HCP_TRY(copy(static_cast<unsigned char*>(recv) + j * chunk_bytes, refs_[j].address, chunk_bytes));
  return finish();
}

Status PeerCopyCommunicator::reduce_scatter_sum(const float* send, float* recv, size_t count) {
  const size_t block = count * sizeof(float);
  HCP_TRY(publish(send, block * static_cast<size_t>(size()), "reduce_scatter"));
  const uint64_t mine = static_cast<uint64_t>(rank()) * block;
  HCP_TRY(copy(recv, refs_[0].address + mine, block));
  for (int j = 1; j < size(); ++j)
    HCP_TRY(copied(engine_->add_f32(recv, reinterpret_cast<const float*>(refs_[j].address + mine),
                                    static_cast<int64_t>(count))));
  return finish();
}

}  // namespace hcp
