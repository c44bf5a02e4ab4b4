#include "peer_copy_communicator.hpp"

#include <string>

namespace hcp {

// The copies of one operation out of other ranks' buffers: each source is leased before its copy is enqueued, and
// the leases end once this rank's stream has finished the copies - at finish(), or when the operation fails.
class PeerCopyCommunicator::Reads {
 public:
  explicit Reads(PeerCopyCommunicator& comm) : comm_(comm) {}
  ~Reads() {
    if (!held_.empty()) (void)comm_.engine_->synchronize();  // a failed operation: its copies must end first
    end_leases();
  }
  Reads(const Reads&) = delete;
  Reads& operator=(const Reads&) = delete;

  Status copy(void* dst, const Ref& ref, uint64_t offset, size_t bytes) {
    if (bytes == 0) return {};
    HCP_TRY(lease(ref));
    return comm_.copied(comm_.engine_->copy_rows(1, 1, bytes, dst, 0, 0, source(ref, offset), 0, 0));
  }
  Status add(float* dst, const Ref& ref, uint64_t offset, size_t count) {
    if (count == 0) return {};
    HCP_TRY(lease(ref));
    return comm_.copied(comm_.engine_->add_f32(dst, static_cast<const float*>(source(ref, offset)),
                                               static_cast<int64_t>(count)));
  }
  Status finish() {
    Status s = comm_.copied(comm_.engine_->synchronize());
    end_leases();
    return s;
  }

 private:
  static const void* source(const Ref& ref, uint64_t offset) {
    return reinterpret_cast<const void*>(ref.address + offset);
  }
  Status lease(const Ref& ref) {
    Status s = BufferLeases::instance().acquire(ref.token);
    if (!s.ok()) return s;
    held_.push_back(ref.token);
    return {};
  }
  void end_leases() {
    for (uint64_t token : held_) BufferLeases::instance().release(token);
    held_.clear();
  }

  PeerCopyCommunicator& comm_;
  std::vector<uint64_t> held_;
};

Status PeerCopyCommunicator::shape_mismatch(const char* op, int peer, uint64_t sent, uint64_t expected) {
  const Status status(Errc::shape, std::string(op) + ": rank " + std::to_string(peer) + " of the group sent " +
                                       std::to_string(sent) + " bytes, " + std::to_string(expected) +
                                       " expected (ranks disagree on shapes)");
  inner_->abort(status.code(), status.message());
  return status;
}

Status PeerCopyCommunicator::post_send_recv(const void* send, size_t send_bytes, int dst, void* recv,
                                            size_t recv_bytes, int src) {
  HCP_TRY(refuse_if_posted());  // out_ may still be read
  HCP_TRY(copied(engine_->synchronize()));
  out_publication_ = std::make_unique<Publication>();
  out_ = {reinterpret_cast<uint64_t>(send), send_bytes, out_publication_->token()};
  pending_recv_ = recv, pending_bytes_ = recv_bytes, pending_dst_ = dst, pending_src_ = src;
  Status posted = inner_->post_send_recv(&out_, sizeof(Ref), dst, &in_, sizeof(Ref), src);
  if (!posted.ok()) {
    out_publication_.reset();
    return posted;
  }
  posted_ = true;
  return {};
}

Status PeerCopyCommunicator::wait_send_recv() {
  posted_ = false;
  // Closed when this returns, however: after the acknowledgement, or after the copies a failure left running.
  const std::unique_ptr<Publication> publication = std::move(out_publication_);
  HCP_TRY(inner_->wait_send_recv());
  if (in_.bytes != pending_bytes_) return shape_mismatch("send/recv", pending_src_, in_.bytes, pending_bytes_);
  Reads reads(*this);
  HCP_TRY(reads.copy(pending_recv_, in_, 0, pending_bytes_));
  HCP_TRY(reads.finish());
  // The acknowledgement: to the rank read from (its buffer is free again), from the rank that read this one's.
  unsigned char done = 1, peer_done = 0;
  return inner_->send_recv(&done, 1, pending_src_, &peer_done, 1, pending_dst_);
}

Status PeerCopyCommunicator::publish(const void* send, size_t bytes, const Publication& publication,
                                     const char* op) {
  HCP_TRY(copied(engine_->synchronize()));
  const Ref mine{reinterpret_cast<uint64_t>(send), bytes, publication.token()};
  refs_.resize(static_cast<size_t>(size()));
  HCP_TRY(inner_->all_gather(&mine, refs_.data(), sizeof(Ref)));
  for (int j = 0; j < size(); ++j)
    if (refs_[j].bytes != bytes) return shape_mismatch(op, j, refs_[j].bytes, bytes);
  return {};
}

Status PeerCopyCommunicator::all_to_all(const void* send, void* recv, size_t chunk_bytes) {
  Publication publication;
  HCP_TRY(publish(send, chunk_bytes * static_cast<size_t>(size()), publication, "all_to_all"));
  Reads reads(*this);
  const uint64_t mine = static_cast<uint64_t>(rank()) * chunk_bytes;
  for (int j = 0; j < size(); ++j)
    HCP_TRY(reads.copy(static_cast<unsigned char*>(recv) + j * chunk_bytes, refs_[j], mine, chunk_bytes));
  HCP_TRY(reads.finish());
  return inner_->barrier();  // every rank's copies out of this one's buffer are done
}

Status PeerCopyCommunicator::all_gather(const void* send, void* recv, size_t chunk_bytes) {
  Publication publication;
  HCP_TRY(publish(send, chunk_bytes, publication, "all_gather"));
  Reads reads(*this);
  for (int j = 0; j < size(); ++j)
    HCP_TRY(reads.copy(static_cast<unsigned char*>(recv) + j * chunk_bytes, refs_[j], 0, chunk_bytes));
  HCP_TRY(reads.finish());
  return inner_->barrier();
}

Status PeerCopyCommunicator::reduce_scatter_sum(const float* send, float* recv, size_t count) {
  const size_t block = count * sizeof(float);
  Publication publication;
  HCP_TRY(publish(send, block * static_cast<size_t>(size()), publication, "reduce_scatter"));
  Reads reads(*this);
  const uint64_t mine = static_cast<uint64_t>(rank()) * block;
  HCP_TRY(reads.copy(recv, refs_[0], mine, block));
  for (int j = 1; j < size(); ++j) HCP_TRY(reads.add(recv, refs_[j], mine, count));
  HCP_TRY(reads.finish());
  return inner_->barrier();
}

}  // namespace hcp
