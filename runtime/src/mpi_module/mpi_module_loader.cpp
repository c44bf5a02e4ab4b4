// The public MPI entry points (hcp/mpi_communicator.hpp) without linking MPI: the first call loads libhcp_mpi.so
// ($HCP_MPI_MODULE, beside libhcp.so, ../lib, the build tree, the loader's search path) and every call goes
// through its table.
#include "hcp/mpi_communicator.hpp"
#include "modules/module_loader.hpp"
#include "mpi_module/mpi_module_abi.hpp"

namespace hcp {
namespace {

modules::LoadedModule load() {
  modules::ModuleSpec spec{};
  spec.file = "libhcp_mpi.so";
  spec.entry = mpi_module::kEntryName;
  spec.env = "HCP_MPI_MODULE";
#ifdef HCP_MPI_MODULE_BUILD_PATH
  spec.build_path = HCP_MPI_MODULE_BUILD_PATH;
#endif
  spec.abi = mpi_module::kAbi;
  spec.global = true;  // Open MPI's plugins, which libmpi loads itself, need libmpi's symbols
  spec.purpose = "the MPI backend";
  spec.needs = "Open MPI (libmpi.so.40)";
  spec.not_built = "this build of hcp has no MPI backend (configure with HCP_WITH_MPI=ON and Open MPI installed: "
                   "Debian's libopenmpi-dev)";
  return modules::load_module(spec);
}

const modules::LoadedModule& module() {
  static const modules::LoadedModule loaded = load();  // thread-safe, once
  return loaded;
}

const mpi_module::Table* table() { return reinterpret_cast<const mpi_module::Table*>(module().table); }

Status missing() { return {Errc::unsupported, module().why}; }

}  // namespace

Status mpi_status() { return table() ? Status{} : missing(); }

Status mpi_init(bool* initialized_here) {
  const auto* t = table();
  return t ? t->init(initialized_here) : missing();
}

Status mpi_finalize() {
  const auto* t = table();
  return t ? t->finalize() : Status{};
}

void mpi_abort_job(int exit_code) {
  if (const auto* t = table()) t->abort_job(exit_code);
}

Status make_mpi_communicator(int64_t fortran_handle, std::chrono::milliseconds timeout,
                             std::unique_ptr<Communicator>* out) {
  const auto* t = table();
  return t ? t->make_communicator(fortran_handle, timeout, out) : missing();
}

Status mpi_broadcast(int64_t fortran_handle, void* data, size_t bytes, std::chrono::milliseconds timeout) {
  const auto* t = table();
  return t ? t->broadcast(fortran_handle, data, bytes, timeout) : missing();
}

Status mpi_leave_together(std::chrono::milliseconds grace) {
  const auto* t = table();
  return t ? t->leave_together(grace) : missing();
}

}  // namespace hcp
