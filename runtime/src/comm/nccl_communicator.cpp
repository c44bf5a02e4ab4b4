#include "hcp/nccl_communicator.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda_module/cuda_impl.hpp"

// Inside libhcp_cuda.so: the loader (cuda_module_loader.cpp) reaches these through the module's table.
namespace hcp::cuda_impl {
namespace {

static_assert(kNcclUniqueIdBytes == NCCL_UNIQUE_ID_BYTES, "ncclUniqueId size");

using Clock = std::chrono::steady_clock;

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(ncclComm_t comm, bool owned, cudaStream_t stream, std::chrono::milliseconds timeout)
      : comm_(comm), owned_(owned), stream_(stream), timeout_(timeout) {}
  ~NcclCommunicator() override {
    if (scratch_) cudaFree(scratch_);
    if (transfer_stream_) cudaStreamDestroy(transfer_stream_);
    for (cudaEvent_t e : {ready_, done_})
      if (e) cudaEventDestroy(e);
    if (owned_ && !aborted_) ncclCommDestroy(comm_);  // an aborted communicator is already freed
  }

  Status init() {
    int rank = 0, size = 0;
    HCP_TRY(nccl(ncclCommUserRank(comm_, &rank), "ncclCommUserRank"));
    HCP_TRY(nccl(ncclCommCount(comm_, &size), "ncclCommCount"));
    rank_ = rank, size_ = size;
    HCP_TRY(cuda(cudaStreamCreateWithFlags(&transfer_stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
    HCP_TRY(cuda(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "cudaEventCreate"));
    return cuda(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreate");
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool device_memory() const override { return true; }

  Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) override {
    HCP_TRY(usable("send_recv"));
    if (posted_) return misuse("post_send_recv: an exchange is already posted");
    if (!valid(dst) || !valid(src)) return misuse("post_send_recv: peer rank out of range");
    // The transfer starts after everything already enqueued on the compute stream (the data it sends).
    HCP_TRY(cuda(cudaEventRecord(ready_, stream_), "cudaEventRecord"));
    HCP_TRY(cuda(cudaStreamWaitEvent(transfer_stream_, ready_, 0), "cudaStreamWaitEvent"));
    HCP_TRY(grouped("send_recv", [&] {
      ncclResult_t r = ncclSend(send, send_bytes, ncclUint8, dst, comm_, transfer_stream_);
      return r == ncclSuccess ? ncclRecv(recv, recv_bytes, ncclUint8, src, comm_, transfer_stream_) : r;
    }));
    HCP_TRY(cuda(cudaEventRecord(done_, transfer_stream_), "cudaEventRecord"));
    posted_ = true;
    return {};
  }

  Status wait_send_recv() override {
    if (!posted_) return misuse("wait_send_recv: nothing posted");
    posted_ = false;
    const Status done = complete(done_, "send_recv");
    // Also after a failure: the caller frees the buffers in order on stream_, which must not pass the transfer
    // (an aborted communicator ends it).
    const Status ordered = cuda(cudaStreamWaitEvent(stream_, done_, 0), "cudaStreamWaitEvent");
    return done.ok() ? ordered : done;
  }

  Status all_to_all(const void* send, void* recv, size_t chunk_bytes) override {
    HCP_TRY(usable("all_to_all"));
    HCP_TRY(grouped("all_to_all", [&] {
      for (int peer = 0; peer < size_; ++peer) {
        const size_t off = static_cast<size_t>(peer) * chunk_bytes;
        ncclResult_t r = ncclSend(static_cast<const char*>(send) + off, chunk_bytes, ncclUint8, peer, comm_, stream_);
        if (r == ncclSuccess) r = ncclRecv(static_cast<char*>(recv) + off, chunk_bytes, ncclUint8, peer, comm_, stream_);
        if (r != ncclSuccess) return r;
      }
      return ncclSuccess;
    }));
    return finish("all_to_all");
  }

  Status all_gather(const void* send, void* recv, size_t chunk_bytes) override {
    HCP_TRY(usable("all_gather"));
    HCP_TRY(settled("all_gather", ncclAllGather(send, recv, chunk_bytes, ncclUint8, comm_, stream_)));
    return finish("all_gather");
  }

  Status reduce_scatter_sum(const float* send, float* recv, size_t count) override {
    HCP_TRY(usable("reduce_scatter"));
    HCP_TRY(settled("reduce_scatter", ncclReduceScatter(send, recv, count, ncclFloat32, ncclSum, comm_, stream_)));
    return finish("reduce_scatter");
  }

  // NCCL has no barrier: an all-gather of one byte per rank is one.
  Status barrier() override {
    HCP_TRY(usable("barrier"));
    if (!scratch_) HCP_TRY(cuda(cudaMalloc(&scratch_, static_cast<size_t>(size_) + 1), "cudaMalloc"));
    HCP_TRY(settled("barrier", ncclAllGather(static_cast<char*>(scratch_) + size_, scratch_, 1, ncclUint8, comm_,
                                             stream_)));
    return finish("barrier");
  }

  Status split(int color, int key, std::unique_ptr<Communicator>* out) override {
    HCP_TRY(usable("split"));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t fresh = nullptr;
    HCP_TRY(settled("split", ncclCommSplit(comm_, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &fresh, &config)));
    if (fresh == nullptr) {
      out->reset();
      return {};
    }
    HCP_TRY(settle_comm(fresh, "split"));
    auto made = std::make_unique<NcclCommunicator>(fresh, true, stream_, timeout_);
    HCP_TRY(made->init());
    *out = std::move(made);
    return {};
  }

  using Communicator::abort;
  void abort(Errc cause, std::string_view reason) override {
    {
      std::lock_guard lock(reason_mu_);
      if (aborted_) return;
      abort_reason_ = std::string(reason) + " (" + (cause == Errc::timeout ? "timeout" : "error") + ")";
      aborted_ = true;
    }
    // ncclCommAbort frees the communicator (the caller's too, when wrapped): the polling loops check aborted_
    // before every NCCL call, and nothing else touches the handle afterwards.
    ncclCommAbort(comm_);
  }

 private:
  bool valid(int r) const { return r >= 0 && r < size_; }

  Status usable(const char* op) const {
    if (!aborted_) return {};
    std::lock_guard lock(reason_mu_);
    return {Errc::comm, std::string("NCCL ") + op + ": communicator aborted: " + abort_reason_};
  }
  Status misuse(const std::string& what) {
    abort(Errc::invalid_argument, what);
    return {Errc::invalid_argument, "NCCL " + what};
  }
  Status cuda(cudaError_t err, const char* what) {
    if (err == cudaSuccess) return {};
    const std::string message = std::string("NCCL communicator: ") + what + ": " + cudaGetErrorString(err);
    abort(Errc::comm, message);
    return {Errc::comm, message};
  }
  Status nccl(ncclResult_t r, const char* what) {
    if (r == ncclSuccess || r == ncclInProgress) return {};
    const std::string message = std::string(what) + ": " + ncclGetErrorString(r) +
                                (aborted_ ? std::string() : std::string(": ") + ncclGetLastError(comm_));
    abort(Errc::comm, message);
    return {Errc::comm, "NCCL " + message};
  }

  // Polls a non-blocking communicator until its last call has been issued (state leaves ncclInProgress).
  Status settle_comm(ncclComm_t comm, const char* op) {
    const auto deadline = Clock::now() + timeout_;
    for (;;) {
      if (comm == comm_) HCP_TRY(usable(op));
      ncclResult_t state = ncclSuccess;
      ncclResult_t r = ncclCommGetAsyncError(comm, &state);
      if (r != ncclSuccess) return nccl(r, op);
      if (state == ncclSuccess) return {};
      if (state != ncclInProgress) return nccl(state, op);
      if (Clock::now() > deadline) return timed_out(op);
      std::this_thread::yield();
    }
  }
  Status settled(const char* op, ncclResult_t r) {
    HCP_TRY(nccl(r, op));
    return settle_comm(comm_, op);
  }
  template <class Calls>
  Status grouped(const char* op, Calls calls) {
    HCP_TRY(nccl(ncclGroupStart(), op));
    const ncclResult_t issued = calls();
    const ncclResult_t ended = ncclGroupEnd();
    HCP_TRY(nccl(issued, op));
    return settled(op, ended);
  }

  Status timed_out(const char* op) {
    const std::string message = std::string("NCCL ") + op + ": no completion within " +
                                std::to_string(timeout_.count()) + " ms (rank " + std::to_string(rank_) + ")";
    abort(Errc::timeout, message);
    return {Errc::timeout, message};
  }

  // Waits on the host for `event`, polling NCCL for asynchronous errors; aborts on error or timeout.
  Status complete(cudaEvent_t event, const char* op) {
    const auto deadline = Clock::now() + timeout_;
    for (;;) {
      const cudaError_t q = cudaEventQuery(event);
      if (q == cudaSuccess) return {};
      if (q != cudaErrorNotReady) return cuda(q, op);
      HCP_TRY(usable(op));
      ncclResult_t state = ncclSuccess;
      if (ncclCommGetAsyncError(comm_, &state) == ncclSuccess && state != ncclSuccess && state != ncclInProgress)
        return nccl(state, op);
      if (Clock::now() > deadline) return timed_out(op);
      std::this_thread::yield();
    }
  }
  Status finish(const char* op) {
    HCP_TRY(cuda(cudaEventRecord(done_, stream_), "cudaEventRecord"));
    return complete(done_, op);
  }

  ncclComm_t comm_;
  bool owned_;
  cudaStream_t stream_;
  std::chrono::milliseconds timeout_;
  cudaStream_t transfer_stream_ = nullptr;
  cudaEvent_t ready_ = nullptr, done_ = nullptr;
  void* scratch_ = nullptr;  // the barrier's bytes
  int rank_ = 0, size_ = 1;
  bool posted_ = false;
  std::atomic<bool> aborted_{false};  // abort() may come from another thread
  mutable std::mutex reason_mu_;
  std::string abort_reason_;
};

Status device_ready() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return {Errc::unsupported, "NCCL communicator: no usable CUDA device"};
  }
  return {};
}

}  // namespace

Status make_nccl_communicator(void* nccl_comm, const NcclOptions& options, std::unique_ptr<Communicator>* out) {
  if (nccl_comm == nullptr || out == nullptr)
    return {Errc::invalid_argument, "make_nccl_communicator: nccl_comm and out must not be NULL"};
  if (options.timeout.count() <= 0) return {Errc::invalid_argument, "make_nccl_communicator: timeout must be positive"};
  HCP_TRY(device_ready());
  auto comm = std::make_unique<NcclCommunicator>(static_cast<ncclComm_t>(nccl_comm), false,
                                                 static_cast<cudaStream_t>(options.stream), options.timeout);
  HCP_TRY(comm->init());
  *out = std::move(comm);
  return {};
}

Status nccl_unique_id(unsigned char (&id)[kNcclUniqueIdBytes]) {
  HCP_TRY(device_ready());
  ncclUniqueId uid;
  const ncclResult_t r = ncclGetUniqueId(&uid);
  if (r != ncclSuccess) return {Errc::comm, std::string("ncclGetUniqueId: ") + ncclGetErrorString(r)};
  std::memcpy(id, uid.internal, kNcclUniqueIdBytes);
  return {};
}

Status make_nccl_communicator(const unsigned char (&id)[kNcclUniqueIdBytes], int rank, int size,
                              const NcclOptions& options, std::unique_ptr<Communicator>* out) {
  if (out == nullptr) return {Errc::invalid_argument, "make_nccl_communicator: out must not be NULL"};
  if (size < 1 || rank < 0 || rank >= size)
    return {Errc::invalid_argument, "make_nccl_communicator: rank " + std::to_string(rank) + " outside a world of " +
                                        std::to_string(size)};
  if (options.timeout.count() <= 0) return {Errc::invalid_argument, "make_nccl_communicator: timeout must be positive"};
  HCP_TRY(device_ready());
  ncclUniqueId uid;
  std::memcpy(uid.internal, id, kNcclUniqueIdBytes);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRankConfig(&comm, size, uid, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress)
    return {Errc::comm, std::string("ncclCommInitRankConfig: ") + ncclGetErrorString(r)};
  // Owned from here, so an error or timeout while it settles aborts and frees it.
  auto made = std::make_unique<NcclCommunicator>(comm, true, static_cast<cudaStream_t>(options.stream),
                                                 options.timeout);
  const auto deadline = Clock::now() + options.timeout;
  for (;;) {
    ncclResult_t state = ncclSuccess;
    r = ncclCommGetAsyncError(comm, &state);
    if (r != ncclSuccess || (state != ncclSuccess && state != ncclInProgress)) {
      made->abort(Errc::comm, "init failed");
      return {Errc::comm, std::string("ncclCommInitRankConfig: ") + ncclGetErrorString(r != ncclSuccess ? r : state)};
    }
    if (state == ncclSuccess) break;
    if (Clock::now() > deadline) {
      made->abort(Errc::timeout, "init timed out");
      return {Errc::timeout, "ncclCommInitRankConfig: the " + std::to_string(size) +
                                 " ranks did not all join within " + std::to_string(options.timeout.count()) + " ms"};
    }
    std::this_thread::yield();
  }
  HCP_TRY(made->init());
  *out = std::move(made);
  return {};
}

}  // namespace hcp::cuda_impl
