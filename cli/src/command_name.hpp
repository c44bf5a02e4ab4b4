// The name of the running command as the user typed it, for its messages: "hcp-lint", or "hcp lint" under hcp.
#pragma once

#include <string>

namespace hcp::cli {

inline std::string& command_name() {
  static std::string name = "hcp";
  return name;
}

}  // namespace hcp::cli
