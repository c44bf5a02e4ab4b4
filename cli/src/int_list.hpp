#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hcp::cli {

// Parses "2,4" (also "[2, 4]" and "2 4") into integers; throws hcp::Error{invalid_config} naming `option` and the
// offending entry.
std::vector<int64_t> parse_int_list(const std::string& text, const char* option);

}  // namespace hcp::cli
