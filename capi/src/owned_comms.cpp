#include "owned_comms.hpp"

#include <mutex>
#include <unordered_set>

#include "guard.hpp"

namespace hcp::capi {
namespace {

std::mutex owned_mutex;
std::unordered_set<Communicator*> owned_comms;

}  // namespace

hcp_comm* own(std::unique_ptr<Communicator> comm) {
  std::lock_guard lock(owned_mutex);
  owned_comms.insert(comm.get());
  return reinterpret_cast<hcp_comm*>(comm.release());
}

std::unique_ptr<Communicator> take_owned(hcp_comm* comm) {
  auto* c = reinterpret_cast<Communicator*>(comm);
  std::lock_guard lock(owned_mutex);
  if (c == nullptr || owned_comms.erase(c) == 0) return nullptr;
  forget_handle(c);  // its messages (hcp_comm_last_error) go with the handle
  return std::unique_ptr<Communicator>(c);
}

}  // namespace hcp::capi
