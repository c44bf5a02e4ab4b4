// `hcp attn --backend mpi`: one rank per process under mpirun or srun, over the MPI backend (libhcp_mpi.so).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "hcp/packed_sequences.hpp"

#include "attn_problem.hpp"
#include "fault_injection.hpp"
#include "hcp/communicator.hpp"
#include "hcp/cp_attention.hpp"

namespace hcp::cli {

// MPI for the length of one command: initialised (unless the process already was) and a communicator over
// MPI_COMM_WORLD. After failing() it does not finalise (the launcher ends the job when the process exits
// non-zero); a finalise that does not return within 10 s ends the process with exit status 3, so a job never
// hangs in MPI_Finalize.
class MpiRun {
 public:
  // Throws Error (unsupported without the MPI backend). `fault`: a failure to inject (fault_injection.hpp).
  MpiRun(std::chrono::milliseconds timeout, const FaultPlan& fault);
  ~MpiRun();
  MpiRun(const MpiRun&) = delete;
  MpiRun& operator=(const MpiRun&) = delete;

  Communicator& world() { return *world_; }
  int rank() const { return world_->rank(); }
  int size() const { return world_->size(); }

  // This rank is failing: the other ranks get `why` in an abort notice now; then it waits (2 s at most) for the
  // ranks failing with it, so that each reports before the first exit; MPI is left unfinalised.
  void failing(const std::string& why);

  // Collective: every rank's stats and verdict, combined (the largest error of each tensor; ok on every rank).
  void combine(std::vector<ErrorStat>* errors, bool* within);

 private:
  std::unique_ptr<Communicator> world_;
  bool initialized_here_ = false;
  bool failed_ = false;
};

// Rows `rank` holds (chunks rank and 2W-1-rank, of every document when `packed` is not empty) of a full [B, S, X]
// tensor ([S, B, X] with sbhd) of elem_bytes elements, one after another.
std::vector<unsigned char> rank_rows(const void* full, const PackedBatch& packed, int64_t batch, int64_t seq,
                                     int64_t row_elems, size_t elem_bytes, int world, int rank,
                                     SeqLayout layout = SeqLayout::bshd);

}  // namespace hcp::cli
