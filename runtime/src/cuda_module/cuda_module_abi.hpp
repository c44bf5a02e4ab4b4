// The boundary between the runtime and libhcp_cuda.so, the module that holds everything needing the CUDA runtime
// and NCCL. The runtime (and so libhcp.so, the CLI, the tests) never links CUDA or NCCL: it loads the module on
// the first GPU call and reaches it through this table. C++ types cross the boundary, so a module is used only
// by the build that made it: the loader checks kAbi and the project version.
#pragma once

#include <cstdint>
#include <memory>

#include "hcp/communicator.hpp"
#include "hcp/cp_engine.hpp"
#include "hcp/nccl_communicator.hpp"
#include "hcp/status.hpp"

namespace hcp::cuda_module {

inline constexpr uint32_t kAbi = 1;
// The module's one exported symbol: returns its table, or nullptr for another kAbi.
inline constexpr const char* kEntryName = "hcp_cuda_module_table";

struct Table {
  uint32_t abi;
  const char* version;  // HCP_PROJECT_VERSION of the module's build
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

using EntryFn = const Table* (*)(uint32_t abi);

}  // namespace hcp::cuda_module
