// Overflow-checked integer arithmetic for sizes and products of sizes. Every product of user-given sizes goes
// through here so that a huge value becomes a clear error instead of a wrapped number.
#pragma once

#include <cstdint>
#include <string>

#include "hcp/error.hpp"

namespace hcp {

// a * b, or an Error{invalid_config} naming `what` when the product does not fit in int64_t.
inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw Error(Errc::invalid_config, std::string(what) + " overflows: " + std::to_string(a) + " * " +
                                          std::to_string(b) + " exceeds 2^63 - 1");
  }
  return r;
}

// a * b for buffer sizes; throws Error{out_of_memory} on overflow (no allocation of that size can succeed).
inline size_t checked_mul_size(size_t a, size_t b, const char* what) {
  size_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw Error(Errc::out_of_memory, std::string(what) + " overflows: " + std::to_string(a) + " * " +
                                         std::to_string(b) + " bytes");
  }
  return r;
}

}  // namespace hcp
