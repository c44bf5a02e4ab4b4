#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hcp::cli {

// Parses one decimal integer exactly (no clamping, no trailing text); throws hcp::Error{invalid_config} naming
// `option` and, for a value out of range, the bound it passed.
int64_t parse_int(const std::string& text, const char* option);

// Parses "2,4" (also "[2, 4]" and "2 4") into integers; throws hcp::Error{invalid_config} naming `option` and the
// offending entry.
std::vector<int64_t> parse_int_list(const std::string& text, const char* option);

}  // namespace hcp::cli
