// The CUDA entry points of a build without the CUDA path: each says so.
#include "hcp/attention_cuda.hpp"
#include "hcp/cp_engine.hpp"
#include "hcp/nccl_communicator.hpp"

namespace hcp {
namespace {
Status not_built() {
  return {Errc::unsupported, "this build of hcp has no CUDA path (configure with HCP_WITH_CUDA=ON and the CUDA "
                             "toolkit and NCCL installed)"};
}
}  // namespace

bool cuda_built() { return false; }
Status cuda_device_status() { return not_built(); }
Status attention_forward_cuda(const AttnParams&, void*) { return not_built(); }
Status attention_backward_cuda(const AttnParams&, void*) { return not_built(); }
Status attention_delta_cuda(const AttnParams&, void*) { return not_built(); }
Status make_cuda_engine(void*, std::unique_ptr<CpEngine>*) { return not_built(); }
Status cuda_stream_create(void**) { return not_built(); }
void cuda_stream_destroy(void*) {}
Status cuda_stream_synchronize(void*) { return not_built(); }
Status make_nccl_communicator(void*, const NcclOptions&, std::unique_ptr<Communicator>*) { return not_built(); }
Status nccl_unique_id(unsigned char (&)[kNcclUniqueIdBytes]) { return not_built(); }
Status make_nccl_communicator(const unsigned char (&)[kNcclUniqueIdBytes], int, int, const NcclOptions&,
                              std::unique_ptr<Communicator>*) {
  return not_built();
}

}  // namespace hcp
