// libhcp_mpi.so's one exported symbol: the table of the MPI backend for the runtime's loader.
#include "mpi_module/mpi_impl.hpp"
#include "mpi_module/mpi_module_abi.hpp"

namespace {

const hcp::mpi_module::Table kTable{
    {hcp::mpi_module::kAbi, HCP_PROJECT_VERSION}, &hcp::mpi_impl::init,
    &hcp::mpi_impl::finalize,                     &hcp::mpi_impl::abort_job,
    &hcp::mpi_impl::make_communicator,            &hcp::mpi_impl::broadcast,
    &hcp::mpi_impl::leave_together,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const void* hcp_mpi_module_table(uint32_t abi) {
  return abi == hcp::mpi_module::kAbi ? &kTable : nullptr;
}
