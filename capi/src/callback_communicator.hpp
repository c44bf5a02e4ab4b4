// hcp_comm_create_callbacks: an hcp::Communicator whose every operation is a function of the caller's
// (hcp_comm_callbacks), so that CP attention runs over groups a framework already has (torch.distributed, JAX).
#pragma once

#include <memory>

#include "hcp/communicator.hpp"
#include "hcp/hcp.h"

namespace hcp::capi {

// Checks `callbacks` (read as a versioned struct) and wraps it; `fn` names the caller in errors. Throws Error.
std::unique_ptr<Communicator> make_callback_communicator(const hcp_comm_callbacks* callbacks, const char* fn);

}  // namespace hcp::capi
