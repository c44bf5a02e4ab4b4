#pragma once

#include <string_view>

namespace hcp::lint {

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace hcp::lint
