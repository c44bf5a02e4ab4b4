// The boundary between C++ and the C ABI: every exported function runs its body inside guarded(), which turns
// every exception into a pinned hcp_status and the per-thread message of hcp_last_error().
#pragma once

#include <cstring>
#include <new>
#include <string>

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

inline size_t checked_struct_size(size_t size, size_t min_size, const char* function, const char* argument) {
  if (size < min_size) {
    throw Error(Errc::invalid_argument, std::string(function) + ": " + argument + "->struct_size (" +
                                            std::to_string(size) + ") is smaller than the first version (" +
                                            std::to_string(min_size) + "); initialise it with the _INIT macro");
  }
  return size;
}

// The integer a C caller passed for an enum parameter. Reading a C++ enum that holds a value outside its
// enumerators is undefined, and C callers can pass any int, so enum parameters are only read through this.
template <typename Enum>
int enum_value(const Enum& e) {
  static_assert(sizeof(Enum) == sizeof(int));
  int v = 0;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Reads a caller's versioned struct: fields beyond the caller's struct_size keep the defaults in `value`; a
// struct_size below `min_size` (the first version) is invalid; unknown trailing fields must be zero.
template <typename T>
T read_versioned(const T* in, T value, size_t min_size, const char* function, const char* argument) {
  require(in, function, argument);
  const size_t size = checked_struct_size(in->struct_size, min_size, function, argument);
  const auto* bytes = reinterpret_cast<const unsigned char*>(in);
  for (size_t i = sizeof(T); i < size; ++i) {
    if (bytes[i] != 0) {
      throw Error(Errc::unsupported, std::string(function) + ": " + argument + " has non-zero fields at byte " +
                                         std::to_string(i) + " that this library (struct size " +
                                         std::to_string(sizeof(T)) + ") does not know");
    }
  }
  std::memcpy(&value, in, size < sizeof(T) ? size : sizeof(T));
  value.struct_size = sizeof(T);
  return value;
}

// Writes an output struct: only the bytes the caller's struct_size covers, which must include the first version.
template <typename T>
void write_versioned(T* out, const T& value, size_t min_size, const char* function, const char* argument) {
  require(out, function, argument);
  const size_t size = checked_struct_size(out->struct_size, min_size, function, argument);
  std::memcpy(reinterpret_cast<unsigned char*>(out) + sizeof(size_t),
              reinterpret_cast<const unsigned char*>(&value) + sizeof(size_t),
              (size < sizeof(T) ? size : sizeof(T)) - sizeof(size_t));
}

}  // namespace hcp::capi
