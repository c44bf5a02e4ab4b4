#include "hcp/lint/diagnostic.hpp"

#include <string>

#include "hcp/error.hpp"

namespace hcp::lint {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
  }
  return "error";
}

Severity parse_severity(std::string_view name) {
  if (name == "info" || name == "note") return Severity::info;
  if (name == "warning" || name == "warn") return Severity::warning;
  if (name == "error") return Severity::error;
  throw Error(Errc::invalid_argument, "unknown severity '" + std::string(name) + "' (expected error, warning or info)");
}

}  // namespace hcp::lint
