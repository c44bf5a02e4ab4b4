// The table of libhcp_cuda.so, the module that holds everything needing the CUDA runtime and NCCL
// (modules/module_loader.hpp): the runtime loads it on the first GPU call and reaches it through this table.
#pragma once

#include <cstdint>
#include <memory>

#include "hcp/communicator.hpp"
#include "hcp/cp_engine.hpp"
#include "hcp/nccl_communicator.hpp"
#include "hcp/status.hpp"
#include "modules/module_loader.hpp"

namespace hcp::cuda_module {

inline constexpr uint32_t kAbi = 1;
// The module's one exported symbol (a modules::EntryFn): its table, or nullptr for another kAbi.
inline constexpr const char* kEntryName = "hcp_cuda_module_table";

struct Table {
  modules::ModuleHeader header;
  Status (*device_status)();
  Status (*stream_create)(void** stream);
  void (*stream_destroy)(void* stream);
  Status (*stream_synchronize)(void* stream);
  Status (*attention_forward)(const AttnParams& p, void* stream);
  Status (*attention_backward)(const AttnParams& p, void* stream);
  Status (*attention_delta)(const AttnParams& p, void* stream);
  Status (*make_engine)(void* stream, std::unique_ptr<CpEngine>* out);
  Status (*wrap_nccl)(void* nccl_comm, const NcclOptions& options, std::unique_ptr<Communicator>* out);
  Status (*nccl_unique_id)(unsigned char (&id)[kNcclUniqueIdBytes]);
  Status (*create_nccl)(const unsigned char (&id)[kNcclUniqueIdBytes], int rank, int size,
                        const NcclOptions& options, std::unique_ptr<Communicator>* out);
};

}  // namespace hcp::cuda_module
