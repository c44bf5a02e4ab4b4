// The CUDA and NCCL implementations inside libhcp_cuda.so. They have the public functions' names (attention_cuda.hpp,
// nccl_communicator.hpp) in their own namespace, so that the module's code calls them directly while everything
// else calls the public ones, which the loader forwards here through the module's table. Calls inside the module
// name cuda_impl:: explicitly: argument-dependent lookup would also find the public function for hcp:: arguments.
#pragma once

#include <memory>

#include "hcp/attention_params.hpp"
#include "hcp/communicator.hpp"
#include "hcp/cp_engine.hpp"
#include "hcp/nccl_communicator.hpp"
#include "hcp/status.hpp"

namespace hcp::cuda_impl {

Status cuda_device_status();
Status cuda_stream_create(void** stream);
void cuda_stream_destroy(void* stream);
Status cuda_stream_synchronize(void* stream);
Status attention_forward_cuda(const AttnParams& p, void* stream);
Status attention_backward_cuda(const AttnParams& p, void* stream);
Status attention_delta_cuda(const AttnParams& p, void* stream);
Status make_cuda_engine(void* stream, std::unique_ptr<CpEngine>* out);
Status make_nccl_communicator(void* nccl_comm, const NcclOptions& options, std::unique_ptr<Communicator>* out);
Status nccl_unique_id(unsigned char (&id)[kNcclUniqueIdBytes]);
Status make_nccl_communicator(const unsigned char (&id)[kNcclUniqueIdBytes], int rank, int size,
                              const NcclOptions& options, std::unique_ptr<Communicator>* out);

}  // namespace hcp::cuda_impl
