// The Communicator over MPI (hcp/mpi_communicator.hpp), inside libhcp_mpi.so. Every operation is a non-blocking MPI
// call whose wait polls MPI_Testall against the timeout, and, between polls, a receive posted for abort notices
// on a duplicate of the root communicator, so that a rank that fails or times out makes the others fail too.
#include "mpi_module/mpi_impl.hpp"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hcp::mpi_impl {
namespace {

constexpr int kNoticeTag = 7001;
constexpr int kDataTag = 7002;
constexpr int kNoticeBytes = 512;
// Exchanges from this size on get a progress thread (smaller ones leave eagerly, inside MPI_Isend).
constexpr size_t kProgressBytes = 64 * 1024;

using Clock = std::chrono::steady_clock;

bool mpi_usable() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

Status mpi_error(int rc, const std::string& what) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return {Errc::comm, "MPI: " + what + ": " + std::string(text, static_cast<size_t>(std::max(len, 0)))};
}

// Sleeps a little longer each time a wait finds nothing done: ranks oversubscribing the cores (several processes
// per core in tests) must leave them to the ranks that compute.
void back_off(int polls) {
  if (polls < 64) return;
  const int us = std::min(1000, 20 << std::min(6, (polls - 64) / 64));
  std::this_thread::sleep_for(std::chrono::microseconds(us));
}

// A byte count as MPI's (count, datatype): counts are int, so large messages travel in units of up to 1 MiB.
class ByteCount {
 public:
  explicit ByteCount(size_t bytes) {
    if (bytes <= static_cast<size_t>(INT32_MAX)) {
      count_ = static_cast<int>(bytes);
      return;
    }
    size_t unit = size_t{1} << 20;
    while (bytes % unit != 0) unit >>= 1;
    if (bytes / unit > static_cast<size_t>(INT32_MAX)) {
      status_ = Status(Errc::shape, "a message of " + std::to_string(bytes) + " bytes is too large for MPI");
      return;
    }
    MPI_Type_contiguous(static_cast<int>(unit), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
    owned_ = true;
    count_ = static_cast<int>(bytes / unit);
  }
  ~ByteCount() {
    if (owned_) MPI_Type_free(&type_);
  }
  ByteCount(const ByteCount&) = delete;
  ByteCount& operator=(const ByteCount&) = delete;
  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }
  const Status& status() const { return status_; }

 private:
  int count_ = 0;
  MPI_Datatype type_ = MPI_BYTE;
  bool owned_ = false;
  Status status_;
};

// What a communicator shares with the communicators split from it: the abort channel and the first failure.
class Shared {
 public:
  Shared(MPI_Comm control, std::chrono::milliseconds timeout) : control_(control), timeout_(timeout) {
    MPI_Comm_rank(control_, &rank_);
    MPI_Comm_size(control_, &size_);
    MPI_Irecv(notice_, kNoticeBytes, MPI_CHAR, MPI_ANY_SOURCE, kNoticeTag, control_, &notice_request_);
  }
  ~Shared() {
    if (!mpi_usable()) return;
    if (notice_request_ != MPI_REQUEST_NULL) {
      MPI_Cancel(&notice_request_);
      MPI_Wait(&notice_request_, MPI_STATUS_IGNORE);
    }
    for (MPI_Request& r : sent_) {
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);  // completed ones are already MPI_REQUEST_NULL
    }
    MPI_Comm_free(&control_);
  }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;

  int root_rank() const { return rank_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Records the first failure of this rank; with `tell`, the other ranks get a notice (now when called on the
  // owning thread, else at its next poll).
  void fail(const Status& s, bool tell, bool owner_thread) {
    {
      std::lock_guard lock(mu_);
      if (failed_) return;
      failed_ = true;
      failure_ = s;
      pending_notice_ = tell;
    }
    if (owner_thread) send_pending_notice();
  }

  // On the owning thread between polls: sends a pending notice, then reports a failure here or from a peer.
  Status check() {
    send_pending_notice();
    {
      std::lock_guard lock(mu_);
      if (failed_) return failure_;
    }
    if (notice_request_ == MPI_REQUEST_NULL) return {};
    int arrived = 0;
    MPI_Status st;
    if (MPI_Test(&notice_request_, &arrived, &st) == MPI_SUCCESS && arrived) {
      notice_request_ = MPI_REQUEST_NULL;
      notice_[kNoticeBytes - 1] = '\0';
      std::lock_guard lock(mu_);
      if (!failed_) {
        failed_ = true;
        failure_ = Status(Errc::comm, std::string(notice_));
      }
      return failure_;
    }
    return {};
  }

 private:
  void send_pending_notice() {
    std::string text;
    {
      std::lock_guard lock(mu_);
      if (!pending_notice_) return;
      pending_notice_ = false;
      text = "rank " + std::to_string(rank_) + " failed: " + failure_.message();
    }
    text.resize(kNoticeBytes - 1);
    sent_text_.assign(text.c_str(), text.c_str() + text.size() + 1);
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      MPI_Request r = MPI_REQUEST_NULL;
      MPI_Isend(sent_text_.data(), kNoticeBytes, MPI_CHAR, peer, kNoticeTag, control_, &r);
      sent_.push_back(r);
    }
    // A short grace for the notices to leave (small messages go eagerly); never a wait on a dead peer.
    const auto until = Clock::now() + std::chrono::milliseconds(200);
    for (int polls = 0; Clock::now() < until; ++polls) {
      int done = 0;
      MPI_Testall(static_cast<int>(sent_.size()), sent_.data(), &done, MPI_STATUSES_IGNORE);
      if (done) break;
      back_off(polls);
    }
  }

  MPI_Comm control_;
  std::chrono::milliseconds timeout_;
  int rank_ = 0, size_ = 1;
  char notice_[kNoticeBytes] = {};
  MPI_Request notice_request_ = MPI_REQUEST_NULL;
  std::vector<char> sent_text_;
  std::vector<MPI_Request> sent_;
  std::mutex mu_;  // failure state: abort() may come from any thread
  bool failed_ = false, pending_notice_ = false;
  Status failure_;
};

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, std::shared_ptr<Shared> shared)
      : comm_(comm), shared_(std::move(shared)), owner_(std::this_thread::get_id()) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    stop_progress();
    if (mpi_usable()) {
      for (MPI_Request& r : ring_) {
        if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
      }
      MPI_Comm_free(&comm_);
    }
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) override {
    stop_progress();  // an earlier exchange left without its wait (an error path)
    HCP_TRY(shared_->check());
    if (dst < 0 || dst >= size_ || src < 0 || src >= size_)
      return Status(Errc::invalid_argument, "send_recv: peer outside the communicator");
    send_count_ = std::make_unique<ByteCount>(send_bytes);
    recv_count_ = std::make_unique<ByteCount>(recv_bytes);
    HCP_TRY(send_count_->status());
    HCP_TRY(recv_count_->status());
    expected_recv_ = recv_bytes;
    int rc = MPI_Irecv(recv, recv_count_->count(), recv_count_->type(), src, kDataTag, comm_, &ring_[0]);
    if (rc == MPI_SUCCESS)
      rc = MPI_Isend(send, send_count_->count(), send_count_->type(), dst, kDataTag, comm_, &ring_[1]);
    if (rc != MPI_SUCCESS) return failed(mpi_error(rc, "send_recv"));
    start_progress(std::max(send_bytes, recv_bytes));
    return {};
  }

  Status wait_send_recv() override {
    const bool completed = stop_progress();
    if (!completed) HCP_TRY(wait(ring_, 2, "send_recv", ring_statuses_));
    int got = 0;
    MPI_Get_count(&ring_statuses_[0], MPI_BYTE, &got);
    if (got != MPI_UNDEFINED && recv_count_->type() == MPI_BYTE && static_cast<size_t>(got) != expected_recv_)
      return failed(Status(Errc::shape, "send_recv: received " + std::to_string(got) + " bytes, expected " +
                                            std::to_string(expected_recv_)));
    return {};
  }

  Status all_to_all(const void* send, void* recv, size_t chunk_bytes) override {
    HCP_TRY(shared_->check());
    ByteCount n(chunk_bytes);
    HCP_TRY(n.status());
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = MPI_Ialltoall(send, n.count(), n.type(), recv, n.count(), n.type(), comm_, &r);
    if (rc != MPI_SUCCESS) return failed(mpi_error(rc, "all_to_all"));
    return wait(&r, 1, "all_to_all");
  }

  Status all_gather(const void* send, void* recv, size_t chunk_bytes) override {
    HCP_TRY(shared_->check());
    ByteCount n(chunk_bytes);
    HCP_TRY(n.status());
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = MPI_Iallgather(send, n.count(), n.type(), recv, n.count(), n.type(), comm_, &r);
    if (rc != MPI_SUCCESS) return failed(mpi_error(rc, "all_gather"));
    return wait(&r, 1, "all_gather");
  }

  // Summed here in rank order, not by MPI's reduction (whose order is the library's), so that every backend gives
  // the same bits.
  Status reduce_scatter_sum(const float* send, float* recv, size_t count) override {
    std::vector<float> blocks(count * static_cast<size_t>(size_));
    HCP_TRY(all_to_all(send, blocks.data(), count * sizeof(float)));
    std::fill(recv, recv + count, 0.0f);
    for (int j = 0; j < size_; ++j) {
      const float* block = blocks.data() + static_cast<size_t>(j) * count;
      for (size_t i = 0; i < count; ++i) recv[i] += block[i];
    }
    return {};
  }

  Status barrier() override {
    HCP_TRY(shared_->check());
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = MPI_Ibarrier(comm_, &r);
    if (rc != MPI_SUCCESS) return failed(mpi_error(rc, "barrier"));
    return wait(&r, 1, "barrier");
  }

  Status split(int color, int key, std::unique_ptr<Communicator>* out) override {
    if (out == nullptr) return Status(Errc::invalid_argument, "split: out is NULL");
    *out = nullptr;
    // The all-gather first: it has a deadline and sees abort notices, where MPI_Comm_split would block; once it
    // completes every rank is alive and in the split.
    const int mine[2] = {color, key};
    std::vector<int> all(2 * static_cast<size_t>(size_));
    HCP_TRY(all_gather(mine, all.data(), sizeof mine));
    MPI_Comm child = MPI_COMM_NULL;
    const int rc = MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &child);
    if (rc != MPI_SUCCESS) return failed(mpi_error(rc, "split"));
    if (color < 0) return {};
    MPI_Comm_set_errhandler(child, MPI_ERRORS_RETURN);
    *out = std::make_unique<MpiCommunicator>(child, shared_);
    return {};
  }

  void abort(Errc cause, std::string_view reason) override {
    const bool owner = std::this_thread::get_id() == owner_;
    if (owner) stop_progress();  // the notices are MPI calls: no other thread may be in MPI meanwhile
    shared_->fail(Status(cause, std::string(reason)), true, owner);
  }

 private:
  // MPI moves a message only inside MPI calls, and a rank computing its ring step makes none: over shared memory
  // the transfer would wait for wait_send_recv. While a large exchange is in flight, a helper thread keeps
  // testing it so that it progresses behind the step's compute. It is the only thread calling MPI until
  // wait_send_recv stops it, which MPI_THREAD_SERIALIZED allows; with less thread support it is not used.
  void start_progress(size_t bytes) {
    if (bytes < kProgressBytes || !threads_allowed()) return;
    stop_ = false, progress_done_ = false;
    progress_ = std::thread([this] {
      for (int polls = 0; !stop_.load(std::memory_order_acquire); ++polls) {
        int done = 0;
        if (MPI_Testall(2, ring_, &done, ring_statuses_) != MPI_SUCCESS || done) {
          progress_done_.store(done != 0, std::memory_order_release);
          return;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(polls < 64 ? 5 : 50));
      }
    });
  }

  // Whether the helper saw the exchange complete (its statuses are then in ring_statuses_).
  bool stop_progress() {
    if (!progress_.joinable()) return false;
    stop_.store(true, std::memory_order_release);
    progress_.join();
    return progress_done_.load(std::memory_order_acquire);
  }

  static bool threads_allowed() {
    static const bool allowed = [] {
      int provided = MPI_THREAD_SINGLE;
      MPI_Query_thread(&provided);
      return provided >= MPI_THREAD_SERIALIZED;
    }();
    return allowed;
  }

  Status failed(const Status& s) {
    shared_->fail(s, true, true);
    return s;
  }

  Status wait(MPI_Request* requests, int n, const char* what, MPI_Status* statuses = nullptr) {
    const auto deadline = Clock::now() + shared_->timeout();
    for (int polls = 0;; ++polls) {
      int done = 0;
      const int rc = MPI_Testall(n, requests, &done, statuses ? statuses : MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS) return failed(mpi_error(rc, what));
      if (done) return {};
      if (Status peer = shared_->check(); !peer.ok()) {
        // A peer that failed may have done its part of this operation first (its collective completed before
        // ours): a short grace lets ours complete too, so that each rank reports its own result.
        const auto grace = Clock::now() + std::chrono::milliseconds(200);
        while (Clock::now() < grace) {
          if (MPI_Testall(n, requests, &done, statuses ? statuses : MPI_STATUSES_IGNORE) == MPI_SUCCESS && done)
            return {};
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        return peer;
      }
      if (Clock::now() >= deadline)
        return failed(Status(Errc::timeout, std::string(what) + " on rank " + std::to_string(shared_->root_rank()) +
                                                " did not complete within " +
                                                std::to_string(shared_->timeout().count()) + " ms"));
      back_off(polls);
    }
  }

  MPI_Comm comm_;
  std::shared_ptr<Shared> shared_;
  std::thread::id owner_;
  int rank_ = 0, size_ = 1;
  MPI_Request ring_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status ring_statuses_[2] = {};
  std::thread progress_;
  std::atomic<bool> stop_{false}, progress_done_{false};
  std::unique_ptr<ByteCount> send_count_, recv_count_;
  size_t expected_recv_ = 0;
};

MPI_Comm comm_of(int64_t fortran_handle) {
  return fortran_handle == kMpiCommWorld ? MPI_COMM_WORLD : MPI_Comm_f2c(static_cast<MPI_Fint>(fortran_handle));
}

Status require_mpi(const char* what) {
  if (mpi_usable()) return {};
  return Status(Errc::invalid_argument, std::string(what) + ": MPI is not initialised (call MPI_Init, or mpi_init / "
                                                            "hcp_mpi_init, first) or already finalised");
}

bool g_initialized_here = false;

}  // namespace

Status init(bool* initialized_here) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) return Status(Errc::invalid_argument, "mpi_init: MPI has already been finalised");
  if (!initialized) {
    int provided = 0;
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Init_thread");
    g_initialized_here = true;
  }
  if (initialized_here) *initialized_here = !initialized;
  return {};
}

Status finalize() {
  if (!g_initialized_here || !mpi_usable()) return {};
  g_initialized_here = false;
  const int rc = MPI_Finalize();
  return rc == MPI_SUCCESS ? Status{} : mpi_error(rc, "MPI_Finalize");
}

void abort_job(int exit_code) {
  if (mpi_usable()) MPI_Abort(MPI_COMM_WORLD, exit_code);
}

Status make_communicator(int64_t fortran_handle, std::chrono::milliseconds timeout,
                         std::unique_ptr<Communicator>* out) {
  HCP_TRY(require_mpi("make_mpi_communicator"));
  if (out == nullptr) return Status(Errc::invalid_argument, "make_mpi_communicator: out is NULL");
  *out = nullptr;
  if (timeout.count() < 1) return Status(Errc::invalid_argument, "make_mpi_communicator: timeout must be positive");
  const MPI_Comm parent = comm_of(fortran_handle);
  if (parent == MPI_COMM_NULL)
    return Status(Errc::invalid_argument, "make_mpi_communicator: Fortran handle " + std::to_string(fortran_handle) +
                                              " is not an MPI communicator");
  // Non-blocking duplicates, waited for with the deadline: a rank that never comes fails the others in time.
  MPI_Comm data = MPI_COMM_NULL, control = MPI_COMM_NULL;
  MPI_Request dups[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = MPI_Comm_idup(parent, &data, &dups[0]);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_idup(parent, &control, &dups[1]);
  if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Comm_idup");
  const auto deadline = Clock::now() + timeout;
  for (int polls = 0;; ++polls) {
    int done = 0;
    rc = MPI_Testall(2, dups, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Comm_idup");
    if (done) break;
    if (Clock::now() >= deadline)
      return Status(Errc::timeout, "make_mpi_communicator: not every rank of the communicator joined within " +
                                       std::to_string(timeout.count()) + " ms");
    back_off(polls);
  }
  MPI_Comm_set_errhandler(data, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(control, MPI_ERRORS_RETURN);
  *out = std::make_unique<MpiCommunicator>(data, std::make_shared<Shared>(control, timeout));
  return {};
}

Status broadcast(int64_t fortran_handle, void* data, size_t bytes, std::chrono::milliseconds timeout) {
  HCP_TRY(require_mpi("mpi_broadcast"));
  ByteCount n(bytes);
  HCP_TRY(n.status());
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = MPI_Ibcast(data, n.count(), n.type(), 0, comm_of(fortran_handle), &r);
  if (rc != MPI_SUCCESS) return mpi_error(rc, "broadcast");
  const auto deadline = Clock::now() + timeout;
  for (int polls = 0;; ++polls) {
    int done = 0;
    const int trc = MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (trc != MPI_SUCCESS) return mpi_error(trc, "broadcast");
    if (done) return {};
    if (Clock::now() >= deadline)
      return Status(Errc::timeout, "broadcast did not complete within " + std::to_string(timeout.count()) + " ms");
    back_off(polls);
  }
}

Status leave_together(std::chrono::milliseconds grace) {
  HCP_TRY(require_mpi("mpi_leave_together"));
  MPI_Request r = MPI_REQUEST_NULL;
  if (MPI_Ibarrier(MPI_COMM_WORLD, &r) != MPI_SUCCESS) return {};
  const auto until = Clock::now() + grace;
  for (int polls = 0; Clock::now() < until; ++polls) {
    int done = 0;
    if (MPI_Test(&r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) return {};
    back_off(polls);
  }
  return Status(Errc::timeout, "not every rank is leaving");
}

}  // namespace hcp::mpi_impl
