// The one exception type of hcp's C++ layer. Its codes are the pinned C ABI status values (hcp/hcp.h), so the
// C ABI can translate an exception without a lookup table that could drift.
#pragma once

#include <stdexcept>
#include <string>

namespace hcp {

enum class Errc : int {
  ok = 0,
  invalid_argument = 1,   // a NULL pointer, an unknown enum value, a struct_size too small
  invalid_config = 2,     // a parallel configuration that violates an upstream condition
  buffer_too_small = 3,   // a caller buffer cannot hold the result; the needed size is reported
  out_of_memory = 4,
  io = 5,                 // a file could not be opened or read
  parse = 6,              // an input could not be parsed
  unsupported = 7,        // a feature this build or this struct version does not have
  comm = 8,               // a communicator operation failed (a peer failed or aborted)
  timeout = 9,            // a communicator operation did not complete in time
  shape = 10,             // tensor shapes that do not divide or do not agree between ranks
  not_found = 11,         // a named item (group kind, rule code, ...) does not exist
  internal = 12,          // a bug in hcp: please report
};

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

}  // namespace hcp
