#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hcp/lint/location.hpp"

namespace hcp::lint {

enum class Severity { info = 0, warning = 1, error = 2 };

std::string_view severity_name(Severity s);  // "info", "warning", "error"
// Throws Error{invalid_argument} for anything else.
Severity parse_severity(std::string_view name);

struct Related {
  Location loc;
  std::string message;
};

struct Diagnostic {
  std::string code;  // "HCP001"
  Severity severity = Severity::error;
  std::string rule;  // "a2a-p2p-without-sizes"
  std::string message;
  Location loc;
  std::string hint;
  std::vector<Related> related;
  bool unknown_fact = false;  // an info that a needed fact is unknown; configured severities leave it alone
};

}  // namespace hcp::lint
