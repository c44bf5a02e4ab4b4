// The Communicator over MPI, for ranks that are processes (mpirun, srun). It lives in libhcp_mpi.so, loaded on
// first use (modules/module_loader.hpp), so that nothing else needs an MPI library; without it (a build without
// HCP_WITH_MPI, no Open MPI on the machine, HCP_MPI_MODULE=off) every function here gives Errc::unsupported with
// the reason.
//
// Never a hang: every operation is non-blocking underneath and its wait polls with a deadline (the communicator's
// timeout: Errc::timeout), while also watching for abort notices from other ranks (Errc::comm naming the rank and
// its reason). A rank that fails, or times out, sends such a notice to every rank of the communicator it was made
// from, so the others fail within their timeout instead of waiting; its communicators fail every later operation.
// A process that dies ends the job: Open MPI's launcher then stops the other processes (MPI has no way for the
// survivors to go on).
//
// Thread use: one thread at a time per communicator (MPI must provide at least MPI_THREAD_SERIALIZED when several
// threads drive communicators); abort() from any thread (the notice is sent by the thread that next uses it).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "hcp/communicator.hpp"
#include "hcp/status.hpp"

namespace hcp {

// Stands for MPI_COMM_WORLD where a communicator's Fortran handle is expected.
inline constexpr int64_t kMpiCommWorld = -1;

// ok when the MPI backend can be used (the module loads); else Errc::unsupported with the reason.
Status mpi_status();
// Initialises MPI (MPI_Init_thread, MPI_THREAD_SERIALIZED) unless the process already has; *initialized_here says
// whether this call did (then mpi_finalize should end it).
Status mpi_init(bool* initialized_here);
// MPI_Finalize when mpi_init initialised MPI; nothing otherwise.
Status mpi_finalize();
// Ends every process of the job (MPI_Abort on MPI_COMM_WORLD), for a process that cannot go on.
void mpi_abort_job(int exit_code);

// A communicator over the caller's MPI communicator, given by its Fortran handle (MPI_Comm_c2f(comm); mpi4py:
// comm.py2f()) or kMpiCommWorld. The communicator is duplicated, so hcp's messages never meet the caller's.
// Collective over that communicator.
Status make_mpi_communicator(int64_t fortran_handle, std::chrono::milliseconds timeout,
                             std::unique_ptr<Communicator>* out);
// rank 0's `bytes` of `data` to every rank of the communicator (collective; polled with the timeout).
Status mpi_broadcast(int64_t fortran_handle, void* data, size_t bytes, std::chrono::milliseconds timeout);
// For a failing process before it exits: waits, at most `grace`, until every process of MPI_COMM_WORLD has called
// it, so that ranks failing together each report before the first exit makes the launcher end the job.
Status mpi_leave_together(std::chrono::milliseconds grace);

}  // namespace hcp
