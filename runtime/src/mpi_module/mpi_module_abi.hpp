// The table of libhcp_mpi.so, the MPI backend (modules/module_loader.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "hcp/communicator.hpp"
#include "hcp/status.hpp"
#include "modules/module_loader.hpp"

namespace hcp::mpi_module {

inline constexpr uint32_t kAbi = 1;
inline constexpr const char* kEntryName = "hcp_mpi_module_table";

struct Table {
  modules::ModuleHeader header;
  Status (*init)(bool* initialized_here);
  Status (*finalize)();
  void (*abort_job)(int exit_code);
  Status (*make_communicator)(int64_t fortran_handle, std::chrono::milliseconds timeout,
                              std::unique_ptr<Communicator>* out);
  Status (*broadcast)(int64_t fortran_handle, void* data, size_t bytes, std::chrono::milliseconds timeout);
  Status (*leave_together)(std::chrono::milliseconds grace);
};

}  // namespace hcp::mpi_module
