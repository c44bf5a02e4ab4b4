// The messages left on handles (hcp_<handle>_last_error): one map for every handle type, locked only when a call
// fails, when a message is read and when a handle is destroyed.
#include <mutex>
#include <string>
#include <unordered_map>

#include "guard.hpp"
#include "strings.hpp"

namespace hcp::capi {
namespace {

struct HandleErrors {
  std::mutex mu;
  std::unordered_map<const void*, std::string> messages;
};

HandleErrors& errors() {
  static HandleErrors* e = new HandleErrors;  // never destroyed: handles may outlive static destruction
  return *e;
}

}  // namespace

void set_handle_error(const void* handle, const std::string& message) {
  HandleErrors& e = errors();
  std::lock_guard lock(e.mu);
  e.messages[handle] = message;
}

std::string handle_error(const void* handle) {
  HandleErrors& e = errors();
  std::lock_guard lock(e.mu);
  const auto it = e.messages.find(handle);
  return it == e.messages.end() ? std::string() : it->second;
}

void forget_handle(const void* handle) {
  if (handle == nullptr) return;
  HandleErrors& e = errors();
  std::lock_guard lock(e.mu);
  e.messages.erase(handle);
}

hcp_status copy_handle_error(char** out_message, const void* handle, const char* function) noexcept {
  return guarded(function, [&] {
    require(out_message, function, "out_message");
    *out_message = nullptr;
    require(handle, function, "handle");
    *out_message = dup_for_caller(handle_error(handle));
  });
}

}  // namespace hcp::capi
