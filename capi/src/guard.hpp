// The boundary between C++ and the C ABI: every exported function runs its body inside guarded(), which turns
// every exception into a pinned hcp_status and the per-thread message of hcp_last_error().
#pragma once

#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "hcp/error.hpp"
#include "hcp/hcp.h"

namespace hcp::capi {

void set_last_error(std::string message);
const char* last_error_text();

// Throws Error{invalid_argument} naming the function and the argument when `ptr` is NULL.
inline void require(const void* ptr, const char* function, const char* argument) {
  if (ptr == nullptr) {
    throw Error(Errc::invalid_argument, std::string(function) + ": argument '" + argument + "' is NULL");
  }
}

template <typename Body>
hcp_status guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    return HCP_OK;
  } catch (const Error& e) {
    const std::string what = e.what();
    // Messages from require() already start with the function name.
    set_last_error(what.rfind(function, 0) == 0 ? what : std::string(function) + ": " + what);
    return static_cast<hcp_status>(e.code());
  } catch (const std::bad_alloc&) {
    set_last_error(std::string(function) + ": out of memory");
    return HCP_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(std::string(function) + ": internal error: " + e.what());
    return HCP_ERR_INTERNAL;
  } catch (...) {
    set_last_error(std::string(function) + ": internal error: unknown exception");
    return HCP_ERR_INTERNAL;
  }
}

// Handle-scoped errors (hcp_<handle>_last_error): the message of the last failed call that took a handle, kept
// in a process-wide map from the handle's address so that any thread can read it. A handle's destroy forgets it.
void set_handle_error(const void* handle, const std::string& message);
std::string handle_error(const void* handle);
void forget_handle(const void* handle);

// guarded() for calls that take a handle: a failure is also left on the handle (when it is not NULL).
template <typename Body>
hcp_status guarded_on(const void* handle, const char* function, Body&& body) noexcept {
  const hcp_status status = guarded(function, std::forward<Body>(body));
  if (status != HCP_OK && handle != nullptr) {
    try {
      set_handle_error(handle, last_error_text());
    } catch (...) {  // out of memory: the per-thread message still holds
    }
  }
  return status;
}

// hcp_<handle>_last_error: a copy of the handle's message for the caller.
hcp_status copy_handle_error(char** out_message, const void* handle, const char* function) noexcept;

}  // namespace hcp::capi
