// The communicators the caller owns (NCCL, MPI, callbacks), so that hcp_comm_destroy can tell them from world
// communicators, and a split function of hcp_comm_callbacks can hand one over to hcp.
#pragma once

#include <memory>

#include "hcp/communicator.hpp"
#include "hcp/hcp.h"

namespace hcp::capi {

hcp_comm* own(std::unique_ptr<Communicator> comm);
// Takes an owned communicator back from the caller, forgetting its handle's messages (nullptr when `comm` is not
// one: NULL or a world's).
std::unique_ptr<Communicator> take_owned(hcp_comm* comm);

}  // namespace hcp::capi
