// The status value of hcp's hot paths (communication, kernels, CP attention). Configuration and input errors
// throw hcp::Error instead; both carry the same pinned codes (error.hpp), so the C ABI maps either one directly.
#pragma once

#include <string>
#include <utility>

#include "hcp/error.hpp"

namespace hcp {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Errc code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == Errc::ok; }
  Errc code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Errc code_ = Errc::ok;
  std::string message_;
};

// Returns early from a Status-returning function when `expr` fails.
#define HCP_TRY(expr)                     \
  do {                                    \
    ::hcp::Status hcp_try_status_ = (expr); \
    if (!hcp_try_status_.ok()) return hcp_try_status_; \
  } while (0)

}  // namespace hcp
