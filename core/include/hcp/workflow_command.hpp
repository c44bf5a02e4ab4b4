// Escaping for GitHub Actions workflow commands (::error file=...,title=...::message), shared by hcp-lint's and
// hcp-logscan's github renderers: control characters are made visible first (printable.hpp), then GitHub's own
// escapes: % CR LF in the message, and : , in properties too.
#pragma once

#include <string>
#include <string_view>

namespace hcp {

std::string workflow_data(std::string_view text);
std::string workflow_property(std::string_view text);

}  // namespace hcp
