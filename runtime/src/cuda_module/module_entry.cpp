// libhcp_cuda.so's one exported symbol: the table of its CUDA and NCCL functions for the runtime's loader.
#include "cuda_module/cuda_impl.hpp"
#include "cuda_module/cuda_module_abi.hpp"

namespace {

using namespace hcp;

Status wrap_nccl(void* nccl_comm, const NcclOptions& options, std::unique_ptr<Communicator>* out) {
  return cuda_impl::make_nccl_communicator(nccl_comm, options, out);
}

Status create_nccl(const unsigned char (&id)[kNcclUniqueIdBytes], int rank, int size, const NcclOptions& options,
                   std::unique_ptr<Communicator>* out) {
  return cuda_impl::make_nccl_communicator(id, rank, size, options, out);
}

const cuda_module::Table kTable{
    {cuda_module::kAbi, HCP_PROJECT_VERSION},
    &cuda_impl::cuda_device_status,
    &cuda_impl::cuda_stream_create,
    &cuda_impl::cuda_stream_destroy,
    &cuda_impl::cuda_stream_synchronize,
    &cuda_impl::attention_forward_cuda,
    &cuda_impl::attention_backward_cuda,
    &cuda_impl::attention_delta_cuda,
    &cuda_impl::make_cuda_engine,
    &wrap_nccl,
    &cuda_impl::nccl_unique_id,
    &create_nccl,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const void* hcp_cuda_module_table(uint32_t abi) {
  return abi == hcp::cuda_module::kAbi ? &kTable : nullptr;
}
