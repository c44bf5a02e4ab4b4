#include "callback_communicator.hpp"

#include <atomic>
#include <mutex>
#include <string>
#include <utility>

#include "owned_comms.hpp"
#include "struct_versions.hpp"

namespace hcp::capi {
namespace {

class CallbackCommunicator final : public Communicator {
 public:
  explicit CallbackCommunicator(const hcp_comm_callbacks& cb) : cb_(cb) {}
  ~CallbackCommunicator() override {
    if (cb_.release) cb_.release(cb_.user);
  }

  int rank() const override { return cb_.rank; }
  int size() const override { return cb_.size; }
  bool device_memory() const override { return cb_.device == HCP_DEVICE_CUDA; }

  Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) override {
    HCP_TRY(live());
    const int32_t rc = cb_.send_recv(cb_.user, send, send_bytes, dst, recv, recv_bytes, src, cb_.cuda_stream);
    pending_ = rc == 0 && cb_.send_recv_wait != nullptr;
    return result("send_recv", rc);
  }
  Status wait_send_recv() override {
    if (!pending_) return live();
    pending_ = false;
    HCP_TRY(live());
    return result("send_recv_wait", cb_.send_recv_wait(cb_.user, cb_.cuda_stream));
  }
  Status all_to_all(const void* send, void* recv, size_t chunk_bytes) override {
    HCP_TRY(live());
    return result("all_to_all", cb_.all_to_all(cb_.user, send, recv, chunk_bytes, cb_.cuda_stream));
  }
  Status all_gather(const void* send, void* recv, size_t chunk_bytes) override {
    HCP_TRY(live());
    return result("all_gather", cb_.all_gather(cb_.user, send, recv, chunk_bytes, cb_.cuda_stream));
  }
  Status reduce_scatter_sum(const float* send, float* recv, size_t count) override {
    HCP_TRY(live());
    return result("reduce_scatter_sum_f32", cb_.reduce_scatter_sum_f32(cb_.user, send, recv, count, cb_.cuda_stream));
  }
  Status barrier() override {
    HCP_TRY(live());
    return result("barrier", cb_.barrier(cb_.user, cb_.cuda_stream));
  }

  Status split(int color, int key, std::unique_ptr<Communicator>* out) override {
    *out = nullptr;
    HCP_TRY(live());
    if (cb_.split == nullptr)
      return Status(Errc::unsupported, "rank " + std::to_string(cb_.rank) +
                                           ": the caller's communicator has no split function (hcp_comm_callbacks)");
    hcp_comm* child = nullptr;
    HCP_TRY(result("split", cb_.split(cb_.user, color, key, &child, cb_.cuda_stream)));
    std::unique_ptr<Communicator> group = take_owned(child);
    if (color < 0) return {};  // no group for this member (one it made anyway is destroyed)
    if (!group)
      return Status(Errc::comm, "rank " + std::to_string(cb_.rank) + ": the caller's split gave " +
                                    (child ? "a communicator it does not own" : "no group") + " for color " +
                                    std::to_string(color));
    *out = std::move(group);
    return {};
  }

  void abort(Errc, std::string_view reason) override {
    {
      std::lock_guard lock(abort_mutex_);
      if (aborted_) return;
      abort_reason_ = reason;
      aborted_ = true;
    }
    cb_.abort(cb_.user, abort_reason_.c_str());
  }

 private:
  Status live() const {
    if (!aborted_) return {};
    std::lock_guard lock(abort_mutex_);
    return Status(Errc::comm, "rank " + std::to_string(cb_.rank) + ": the communicator was aborted: " + abort_reason_);
  }
  // A function that failed on this rank fails the others too (as a built-in communicator's world does): they
  // may be waiting for this rank's part of the exchange.
  Status result(const char* function, int32_t rc) {
    if (rc == 0) return {};
    std::string message = "rank " + std::to_string(cb_.rank) + ": the caller's " + function + " failed (" +
                          std::to_string(rc) + ")";
    if (cb_.error_message) {
      if (const char* why = cb_.error_message(cb_.user); why && *why) message += std::string(": ") + why;
    }
    abort(Errc::comm, message);
    return Status(Errc::comm, message);
  }

  const hcp_comm_callbacks cb_;
  bool pending_ = false;  // a send_recv started that send_recv_wait completes
  std::atomic<bool> aborted_{false};
  mutable std::mutex abort_mutex_;
  std::string abort_reason_;
};

}  // namespace

std::unique_ptr<Communicator> make_callback_communicator(const hcp_comm_callbacks* callbacks, const char* fn) {
  const hcp_comm_callbacks cb = read_versioned(callbacks, hcp_comm_callbacks HCP_COMM_CALLBACKS_INIT, fn, "callbacks");
  const std::string where = std::string(fn) + ": callbacks";
  if (cb.size < 1 || cb.rank < 0 || cb.rank >= cb.size)
    throw Error(Errc::invalid_argument, where + " has rank " + std::to_string(cb.rank) + " and size " +
                                            std::to_string(cb.size) + " (need 0 <= rank < size)");
  if (cb.device != HCP_DEVICE_CPU && cb.device != HCP_DEVICE_CUDA)
    throw Error(Errc::invalid_argument, where + "->device (" + std::to_string(cb.device) +
                                            ") is not HCP_DEVICE_CPU or HCP_DEVICE_CUDA");
  const std::pair<const void*, const char*> required[] = {
      {reinterpret_cast<const void*>(cb.send_recv), "send_recv"},
      {reinterpret_cast<const void*>(cb.all_to_all), "all_to_all"},
      {reinterpret_cast<const void*>(cb.all_gather), "all_gather"},
      {reinterpret_cast<const void*>(cb.reduce_scatter_sum_f32), "reduce_scatter_sum_f32"},
      {reinterpret_cast<const void*>(cb.barrier), "barrier"},
      {reinterpret_cast<const void*>(cb.abort), "abort"}};
  for (const auto& [function, name] : required)
    if (function == nullptr) throw Error(Errc::invalid_argument, where + "->" + name + " is NULL");
  return std::make_unique<CallbackCommunicator>(cb);
}

}  // namespace hcp::capi
