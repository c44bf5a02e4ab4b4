// The MPI backend's functions inside libhcp_mpi.so; module_entry.cpp puts them in the module's table.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "hcp/communicator.hpp"
#include "hcp/mpi_communicator.hpp"
#include "hcp/status.hpp"

namespace hcp::mpi_impl {

Status init(bool* initialized_here);
Status finalize();
void abort_job(int exit_code);
Status make_communicator(int64_t fortran_handle, std::chrono::milliseconds timeout,
                         std::unique_ptr<Communicator>* out);
Status broadcast(int64_t fortran_handle, void* data, size_t bytes, std::chrono::milliseconds timeout);
Status leave_together(std::chrono::milliseconds grace);

}  // namespace hcp::mpi_impl
