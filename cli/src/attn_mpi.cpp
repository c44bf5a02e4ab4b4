#include "attn_mpi.hpp"

#include <unistd.h>

#include <csignal>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <thread>

#include "exit_codes.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/error.hpp"
#include "hcp/mpi_communicator.hpp"

namespace hcp::cli {

namespace {

// What a rank says when the launcher stops it because another rank failed (Open MPI sends SIGTERM to the rest of
// the job): one line, written with async-signal-safe calls only.
char g_stopped_line[128];
size_t g_stopped_length = 0;

void on_stop_signal(int sig) {
  if (g_stopped_length > 0) (void)!write(STDERR_FILENO, g_stopped_line, g_stopped_length);
  _exit(128 + sig);
}

}  // namespace

MpiRun::MpiRun(std::chrono::milliseconds timeout, const FaultPlan& fault) {
  Status s = mpi_init(&initialized_here_);
  if (!s.ok()) throw Error(s.code(), "--backend mpi: " + s.message());
  s = make_mpi_communicator(kMpiCommWorld, timeout, &world_);
  if (!s.ok()) throw Error(s.code(), "--backend mpi: " + s.message());
  world_ = with_fault(std::move(world_), fault);
  const int n = std::snprintf(g_stopped_line, sizeof g_stopped_line,
                              "[hcp] rank %d: stopped by the launcher (another rank of the job failed)\n", rank());
  g_stopped_length = n > 0 ? std::min(static_cast<size_t>(n), sizeof g_stopped_line - 1) : 0;
  std::signal(SIGTERM, on_stop_signal);
}

void MpiRun::failing(const std::string& why) {
  if (failed_ || !world_) return;
  failed_ = true;
  world_->abort(Errc::comm, why);
  (void)mpi_leave_together(std::chrono::seconds(2));
}

MpiRun::~MpiRun() {
  if (failed_ || std::uncaught_exceptions() > 0) {
    // Failing: tell the other ranks, and leave MPI unfinalised - MPI_Finalize would wait for a rank that may be
    // gone or hung. The process exits non-zero once the error is printed, and the launcher ends the job.
    if (world_ && !failed_) world_->abort(Errc::comm, "hcp attn exited with an error");
    (void)world_.release();  // its MPI communicators stay as they are until the process ends
    return;
  }
  world_.reset();
  std::atomic<bool> done{false};
  std::thread watchdog([&done] {
    for (int i = 0; i < 1000 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!done) {
      std::fflush(nullptr);
      _exit(kExitInternal);  // a finalise that never returns: say so by the exit status rather than hang
    }
  });
  (void)mpi_finalize();
  done = true;
  watchdog.join();
}

void MpiRun::combine(std::vector<ErrorStat>* errors, bool* within) {
  const size_t n = errors->size();
  std::vector<double> mine(2 * n + 1);
  for (size_t i = 0; i < n; ++i) mine[2 * i] = (*errors)[i].max_abs, mine[2 * i + 1] = (*errors)[i].max_rel;
  mine[2 * n] = *within ? 1.0 : 0.0;
  std::vector<double> all(mine.size() * static_cast<size_t>(size()));
  const Status s = world_->all_gather(mine.data(), all.data(), mine.size() * sizeof(double));
  if (!s.ok()) throw Error(s.code(), "rank " + std::to_string(rank()) + ": " + s.message());
  for (int r = 0; r < size(); ++r) {
    const double* theirs = all.data() + static_cast<size_t>(r) * mine.size();
    for (size_t i = 0; i < n; ++i) {
      (*errors)[i].max_abs = std::max((*errors)[i].max_abs, theirs[2 * i]);
      (*errors)[i].max_rel = std::max((*errors)[i].max_rel, theirs[2 * i + 1]);
    }
    *within = *within && theirs[2 * n] != 0.0;
  }
}

std::vector<unsigned char> rank_rows(const void* full, const PackedBatch& packed, int64_t batch, int64_t seq,
                                     int64_t row_elems, size_t elem_bytes, int world, int rank, SeqLayout layout) {
  std::vector<unsigned char> local(static_cast<size_t>(batch * (seq / world) * row_elems) * elem_bytes);
  const Status s = packed.empty()
                       ? shard_sequence(full, local.data(), batch, seq, row_elems, elem_bytes, world, rank, layout)
                       : shard_packed(full, local.data(), packed, row_elems, elem_bytes, world, rank, batch);
  if (!s.ok()) throw Error(s.code(), s.message());
  return local;
}

}  // namespace hcp::cli
